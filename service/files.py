"""Owner-only files: the store's folder, the database, its WAL and the organiser key.

The database holds the server seeds of running games, so every hidden card; the key
file makes its holder the organiser. Neither may be readable by another local user,
whatever the umask the server was started with:

- a folder feastlog creates is 0700, a file it writes itself (the key) is 0600;
- DuckDB creates the database, its write-ahead log (removed and made again at every
  checkpoint) and its spill folder ``<db>.tmp`` itself, with mode 0666/0755 less the
  umask; so while a store is open for writing the process umask is 077;
- an existing database, WAL or spill folder that others can read is tightened to
  owner-only when the store opens (its owner is the one running the server).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import threading
from pathlib import Path

from feastlog.client.files import KEY_FILE, is_postgres
from feastlog.client.files import exposed as exposed
from feastlog.client.files import mode_text as mode_text

PRIVATE_UMASK = 0o077
FILE_MODE = 0o600
FOLDER_MODE = 0o700


def key_path(db_path: str) -> Path:
    """Where the organiser key lives: beside the database file (a database server's: here)."""
    if is_postgres(db_path):
        return Path.cwd() / KEY_FILE
    return Path(db_path).resolve().parent / KEY_FILE


_umask_lock = threading.Lock()
_umask_holders = 0
_umask_before = 0


def hold_private_umask() -> None:
    """Make every file this process creates owner-only until the matching release."""
    global _umask_holders, _umask_before
    with _umask_lock:
        before = os.umask(PRIVATE_UMASK)
        if _umask_holders == 0:
            _umask_before = before
        else:  # someone changed it meanwhile: keep theirs, but never less private
            os.umask(before | PRIVATE_UMASK)
        _umask_holders += 1


def release_private_umask() -> None:
    """Undo one ``hold_private_umask``; the last one restores the umask from before."""
    global _umask_holders
    with _umask_lock:
        _umask_holders -= 1
        if _umask_holders == 0:
            os.umask(_umask_before)


def make_private_folder(folder: Path) -> None:
    """Create ``folder`` and any missing parents, each 0700; an existing folder is left as is.

    An existing folder may be the user's home or a shared working folder: its mode is the
    user's choice, and the files feastlog keeps in it are owner-only anyway.
    """
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for level in reversed(missing):
        try:
            os.mkdir(level, FOLDER_MODE)
        except FileExistsError:  # made by another process since we looked
            continue
        os.chmod(level, FOLDER_MODE)  # exactly 0700, whatever the umask took away


def tighten(path: Path) -> str | None:
    """Make an existing file 0600 (a folder 0700) if others can reach it; what was done."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    if not exposed(mode):
        return None
    wanted = FOLDER_MODE if stat.S_ISDIR(mode) else FILE_MODE
    os.chmod(path, wanted)
    return f"{path} was readable by others (mode {mode_text(mode)}): made it {wanted:04o}"


def write_new_private_file(path: Path, text: str) -> None:
    """Write ``path`` atomically, 0600, unless it already exists (then it is left alone).

    The text goes to a 0600 temp file in the same folder, is fsynced, then hard-linked to
    its name: a crash leaves either no file or the whole one, never an empty key, and
    unlike a rename a link never replaces a file another process made meanwhile.
    """
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "w") as out:
            os.fchmod(out.fileno(), FILE_MODE)
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileExistsError):  # another server made it first: keep theirs
            os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the new name survives a crash too
    finally:
        os.close(folder)
