"""Nothing hidden can be tested from what is public (DESIGN section 2, issue 8).

For every registered game kind a whole game is played through a real server by seeded
bots, while every seat and a spectator call every RPC they may (tests/leakscan.py).
Then, for what they received before the seed reveal:

- the row-hash guess: for every command row, hashing every candidate command (every
  legal command of that seat at that point; for Bon Appetit! every possible bid; and the
  true command with its true command_id) matches none of the row's public hashes; after
  the reveal the true command, and only it, opens the row's commitment;
- a watcher re-derives every link of the chain from the public rows alone;
- the leak scan: no other seat's hand, sealed command, deck order or seed appears in
  anything a seat or spectator received, and every row it received holds just what the
  engine lets that viewer see.

Two controls show the checks can fail: the same guess finds the sealed bids of a format-1
record, and the scan finds the arbiter's view when it is handed to a seat.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from feastlog.replay import games
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.games.fold import wrap_command
from feastlog.replay.record.canonical import canonical_bytes
from feastlog.replay.record.rows import ZERO_HASH, Row, chain_hash, commitment_of, row_salt
from feastlog.v1 import bon_appetit_pb2 as ba
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from tests.leakscan import (
    Played,
    Receipt,
    Secrets,
    actor_of,
    compact,
    leaks,
    plain,
    play,
)
from tests.recordutil import build
from tests.serverutil import ThreadedServer

SEED = 41
# Seats per game (the fewest the game allows unless named) and how often to probe: Bon
# Appetit! games are short, and three bidders make ties; the longer games every few rows.
SEATS = {"bon-appetit": 3}
PROBE_EVERY = {"bon-appetit": 2}
READ_RPCS = {
    "GetView",
    "WatchGame",
    "GetStateAt",
    "StreamReplay",
    "ExportRecord",
    "VerifyGame",
    "VerifyAllGames",
    "JoinGame",
    "ExplainEvent",
    "WhatIf",
    "ListRejections",
    "ListGames",
    "GetStandings",
    "ListLegalCommands",
    "SubmitCommand",
}


def play_probed(kind: str, folder: Path) -> Played:
    """One whole game of ``kind``, probed from every seat and a spectator."""
    seats = SEATS.get(kind, games.engine(kind).spec.min_seats)
    server = ThreadedServer(folder / "games.duckdb")
    try:
        return play(server, kind, seats, SEED, PROBE_EVERY.get(kind, 8), sweep_every=40)
    finally:
        server.stop()


@pytest.mark.parametrize("kind", games.kinds())
def test_nothing_hidden_can_be_tested_from_what_is_public(kind: str, tmp_path: Path) -> None:
    """One whole game per kind (played once: it is the slow part), every check on it, then
    the control showing that the checks find a leak where there is one."""
    played = play_probed(kind, tmp_path)
    check_no_candidate_matches_a_public_row_before_the_reveal(played)
    check_each_command_opens_its_commitment_after_the_reveal(played)
    check_a_watcher_re_derives_every_link_before_the_reveal(played)
    secrets = Secrets(played)
    check_no_secret_reaches_a_seat_or_spectator_before_the_reveal(secrets)
    check_every_row_received_holds_what_the_engine_lets_its_viewer_see(secrets)
    control_the_checks_find_what_the_arbiter_sees_handed_to_a_seat(secrets)


def public_rows(played: Played) -> dict[int, pb.RecordEvent]:
    """Every row as some seat or spectator received it before the reveal."""
    return {e.seq: e for r in played.receipts for e in r.events}


def candidates(played: Played, seq: int) -> Iterator[record_pb2.Command]:
    """Every command the actor of row ``seq`` might have sent there (the true one too)."""
    row = played.rows[seq - 1]
    yield record_pb2.Command.FromString(row.body)
    seat = actor_of(row)
    if seat is None or seat.seat is None:
        return
    engine = played.engine
    before = played.table_before(seq)
    for inner in engine.legal_commands(before, seat.seat):
        yield wrap_command(engine.spec.command_field, inner)
    if played.kind == "bon-appetit":
        # every bid of any colours: up to 4 gems in the first round (the most any option
        # allows), any number the seat holds in a tie-break (public: the hand size)
        tie_break = before.auction.tie_round > 0
        most = len(before.players[seat.seat].hand) if tie_break else 4
        gems = [g for g in ba.BonAppetitGem.values() if g != ba.BON_APPETIT_GEM_UNSPECIFIED]
        for size in range(most + 1):
            for chosen in itertools.combinations_with_replacement(gems, size):
                bid = (
                    ba.BonAppetitCommand(tie_break_bid=ba.BonAppetitTieBreakBid(gems=chosen))
                    if tie_break
                    else ba.BonAppetitCommand(bid=ba.BonAppetitBid(gems=chosen))
                )
                yield record_pb2.Command(bon_appetit=bid)


def guesses(public: pb.RecordEvent, game_id: str, body: bytes, command_id: str) -> set[str]:
    """What a seat can compute from a guessed body and id, to compare with public hashes:
    the format-1 row hash, and commitments (and the row hashes over them) under salts it
    could know: none, or one derived from public data."""
    row = Row(
        game_id,
        public.seq,
        public.kind,
        public.actor,
        command_id,
        body,
        public.recorded_at,
        public.prev_hash,
        "",
        public.state_hash,
    )
    out = {row.expected_hash(1)}
    for salt in (b"", row_salt(bytes.fromhex(public.prev_hash), game_id, public.seq)):
        commitment = commitment_of(salt, body, command_id)
        out |= {commitment, replace(row, commitment=commitment).expected_hash(2)}
    return out


def matches(played: Played, public: dict[int, pb.RecordEvent]) -> tuple[int, int, list[str]]:
    """(rows tried, candidates hashed, matches) for every command row seen before the reveal."""
    tried, hashed, found = 0, 0, []
    for seq, event in sorted(public.items()):
        if event.kind != "command":
            continue
        tried += 1
        targets = {event.hash, event.commitment} - {""}
        true_id = played.command_ids.get(seq, played.rows[seq - 1].command_id)
        for command in candidates(played, seq):
            body = command.SerializeToString(deterministic=True)
            for command_id in {"", true_id}:
                hashed += 1
                if guesses(event, played.game_id, body, command_id) & targets:
                    found.append(f"seq {seq}: {compact(plain_command(command))} {command_id!r}")
    return tried, hashed, found


def plain_command(command: record_pb2.Command) -> dict[str, object]:
    """A command as JSON, to name it in a failure."""
    out: dict[str, object] = json_format.MessageToDict(command)
    return out


def check_no_candidate_matches_a_public_row_before_the_reveal(played: Played) -> None:
    """No guess of any candidate command matches a public hash of a row seen before the end."""
    public = public_rows(played)
    hidden_until = played.last_hidden_seq
    assert set(range(1, hidden_until + 1)) <= set(public), "every row was seen before the end"
    for seq, event in public.items():  # the rows seen are the rows stored
        row = played.rows[seq - 1]
        assert (event.hash, event.prev_hash, event.commitment) == (
            row.hash,
            row.prev_hash,
            row.commitment,
        )
    tried, hashed, found = matches(played, public)
    assert found == []
    assert tried >= 10 and hashed >= tried
    viewers = [Viewer.of_seat(s) for s in range(played.seats)] + [SPECTATOR]
    sealed = [
        s
        for s in range(2, hidden_until + 1)
        if any(not played.command_visible(s, v) for v in viewers)
    ]
    if any(not played.engine.command_public(c) for c in game_commands(played)):
        assert len(sealed) >= 5, "the game has sealed commands; they were played"


def game_commands(played: Played) -> list[Message]:
    """The inner commands of the game's command rows (to ask the engine which are sealed)."""
    out = []
    for row in played.rows:
        if row.kind == "command":
            command = record_pb2.Command.FromString(row.body)
            which = command.WhichOneof("game")
            if which != "arbiter":
                out.append(getattr(command, which or ""))
    return out


