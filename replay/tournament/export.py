"""A tournament's export (``feastlog tournament export``) and its verification.

The file is one JSON object: ``format`` ``feastlog-tournament``, ``version`` 1, the
tournament's id, its ``server_seed`` (hex, or null while it runs), its ``rows`` (as a
game's export writes them, the body decoded as a ``TournamentCommand``), and ``games``:
the export document of every published game that has ended (a running game's record
holds sealed commands, so it is left out until it ends), and ``held_back``: the ended
games left out because the reader may not export them yet (a duplicate round's table,
while another table dealt from the same seed runs: ``replay.record.visibility.Release``).

Verification (``verify_tournament``), with nothing but the file:

1. the tournament's chain, its game ids, the seed against its commitment and every
   command row's commitment (``replay.record.audit``'s checks, as for a game);
2. the fold: every row applies by the tournament's rules, and after each the state's
   hash is the row's ``state_hash``;
3. every Swiss proposal re-derived from the revealed seed, the standings and the history
   (``pairing.check_proposal``, which says which check it made);
4. every game's record verified as ``feastlog verify`` verifies one (``replay.record.export``);
   its genesis names the tournament and its seats are the published table's, in order;
   the result row of its table is what its record folds to (``table_result``);
5. the standings, recomputed from the fold (they are a function of the checked rows).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from feastlog.replay.games.engine import RuleViolation, SetupRefused
from feastlog.replay.games.fold import engine_of
from feastlog.replay.record.audit import check_chain, check_commitments, check_game_ids
from feastlog.replay.record.export import (
    BadExport,
    export_record,
    read_export,
    row_entry,
    to_text,
    verify_read,
)
from feastlog.replay.record.history import refold, revealed_seed
from feastlog.replay.record.rng import seed_commitment
from feastlog.replay.record.rows import CURRENT_VERSION, GENESIS, SEED_REVEAL, Row
from feastlog.replay.tournament.fold import apply, begin, state_hash
from feastlog.replay.tournament.pairing import METHOD, ROUND_ROBIN, Proposal, check_proposal
from feastlog.replay.tournament.record import round_seed, table_result
from feastlog.replay.tournament.standings import Line, standings
from feastlog.replay.tournament.state import Round, Tournament
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb

FORMAT = "feastlog-tournament"
VERSION = 1


def decoded_row(row: Row) -> tuple[str, str]:
    """(action, the body as protobuf JSON) of one tournament row."""
    if row.kind == GENESIS:
        message: Any = record_pb2.Genesis.FromString(row.body)
        action = ""
    elif row.kind == SEED_REVEAL:
        message = record_pb2.SeedReveal.FromString(row.body)
        action = ""
    else:
        message = tpb.TournamentCommand.FromString(row.body)
        action = message.WhichOneof("action") or ""
    text = json_format.MessageToJson(message, preserving_proto_field_name=True, indent=None)
    return action, text


def export_text(rows: Sequence[Row], games: Sequence[Any], held: Sequence[str] = ()) -> str:
    """The export document of a tournament and its ended games (``held``: the ids of
    ended games held back from this reader, left out and named)."""
    seed = revealed_seed(rows)
    entries = [row_entry(row, CURRENT_VERSION, tournament=True) for row in rows]
    documents = [
        export_record(g.rows, g.pack_body)
        for g in games
        if g.rows and g.rows[-1].kind == SEED_REVEAL
    ]
    return to_text(
        {
            "format": FORMAT,
            "version": VERSION,
            "tournament_id": rows[0].game_id,
            "server_seed": seed.hex() if seed is not None else None,
            "rows": entries,
            "games": documents,
            "held_back": list(held),
        }
    )


@dataclass
class TournamentReport:
    """What verifying a tournament's export found."""

    tournament_id: str
    faults: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    games_verified: int = 0
    standings: list[Line] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether everything verified."""
        return not self.faults

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data."""
        return {
            "tournament_id": self.tournament_id,
            "ok": self.ok,
            "faults": self.faults,
            "checks": self.checks,
            "games_verified": self.games_verified,
        }


def is_tournament_export(text: str) -> bool:
    """Whether a file's text is a tournament export (its format says so)."""
    if f'"format": "{FORMAT}"' not in text[:200] and f'"format":"{FORMAT}"' not in text[:200]:
        return False  # (its first key, as every export writes it: nothing else is parsed)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT


