"""A tournament's rows: its genesis, its commands and its seed reveal, hash-chained in the
record's format 2 exactly as a game's (``replay.record.rows``), and the fold of them.

Row kinds are the games' own: ``genesis`` (a ``feastlog.v1.Genesis`` of game kind
``tournament``, the format in its options), ``command`` (a ``TournamentCommand``; actor
``arbiter`` for the organiser's and arbiters' commands, ``server`` for what the server
derives or takes from the games: proposals of Swiss rounds and results) and
``seed_reveal``.  Each row's ``state_hash`` is the hash of the tournament folded to it.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from google.protobuf.message import DecodeError

from feastlog.replay.games.engine import Engine, RuleViolation
from feastlog.replay.games.fold import Table, outcome
from feastlog.replay.record.audit import RULE, STATE, Fault
from feastlog.replay.record.history import first_row
from feastlog.replay.record.rng import hmac_sha256, seed_commitment
from feastlog.replay.record.rows import (
    COMMAND,
    CURRENT_VERSION,
    SEED_REVEAL,
    SERVER,
    Row,
    make_row,
)
from feastlog.replay.tournament.fold import apply, begin, state_hash
from feastlog.replay.tournament.spec import KIND, read_format
from feastlog.replay.tournament.standings import places_of
from feastlog.replay.tournament.state import Tournament
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb

RULESET = "1"


def new_genesis(
    tournament_id: str,
    options: Mapping[str, str],
    server_seed: bytes,
    now: str,
    pack_id: str,
    pack_sha256: str,
) -> record_pb2.Genesis:
    """A tournament's genesis: every format option spelled out, the seed committed."""
    fmt = read_format(options)
    return record_pb2.Genesis(
        game_id=tournament_id,
        game_kind=KIND,
        ruleset_version=RULESET,
        pack_id=pack_id,
        pack_sha256=pack_sha256,
        options=fmt.options(),
        seed_commitment=seed_commitment(server_seed),
        # empty: its games carry the id, and the games' standings and lists count them alone
        tournament_id="",
        created_at=now,
        record_version=CURRENT_VERSION,
    )


def genesis_row(genesis: record_pb2.Genesis) -> tuple[Row, Tournament]:
    """The first row and the tournament it sets up."""
    state = begin(genesis)
    return first_row(genesis, state_hash(state), CURRENT_VERSION), state


def command_row(
    last: Row,
    state: Tournament,
    command: tpb.TournamentCommand,
    actor: str,
    now: str,
    server_seed: bytes,
    command_id: str = "",
) -> tuple[Row, Tournament]:
    """The next row for a command and the state after it (RuleViolation: refused)."""
    after = apply(state, command)
    row = make_row(
        last.game_id,
        last.seq + 1,
        COMMAND,
        actor,
        command.SerializeToString(deterministic=True),
        now,
        last.hash,
        state_hash(after),
        command_id,
        version=CURRENT_VERSION,
        server_seed=server_seed,
    )
    return row, after


def reveal_row(last: Row, state: Tournament, server_seed: bytes, now: str) -> Row:
    """The last row: the seed revealed, once the tournament has ended."""
    body = record_pb2.SeedReveal(server_seed=server_seed).SerializeToString(deterministic=True)
    return make_row(
        last.game_id,
        last.seq + 1,
        SEED_REVEAL,
        SERVER,
        body,
        now,
        last.hash,
        state_hash(state),
        version=CURRENT_VERSION,
    )


def fold_rows(rows: Sequence[Row]) -> list[Tournament]:
    """The state after each row (RuleViolation for a row that breaks a rule)."""
    genesis = record_pb2.Genesis.FromString(rows[0].body)
    states = [begin(genesis)]
    for row in rows[1:]:
        if row.kind == SEED_REVEAL:
            states.append(states[-1])
            continue
        if row.kind != COMMAND:
            raise RuleViolation("TOUR-END", f"row {row.seq} is a {row.kind}: only the first is")
        states.append(apply(states[-1], tpb.TournamentCommand.FromString(row.body)))
    return states


def is_tournament(genesis: record_pb2.Genesis) -> bool:
    """Whether a genesis is a tournament's."""
    return genesis.game_kind == KIND


def table_result(
    engine: Engine, table: Table, genesis: record_pb2.Genesis
) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """A finished table's (points, places, closed): its game's result with rulings applied;
    for a game closed before its end, the points as they stood (the arbiter's adjustments
    included) and places from them; for a void game every seat shares first place."""
    seats = len(genesis.seats)
    if table.voided:
        return (0,) * seats, (1,) * seats, True
    ended = outcome(engine, table)
    if ended is not None:
        return ended.points, places_of(ended.points, ended.winners), False
    base = engine.outcome(table.game)
    points = tuple(p + a for p, a in zip(base.points, table.adjustments, strict=True))
    contenders = [s for s in range(seats) if s not in table.forfeited]
    most = max((points[c] for c in contenders), default=None)
    winners = [s for s in contenders if points[s] == most]
    return points, places_of(points, winners), True


def fold_faults(rows: Sequence[Row]) -> tuple[int, list[Fault]]:
    """A tournament record's fold for an audit: (commands checked, faults): each row by
    the tournament's rules and each state hash (the chain, seed and commitments are the
    audit's own checks, as for a game's)."""
    try:
        state = begin(record_pb2.Genesis.FromString(rows[0].body))
    except (DecodeError, RuleViolation) as bad:
        return 0, [Fault(1, RULE, f"the tournament's format does not set up: {bad}")]
    faults = [] if state_hash(state) == rows[0].state_hash else [Fault(1, STATE, "state hash")]
    checked = 0
    for row in rows[1:]:
        if row.kind == COMMAND:
            try:
                state = apply(state, tpb.TournamentCommand.FromString(row.body))
            except (DecodeError, RuleViolation) as bad:
                return checked, [*faults, Fault(row.seq, RULE, str(bad))]
            checked += 1
        if state_hash(state) != row.state_hash:
            faults.append(Fault(row.seq, STATE, "the state hash is not the tournament's"))
    return checked, faults


def round_seed(server_seed: bytes, number: int) -> bytes:
    """The seed every table of duplicate round ``number`` is dealt from:
    HMAC-SHA256(tournament seed, "tournament/deal" || uint32_be(round))."""
    return hmac_sha256(server_seed, b"tournament/deal" + struct.pack(">I", number))
