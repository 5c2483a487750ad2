"""What the server signs, byte for byte: receipts, tree heads, witnesses' cosignatures, and
the leaf each row is in the server's log tree (docs/record-format.md, "Proof beyond the
operator").

Pure: the bytes and the checks that need no key.  Signing and checking a signature are
the notary's (``service/app/notary.py``, Ed25519); every message signed is the canonical
JSON of an object whose ``type`` names what it is, so no signature of one kind can be
taken for another.

- A row's **leaf** is ``canonical({"game_id", "hash", "seq"})``: the row's hash covers all
  of it (its commitment, state hash and time), and is public at the table; the leaf adds
  nothing hidden.  Its tree hash is ``SHA-256(0x00 || leaf)`` (``merkle.leaf_hash``).
- A **receipt** signs ``{"commitment", "game_id", "hash", "kind", "seq", "signed_at",
  "state_hash", "type": "feastlog-receipt"}``.  For a sealed command the commitment is
  salted from the server seed: the receipt proves what the seat sent once the seed is
  revealed, and shows nothing of it before.
- A **tree head** signs ``{"root", "signed_at", "size", "type": "feastlog-tree-head"}``.
- A witness's **cosignature** signs ``{"root", "server_key", "signed_at", "size",
  "type": "feastlog-cosigned-head", "witnessed_at"}``: the server's head, whose key it is,
  and when the witness saw it consistent with every head it saw before.
"""

from __future__ import annotations

from dataclasses import dataclass

from feastlog.replay.proof.merkle import leaf_hash
from feastlog.replay.record.canonical import canonical_fields, canonical_object
from feastlog.replay.record.rows import Row

RECEIPT = "feastlog-receipt"
TREE_HEAD = "feastlog-tree-head"
COSIGNED_HEAD = "feastlog-cosigned-head"
# the fields each message signs besides its type (the module's docstring lists them), sorted
_RECEIPT_KEYS = ("commitment", "game_id", "hash", "kind", "seq", "signed_at", "state_hash")
_HEAD_KEYS = ("root", "signed_at", "size")
_COSIGNED_KEYS = ("root", "server_key", "signed_at", "size", "witnessed_at")


def leaf_of(game_id: str, seq: int, row_hash: str) -> bytes:
    """The leaf input of one row: canonical JSON of its game id, seq and hash."""
    return canonical_object((("game_id", game_id), ("hash", row_hash), ("seq", seq)))


def leaf_hash_of(row: Row) -> bytes:
    """The tree hash of a row's leaf: SHA-256(0x00 || leaf)."""
    return leaf_hash(leaf_of(row.game_id, row.seq, row.hash))


@dataclass(frozen=True)
class Receipt:
    """The server's signed word that a row is in the record as it stands here."""

    game_id: str
    seq: int
    kind: str
    hash: str
    state_hash: str
    commitment: str
    signed_at: str
    public_key: str  # hex of the Ed25519 public key that signed it
    signature: str = ""  # hex of the Ed25519 signature over ``message()``

    @classmethod
    def of(cls, row: Row, signed_at: str, public_key: str, signature: str = "") -> Receipt:
        """The receipt of ``row`` (not yet signed, unless its ``signature`` is given)."""
        return cls(
            row.game_id, row.seq, row.kind, row.hash, row.state_hash, row.commitment,
            signed_at, public_key, signature,
        )  # fmt: skip

    def message(self) -> bytes:
        """The bytes signed."""
        return canonical_fields(self, _RECEIPT_KEYS, ("type", RECEIPT))

    def matches(self, row: Row) -> list[str]:
        """What of ``row`` differs from what the receipt says (empty: the row is unchanged)."""
        said = {"kind": self.kind, "hash": self.hash, "state_hash": self.state_hash}
        said["commitment"] = self.commitment
        return [name for name, value in said.items() if getattr(row, name) != value]


@dataclass(frozen=True)
class TreeHead:
    """A signed tree head: the log tree's size and root at a time."""

    size: int
    root: str  # hex
    signed_at: str
    public_key: str
    signature: str = ""

    def message(self) -> bytes:
        """The bytes signed."""
        return canonical_fields(self, _HEAD_KEYS, ("type", TREE_HEAD))

    def names(self) -> str:
        """The head in a few words: its size, root and time."""
        return f"size {self.size} root {self.root[:16]}… at {self.signed_at}"


@dataclass(frozen=True)
class Cosignature:
    """A witness's signature over a server's head it found consistent."""

    size: int
    root: str
    signed_at: str  # the server's head time
    server_key: str
    witness_key: str
    witnessed_at: str
    signature: str = ""

    @classmethod
    def of(cls, head: TreeHead, witness_key: str, witnessed_at: str) -> Cosignature:
        """The cosignature of ``head``, not yet signed."""
        return cls(head.size, head.root, head.signed_at, head.public_key, witness_key, witnessed_at)

    def message(self) -> bytes:
        """The bytes signed."""
        return canonical_fields(self, _COSIGNED_KEYS, ("type", COSIGNED_HEAD))
