"""The server's signing key (Ed25519), and the ``Notary`` that signs with it.

The key is made on the server's first start, owner-only, beside the organiser key
(``feastlog-signing.key``: the 32-byte private key as 64 hex digits), or given by the
operator as a file (``FEASTLOG_SIGNING_KEY_FILE``) or in the environment
(``FEASTLOG_SIGNING_KEY``, the same 64 hex digits).  Only its public key ever leaves the
server: in every new game's genesis, in exports, in ``GetServerInfo``, beside every
signature.  The private key is never logged, exported, sent or put in a record.  A DuckDB
file's store process reads it from the same place the server did (``server_notary``), to
sign the receipts of the rows it has just committed (``ProcessStore.sign_receipts``); it
is never passed between the two.  So this module belongs to neither: the application
(``service/app/notary.py``) and the store's process both import it.

Rotation: give the server another key (a new file, or the environment) and start it
again.  The store keeps every public key the server has signed with (``server_keys``), and
``GetServerInfo`` and exports list them, so receipts and heads signed before stay
checkable against the key their genesis or their message names.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from feastlog.client.files import OrganiserKeyError
from feastlog.replay.proof.signed import Cosignature, Receipt, TreeHead
from feastlog.replay.record.rows import Row
from feastlog.service.files import (
    exposed,
    key_path,
    make_private_folder,
    mode_text,
    write_new_private_file,
)

SIGNING_KEY_FILE = "feastlog-signing.key"
SIGNING_KEY_ENV = "FEASTLOG_SIGNING_KEY"
SIGNING_KEY_FILE_ENV = "FEASTLOG_SIGNING_KEY_FILE"

Signed = TypeVar("Signed", Receipt, TreeHead, Cosignature)


class SigningKeyError(OrganiserKeyError):
    """A signing key that cannot be used (unreadable, exposed, not a key): one line, which
    stops a server from starting as a bad organiser key does (and is caught with it)."""


class Notary:
    """Signs with one Ed25519 key; shows only its public half."""

    def __init__(self, private: Ed25519PrivateKey, source: str) -> None:
        self._private = private
        self.source = source  # where the key came from (a path or an environment variable)
        self.public_key = public_hex(private.public_key())

    def __repr__(self) -> str:  # never the key, whatever prints the object
        return f"Notary(public_key={self.public_key!r}, source={self.source!r})"

    def sign(self, unsigned: Signed) -> Signed:
        """The message signed: its ``signature`` set (hex of 64 bytes)."""
        return replace(unsigned, signature=self._private.sign(unsigned.message()).hex())

    def signatures(self, messages: Sequence[bytes]) -> list[str]:
        """Each message's signature (hex)."""
        return [self._private.sign(message).hex() for message in messages]

    def receipt(self, row: Row, signed_at: str) -> Receipt:
        """The signed receipt of a row just recorded."""
        return self.sign(Receipt.of(row, signed_at, self.public_key))

    def head(self, size: int, root: bytes, signed_at: str) -> TreeHead:
        """A signed tree head."""
        return self.sign(TreeHead(size, root.hex(), signed_at, self.public_key))

    def cosign(self, head: TreeHead, witnessed_at: str) -> Cosignature:
        """A witness's signature over a server's head it found consistent."""
        return self.sign(Cosignature.of(head, self.public_key, witnessed_at))


def public_hex(public: Ed25519PublicKey) -> str:
    """A public key as 64 hex digits (its 32 raw bytes)."""
    return public.public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


def server_notary(db_path: str) -> Notary:
    """The server's key: from the environment, a file named there, or the file beside the
    organiser key (either file made on first start)."""
    from_env = os.environ.get(SIGNING_KEY_ENV, "").strip()
    if from_env:
        return Notary(private_from_hex(from_env, f"${SIGNING_KEY_ENV}"), f"${SIGNING_KEY_ENV}")
    named = os.environ.get(SIGNING_KEY_FILE_ENV, "").strip()
    if named:  # made there if missing: the nodes of one database may share it
        return load_or_make(Path(named))
    return load_or_make(key_path(db_path).with_name(SIGNING_KEY_FILE))


def load_or_make(path: Path) -> Notary:
    """The key in ``path``, made there (0600) if there is none."""
    try:
        if not path.exists():
            make_private_folder(path.parent)
            write_new_private_file(
                path, Ed25519PrivateKey.generate().private_bytes_raw().hex() + "\n"
            )
    except OSError as failed:
        raise SigningKeyError(
            f"cannot write the signing key file {path}: {failed.strerror or failed}"
        ) from failed
    return Notary(read_key(path), str(path))


def read_key(path: Path) -> Ed25519PrivateKey:
    """The key in ``path``, refused unless it is this user's file, owner-only."""
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            found = os.fstat(file.fileno())
            if not stat.S_ISREG(found.st_mode):
                raise SigningKeyError(f"the signing key file {path} is not a file: move it away")
            text = file.read(4096)
    except OSError as failed:
        raise SigningKeyError(
            f"cannot read the signing key file {path}: {failed.strerror or failed}"
        ) from failed
    if found.st_uid != os.geteuid():
        raise SigningKeyError(
            f"the signing key file {path} belongs to another user (uid {found.st_uid})"
        )
    if exposed(found.st_mode):
        raise SigningKeyError(
            f"the signing key file {path} can be reached by other users (mode "
            f"{mode_text(found.st_mode)}): chmod 600 it if no one else has read it, else "
            "make a new key (and keep the old public key known)"
        )
    return private_from_hex(
        text.decode("ascii", errors="replace").strip(), f"the signing key file {path}"
    )


def private_from_hex(text: str, source: str) -> Ed25519PrivateKey:
    """An Ed25519 private key from 64 hex digits."""
    try:
        raw = bytes.fromhex(text)
        if len(raw) != 32:
            raise ValueError
        return Ed25519PrivateKey.from_private_bytes(raw)
    except ValueError:
        raise SigningKeyError(f"{source} is not an Ed25519 key (64 hex digits)") from None
