"""The on-disk cache of compiled objects, so a new process warm-starts.

Key: a SHA-256 of the program's IR (in MLIR's generic form, `Program.cache_text`), the
pipeline, the target (triple, CPU name, features), the versions of irgrad, xDSL and llvmlite,
and a hash of irgrad's source files (so a fixed pass never reuses what it miscompiled); any of
them changing is a miss. Entries: `<key>.o` (a CPU program), `<key>.gpu.json` (a GPU
program), `<key>.runtime` (irgrad's own runtimes, irgrad/backends/cpu/runtime_objects.py) and
`<key>.sources` (the source hash, remembered under the files' sizes and times).
Location: `$IRGRAD_CACHE_DIR`, else `$XDG_CACHE_HOME/irgrad`, else `~/.cache/irgrad`;
`IRGRAD_CACHE_DIR=off` disables it. Entries are written atomically (temporary file, then
rename), so concurrent processes never read half a file; a corrupt entry is a miss (the loader
checks object files before LLVM sees them) and is overwritten.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from types import ModuleType

OFF = "off"


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off."""
    configured = os.environ.get("IRGRAD_CACHE_DIR")
    if configured is not None:
        if configured.strip().lower() == OFF:
            return None
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "irgrad"


_SOURCE_DIGEST: str | None = None


def _source_digest() -> str:
    """A hash of irgrad's own source files: a fixed pass must not reuse objects it miscompiled,
    and the version number alone does not change with every fix (once per process)."""
    global _SOURCE_DIGEST
    if _SOURCE_DIGEST is None:
        _SOURCE_DIGEST = source_digest(str(Path(__file__).resolve().parent.parent))
    return _SOURCE_DIGEST


def source_digest(root: str) -> str:
    """A hash of the names and contents of the `.py` files under `root`.

    Reading and hashing irgrad's 2 MB of sources was a tenth of a disk-cache hit, so the
    digest is remembered in the cache folder under a hash of the files' names, sizes and
    modification times (the test Python itself trusts to reuse a module's bytecode): a
    process whose sources are unchanged only lists them."""
    files = sorted(_python_files(root))
    stamp = hashlib.sha256()
    for name, _, size, mtime in files:
        stamp.update(f"{name}\0{size}\0{mtime}\0".encode())
    remembered = load(stamp.hexdigest(), ".sources")
    if remembered is not None and len(remembered) == 16 and remembered.isalnum():
        return remembered.decode()
    digest = hashlib.sha256()
    for name, path, _, _ in files:
        digest.update(name.encode())
        digest.update(Path(path).read_bytes())
    result = digest.hexdigest()[:16]
    store(stamp.hexdigest(), result.encode(), ".sources")
    return result


def _python_files(root: str, prefix: str = "") -> list[tuple[str, str, int, int]]:
    """(name relative to `root`, path, size, modification time in ns) of every `.py` file
    under `root` (os.scandir: a third of pathlib.rglob's time)."""
    found = []
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found += _python_files(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".py"):
                info = entry.stat()
                found.append((prefix + entry.name, entry.path, info.st_size, info.st_mtime_ns))
    return found


def _installed_version(module: ModuleType) -> str:
    """The version of an installed package, from the name of the `.dist-info` folder beside
    it: what importlib.metadata reads, without the 15 ms its import costs on every disk-cache
    hit (xDSL's `__version__` is lazy and imports it). Elsewhere (an editable or odd
    install), the package's own `__version__`."""
    package = Path(module.__file__ or "").parent
    found = list(package.parent.glob(f"{package.name}-*.dist-info"))
    if len(found) == 1:
        return found[0].name[len(package.name) + 1 : -len(".dist-info")]
    return str(module.__version__)


_VERSIONS: str | None = None


def _versions() -> str:
    """irgrad's version and sources, xDSL's and llvmlite's versions (once per process)."""
    global _VERSIONS
    if _VERSIONS is None:
        import llvmlite
        import xdsl

        from irgrad import __version__

        _VERSIONS = (
            f"irgrad={__version__}+{_source_digest()};xdsl={_installed_version(xdsl)};"
            f"llvmlite={_installed_version(llvmlite)}"
        )
    return _VERSIONS


def cache_key(ir_text: str, pipeline: str, target: str) -> str:
    digest = hashlib.sha256()
    for part in (ir_text, pipeline, target, _versions()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def load(key: str, suffix: str = ".o") -> bytes | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        return (folder / f"{key}{suffix}").read_bytes()
    except OSError:
        return None


def store(key: str, data: bytes, suffix: str = ".o") -> None:
    """Writes an entry; a read-only or full disk only costs the cache, never the call."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, folder / f"{key}{suffix}")
    except OSError:
        pass
