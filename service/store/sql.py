"""What the two SQL adapters share, written once: a row's columns, the queries DuckDB and
PostgreSQL both run on the same tables, and their rows read back as the port's values.

No driver here: each adapter runs these with its own (``duckdb/``, ``postgres/``), with
its own parameter mark where a query takes one, and keeps its own DDL.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

from feastlog.replay.proof.signed import Cosignature, TreeHead, leaf_hash_of
from feastlog.replay.record.rows import Row
from feastlog.replay.tournament.outcomes import Standing
from feastlog.service.store.records import Batch, Listed, Rejection, StoredGame
from feastlog.v1 import record_pb2

ROW_COLUMNS = (
    "game_id, seq, kind, actor, command_id, body, recorded_at, prev_hash, hash, state_hash, "
    "commitment"
)


def row_values(row: Row) -> list[object]:
    """A row as the values of the ``events`` columns."""
    return [
        row.game_id,
        row.seq,
        row.kind,
        row.actor,
        row.command_id,
        row.body,
        row.recorded_at,
        row.prev_hash,
        row.hash,
        row.state_hash,
        row.commitment,
    ]


_new_row = object.__new__


def row_of(values: Sequence[Any]) -> Row:
    """A row from the values of the ``events`` columns.

    Built straight into the new row's ``__dict__`` (a frozen dataclass's ``__init__``
    sets each of its eleven fields through ``object.__setattr__``): a third of the cost
    a row, and every scan, export and audit reads each row through here.  The drivers
    give the columns' own types (``int``, ``bytes``), which are converted only when they
    do not.
    """
    game_id, seq, kind, actor, command_id, body, at, prev_hash, hash_, state_hash, commitment = (
        values
    )
    row = _new_row(Row)
    row.__dict__.update(
        game_id=game_id,
        seq=seq if type(seq) is int else int(seq),
        kind=kind,
        actor=actor,
        command_id=command_id,
        body=body if type(body) is bytes else bytes(body),
        recorded_at=at,
        prev_hash=prev_hash,
        hash=hash_,
        state_hash=state_hash,
        commitment="" if commitment is None else commitment,  # a format-1 file's column
    )
    return row


PACK_COLUMNS = "sha256, game_kind, pack_id, body"
SEED_COLUMNS = "game_id, server_seed"
SEAT_COLUMNS = "game_id, seat, name, token_sha256"
DRAFT_COLUMNS = "game_id, draft"
ENTROPY_COLUMNS = "game_id, seat, entropy"


@dataclass(frozen=True)
class Inserts:
    """What a batch inserts into each table but ``events`` and the projection, as the
    values of its columns (``PACK_COLUMNS``…), for both stores to write with their own
    statements."""

    packs: list[list[object]]  # each once, by its sha256 (many games share one)
    seeds: list[list[object]]
    seats: list[list[object]]
    geneses: list[record_pb2.Genesis]  # the new games, for the game list
    drafts: list[list[object]]  # the games waiting for seat entropy
    entropy: list[list[object]]
    rejections: list[list[object]]  # ``REJECTION_COLUMNS``


def inserts_of(batch: Batch) -> Inserts:
    """The values a batch inserts (``Inserts``)."""
    games = batch.games
    ids = [g.genesis.game_id if g.genesis else g.game_id for g in games]
    packs: dict[str, list[object]] = {
        g.pack_sha256: [g.pack_sha256, g.game_kind, g.pack_id, g.pack_body] for g in games
    }
    return Inserts(
        packs=list(packs.values()),
        seeds=[[i, g.server_seed] for i, g in zip(ids, games, strict=True)],
        seats=[
            [i, seat, name, token]
            for i, g in zip(ids, games, strict=True)
            for seat, (name, token) in enumerate(g.seats)
        ],
        geneses=[
            record_pb2.Genesis.FromString(g.genesis.body if g.genesis else g.draft) for g in games
        ],
        drafts=[[i, g.draft] for i, g in zip(ids, games, strict=True) if g.genesis is None],
        entropy=[list(e) for e in batch.entropy],
        rejections=[list(vars(r).values()) for r in batch.rejections],
    )


def games_of_scan(
    chunks: Iterable[Sequence[tuple[Any, ...]]], packs: dict[str, bytes]
) -> Iterator[tuple[int, StoredGame]]:
    """Group one ordered scan into games: (place in the game list, game), for both stores.

    The scan comes in chunks, as the driver fetches them; each scanned tuple is the
    ``events`` columns, then the game's place in the game list, then its server seed (on
    its first row only).  Each row is built as ``row_of`` builds it, here in the loop: a
    scan's rows cost about half what they did through a call, a slice and a ``zip`` a
    row (every export, import and projection rebuild reads them).
    """
    new = _new_row
    rows: list[Row] = []
    game: object = None
    seed, n = b"", 0
    for chunk in chunks:
        for (
            game_id,
            seq,
            kind,
            actor,
            command_id,
            body,
            at,
            prev_hash,
            hash_,
            state_hash,
            commitment,
            place,
            first_seed,
        ) in chunk:
            if game_id != game:
                if rows:
                    yield n, StoredGame.scanned(rows, seed, packs)
                rows = []
                game = game_id
                n = int(place)
                seed = bytes(first_seed) if first_seed is not None else b""
            row = new(Row)
            row.__dict__.update(
                game_id=game_id,
                seq=seq if type(seq) is int else int(seq),
                kind=kind,
                actor=actor,
                command_id=command_id,
                body=body if type(body) is bytes else bytes(body),
                recorded_at=at,
                prev_hash=prev_hash,
                hash=hash_,
                state_hash=state_hash,
                commitment="" if commitment is None else commitment,
            )
            rows.append(row)
    if rows:
        yield n, StoredGame.scanned(rows, seed, packs)


def share_of(counts: Iterable[tuple[Any, Any]], share: tuple[int, int]) -> tuple[int, int]:
    """The places ``(first, end)`` of share ``share=(k, m)``: the k-th of m runs of
    consecutive games of the list holding about as many rows each, from the (place,
    rows) of every game scanned, in place order.  A game goes to the share its middle
    row falls in, so shares differ by at most about one game's rows (dealt k modulo m,
    a 300-row game and a few long ones gave one of two workers a tenth more)."""
    k, m = share
    found = [(int(n), int(rows)) for n, rows in counts]
    total = sum(rows for _, rows in found)
    first, end = 0, 0
    before = 0
    for n, rows in found:
        if min((2 * before + rows) * m // (2 * total), m - 1) == k:
            first, end = (n if end == 0 else first), n + 1
        before += rows
    return first, end


def rows_by_place_query(listed: str, where: Sequence[str]) -> str:
    """(place, rows) of each game a scan keeps, in place order (``listed``: the game
    list's table; ``where``: the scan's conditions), for both stores."""
    return (
        f"SELECT coalesce(g.n, 0), count(*) FROM events e LEFT JOIN {listed} g USING (game_id) "
        f"{'WHERE ' + ' AND '.join(where) if where else ''} GROUP BY 1 ORDER BY 1"
    )


def count_query(mark: str, game_kind: str) -> tuple[str, list[object]]:
    """The query counting (games with rows, rows) for both stores (``mark``: the driver's
    parameter mark), of one kind or all."""
    if not game_kind:
        return "SELECT count(DISTINCT game_id), count(*) FROM events", []
    return (
        "SELECT count(DISTINCT game_id), count(*) FROM events "
        f"WHERE game_id IN (SELECT game_id FROM games WHERE game_kind = {mark})",
        [game_kind],
    )


def counted(found: Sequence[Any] | None) -> tuple[int, int]:
    """(games with rows, rows) from the counting query's row."""
    return (int(found[0]), int(found[1])) if found else (0, 0)


