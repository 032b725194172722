"""The on-disk cache of compiled objects, so a new process warm-starts.

Key: a SHA-256 of the program's IR (in MLIR's generic form, `Program.cache_text`), the
pipeline, the target (triple, CPU name, features), the versions of irgrad, xDSL and llvmlite,
and a hash of irgrad's source files (so a fixed pass never reuses what it miscompiled); any of
them changing is a miss. Entries: `<key>.o` (a CPU program), `<key>.gpu.json` (a GPU
program), `<key>.runtime` (irgrad's own runtimes, irgrad/backends/cpu/runtime_objects.py) and
`<key>.sources` (the source hash, remembered under the files' sizes and times).
Size: at most `$IRGRAD_CACHE_MAX_BYTES` (default 1 GiB, `unlimited` for none); each write
evicts the least recently used entries beyond it (a hit refreshes an entry's time).
Location: `$IRGRAD_CACHE_DIR`, else `$XDG_CACHE_HOME/irgrad`, else `~/.cache/irgrad`;
`IRGRAD_CACHE_DIR=off` disables it. Entries are written atomically (temporary file, then
rename), so concurrent processes never read half a file; a corrupt entry is a miss (the loader
checks object files before LLVM sees them) and is overwritten.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path

from irgrad.versions import installed_version

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
    """A hash of the names and contents of the source files (`.py`, `.ll`) under `root`.

    Reading and hashing irgrad's 2 MB of sources was a tenth of a disk-cache hit, so the
    digest is remembered in the cache folder under a hash of the files' names, sizes and
    modification times (the test Python itself trusts to reuse a module's bytecode): a
    process whose sources are unchanged only lists them."""
    files = sorted(_source_files(root))
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


def _source_files(root: str, prefix: str = "") -> list[tuple[str, str, int, int]]:
    """(name relative to `root`, path, size, modification time in ns) of every `.py` and `.ll`
    (the runtimes' IR templates) file under `root` (os.scandir: a third of pathlib.rglob's time)."""
    found = []
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found += _source_files(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith((".py", ".ll")):
                info = entry.stat()
                found.append((prefix + entry.name, entry.path, info.st_size, info.st_mtime_ns))
    return found


_VERSIONS: str | None = None


def _versions() -> str:
    """irgrad's version and sources, xDSL's and llvmlite's versions (once per process)."""
    global _VERSIONS
    if _VERSIONS is None:
        import llvmlite
        import xdsl

        from irgrad import __version__

        _VERSIONS = (
            f"irgrad={__version__}+{_source_digest()};xdsl={installed_version(xdsl)};"
            f"llvmlite={installed_version(llvmlite)}"
        )
    return _VERSIONS


def cache_key(ir_text: str, pipeline: str, target: str) -> str:
    digest = hashlib.sha256()
    for part in (ir_text, pipeline, target, _versions()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def load(key: str, suffix: str = ".o") -> bytes | None:
    """The entry's bytes, or None. A hit marks the entry as just used (its modification
    time), which is the order `store` evicts in."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{key}{suffix}"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache still serves hits
    return data


def store(key: str, data: bytes, suffix: str = ".o") -> None:
    """Writes an entry, then evicts the least recently used ones while the folder holds more
    than `max_bytes()`; a read-only or full disk only costs the cache, never the call."""
    folder = cache_dir()
    if folder is None:
        return
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=TMP_PREFIX)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, folder / f"{key}{suffix}")
        tmp = None
        limit = max_bytes()
        if limit is not None:
            evict(folder, limit, keep=f"{key}{suffix}")
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


TMP_PREFIX = ".tmp-"
DEFAULT_MAX_BYTES = 1 << 30
"""1 GiB: W1's step is a 30 kB entry, examples/transformer.py's a 1 MB one."""
STALE_TMP_SECONDS = 3600
"""A temporary file this old belongs to a writer that died before renaming it."""
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def max_bytes() -> int | None:
    """The cache folder's size limit: `$IRGRAD_CACHE_MAX_BYTES` (bytes, or with a K, M or G
    suffix: `500M`; `unlimited` for none), else DEFAULT_MAX_BYTES. Why a default at all:
    every new program, input signature and irgrad version adds entries, and a cache that
    only grows fills home directories (JAX's persistent cache has the same knob)."""
    setting = os.environ.get("IRGRAD_CACHE_MAX_BYTES", "").strip().lower()
    if not setting:
        return DEFAULT_MAX_BYTES
    if setting == "unlimited":
        return None
    number, unit = setting.rstrip("kmg"), setting[len(setting.rstrip("kmg")) :]
    if number.isdigit() and unit in _UNITS:
        return int(number) * _UNITS[unit]
    import warnings

    warnings.warn(
        f"irgrad: IRGRAD_CACHE_MAX_BYTES={os.environ['IRGRAD_CACHE_MAX_BYTES']!r} is not a size "
        f"(bytes, 500M, 2G or 'unlimited'); using {DEFAULT_MAX_BYTES >> 20}M",
        stacklevel=2,
    )
    return DEFAULT_MAX_BYTES


def evict(folder: Path, limit: int, keep: str = "") -> None:
    """Delete the least recently used entries of `folder` (oldest modification time first;
    `load` refreshes it on every hit) until the rest fit in `limit` bytes, never the entry
    named `keep` (the one just written); temporary files of writers that died are deleted
    too. Entries another process removes meanwhile are skipped."""
    now = time.time()
    entries = []
    total = 0
    with os.scandir(folder) as found:
        for entry in found:
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith(TMP_PREFIX):
                if now - info.st_mtime > STALE_TMP_SECONDS:
                    _remove(entry.path)
                continue
            total += info.st_size
            entries.append((info.st_mtime_ns, entry.name, info.st_size, entry.path))
    for _, name, size, path in sorted(entries):
        if total <= limit:
            break
        if name != keep and _remove(path):
            total -= size


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False
