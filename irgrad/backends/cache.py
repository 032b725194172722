"""The on-disk cache of compiled objects, so a new process warm-starts.

Key: a SHA-256 of the program's IR (as printed), the pipeline, the target (triple, CPU name,
features), the versions of irgrad, xDSL and llvmlite, and a hash of irgrad's source files (so
a fixed pass never reuses what it miscompiled); any of them changing is a miss.
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
    and the version number alone does not change with every fix (computed once per process)."""
    global _SOURCE_DIGEST
    if _SOURCE_DIGEST is None:
        root = Path(__file__).resolve().parent.parent
        digest = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
        _SOURCE_DIGEST = digest.hexdigest()[:16]
    return _SOURCE_DIGEST


def _versions() -> str:
    # The modules' own version strings: importlib.metadata would cost 10 ms to import.
    import llvmlite
    import xdsl

    from irgrad import __version__

    return (
        f"irgrad={__version__}+{_source_digest()};xdsl={xdsl.__version__};"
        f"llvmlite={llvmlite.__version__}"
    )


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