def unnumbered(numbered: Iterable[tuple[int, StoredGame]]) -> Generator[StoredGame]:
    """The games of a numbered scan without their places (``scan`` of both stores)."""
    for _, stored in numbered:
        yield stored


def list_query(
    mark: str, game_kind: str, tournament_id: str, before: int, limit: int
) -> tuple[str, list[object]]:
    """The game list's query for both stores (``mark``: the driver's parameter mark),
    newest first, before place ``before``, with the rows of finished games."""
    where: list[str] = ["TRUE"]
    params: list[object] = []
    for present, condition, value in (
        (before, "l.n < ", before),
        (game_kind, "l.game_kind = ", game_kind),
        (tournament_id, "l.tournament_id = ", tournament_id),
    ):
        if present:
            where.append(condition + mark)
            params.append(value)
    sql = (
        f"WITH page AS (SELECT * FROM games l WHERE {' AND '.join(where)} "
        f"ORDER BY l.n DESC LIMIT {mark}) "
        "SELECT p.n, p.game_id, p.game_kind, p.players, p.created_at, p.tournament_id, "
        "o.rows FROM page p LEFT JOIN outcome_games o USING (game_id) ORDER BY p.n DESC"
    )
    return sql, [*params, limit]


# Games dealt from the same server seed as game ? (a supplied seed: duplicate tables) that
# have not ended: no outcome (written in the commit that ends a game), running or waiting
# for seat entropy.  A store whose projection is not current asks the log instead (no seed
# reveal row), which reads the whole events table.
_TWINS = (
    "SELECT count(*) FROM seeds s JOIN seeds m ON s.server_seed = m.server_seed "
    "AND s.game_id <> m.game_id WHERE m.game_id = ? AND NOT EXISTS "
)
TWINS_RUNNING = _TWINS + "(SELECT 1 FROM outcome_games o WHERE o.game_id = s.game_id)"
TWINS_RUNNING_BY_LOG = (
    _TWINS + "(SELECT 1 FROM events e WHERE e.game_id = s.game_id AND e.kind = 'seed_reveal')"
)


