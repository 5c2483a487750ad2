"""What the store reads and writes: plain values, no DuckDB."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

from feastlog.replay.record.rows import Row
from feastlog.service.store import projection
from feastlog.v1 import record_pb2


@dataclass(frozen=True)
class Rejection:
    """A refused command, kept outside the chain."""

    game_id: str
    after_seq: int
    actor: str
    command_id: str
    body: bytes
    status: str
    reason: str
    rule_id: str
    message: str
    recorded_at: str


@dataclass(frozen=True)
class NewGame:
    """Everything written when a game is created (genesis None: it waits for seat entropy)."""

    genesis: Row | None
    seats: Sequence[tuple[str, str]]  # (name, token sha256) in seat order
    server_seed: bytes
    pack_sha256: str
    game_kind: str
    pack_id: str
    pack_body: bytes
    game_id: str = ""
    draft: bytes = b""  # the Genesis without seat entropy, while the game waits


@dataclass
class Batch:
    """What one group commit writes."""

    games: list[NewGame] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    entropy: list[tuple[str, int, bytes]] = field(default_factory=list)
    started: list[str] = field(default_factory=list)  # pending games whose genesis is in rows
    outcomes: projection.Projected = field(default_factory=list)  # games ended by these rows

    @property
    def plain(self) -> bool:
        """Whether the batch writes only rows and refusals (no game created, begun or ended)."""
        return not (self.games or self.outcomes or self.started or self.entropy)

    def appended(self) -> list[Row]:
        """Every row the batch appends: the genesis rows of the games it makes (those not
        waiting for seat entropy), then its rows."""
        return [g.genesis for g in self.games if g.genesis is not None] + self.rows

    def extend(self, other: Batch) -> None:
        """Take in everything another batch writes (group commit)."""
        for part in fields(self):
            getattr(self, part.name).extend(getattr(other, part.name))


@dataclass(frozen=True)
class Written:
    """What a commit answers: the log position of the first row it appended (the rows of
    ``Batch.appended`` take that position and the ones after it, in order; None when it
    appended none), and the receipt signatures its store's process made (``Signed``)."""

    first: int | None
    signed: Signed | None = None


@dataclass(frozen=True)
class Signed:
    """The receipt signatures of a commit's rows, made by the store's process the moment
    the commit held (``ProcessStore.sign_receipts``): ``signatures[(game_id, seq)]`` is
    the signature (hex) over ``Receipt.of(row, signed_at, public_key).message()``."""

    signed_at: str
    public_key: str
    signatures: dict[tuple[str, int], str]


@dataclass(frozen=True)
class PendingGame:
    """A game waiting for seat entropy, as stored."""

    game_id: str
    draft: bytes
    server_seed: bytes
    pack_body: bytes
    entropy: dict[int, bytes]


@dataclass(frozen=True)
class StoredGame:
    """A game as stored: its rows in seq order, its seed and its pack."""

    rows: tuple[Row, ...]
    server_seed: bytes
    pack_body: bytes
    seat_names: tuple[str, ...]

    @classmethod
    def scanned(cls, rows: Sequence[Row], seed: bytes, packs: dict[str, bytes]) -> StoredGame:
        """A game read by a scan: its rows, seed, and the pack and seat names its genesis
        names (a scan reads the packs once, not per game)."""
        genesis = record_pb2.Genesis.FromString(rows[0].body) if rows[0].seq == 1 else None
        pack = packs.get(genesis.pack_sha256, b"") if genesis else b""
        names = tuple(s.name for s in genesis.seats) if genesis else ()
        return cls(tuple(rows), seed, pack, names)


@dataclass(frozen=True)
class Listed:
    """A line of the game list as stored: ``rows`` is set for a finished game."""

    n: int
    game_id: str
    game_kind: str
    players: tuple[str, ...]
    created_at: str
    tournament_id: str
    rows: int | None
