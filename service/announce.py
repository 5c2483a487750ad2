"""A running server announces itself beside the database it holds.

``feastlog serve`` writes ``<db>.server`` (owner-only JSON) once it listens: its address,
its process id, whether it speaks TLS, and a fingerprint of its organiser key (never the
key). Clients run against the same file read it to find the server, and send the local
key file's key only to the server whose fingerprint matches. The file is removed at a
clean stop; one left by a killed server is stale (its process is gone) and ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from feastlog.service.files import FILE_MODE, exposed

SUFFIX = ".server"


def announce_path(db_path: str) -> Path:
    """Where a server holding ``db_path`` announces itself."""
    return Path(db_path).resolve().with_name(Path(db_path).name + SUFFIX)


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


def write(db_path: str, found: Announcement) -> Path:
    """Write the announcement atomically (0600), replacing a stale one."""
    path = announce_path(db_path)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w") as out:
        os.fchmod(out.fileno(), FILE_MODE)
        json.dump(asdict(found), out)
    os.replace(temp, path)
    return path


def remove(db_path: str, pid: int) -> None:
    """Remove the announcement if it is still this process's (a clean stop)."""
    path = announce_path(db_path)
    mine = read(db_path, check_alive=False)
    if mine is not None and mine.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


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


def read(db_path: str, check_alive: bool = True) -> Announcement | None:
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