# Every game dealt from server seed ?, oldest first, and when one's seed was revealed (its
# end: a point lookup by game, so a season's events are never scanned for it).
DEALT_FROM = (
    "SELECT s.game_id, l.created_at FROM seeds s JOIN games l ON l.game_id = s.game_id "
    "WHERE s.server_seed = ? ORDER BY l.n"
)
REVEALED_AT = "SELECT recorded_at FROM events WHERE game_id = ? AND kind = 'seed_reveal'"


def listed_of(found: Iterable[tuple[Any, ...]]) -> list[Listed]:
    """The game list's lines from the listing query's rows."""
    return [
        Listed(int(n), g, k, tuple(players), at, t, None if rows is None else int(rows))
        for n, g, k, players, at, t, rows in found
    ]


def rejections_of(found: Iterable[Sequence[Any]]) -> list[Rejection]:
    """Refused commands from the ``rejections`` columns, in their order."""
    return [
        Rejection(r[0], int(r[1]), r[2], r[3], bytes(r[4]), r[5], r[6], r[7], r[8], r[9])
        for r in found
    ]


REJECTION_COLUMNS = ", ".join(f.name for f in fields(Rejection))

# A shared victory of k winners gives each 1/k; k is at most 6 seats, so the standings'
# SQL sums wins in 60ths (exact), made a Fraction again after the sum.
WIN_PARTS = 60


def standings_query(win_share: str) -> str:
    """Each player's games, wins and points in a tournament, SQL over the projection
    (parameter ``?``: the tournament); ``win_share`` is the dialect's whole division of
    ``WIN_PARTS`` by the game's number of winners (``g.winners``).  Void games (and games
    closed before their end) count as played with no points and no wins; a forfeited seat
    never wins; players are matched by name."""
    return (
        f"SELECT s.name, count(*), sum(CASE WHEN g.scored AND s.won THEN {win_share} ELSE 0 "
        "END), sum(CASE WHEN g.scored THEN s.points ELSE 0 END) "
        "FROM outcome_seats s JOIN outcome_games g USING (game_id) "
        "WHERE g.tournament_id = ? GROUP BY s.name"
    )