def check_each_command_opens_its_commitment_after_the_reveal(played: Played) -> None:
    """With the revealed seed, each command row opens its commitment, and no other does."""
    seed = played.server_seed
    checked = 0
    for row in played.rows:
        if row.kind != "command":
            assert row.opens(b"")
            continue
        salt = row_salt(seed, row.game_id, row.seq)
        assert row.opens(salt)
        true = (row.body, row.command_id)
        for command in candidates(played, row.seq):
            body = command.SerializeToString(deterministic=True)
            for command_id in {"", row.command_id}:
                if (body, command_id) != true:
                    assert commitment_of(salt, body, command_id) != row.commitment
                    checked += 1
    assert checked > 0


def check_a_watcher_re_derives_every_link_before_the_reveal(played: Played) -> None:
    """From the public rows alone: every prev_hash links and every hash is re-derived."""
    public = public_rows(played)
    genesis = public[1].genesis
    assert genesis.record_version == 2
    assert public[1].commitment == commitment_of(
        b"", genesis.SerializeToString(deterministic=True), ""
    )
    prev = ZERO_HASH
    for seq in range(1, played.last_hidden_seq + 1):
        event = public[seq]
        canonical = canonical_bytes(
            {
                "actor": event.actor,
                "commitment": event.commitment,
                "game_id": genesis.game_id,
                "kind": event.kind,
                "recorded_at": event.recorded_at,
                "seq": event.seq,
                "state_hash": event.state_hash,
            }
        )
        assert event.prev_hash == prev
        assert chain_hash(prev, canonical) == event.hash, f"seq {seq}"
        prev = event.hash


