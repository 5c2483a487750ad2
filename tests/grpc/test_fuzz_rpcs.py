"""A seeded fuzz over every RPC (taken from the service descriptors) against a real server.

Random bytes, random messages built from the descriptors, damaged valid requests,
oversized and unicode fields, unknown fields and wrong credentials: nothing a client
sends may get UNKNOWN or INTERNAL, every refusal carries an ErrorInfo, and nothing is
appended to any game's chain but what an OK answer acknowledged.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import picky_eaters_pb2 as pe
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests.hostileutil import (
    PRINCIPALS,
    TEMPLATES,
    Answer,
    Targets,
    call_raw,
    hostile_payloads,
    message_class,
    populate,
    random_message,
    rpc_paths,
    varint,
)
from tests.serverutil import ProcessServer, bearer, stub

KEY = "org_fuzz-organiser-key-of-the-required-length"
# Callers of the random requests: mostly ones that get past the credentials check.
CALLERS = (*PRINCIPALS, "organiser", "organiser", "own", "own", "other")
RESOURCE_EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
FORBIDDEN = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
# What some attacks must get, whatever the RPC: (status, ErrorInfo reason or None).
MUST: dict[str, tuple[grpc.StatusCode, str | None]] = {
    "wrong credentials": (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED"),
    "unknown field": (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_FIELDS"),
    "unknown field in command": (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_FIELDS"),
    "oversized field": (grpc.StatusCode.INVALID_ARGUMENT, "FIELD_TOO_LONG"),
}


def chains(address: str, key: str) -> dict[str, list[tuple[int, str, str]]]:
    """Every game's rows as (seq, kind, hash), read as the arbiter."""
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(address))
    found: dict[str, list[tuple[int, str, str]]] = {}
    for game in stub(address).ListGames(pb.ListGamesRequest(), metadata=bearer(key)).games:
        if game.waiting_for_entropy:
            found[game.game_id] = []
            continue
        events = replay.StreamReplay(
            rpb.StreamReplayRequest(game_id=game.game_id, viewer="arbiter"), metadata=bearer(key)
        )
        found[game.game_id] = [(e.event.seq, e.event.kind, e.event.hash) for e in events]
    return found


def _template(path: str, method: MethodDescriptor, targets: Targets, rng: random.Random) -> Message:
    if path in TEMPLATES:
        return TEMPLATES[path](targets)[0]
    return random_message(method.input_type, rng, list(targets.tokens))


# Who sends each kind of attack (the others: any of CALLERS).
SENDERS = {
    "oversized field": "organiser",
    "unicode field": "organiser",
    "oversized request": "organiser",
    "unknown field": "own",
    "unknown field in command": "own",
}


def hostile_requests(
    path: str, method: MethodDescriptor, targets: Targets, rng: random.Random
) -> Iterator[tuple[str, bytes, str]]:
    """(kind of attack, request bytes, principal) for one RPC: the corpus, and the valid
    request with wrong credentials."""
    ids = list(targets.tokens)
    corpus = hostile_payloads(
        method.input_type, lambda: _template(path, method, targets, rng), rng, ids
    )
    for attack, raw in corpus:
        if attack == "valid request":
            for principal in ("malformed", "unknown"):
                yield "wrong credentials", raw, principal
        else:
            yield attack, raw, SENDERS.get(attack) or rng.choice(CALLERS)


def test_fuzz_every_rpc_against_a_real_server(tmp_path: Path) -> None:
    server = ProcessServer(tmp_path / "games.duckdb", KEY)
    try:
        targets = populate(server.address, KEY)
        before = chains(server.address, KEY)
        channel = grpc.insecure_channel(server.address)
        rng = random.Random(20240611)
        acknowledged: set[str] = set()
        created: set[str] = set()
        tally: Counter[tuple[str, str]] = Counter()
        faults = []
        for path, method in rpc_paths():
            for attack, raw, principal in hostile_requests(path, method, targets, rng):
                game_id = targets.running
                timeout = 2.0 if method.server_streaming else 30.0
                answer = call_raw(
                    channel, method, raw, targets.metadata(principal, game_id), timeout
                )
                tally[attack, answer.code.name] += 1
                problem = _problem(method, answer)
                must = MUST.get(attack)
                if must and (answer.code, answer.reason) != must:
                    problem = f"{answer.code.name} {answer.reason}, expected {must}"
                if attack == "oversized request" and answer.code != RESOURCE_EXHAUSTED:
                    problem = f"{answer.code.name}, expected RESOURCE_EXHAUSTED"
                if problem:
                    faults.append(f"{path} {attack} as {principal}: {problem}")
                if answer.code == grpc.StatusCode.OK and not method.server_streaming:
                    reply = message_class(method.output_type).FromString(answer.reply)
                    if "hash" in reply.DESCRIPTOR.fields_by_name:
                        acknowledged.add(reply.hash)
                    if "game_id" in reply.DESCRIPTOR.fields_by_name:
                        created.add(reply.game_id)
        after = chains(server.address, KEY)
    finally:
        server.kill()
    for (attack, code), count in sorted(tally.items()):
        print(f"{attack:28} {code:20} {count}")
    assert faults == []
    assert sum(tally.values()) >= 17 * 25
    for game_id, rows in after.items():
        if game_id not in before:
            assert game_id in created or game_id == targets.pending, f"unexpected game {game_id}"
            continue
        assert rows[: len(before[game_id])] == before[game_id], f"{game_id}'s history changed"
        for seq, kind, row_hash in rows[len(before[game_id]) :]:
            assert row_hash in acknowledged or kind in ("seed_reveal", "genesis"), (
                f"{game_id} seq {seq} was appended without an OK answer"
            )


