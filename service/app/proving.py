"""The proof use cases: the server's keys, its signed tree heads, inclusion and consistency
proofs, witnesses' cosignatures (``ProofService``), and the proof section of an export.

The same online (the server's ``LogTree``, which signs) and offline (a tree read from the
file: its heads and proofs, nothing new signed).  A proof holds hashes only; a row's
inclusion proof is given to whoever may watch its game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from feastlog.replay.proof.signed import Cosignature, TreeHead, leaf_hash_of
from feastlog.replay.record.rows import Row
from feastlog.service.app.auth import Caller
from feastlog.service.app.errors import BadRequest, HeadNotFound
from feastlog.service.app.logtree import HEAD_INTERVAL, LogTree
from feastlog.service.app.source import Records


@dataclass(frozen=True)
class ServerInfo:
    """The server's signing key now, every key it has signed with, and its tree's size."""

    public_key: str
    keys: list[tuple[str, str]]  # (public key, first used), oldest first
    tree_size: int
    head_interval_ms: int


@dataclass(frozen=True)
class Inclusion:
    """That a row is leaf ``leaf_index`` of the tree of ``tree_size`` whose root is ``root``."""

    leaf_index: int
    tree_size: int
    row_hash: str
    leaf_hash: bytes
    path: list[bytes]
    root: bytes


@dataclass(frozen=True)
class Consistency:
    """That the tree of ``first`` leaves is a prefix of the tree of ``second``."""

    first: int
    second: int
    path: list[bytes]
    first_root: bytes
    second_root: bytes


class Proving:
    """The proof use cases, over a log tree (the server's, or one read from a file)."""

    def __init__(self, source: Records, tree: LogTree | None = None) -> None:
        self.source = source
        self.tree = tree  # the server's, which signs; None: the file's, read per call

    async def _log_tree(self) -> LogTree:
        """The server's tree; offline, the file's, read now."""
        if self.tree is not None:
            return self.tree
        tree = LogTree(self.source.read)
        await tree.load()
        return tree

    async def server_info(self, caller: Caller) -> ServerInfo:
        """The signing key now and every key signed with (rotation), the tree's size."""
        tree = await self._log_tree()
        keys: list[tuple[str, str]] = await self.source.read(lambda store: store.server_keys())
        now = tree.notary.public_key if tree.notary else (keys[-1][0] if keys else "")
        size = await tree.catch_up()
        return ServerInfo(now, keys, size, int(tree.interval * 1000))

    async def tree_head(self, caller: Caller, size: int) -> tuple[TreeHead, list[Cosignature]]:
        """The latest signed head (``size`` 0) or the one of ``size``, and its cosignatures."""
        return await (await self._log_tree()).head(size)

    async def inclusion_proof(
        self, caller: Caller, game_id: str, seq: int, tree_size: int
    ) -> Inclusion:
        """That row ``seq`` of a game is in the tree of ``tree_size`` (0: the latest head's),
        for whoever may watch the game."""
        game = await self.source.game(game_id)
        caller.viewer(game_id)  # another game's seat token is refused here, as for a watch
        if not 1 <= seq <= game.last_seq:
            raise BadRequest(f"seq {seq} is not in 1..{game.last_seq}", field="seq")
        row = game.rows[seq - 1]
        index, size, path, root = await (await self._log_tree()).inclusion(game_id, seq, tree_size)
        return Inclusion(index, size, row.hash, leaf_hash_of(row), path, root)

    async def consistency_proof(self, caller: Caller, first: int, second: int) -> Consistency:
        """That the tree of ``first`` leaves is a prefix of the tree of ``second`` (0: the
        latest head's)."""
        return Consistency(*await (await self._log_tree()).consistency(first, second))

    async def add_cosignature(
        self, caller: Caller, head: TreeHead, cosignature: Cosignature
    ) -> int:
        """Keep a witness's cosignature of one of this server's heads; how many it has."""
        return await (await self._log_tree()).take_cosignature(head, cosignature)

    async def proof_of(self, rows: Sequence[Row]) -> dict[str, Any] | None:
        """An export's proof section: the keys, the latest head, and each row's leaf index
        and audit path in it (None when no head holds every row yet)."""
        try:
            tree = await self._log_tree()
            await tree.issue()  # online: a head over every row committed (offline: the file's)
            head, cosignatures = await tree.head(0)
        except (BadRequest, HeadNotFound):  # no store (an exported record read), or no head
            return None
        keys: list[tuple[str, str]] = await self.source.read(lambda store: store.server_keys())
        proven = []
        for row in rows:
            try:
                index, _, path, _ = await tree.inclusion(row.game_id, row.seq, head.size)
            except (BadRequest, HeadNotFound):
                return None  # a row after the head: the next export will hold it
            proven.append({"seq": row.seq, "leaf_index": index, "path": [p.hex() for p in path]})
        return {
            "server_keys": [{"public_key": k, "first_used": t} for k, t in keys],
            "tree_head": vars(head),
            "cosignatures": [vars(c) for c in cosignatures],
            "inclusion": proven,
        }


__all__ = ["HEAD_INTERVAL", "Consistency", "Inclusion", "Proving", "ServerInfo"]
