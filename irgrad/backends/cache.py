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
`IRGRAD_CACHE_DIR=off` (or empty) disables it. Trust: the folder is created private (0700);
one not owned by this user, or writable by others, is not used (a warning, once). An entry
is read only if it is a regular file this user owns (no link, FIFO or device) and starts with
a SHA-256 of its key, suffix and contents: a damaged, truncated, swapped or planted entry is
discarded with a warning and compiled again. Writes are atomic (temporary file, then rename).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import time
import warnings
from pathlib import Path

from irgrad.versions import installed_version

OFF = "off"


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off."""
    configured = os.environ.get("IRGRAD_CACHE_DIR")
    if configured is not None:
        if configured.strip().lower() in (OFF, ""):
            return None
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "irgrad"


MAGIC = b"irgrad-cache-entry-1\n"
"""What every entry starts with, then the 32-byte digest (`_digest`), then the contents."""
_warned: set[str] = set()


def _warn(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"irgrad: {message}", RuntimeWarning, stacklevel=3)


def _trusted(folder: Path) -> bool:
    """Whether `folder` may hold this user's compiled code: owned by this user and writable by
    no one else (where the OS has owners)."""
    try:
        info = folder.stat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
        _warn(f"folder:{folder}", (
            f"not using the compile cache {folder}: it is owned by another user or writable by "
            "others, so its entries could be someone else's code (set IRGRAD_CACHE_DIR to a "
            "private folder)"))
        return False
    return True


def trusted_folder() -> Path | None:
    """The cache folder, created private, when it can be trusted with this user's code (None:
    caching off, or the folder is another user's or writable by others)."""
    return _folder(create=True)


def _folder(create: bool) -> Path | None:
    """The cache folder when it can be trusted (made private, 0700, when `create`)."""
    folder = cache_dir()
    if folder is None:
        return None
    if create and not folder.exists():
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None
    if not _trusted(folder):
        return None
    if create and hasattr(os, "getuid"):
        try:  # a folder an older irgrad made 0755: entries are this user's business only
            if folder.stat().st_mode & 0o077:
                folder.chmod(0o700)
        except OSError:
            pass
    return folder


def _digest(key: str, suffix: str, data: bytes) -> bytes:
    h = hashlib.sha256(MAGIC)
    h.update(f"{key}\0{suffix}\0".encode())
    h.update(data)
    return h.digest()


def _read_entry(path: Path) -> bytes | None:
    """The bytes of `path` if it is a regular file of this user's of a sane size (opened
    without following a link or blocking on a FIFO), else None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        limit = max_bytes() or (1 << 40)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None
        chunks = []
        remaining = info.st_size
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


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
    folder = _folder(create=False)
    if folder is None:
        return None
    path = folder / f"{key}{suffix}"
    raw = _read_entry(path)
    if raw is None:
        if os.path.lexists(path):
            _discard(path, "is not a regular file of this user's")
        return None
    head = len(MAGIC) + 32
    if len(raw) < head or raw[: len(MAGIC)] != MAGIC or raw[len(MAGIC) : head] != _digest(key, suffix, raw[head:]):
        _discard(path, "is damaged or not this program's (its digest does not match)")
        return None
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache still serves hits
    return raw[head:]


def _discard(path: Path, why: str) -> None:
    """Warn about a bad entry and remove it (`store` then writes a good one in its place)."""
    _warn(f"entry:{path}", f"the compile cache entry {path} {why}: discarded and compiled again")
    _remove(str(path))


def store(key: str, data: bytes, suffix: str = ".o") -> None:
    """Writes an entry, then evicts the least recently used ones while the folder holds more
    than `max_bytes()`; a read-only or full disk only costs the cache, never the call."""
    folder = _folder(create=True)
    if folder is None:
        return
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=TMP_PREFIX)  # 0600
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + _digest(key, suffix, data))
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