def _problem(method: MethodDescriptor, answer: Answer) -> str:
    """What is wrong with an answer to a hostile request, if anything."""
    if answer.code in FORBIDDEN:
        return f"{answer.code.name}: {answer.details}"
    if answer.code == grpc.StatusCode.DEADLINE_EXCEEDED and not method.server_streaming:
        return "no answer before the deadline"
    core_limit = answer.code == grpc.StatusCode.RESOURCE_EXHAUSTED and answer.reason is None
    waiting = answer.code == grpc.StatusCode.DEADLINE_EXCEEDED  # a live stream with no row yet
    if answer.code != grpc.StatusCode.OK and not (core_limit or waiting) and not answer.reason:
        return f"{answer.code.name} without an ErrorInfo: {answer.details}"
    return ""


def rss_mib(pid: int) -> float:
    """A process's resident memory, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return kib / 1024


def files_mib(db: Path) -> float:
    """The database file and its write-ahead log, in MiB."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + ".wal")) if p.exists()) / 2**20


def big_refused_command() -> record_pb2.Command:
    """A Picky Eaters command of about 58 KB within every field bound, refused by the rules."""
    recipe = pe.PickyEatersPrepareRecipe(
        recipe="r",
        substitutions=[
            pe.PickyEatersSubstitution(ingredient="i", cards=["c" * 128] * 64) for _ in range(7)
        ],
    )
    return record_pb2.Command(picky_eaters=pe.PickyEatersCommand(prepare_recipe=recipe))


def test_large_refusals_keep_the_servers_memory_and_file_bounded(tmp_path: Path) -> None:
    db = tmp_path / "games.duckdb"
    server = ProcessServer(db, KEY)
    try:
        client = stub(server.address)
        game = client.CreateGame(
            pb.CreateGameRequest(game_kind="picky-eaters", players=["Ann", "Bob", "Cy"]),
            metadata=bearer(KEY),
        )
        tokens = [t.token for t in game.seat_tokens]
        channel = grpc.insecure_channel(server.address)
        submit = dict(rpc_paths())["/feastlog.v1.GameService/SubmitCommand"]
        body = big_refused_command()

        def refuse(i: int) -> grpc.StatusCode:
            request = pb.SubmitCommandRequest(
                game_id=game.game_id, command_id=f"c{i}", command=body
            )
            raw = request.SerializeToString()
            if i % 10 == 0:  # a request over the call's limit (1 MiB) or the server's (3 MiB)
                filler = 3 * 2**20 if i % 20 else 2**20
                raw += b"\x9a\x05" + varint(filler) + b"z" * filler
            return call_raw(channel, submit, raw, bearer(tokens[i % 3])).code

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(refuse, range(20)))  # warm up
            rss_before, file_before = rss_mib(server.proc.pid), files_mib(db)
            codes = Counter(pool.map(refuse, range(20, 420)))
        rss_after, file_after = rss_mib(server.proc.pid), files_mib(db)
        stored = apb_grpc.AuditServiceStub(channel).ListRejections(
            apb.ListRejectionsRequest(game_id=game.game_id), metadata=bearer(KEY)
        )
    finally:
        server.kill()
    sent_mib = 400 * len(body.SerializeToString()) / 2**20 + 20 * 3 + 20 * 1
    print(
        f"400 refusals ({sent_mib:.0f} MiB sent): {dict(codes)}; "
        f"RSS {rss_before:.0f} -> {rss_after:.0f} MiB, "
        f"file {file_before:.2f} -> {file_after:.2f} MiB, "
        f"{len(stored.rejections)} refusals stored"
    )
    assert set(codes) <= {
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
    assert codes[grpc.StatusCode.RESOURCE_EXHAUSTED] == 40
    assert rss_after - rss_before < 150  # MiB; stored whole, 20 such calls took it to 512
    # MiB, for 22 MiB of refused commands; most of the growth is the file's first
    # checkpoint, which writes blocks for every table and index (3.9 MiB before the log
    # tree's, signed heads' and keys' tables, 4.4 with them): a refusal stored whole would
    # add its 0.2 MiB each
    assert file_after - file_before < 6
    assert len(stored.rejections) < 3 * 20 + 20  # a burst per seat, and a few more
