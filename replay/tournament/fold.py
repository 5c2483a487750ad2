"""The fold of a tournament's stream: each command checked in a fixed order, then the new
state.  Checks raise ``RuleViolation(rule_id, message)`` in the organiser's words.

Order: the tournament has not ended (TOUR-END) → the command's own checks → its effect.
Who may send what is the application's (TOUR-ROLE): the organiser and named arbiters
send every command but results and proposals of a Swiss round, which the server writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.games.text import unprintable
from feastlog.replay.record.canonical import canonical_bytes, sha256_hex
from feastlog.replay.tournament.spec import EXTENSION_MINUTES, PENALTIES, Format, read_format
from feastlog.replay.tournament.state import Entrant, Penalty, Result, Round, Tournament
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb

NAME_MOST = 40  # the input policy's bound of a name (service/app/bounds.py)


def begin(genesis: record_pb2.Genesis) -> Tournament:
    """A tournament as its genesis sets it up (SetupRefused for a format it cannot take)."""
    return Tournament(genesis.game_id, read_format(dict(genesis.options)))


def state_hash(state: Tournament) -> str:
    """sha256 of the canonical JSON of the state, as a row's state_hash."""
    return sha256_hex(canonical_bytes(state))


def apply(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    """The state after one command; RuleViolation when it breaks a rule."""
    if state.ended:
        raise RuleViolation("TOUR-END", "the tournament has ended: nothing more is recorded")
    action = command.WhichOneof("action")
    if action is None:
        raise RuleViolation("TOUR-FORMAT", "the command names no action")
    return _ACTIONS[action](state, command)


def _reason(command: tpb.TournamentCommand, what: str) -> None:
    if not command.reason.strip():
        raise RuleViolation("TOUR-REASON", f"{what} needs a reason, for the record")


def _known(state: Tournament, name: str) -> Entrant:
    found = state.entrant(name)
    if found is None:
        raise RuleViolation("TOUR-PLAYER-UNKNOWN", f"{name!r} is not registered in this tournament")
    return found


def _register(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    name = command.register.name
    bad = unprintable(name)
    if not name.strip() or name != name.strip() or len(name) > NAME_MOST or bad:
        raise RuleViolation(
            "TOUR-NAME",
            f"a player's name is 1 to {NAME_MOST} characters of plain text"
            + (f" ({bad})" if bad else ""),
        )
    if state.entrant(name) is not None:
        raise RuleViolation("TOUR-REGISTER-TWICE", f"{name} is registered already")
    if state.rounds and not (state.format.late_entry and state.between_rounds()):
        when = (
            "the format has no late entry"
            if not state.format.late_entry
            else "a round is under way"
        )
        raise RuleViolation("TOUR-REGISTER-CLOSED", f"{name} cannot register now: {when}")
    entered = len(state.rounds) + 1
    return replace(state, players=(*state.players, Entrant(name, entered)))


def _dropped(state: Tournament, name: str, disqualified: bool) -> Tournament:
    """The player plays no round after the current one (none yet: no round at all)."""
    last = sum(1 for r in state.rounds if r.published)
    players = tuple(
        replace(p, last_round=last, disqualified=p.disqualified or disqualified)
        if p.name == name
        else p
        for p in state.players
    )
    return replace(state, players=players)


def _drop(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    name = command.drop.name
    player = _known(state, name)
    if not player.active():
        raise RuleViolation("TOUR-DROPPED", f"{name} has dropped already")
    _reason(command, "a drop")
    current = state.current
    if current is not None and not current.published and _place(current, name) is not None:
        raise RuleViolation(
            "TOUR-DROPPED",
            f"{name} is seated in the proposed round {current.number}: "
            "swap them out or pair the round again",
        )
    return _dropped(state, name, disqualified=False)


def check_tables(
    state: Tournament, tables: tuple[tuple[str, ...], ...], byes: tuple[str, ...], rule: str
) -> None:
    """Every active player seated once or given a bye, nobody else; tables of allowed sizes."""
    fmt: Format = state.format
    seen: list[str] = [p for t in tables for p in t] + list(byes)
    for name in seen:
        player = _known(state, name)
        if not player.active():
            raise RuleViolation("TOUR-DROPPED", f"{name} has dropped and cannot be seated")
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise RuleViolation(rule, f"{twice[0]} would sit at two places in one round")
    missing = [n for n in state.active() if n not in seen]
    if missing:
        raise RuleViolation(rule, f"{missing[0]} is neither seated nor given a bye")
    for number, table in enumerate(tables, start=1):
        if len(table) not in fmt.sizes():
            raise RuleViolation(
                "TOUR-TABLE-SIZE",
                f"table {number} has {len(table)} players; "
                f"tables seat {fmt.smallest} to {fmt.largest}",
            )


def _propose(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    proposal = command.propose
    current = state.current
    if current is not None and not current.complete:
        if current.published:
            raise RuleViolation(
                "TOUR-PAIR-UNFINISHED",
                f"round {current.number} is not finished: every table needs its result first",
            )
        state = replace(state, rounds=state.rounds[:-1])  # a new proposal replaces the old
    number = len(state.rounds) + 1
    if proposal.round != number:
        raise RuleViolation(
            "TOUR-ROUNDS", f"the next round is round {number}, not {proposal.round}"
        )
    if number > state.format.rounds:
        raise RuleViolation(
            "TOUR-ROUNDS", f"the format has {state.format.rounds} rounds, all paired"
        )
    tables = tuple(tuple(t.players) for t in proposal.tables)
    byes = tuple(proposal.byes)
    check_tables(state, tables, byes, "TOUR-FIXED-PODS")
    made = Round(
        number, tables, byes, proposal.method, proposal.solver, proposal.objective, proposal.status
    )
    return replace(state, rounds=(*state.rounds, made))


def _proposed(state: Tournament) -> Round:
    current = state.current
    if current is None or current.complete:
        raise RuleViolation("TOUR-NO-PROPOSAL", "no round is proposed: pair one first")
    if current.published:
        raise RuleViolation(
            "TOUR-PUBLISHED", f"round {current.number} is published and stays as it is"
        )
    return current


def _with_round(state: Tournament, made: Round) -> Tournament:
    return replace(state, rounds=(*state.rounds[:-1], made))


def _place(round_: Round, name: str) -> tuple[int, int] | None:
    """(table, seat) of a seated player; (-1, i) for the i-th bye."""
    found = round_.table_of(name)
    if found is not None:
        return found
    return (-1, round_.byes.index(name)) if name in round_.byes else None


def _put(round_: Round, moves: dict[str, tuple[int, int]]) -> Round:
    tables = [list(t) for t in round_.tables]
    byes = list(round_.byes)
    for name, (t, s) in moves.items():
        (byes if t < 0 else tables[t])[s] = name
    return replace(
        round_, tables=tuple(map(tuple, tables)), byes=tuple(byes), changes=round_.changes + 1
    )


def _swap(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    current = _proposed(state)
    first, second = command.swap.first, command.swap.second
    if first == second:
        raise RuleViolation("TOUR-SWAP", f"a swap takes two different players, not {first} twice")
    _reason(command, "a swap")
    places = {}
    for name in (first, second):
        player = _known(state, name)
        if not player.active():
            raise RuleViolation("TOUR-DROPPED", f"{name} has dropped and cannot be seated")
        place = _place(current, name)
        if place is None:
            raise RuleViolation("TOUR-SWAP", f"{name} is not in the proposed round")
        places[name] = place
    return _with_round(state, _put(current, {first: places[second], second: places[first]}))


def _fix(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    current = _proposed(state)
    fix = command.fix
    player = _known(state, fix.name)
    if not player.active():
        raise RuleViolation("TOUR-DROPPED", f"{fix.name} has dropped and cannot be seated")
    if not 1 <= fix.table <= len(current.tables) or fix.seat >= len(current.tables[fix.table - 1]):
        raise RuleViolation(
            "TOUR-FIX", f"round {current.number} has no table {fix.table}, seat {fix.seat}"
        )
    _reason(command, "a fixed table")
    mine = _place(current, fix.name)
    if mine is None:
        raise RuleViolation("TOUR-FIX", f"{fix.name} is not in the proposed round")
    target = (fix.table - 1, fix.seat)
    there = current.tables[target[0]][target[1]]
    return _with_round(state, _put(current, {fix.name: target, there: mine}))


def _publish(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    current = _proposed(state)
    publish = command.publish
    if publish.round != current.number:
        raise RuleViolation(
            "TOUR-NO-PROPOSAL", f"the proposed round is {current.number}, not {publish.round}"
        )
    if len(publish.game_ids) != len(current.tables):
        raise RuleViolation(
            "TOUR-PUBLISHED",
            f"round {current.number} has {len(current.tables)} tables, one game each",
        )
    made = replace(current, game_ids=tuple(publish.game_ids), results=(None,) * len(current.tables))
    return _with_round(state, made)


def _running(state: Tournament, number: int) -> Round:
    current = state.current
    if current is None or current.number != number or not current.published:
        raise RuleViolation("TOUR-CLOCK", f"round {number} is not the published round")
    return current


def _start(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    current = _running(state, command.start_clock.round)
    if current.minutes:
        raise RuleViolation("TOUR-CLOCK", f"round {current.number}'s clock has started already")
    minutes = command.start_clock.minutes or state.format.round_minutes
    return _with_round(state, replace(current, minutes=minutes))


def _extend(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    extend = command.extend_clock
    current = _running(state, extend.round)
    if not current.minutes or current.called:
        raise RuleViolation("TOUR-CLOCK", f"round {current.number}'s clock is not running")
    if extend.table > len(current.tables):
        raise RuleViolation("TOUR-TABLE", f"round {current.number} has no table {extend.table}")
    low, high = EXTENSION_MINUTES
    if not low <= extend.minutes <= high:
        raise RuleViolation("TOUR-CLOCK", f"an extension is {low} to {high} minutes")
    _reason(command, "an extension")
    made = replace(current, extensions=(*current.extensions, (extend.table, extend.minutes)))
    return _with_round(state, made)


def _call(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    current = _running(state, command.call_time.round)
    if not current.minutes or current.called:
        raise RuleViolation("TOUR-CLOCK", f"round {current.number}'s clock is not running")
    return _with_round(state, replace(current, called=True))


def _result(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    result = command.result
    current = state.current
    if current is None or current.number != result.round or not current.published:
        raise RuleViolation("TOUR-RESULT", f"round {result.round} is not the published round")
    index = result.table - 1
    if not 0 <= index < len(current.tables) or current.game_ids[index] != result.game_id:
        raise RuleViolation("TOUR-RESULT", f"game {result.game_id} is not table {result.table}")
    if current.results[index] is not None:
        raise RuleViolation("TOUR-RESULT", f"table {result.table} has its result already")
    seats = len(current.tables[index])
    if len(result.points) != seats or len(result.places) != seats:
        raise RuleViolation("TOUR-RESULT", f"table {result.table} has {seats} seats")
    made = Result(result.game_id, tuple(result.points), tuple(result.places), result.closed)
    results = tuple(made if i == index else r for i, r in enumerate(current.results))
    return _with_round(state, replace(current, results=results))


def _penalty(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    penalty = command.penalty
    _known(state, penalty.name)
    if penalty.penalty not in PENALTIES:
        raise RuleViolation(
            "TOUR-PENALTY", f"a penalty is one of {', '.join(PENALTIES)}, not {penalty.penalty!r}"
        )
    if not 1 <= penalty.round <= len(state.rounds):
        raise RuleViolation("TOUR-PENALTY", f"round {penalty.round} has not been paired")
    if (
        penalty.penalty == "game_loss"
        and state.rounds[penalty.round - 1].table_of(penalty.name) is None
    ):
        raise RuleViolation(
            "TOUR-PENALTY", f"{penalty.name} played no game in round {penalty.round}"
        )
    _reason(command, "a penalty")
    made = Penalty(penalty.name, penalty.penalty, penalty.round, command.by, command.reason)
    state = replace(state, penalties=(*state.penalties, made))
    if penalty.penalty == "disqualification":
        entrant = state.entrant(penalty.name)
        if entrant is not None and entrant.active():
            state = _dropped(state, penalty.name, disqualified=True)
        else:
            state = replace(
                state,
                players=tuple(
                    replace(p, disqualified=True) if p.name == penalty.name else p
                    for p in state.players
                ),
            )
    return state


def _end(state: Tournament, command: tpb.TournamentCommand) -> Tournament:
    if not state.between_rounds():
        raise RuleViolation(
            "TOUR-END", "the last round is not finished: every table needs its result first"
        )
    return replace(state, ended=True)


_ACTIONS: dict[str, Callable[[Tournament, tpb.TournamentCommand], Tournament]] = {
    "register": _register,
    "drop": _drop,
    "propose": _propose,
    "swap": _swap,
    "fix": _fix,
    "publish": _publish,
    "start_clock": _start,
    "extend_clock": _extend,
    "call_time": _call,
    "result": _result,
    "penalty": _penalty,
    "end": _end,
}
