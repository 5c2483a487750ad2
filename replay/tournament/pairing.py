"""Pairing a Swiss round: deterministic from the tournament's seed, standings and history.

1. **Order.** The active players are shuffled with the tournament seed (stream
   ``tournament/order/<round>``, over their names sorted), then sorted by the standings'
   key (match points, then the format's tiebreaks): equal standings are in seeded order.
2. **Plan.** ``table_plan``: as few tables as the largest size allows, sizes as even as
   they can be (13 players at 3-4 seats: 4, 3, 3, 3), larger tables first; when no plan
   seats everyone, the fewest players possible get a bye, from the bottom of the order
   among those with the fewest byes so far.
3. **Groups.** Up to ``SINGLE`` seated players are paired in one model; more are cut, in
   order, into groups of consecutive tables of at least ``GROUP_SEATS`` seats (Swiss score
   groups), each solved alone.
4. **Solve.** OR-Tools CP-SAT, one worker, ``random_seed`` from the seed, a deterministic
   time limit of ``DETERMINISTIC_TIME`` per group (no wall clock), hinted with the plain
   arrangement (tables in order, seats by least-used position).  The objective, lower is
   better, is ``score``: ``W_REPEAT`` per earlier meeting of two table-mates, ``W_SPREAD``
   per half place of standing between each player and their table's slot (the middle of
   the places the plain arrangement gives that table), and ``W_SEAT`` per seat taken more
   often than the player's least-used seat: the solver places players at tables, then
   each table's seats are the first ordering with the fewest such seats (``seat_order``).

The solver's version goes into the proposal row; a verifier with another version checks
the constraints and that ``score`` is no worse than the recorded objective.
"""

from __future__ import annotations

import itertools
import struct
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.record.rng import Rng, hmac_sha256
from feastlog.replay.tournament.fold import state_hash
from feastlog.replay.tournament.spec import Format
from feastlog.replay.tournament.standings import order_key, standings
from feastlog.replay.tournament.state import Tournament

W_REPEAT = 10_000
W_SEAT = 1_000
W_SPREAD = 1
SINGLE = 64
GROUP_SEATS = 40
DETERMINISTIC_TIME = 1.0
METHOD = "swiss-cp-sat"

Meetings = Counter[tuple[str, str]]


@dataclass(frozen=True)
class Proposal:
    """A derived pairing: tables (players in seat order), byes, and how it was made."""

    tables: tuple[tuple[str, ...], ...]
    byes: tuple[str, ...]
    method: str
    solver: str
    objective: int
    status: str


def solver_name() -> str:
    """The solver and its version, as the proposal row records it."""
    from importlib.metadata import version

    return f"ortools-cp-sat {version('ortools')}"


