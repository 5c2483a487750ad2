"""A running server announces itself beside the database it holds.

``feastlog serve`` writes ``<db>.server`` (owner-only JSON) once it listens: its address,
its process id, whether it speaks TLS, and a fingerprint of its organiser key (never the
key). Clients run against the same file read it to find the server, and send the local
key file's key only to the server whose fingerprint matches. The file is removed at a
clean stop; one left by a killed server is stale (its process is gone) and ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import asdict
from pathlib import Path

from feastlog.client.files import ANNOUNCE_SUFFIX
from feastlog.client.files import Announcement as Announcement
from feastlog.client.files import alive as alive
from feastlog.client.files import announce_path as announce_path
from feastlog.client.files import key_fingerprint as key_fingerprint
from feastlog.client.files import read_announcement as read
from feastlog.service.files import FILE_MODE

# where and what a server announces is read by clients too (``feastlog.client.files``)
SUFFIX = ANNOUNCE_SUFFIX


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
