"""What a client reads beside a database, and the server writes there: the server's
announcement (``<db>.server``), the organiser key file, and the rules both keep for
them (owner-only files, a PostgreSQL DSN has no folder).  The server's own modules
(``service/announce.py``, ``service/app/auth.py``, ``service/files.py``) take these
from here: a client installs this library without the server's."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from feastlog.replay.games.text import fits_header

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
ANNOUNCE_SUFFIX = ".server"
KEY_FILE = "feastlog-organiser.key"
KEY_ENV = "FEASTLOG_ORGANISER_KEY"
KEY_MIN_LENGTH = 32


def is_postgres(target: str) -> bool:
    """Whether a ``--db`` value names a PostgreSQL database rather than a DuckDB file."""
    return target.startswith(POSTGRES_SCHEMES)


def mode_text(mode: int) -> str:
    """A file's permission bits as ``0644``."""
    return f"{stat.S_IMODE(mode):04o}"


def exposed(mode: int) -> bool:
    """Whether anyone but the owner may read, write or enter it."""
    return bool(mode & 0o077)


# --- the organiser key file ------------------------------------------------------


class OrganiserKeyError(Exception):
    """An organiser key that cannot be used (empty, short, exposed or unreadable): one line."""


def read_key_file(path: Path) -> str:
    """The key in ``path``, refused unless it is this user's, owner-only and long enough."""
    try:
        # O_NONBLOCK: a FIFO put in the key's place is refused below, not waited on.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            found = os.fstat(file.fileno())
            if not stat.S_ISREG(found.st_mode):
                raise OrganiserKeyError(
                    f"the organiser key file {path} is not a file: move it away"
                )
            text = file.read(4096)
    except OSError as failed:
        raise OrganiserKeyError(
            f"cannot read the organiser key file {path}: {failed.strerror or failed}"
        ) from failed
    fresh = "delete it and start the server again to make a new one"
    if found.st_uid != os.geteuid():
        raise OrganiserKeyError(
            f"the organiser key file {path} belongs to another user (uid {found.st_uid}): {fresh}"
        )
    if exposed(found.st_mode):
        raise OrganiserKeyError(
            f"the organiser key file {path} can be reached by other users (mode "
            f"{mode_text(found.st_mode)}): {fresh}, or chmod 600 it if no one else has read it"
        )
    key = text.decode("utf-8", errors="replace").strip()
    return check_key(key, f"the organiser key file {path}", fresh)


def check_key(key: str, source: str, fix: str) -> str:
    """``key`` if it is a usable organiser key; else ``OrganiserKeyError`` naming ``source``."""
    if not key:
        raise OrganiserKeyError(f"{source} is empty: {fix}")
    if len(key) < KEY_MIN_LENGTH:
        raise OrganiserKeyError(
            f"{source} holds a key of {len(key)} characters; an organiser key has at least "
            f"{KEY_MIN_LENGTH}: {fix}"
        )
    if not fits_header(key) or " " in key:  # a bearer token is one word
        raise OrganiserKeyError(
            f"{source} holds characters a bearer token cannot carry (spaces, control or "
            f"non-ASCII characters): {fix}"
        )
    return key


# --- the server's announcement ---------------------------------------------------


def announce_path(db_path: str) -> Path:
    """Where a server holding ``db_path`` announces itself."""
    return Path(db_path).resolve().with_name(Path(db_path).name + ANNOUNCE_SUFFIX)


def key_fingerprint(key: str) -> str:
    """A fingerprint of an organiser key: tells keys apart, gives nothing of the key away."""
    return hashlib.sha256(b"feastlog organiser key fingerprint\x00" + key.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Announcement:
    """What a running server says about itself."""

    address: str
    pid: int
    key_fingerprint: str
    tls: bool = False
    database: str = ""


def alive(pid: int) -> bool:
    """Whether a process with this id runs (not init, not a process group: a pid of 1,
    0 or below, or past any pid, is a damaged announcement's)."""
    if not 1 < pid < 2**31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: not a server of ours
        return False
    return True


def read_announcement(db_path: str, check_alive: bool = True) -> Announcement | None:
    """The announcement beside ``db_path``: None when there is none, it is stale (its
    process is gone), or it is not this user's own owner-only file."""
    path = announce_path(db_path)
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "r") as file:
            found = os.fstat(file.fileno())
            if (
                not stat.S_ISREG(found.st_mode)
                or found.st_uid != os.geteuid()
                or exposed(found.st_mode)
            ):
                return None
            data = json.loads(file.read(4096))
        announced = Announcement(
            address=str(data["address"]),
            pid=int(data["pid"]),
            key_fingerprint=str(data["key_fingerprint"]),
            tls=bool(data.get("tls", False)),
            database=str(data.get("database", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (
        not announced.address.isascii()
        or not announced.address.isprintable()
        or (" " in announced.address or len(announced.address) > 300)
    ):
        return None  # no server's address: a damaged file's, printed in messages otherwise
    if check_alive and not alive(announced.pid):
        return None
    if announced.database and announced.database != str(Path(db_path).resolve()):
        return None  # a copy of the file and its announcement: that server holds the original
    return announced