def _rows(document: dict[str, Any], tid: str) -> tuple[Row, ...]:
    entries = document.get("rows")
    if not isinstance(entries, list) or not entries:
        raise BadExport("its rows are not a list of row objects")
    out = []
    for i, e in enumerate(entries):
        try:
            out.append(
                Row(
                    tid,
                    int(e["seq"]),
                    str(e["kind"]),
                    str(e["actor"]),
                    str(e["command_id"]),
                    bytes.fromhex(e["body"]),
                    str(e["recorded_at"]),
                    str(e["prev_hash"]),
                    str(e["hash"]),
                    str(e["state_hash"]),
                    str(e.get("commitment", "")),
                )
            )
        except (KeyError, TypeError, ValueError) as bad:
            raise BadExport(f"rows[{i}] is not a row: {bad}") from None
    return tuple(out)


def verify_tournament(text: str) -> TournamentReport:
    """Verify a tournament's export (see the module's steps); BadExport for a file that is none."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as bad:
        raise BadExport(f"it is not JSON: {type(bad).__name__}") from None
    if (
        not isinstance(document, dict)
        or document.get("format") != FORMAT
        or document.get("version") != VERSION
    ):
        raise BadExport(f"not a {FORMAT} file of version {VERSION}")
    tid = document.get("tournament_id")
    if not isinstance(tid, str):
        raise BadExport("its tournament_id is not a string")
    rows = _rows(document, tid)
    report = TournamentReport(tid)
    try:
        genesis = record_pb2.Genesis.FromString(rows[0].body)
    except DecodeError:
        report.faults.append("seq 1: the genesis does not decode")
        return report
    if genesis.game_id != tid:
        report.faults.append(
            f"seq 1: the file's tournament_id is {tid!r}, the record's is {genesis.game_id!r}"
        )
    faults = check_chain(rows, CURRENT_VERSION) + check_game_ids(rows, genesis.game_id)
    seed = revealed_seed(rows) if rows[-1].kind == SEED_REVEAL else None
    if seed is not None and seed_commitment(seed) != genesis.seed_commitment:
        report.faults.append(
            f"seq {rows[-1].seq}: the revealed seed does not match the genesis commitment"
        )
        seed = None
    claimed = document.get("server_seed")
    if (seed.hex() if seed else None) != claimed:
        report.faults.append(f"header: the file's server_seed is {claimed!r}, the record's differs")
    if seed is not None:
        faults += check_commitments(rows, seed)
    report.faults += [f"seq {f.seq}: {f.kind}: {f.message}" for f in faults]
    proposals: list[tuple[Row, Tournament, tpb.ProposePairing]] = []
    states = _fold(rows, genesis, proposals, report)
    if states is None:
        return report
    report.checks.append(f"{len(rows)} rows folded, every state hash checked")
    games = _games(document, report)
    _check_games(states[-1], games, _held(document, report), report, seed)
    if report.faults:
        report.checks.append("pairings not re-derived: the record has faults already")
    else:
        for row, before, propose in proposals:
            if not _check_pairing(row, before, propose, seed, report):
                break  # later rounds follow from this one: the first that differs is named
    report.standings = standings(states[-1])
    return report


def _fold(
    rows: Sequence[Row],
    genesis: record_pb2.Genesis,
    proposals: list[tuple[Row, Tournament, tpb.ProposePairing]],
    report: TournamentReport,
) -> list[Tournament] | None:
    """Every state, checking rules and state hashes; each Swiss proposal noted in
    ``proposals`` with the state it was derived from, to be re-derived."""
    try:
        state = begin(genesis)
    except SetupRefused as bad:
        report.faults.append(f"seq 1: rule {bad.rule_id}: {bad.message}")
        return None
    states = [state]
    if state_hash(state) != rows[0].state_hash:
        report.faults.append("seq 1: state: the state hash differs")
    for row in rows[1:]:
        if row.kind == SEED_REVEAL:
            states.append(state)
            continue
        try:
            command = tpb.TournamentCommand.FromString(row.body)
            derived = (METHOD, ROUND_ROBIN)
            if command.WhichOneof("action") == "propose" and command.propose.method in derived:
                proposals.append((row, state, command.propose))
            state = apply(state, command)
        except (DecodeError, RuleViolation) as bad:
            why = (
                f"rule {bad.rule_id}: {bad.message}"
                if isinstance(bad, RuleViolation)
                else "it does not decode"
            )
            report.faults.append(f"seq {row.seq}: {why}")
            return None
        if state_hash(state) != row.state_hash:
            report.faults.append(f"seq {row.seq}: state: the state hash differs")
        states.append(state)
    return states


def _check_pairing(
    row: Row,
    state: Tournament,
    propose: tpb.ProposePairing,
    seed: bytes | None,
    report: TournamentReport,
) -> bool:
    """Whether a Swiss proposal is the seed's (noted in the report either way)."""
    if seed is None:
        report.checks.append(
            f"round {propose.round}: pairing not re-derived (the seed is not revealed)"
        )
        return True
    base = state
    current = state.current
    if current is not None and not current.published:
        from dataclasses import replace

        base = replace(state, rounds=state.rounds[:-1])
    recorded = Proposal(
        tuple(tuple(t.players) for t in propose.tables),
        tuple(propose.byes),
        propose.method,
        propose.solver,
        propose.objective,
        propose.status,
    )
    try:
        ok, how = check_proposal(base, seed, recorded)
    except RuleViolation as bad:  # nothing could have been derived from this state
        ok, how = False, f"no pairing derives from the state before it ({bad.message})"
    report.checks.append(f"round {propose.round}: pairing {how}")
    if not ok:
        report.faults.append(
            f"seq {row.seq}: rule TOUR-PAIR-DERIVED: "
            f"round {propose.round}'s pairing is not the seed's ({how})"
        )
    return ok