# A tournament's finished games (parameter ``?``: the tournament).
TOURNAMENT_ENDED = "SELECT count(*) FROM outcome_games WHERE tournament_id = ?"


def standings_of(
    found: Iterable[Sequence[Any]], games: Sequence[Any] | None
) -> tuple[list[Standing], int]:
    """The standings from ``standings_query``'s rows, best first (wins, then points, then
    name), and the finished games from ``TOURNAMENT_ENDED``'s."""
    lines = [
        Standing(str(name), int(played), Fraction(int(wins), WIN_PARTS), int(points))
        for name, played, wins, points in found
    ]
    lines.sort(key=lambda s: (-s.wins, -s.points, s.name))
    return lines, int(games[0]) if games else 0


# The log tree (docs/record-format.md, "Proof beyond the operator"): every appended row's
# leaf at its place in one server-wide tree, written in the commit that appends the row;
# the signed tree heads, witnesses' cosignatures and every signing key the server used.
LEAF_COLUMNS = "position, game_id, seq, leaf_hash"
HEAD_COLUMNS = "size, root, signed_at, public_key, signature"
COSIGNATURE_COLUMNS = "size, root, signed_at, server_key, witness_key, witnessed_at, signature"
KEY_COLUMNS = "public_key, first_used"


def leaf_values(rows: Sequence[Row], first: int) -> list[list[object]]:
    """The ``log_leaves`` rows of rows appended from tree position ``first`` on."""
    return [[first + i, row.game_id, row.seq, leaf_hash_of(row)] for i, row in enumerate(rows)]


def leaves_query(mark: str) -> str:
    """The leaf hashes from a position on, in order (parameters: after, limit)."""
    return (
        f"SELECT leaf_hash FROM log_leaves WHERE position >= {mark} ORDER BY position LIMIT {mark}"
    )


def rows_from_query(table: str, column: str, mark: str) -> str:
    """The rows from a log position on, with it (parameters: from, limit); ``table`` and
    ``column``: where the position is kept (the leaves' table, or the events' own column)."""
    if table == "events":
        return (
            f"SELECT {column}, {ROW_COLUMNS} FROM events WHERE {column} >= {mark} "
            f"ORDER BY {column} LIMIT {mark}"
        )
    prefixed = ", ".join(f"e.{c.strip()}" for c in ROW_COLUMNS.split(","))
    return (
        f"SELECT l.{column}, {prefixed} FROM {table} l JOIN events e "
        f"ON e.game_id = l.game_id AND e.seq = l.seq WHERE l.{column} >= {mark} "
        f"ORDER BY l.{column} LIMIT {mark}"
    )


def position_query(mark: str) -> str:
    """A row's tree position (parameters: game id, seq)."""
    return f"SELECT position FROM log_leaves WHERE game_id = {mark} AND seq = {mark}"


def head_of(values: Sequence[Any]) -> TreeHead:
    """A tree head from its columns."""
    size, root, signed_at, public_key, signature = values
    return TreeHead(int(size), root, signed_at, public_key, signature)


def cosignature_of(values: Sequence[Any]) -> Cosignature:
    """A cosignature from its columns."""
    size, root, signed_at, server_key, witness_key, witnessed_at, signature = values
    return Cosignature(int(size), root, signed_at, server_key, witness_key, witnessed_at, signature)


def head_values(head: TreeHead) -> list[object]:
    """A tree head as its columns."""
    return [head.size, head.root, head.signed_at, head.public_key, head.signature]


def cosignature_values(cosigned: Cosignature) -> list[object]:
    """A cosignature as its columns."""
    c = cosigned
    return [c.size, c.root, c.signed_at, c.server_key, c.witness_key, c.witnessed_at, c.signature]
