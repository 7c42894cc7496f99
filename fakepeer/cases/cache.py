"""A cache of checked fixtures, so `run -k ONE` does not schema-check the whole corpus each time.

Checking a fixture (schema, message conformity, macros) costs milliseconds; a corpus of 500 costs
seconds on every run. A fixture file that loaded cleanly is stored, pickled, under a key made of
its path, its bytes and a fingerprint of the checking code (the `cases` and `protocol` packages
and the Python version): an edited file, an edited checker or another interpreter is a miss, and
is checked again. Only clean loads are stored, so a broken fixture is reported every time.

Where: `fixtures/` of `$RYUSEN_CONFORM_CACHE` (`off` disables it), else of
`$XDG_CACHE_HOME/ryusen-conform`, else of `~/.cache/ryusen-conform`. Entries are written
atomically (temporary file, rename); an entry that cannot be read back, or is not a fixture, is
ignored and rewritten; a cache folder that cannot be written costs speed only, never a result.
A folder owned by another user is not used (a pickle from it could run anyone's code).
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

from fakepeer.cases.model import Fixture

ENV = "RYUSEN_CONFORM_CACHE"
_KIND = b"ryusen-conform fixture cache 1\n"


#: Fingerprint folders kept (one per version of the checking code): older ones are removed.
KEEP_VERSIONS = 3


def cache_root() -> Path | None:
    """The cache's own folder, or None when the cache is off."""
    chosen = os.environ.get(ENV, "")
    if chosen.lower() in ("off", "0", "no", "false"):
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ryusen-conform"


def cache_dir() -> Path | None:
    """The folder of this checking code's entries (None when the cache is off)."""
    root = cache_root()
    return None if root is None else root / "fixtures" / code_fingerprint().hex()[:24]


def prune(folder: Path | None) -> None:
    """Keep the KEEP_VERSIONS most recently used code versions' folders (each holds a corpus)."""
    if folder is None or not usable(folder.parent):
        return
    try:
        os.utime(folder)
        versions = sorted(
            (p for p in folder.parent.iterdir() if p.is_dir()),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in versions[KEEP_VERSIONS:]:
            for entry in old.iterdir():
                entry.unlink(missing_ok=True)
            old.rmdir()
    except OSError:
        return


@functools.cache
def code_fingerprint() -> bytes:
    """A digest of every source file the fixture checks depend on (an edit is a new cache)."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(_KIND + sys.version.encode())
    for package in (here, here.parent / "protocol"):
        for source in sorted(package.rglob("*")):
            if source.suffix in (".py", ".json") and source.is_file():
                digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.digest()


def key_of(file: Path, data: bytes, folders: dict[str, str] | None = None) -> str:
    """The entry name of one fixture file's bytes at its path.

    `folders` remembers real folder paths for one load: a file that is no symbolic link is
    then resolved with one `lstat` instead of one per path component (a third of a warm load).
    """
    digest = hashlib.sha256(code_fingerprint())
    digest.update(str(file).encode("utf-8", "surrogatepass") + b"\0")
    digest.update(
        _real_path(file, {} if folders is None else folders).encode("utf-8", "surrogatepass")
        + b"\0"
    )
    digest.update(data)
    return digest.hexdigest()


def _real_path(file: Path, folders: dict[str, str]) -> str:
    """What `file.resolve()` gives, with each folder's real path worked out once."""
    name = os.path.join(os.getcwd(), file)  # not normalised: `..` after a link is the link's
    if os.path.islink(name):
        return os.path.realpath(name)
    folder, base = os.path.split(name)
    real = folders.get(folder)
    if real is None:
        real = folders[folder] = os.path.realpath(folder)
    return os.path.join(real, base)


def usable(folder: Path) -> bool:
    """Whether `folder` is ours (a cache another user can write is not trusted)."""
    try:
        return folder.stat().st_uid == os.getuid()
    except (OSError, AttributeError):
        return False


def get(folder: Path | None, key: str) -> Fixture | None:
    """The fixture stored under `key`, or None (absent, unreadable, corrupt, not ours)."""
    if folder is None or not usable(folder):
        return None
    try:
        data = (folder / key).read_bytes()
        if not data.startswith(_KIND):
            return None
        fixture = pickle.loads(data[len(_KIND) :])
    except Exception:  # noqa: BLE001 - any damage to an entry only means a miss
        return None
    return fixture if isinstance(fixture, Fixture) else None


def put(folder: Path | None, key: str, fixture: Fixture) -> None:
    """Store a cleanly loaded fixture; failures are ignored (the cache is only for speed)."""
    if folder is None:
        return
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, mode=0o700)
            prune(folder)
        if not usable(folder):
            return
        data = _KIND + pickle.dumps(fixture, protocol=pickle.HIGHEST_PROTOCOL)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, folder / key)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except Exception:  # noqa: BLE001 - an unwritable cache costs speed, never a result
        return