def _games(document: dict[str, Any], report: TournamentReport) -> dict[str, Any]:
    """Each game's record verified: its id → (genesis, report, refolded table)."""
    found: dict[str, Any] = {}
    entries = document.get("games")
    if not isinstance(entries, list):
        report.faults.append("games: not a list of records")
        return found
    for i, entry in enumerate(entries):
        try:
            read, record = read_export(json.dumps(entry))
        except BadExport as bad:
            report.faults.append(f"games[{i}]: not a record: {bad}")
            continue
        checked = verify_read(read, record)
        if not checked.ok:
            first = checked.faults[0]
            report.faults.append(
                f"game {checked.game_id}: seq {first.seq}: {first.kind}: {first.message}"
            )
            continue
        assert record.server_seed is not None  # an ended game's record reveals its seed
        folded = refold(record.rows, record.server_seed, record.pack_bytes)
        found[checked.game_id] = (folded.genesis, folded.tables[-1])
        report.games_verified += 1
    return found


def _held(document: dict[str, Any], report: TournamentReport) -> set[str]:
    """The games the file says were held back from its reader (none in older files)."""
    held = document.get("held_back", [])
    if not isinstance(held, list) or not all(isinstance(g, str) for g in held):
        report.faults.append("held_back: not a list of game ids")
        return set()
    return set(held)


def _holds(round_: Round, game_id: str) -> bool:
    """Whether a game of this round may be held back: its round was dealt from one seed
    and another of its tables has no result yet (its game still runs)."""
    return any(
        g != game_id and r is None for g, r in zip(round_.game_ids, round_.results, strict=False)
    )


def _check_games(
    state: Tournament,
    games: dict[str, Any],
    held: set[str],
    report: TournamentReport,
    seed: bytes | None,
) -> None:
    """Each published table's game: the tournament's, the table's seats, the result recorded;
    a game held back only where a duplicate round's other table still runs."""
    published = {g for r in state.rounds for g in r.game_ids}
    for game_id in sorted(held - published):
        report.faults.append(f"held_back: {game_id} is no game of this tournament")
    for round_ in state.rounds:
        for t, (players, game_id) in enumerate(
            zip(round_.tables, round_.game_ids, strict=False), start=1
        ):
            result = round_.results[t - 1] if round_.results else None
            where = f"round {round_.number} table {t} ({game_id})"
            if game_id in held:
                if game_id in games or not state.format.duplicate or not _holds(round_, game_id):
                    report.faults.append(
                        f"{where}: its record is held back, though no other game of its "
                        "deal is running"
                    )
                else:
                    report.checks.append(
                        f"{where}: held back until every table of round {round_.number} "
                        "(one deal) has ended"
                    )
                continue
            if game_id not in games:
                if result is not None:
                    report.faults.append(
                        f"{where}: its record is missing, its result is in the stream"
                    )
                continue
            genesis, table = games[game_id]
            if genesis.tournament_id != state.tournament_id:
                report.faults.append(
                    f"{where}: its genesis names tournament {genesis.tournament_id!r}"
                )
            if tuple(s.name for s in genesis.seats) != players:
                report.faults.append(f"{where}: its seats are not the published table's")
            dealt = round_seed(seed, round_.number) if seed is not None else None
            if (
                state.format.duplicate
                and dealt is not None
                and (not genesis.seed_supplied or genesis.seed_commitment != seed_commitment(dealt))
            ):
                report.faults.append(f"{where}: it is not dealt from round {round_.number}'s seed")
            if result is None:
                report.faults.append(f"{where}: the game ended but the stream has no result for it")
                continue
            points, places, closed = table_result(engine_of(genesis), table, genesis)
            if (points, places, closed) != (result.points, result.places, result.closed):
                report.faults.append(
                    f"{where}: the stream's result (points {list(result.points)}, places "
                    f"{list(result.places)}) is not the record's "
                    f"(points {list(points)}, places {list(places)})"
                )
    report.checks.append(f"{len(games)} game records verified and matched to their tables")