def check_no_secret_reaches_a_seat_or_spectator_before_the_reveal(secrets: Secrets) -> None:
    """The leak scan over every receipt, and the receipts cover every RPC."""
    played = secrets.played
    assert leaks(secrets) == []
    observers = {r.observer for r in played.receipts}
    assert observers == set(secrets.viewers())
    assert {r.rpc for r in played.receipts} >= READ_RPCS
    denied = {r.rpc for r in played.receipts if r.error == "PERMISSION_DENIED"}
    assert {"ExportRecord", "ExplainEvent", "WhatIf"} <= denied
    probed = sum(len(secrets.probes(r.seq, r.observer)) for r in played.receipts[:50])
    assert probed > 0


def misshown(secrets: Secrets, receipts: list[Receipt]) -> tuple[int, list[str]]:
    """(rows checked, problems): each received row against what the engine lets its viewer
    see: the view, the facts, and no command of another seat's sealed move."""
    played = secrets.played
    checked, problems = 0, []
    for receipt in receipts:
        viewer = receipt.as_viewer or receipt.observer
        for event in receipt.events:
            where = f"{receipt.rpc} to {receipt.observer}, seq {event.seq} as {viewer}"
            if plain_struct(event.view) != secrets.view(event.seq, viewer):
                problems.append(f"{where}: the view")
            allowed = [compact(f) for f in secrets.facts(event.seq, viewer)]
            if [compact(plain_struct(f)) for f in event.facts] != allowed:
                problems.append(f"{where}: the facts")
            if event.HasField("command") and not played.command_visible(event.seq, viewer):
                problems.append(f"{where}: the sealed command")
            checked += 1
    return checked, problems


def check_every_row_received_holds_what_the_engine_lets_its_viewer_see(secrets: Secrets) -> None:
    """Views, facts and commands of every received row, against the engine's policy."""
    checked, problems = misshown(secrets, secrets.played.receipts)
    assert problems == []
    assert checked > secrets.played.last_hidden_seq


def plain_struct(message: Message) -> object:
    """A Struct as plain data (whole numbers as ints)."""
    return plain(json_format.MessageToDict(message))


# Controls: the checks above can fail.


def test_control_the_guess_finds_the_sealed_bids_of_a_format_1_record() -> None:
    built = build("bon-appetit", 3, 6, version=1)
    found = 0
    for row in built.rows:
        if row.kind != "command":
            continue
        event = pb.RecordEvent(
            seq=row.seq,
            kind=row.kind,
            actor=row.actor,
            hash=row.hash,
            state_hash=row.state_hash,
            recorded_at=row.recorded_at,
            prev_hash=row.prev_hash,
        )
        body = row.body
        # the true bid among a few wrong ones: only the true one matches, and it does
        wrong = [
            record_pb2.Command(bon_appetit=ba.BonAppetitCommand(bid=ba.BonAppetitBid(gems=[g])))
            for g in (ba.BON_APPETIT_GEM_BLUE, ba.BON_APPETIT_GEM_GREEN)
        ]
        hits = [
            c
            for c in [record_pb2.Command.FromString(body), *wrong]
            if row.hash in guesses(event, row.game_id, c.SerializeToString(), row.command_id)
        ]
        assert hits and hits[0].SerializeToString() == body
        found += 1
    assert found >= 10


def control_the_checks_find_what_the_arbiter_sees_handed_to_a_seat(secrets: Secrets) -> None:
    """The arbiter's view, the seed, another seat's command_id or sealed command, handed
    to a seat, are each found."""
    played, seat = secrets.played, Viewer.of_seat(0)
    seq = played.last_hidden_seq
    arbiter_view = Receipt(seat, seq, "arbiter view", compact(secrets.view(seq, ARBITER)))
    seed = Receipt(seat, seq, "seed", compact({"seed": played.server_seed.hex()}))
    other = max(
        q
        for q in range(2, seq + 1)
        if played.rows[q - 1].actor != str(seat) and played.command_ids.get(q)
    )
    command_id = Receipt(seat, seq, "id", compact({"command_id": played.command_ids[other]}))
    found = leaks(secrets, [arbiter_view, seed, command_id])
    assert any("arbiter view" in f and "arbiter-only" in f for f in found), found
    assert any(f.startswith(f"{seat} at seq {seq}, seed: the server seed") for f in found)
    assert any(f"the command_id of seq {other}" in f for f in found)
    seen = [
        (r, e)
        for r in played.receipts
        for e in r.events
        if r.observer == seat and r.as_viewer is None and not played.command_visible(e.seq, seat)
    ]
    if any(not played.engine.command_public(c) for c in game_commands(played)):
        receipt, event = seen[-1]
        shown = pb.RecordEvent()
        shown.CopyFrom(event)
        shown.command.ParseFromString(played.rows[event.seq - 1].body)
        _, problems = misshown(secrets, [replace(receipt, events=[shown])])
        assert problems == [
            f"{receipt.rpc} to {seat}, seq {event.seq} as {seat}: the sealed command"
        ]
    assert SPECTATOR in secrets.viewers()