def table_plan(players: int, fmt: Format) -> tuple[tuple[int, ...], int]:
    """(table sizes, larger first; how many byes) for this many players."""
    for byes in range(players + 1):
        seated = players - byes
        if seated == 0:
            return (), byes
        tables = -(-seated // fmt.largest)
        if tables * fmt.smallest <= seated:
            base, extra = divmod(seated, tables)
            return tuple([base + 1] * extra + [base] * (tables - extra)), byes
    return (), players


def history(state: Tournament) -> tuple[Meetings, dict[str, Counter[int]], Counter[str]]:
    """From the published rounds: how often each pair met, each player's seats, byes."""
    met: Meetings = Counter()
    seats: dict[str, Counter[int]] = {p.name: Counter() for p in state.players}
    byes: Counter[str] = Counter()
    for round_ in state.rounds:
        if not round_.published:
            continue
        byes.update(round_.byes)
        for table in round_.tables:
            for seat, name in enumerate(table):
                seats[name][seat] += 1
            for a, b in itertools.combinations(sorted(table), 2):
                met[a, b] += 1
    return met, seats, byes


def seeded_order(state: Tournament, seed: bytes, number: int) -> tuple[str, ...]:
    """The active players by standing, equal standings in the seed's order."""
    shuffled, _ = Rng(seed).shuffle(f"tournament/order/{number}", sorted(state.active()))
    lines = {line.name: line for line in standings(state)}
    return tuple(sorted(shuffled, key=lambda n: order_key(state.format, lines[n])[:-1]))


def over(seats: Counter[int], seat: int, largest: int) -> int:
    """How many more times a player sat at ``seat`` than at their least-used seat."""
    return seats[seat] - min(seats[s] for s in range(largest))


def score(
    tables: Sequence[Sequence[str]],
    order: Sequence[str],
    met: Meetings,
    seats: dict[str, Counter[int]],
    largest: int,
) -> int:
    """The objective of a pairing (docs/tournament.md): lower is better."""
    rank = {name: i for i, name in enumerate(order)}
    seated = sorted((n for t in tables for n in t), key=rank.__getitem__)
    local = {n: i for i, n in enumerate(seated)}
    slot = slots([len(t) for t in tables])
    total = 0
    for t, table in enumerate(tables):
        total += W_REPEAT * sum(met[a, b] for a, b in itertools.combinations(sorted(table), 2))
        total += W_SEAT * sum(
            over(seats.get(n, Counter()), s, largest) for s, n in enumerate(table)
        )
        total += W_SPREAD * sum(abs(2 * local[n] - slot[t]) for n in table)
    return total


def _solver_seed(seed: bytes, number: int, group: int) -> int:
    """CP-SAT's random_seed for one group: from the tournament seed, 31 bits."""
    digest = hmac_sha256(seed, b"tournament/solver" + struct.pack(">II", number, group))
    return int.from_bytes(digest[:4], "big") >> 1


def slots(sizes: Sequence[int], first: int = 0) -> list[int]:
    """Each table's standing slot, doubled: first + last place of the players the plain
    arrangement (consecutive players, in order) would seat there."""
    out, start = [], first
    for size in sizes:
        out.append(2 * start + size - 1)
        start += size
    return out


def seat_order(
    table: Sequence[str], seats: dict[str, Counter[int]], largest: int
) -> tuple[str, ...]:
    """A table's players in seat order: of every ordering, the first (players taken in
    the order given) with the fewest seats taken more than the player's least-used one."""
    best = min(
        itertools.permutations(table),
        key=lambda seating: sum(over(seats[n], s, largest) for s, n in enumerate(seating)),
    )
    return tuple(best)


def _solve_group(
    players: Sequence[str],
    sizes: Sequence[int],
    met: Meetings,
    seats: dict[str, Counter[int]],
    largest: int,
    random_seed: int,
) -> tuple[list[tuple[str, ...]], str]:
    """One group's tables (seated) and the solver's status: first with every player on
    one of their least-used seats (seat balance kept within one), and only when no such
    pairing exists with seats free, their overuse costed (status ``… SEATS-SOFT``)."""
    balanced = _model(players, sizes, met, seats, largest, random_seed, kept=True)
    if balanced is not None:
        return balanced
    found = _model(players, sizes, met, seats, largest, random_seed, kept=False)
    assert found is not None  # with seats free there is always a pairing
    tables, status = found
    return tables, f"{status} SEATS-SOFT"


def _model(
    players: Sequence[str],
    sizes: Sequence[int],
    met: Meetings,
    seats: dict[str, Counter[int]],
    largest: int,
    random_seed: int,
    kept: bool,
) -> tuple[list[tuple[str, ...]], str] | None:
    """Solve one group; None when ``kept`` (least-used seats only) leaves no pairing."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    m, tables = len(players), range(len(sizes))
    slot = slots(sizes)
    x = {
        (p, t, s): model.new_bool_var(f"x{p}_{t}_{s}")
        for p in range(m)
        for t in tables
        for s in range(sizes[t])
        if not kept or over(seats[players[p]], s, largest) == 0
    }
    at: dict[tuple[int, int], list[Any]] = {(p, t): [] for p in range(m) for t in tables}
    by_seat: dict[tuple[int, int], list[Any]] = {
        (t, s): [] for t in tables for s in range(sizes[t])
    }
    for (p, t, s), var in x.items():
        at[p, t].append(var)
        by_seat[t, s].append(var)
    if any(not candidates for candidates in by_seat.values()):
        return None
    y = {key: sum(found) for key, found in at.items()}
    for p in range(m):
        model.add_exactly_one(v for t in tables for v in at[p, t])
    for candidates in by_seat.values():
        model.add_exactly_one(candidates)
    terms = []
    for p, q in itertools.combinations(range(m), 2):
        times = met[min(players[p], players[q]), max(players[p], players[q])]
        if times:
            together = model.new_bool_var(f"z{p}_{q}")
            for t in tables:
                model.add(together >= y[p, t] + y[q, t] - 1)
            terms.append(W_REPEAT * times * together)
    for (p, t, s), var in x.items():
        cost = W_SPREAD * abs(2 * p - slot[t]) + W_SEAT * over(seats[players[p]], s, largest)
        if cost:
            terms.append(cost * var)
    model.minimize(sum(terms))
    plain = [
        seat_order(players[a:b], seats, largest)
        for a, b in itertools.pairwise(itertools.accumulate(sizes, initial=0))
    ]
    hinted = {
        (players.index(n), t, s) for t, table in enumerate(plain) for s, n in enumerate(table)
    }
    for key, var in x.items():  # the plain arrangement, as a hint
        model.add_hint(var, int(key in hinted))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = random_seed
    solver.parameters.max_deterministic_time = DETERMINISTIC_TIME
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE or (
        kept and status not in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    ):
        return None
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return [tuple(t) for t in plain], "HINT"
    out: list[list[str]] = [[""] * size for size in sizes]
    for (p, t, s), var in x.items():
        if solver.value(var):
            out[t][s] = players[p]
    return [tuple(t) for t in out], solver.status_name(status)


def groups(sizes: Sequence[int]) -> list[tuple[int, int]]:
    """(first table, tables) of each group: one group up to SINGLE seats, else runs of
    consecutive tables of at least GROUP_SEATS seats (the last may take the rest)."""
    if sum(sizes) <= SINGLE:
        return [(0, len(sizes))] if sizes else []
    out, start, seats = [], 0, 0
    for t, size in enumerate(sizes):
        seats += size
        if seats >= GROUP_SEATS and sum(sizes[t + 1 :]) >= GROUP_SEATS:
            out.append((start, t + 1 - start))
            start, seats = t + 1, 0
    out.append((start, len(sizes) - start))
    return out


_DERIVED: dict[tuple[str, bytes], Proposal] = {}  # the same state and seed: the same pairing
_DERIVED_KEPT = 256


def propose(state: Tournament, seed: bytes) -> Proposal:
    """The Swiss pairing of the next round; RuleViolation when it cannot be paired.

    The derivation is a function of the state and the seed, so one already made in this
    process is taken again (a verifier checking several copies of one tournament)."""
    key = (state_hash(state), seed)
    found = _DERIVED.get(key)
    if found is None:
        found = _derive(state, seed)
        if len(_DERIVED) >= _DERIVED_KEPT:
            _DERIVED.pop(next(iter(_DERIVED)))
        _DERIVED[key] = found
    return found


def _derive(state: Tournament, seed: bytes) -> Proposal:
    fmt = state.format
    number = len([r for r in state.rounds if r.published]) + 1
    order = seeded_order(state, seed, number)
    sizes, bye_count = table_plan(len(order), fmt)
    if not sizes:
        raise RuleViolation(
            "TOUR-PAIR-PLAYERS",
            f"{len(order)} active players cannot fill a table of {fmt.smallest}",
        )
    met, seats, had = history(state)
    by_bottom = list(reversed(order))
    byes = tuple(sorted(by_bottom, key=lambda n: (had[n], by_bottom.index(n)))[:bye_count])
    seated = [n for n in order if n not in byes]
    tables: list[tuple[str, ...]] = []
    statuses = []
    start = 0
    for g, (first, count) in enumerate(groups(sizes)):
        part = sizes[first : first + count]
        players = seated[start : start + sum(part)]
        start += sum(part)
        found, status = _solve_group(
            players, part, met, seats, fmt.largest, _solver_seed(seed, number, g)
        )
        tables += found
        statuses.append(status)
    worst = max(statuses, key=_worse)
    made = tuple(tuple(t) for t in tables)
    return Proposal(
        made, byes, METHOD, solver_name(), score(made, order, met, seats, fmt.largest), worst
    )


def _worse(status: str) -> tuple[bool, int]:
    """How bad a group's status is: seats soft first, then HINT, FEASIBLE, OPTIMAL."""
    word = status.split(" ")[0]
    return status.endswith("SEATS-SOFT"), ("OPTIMAL", "FEASIBLE", "HINT").index(word)


def check_proposal(state: Tournament, seed: bytes, recorded: Proposal) -> tuple[bool, str]:
    """Whether a recorded Swiss proposal is the seed's, and which check said so: the same
    pairing re-derived (same solver version), or, under another version, every constraint
    met and a score no worse than the recorded objective."""
    if recorded.method == ROUND_ROBIN:
        again = round_robin(state, seed)
        same = (again.tables, again.byes) == (recorded.tables, recorded.byes)
        return same, "round robin re-derived" + ("" if same else ": the tables differ")
    fmt = state.format
    number = len([r for r in state.rounds if r.published]) + 1
    order = seeded_order(state, seed, number)
    met, seats, _ = history(state)
    scored = (
        score(recorded.tables, order, met, seats, fmt.largest)
        if set(order) >= {n for t in recorded.tables for n in t}
        else None
    )
    if recorded.solver == solver_name():
        again = propose(state, seed)
        same = (again.tables, again.byes, again.objective) == (
            recorded.tables,
            recorded.byes,
            recorded.objective,
        )
        return same, "re-derived with the same solver version" + (
            "" if same else ": the pairing differs"
        )
    sizes, bye_count = table_plan(len(order), fmt)
    ok = (
        scored is not None
        and tuple(sorted(map(len, recorded.tables), reverse=True)) == sizes
        and len(recorded.byes) == bye_count
        and sorted([n for t in recorded.tables for n in t] + list(recorded.byes)) == sorted(order)
        and scored <= recorded.objective
    )
    return ok, (
        f"solver {recorded.solver} recorded, {solver_name()} here: constraints checked and the "
        f"score {scored} against the recorded objective {recorded.objective}"
    )


# Round robin: for n = q * q players in tables of q (q = 3, 4 or 5), the q + 1 parallel
# classes of the affine plane over GF(q) seat every pair together exactly once.
ROUND_ROBIN = "round-robin"
_ADD = {4: [[a ^ b for b in range(4)] for a in range(4)]}
_MUL = {4: [[0, 0, 0, 0], [0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2]]}  # GF(4), x^2 = x + 1


def _field(q: int) -> tuple[list[list[int]], list[list[int]]]:
    if q in _ADD:
        return _ADD[q], _MUL[q]
    return (
        [[(a + b) % q for b in range(q)] for a in range(q)],
        [[(a * b) % q for b in range(q)] for a in range(q)],
    )


def round_robin_allowed(players: int, fmt: Format) -> bool:
    """Whether the count allows a round robin: q * q players at tables of exactly q
    (q = 3, 4 or 5) for at most q + 1 rounds."""
    q = fmt.largest
    return fmt.smallest == q and q in (3, 4, 5) and players == q * q and fmt.rounds <= q + 1


def round_robin(state: Tournament, seed: bytes) -> Proposal:
    """Round ``r`` of the round robin: the players of round 1 in the seed's order (stream
    ``tournament/order/1``) as the points (i // q, i % q) of the plane; round r < q + 1
    seats the line y = (r - 1) x + b at table b + 1, round q + 1 the line x = c at table
    c + 1; each table's seats as a Swiss table's (``seat_order``)."""
    fmt = state.format
    number = len([r for r in state.rounds if r.published]) + 1
    players = list(Rng(seed).shuffle("tournament/order/1", sorted(state.active()))[0])
    if not round_robin_allowed(len(players), fmt) or number > fmt.largest + 1:
        raise RuleViolation(
            "TOUR-ROUNDS",
            f"a round robin takes {fmt.largest * fmt.largest} active players at tables of "
            f"{fmt.largest}, for {fmt.largest + 1} rounds at most",
        )
    q = fmt.largest
    add, mul = _field(q)
    _, seats, _ = history(state)
    tables: list[list[str]] = [[] for _ in range(q)]
    for i, name in enumerate(players):
        x, y = divmod(i, q)
        if number <= q:  # y = m x + b: b = y - m x, found by trying each b
            m = number - 1
            line = next(b for b in range(q) if add[mul[m][x]][b] == y)
        else:
            line = x
        tables[line].append(name)
    seated = tuple(seat_order(t, seats, fmt.largest) for t in tables)
    return Proposal(seated, (), ROUND_ROBIN, "", 0, "EXACT")
