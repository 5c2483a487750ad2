"""Health and reflection take hostile bytes as the feastlog services do.

The services the server hosts from their libraries (``grpc.health.v1.Health``,
``grpc.reflection.v1`` and ``v1alpha.ServerReflection``) answered bytes that are no
request with UNKNOWN and protobuf's exception text (``0a ff ff`` to Health/Check), and
logged a traceback.  Their requests now pass the same guard: the fuzz corpus of the
feastlog RPCs (``tests/hostileutil.py``), sent as raw bytes, gets INVALID_ARGUMENT or
RESOURCE_EXHAUSTED with the feastlog ErrorInfo, never UNKNOWN or INTERNAL; a reflection
stream ends at the first request refused; nothing reaches stderr; valid requests are
answered as before.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha

from feastlog.cli.wire import error_info
from feastlog.service.grpc import services
from feastlog.service.grpc.guard import hosted_requests, methods, request_limit, server_options
from tests.hostileutil import UNDECODABLE, hostile_payloads, varint
from tests.serverutil import ProcessServer, ThreadedServer, bearer

KEY = "org_hosted-organiser-key-of-the-required-length"
HEALTH = "/grpc.health.v1.Health"
V1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
V1ALPHA = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
LIST_SERVICES = v1alpha.ServerReflectionRequest(list_services="").SerializeToString()


def _listing() -> Message:
    return v1alpha.ServerReflectionRequest(list_services="")


# Each hosted method: how it streams, and a valid request.
HOSTED: dict[str, tuple[str, Callable[[], Message]]] = {
    f"{HEALTH}/Check": ("unary", lambda: health_pb2.HealthCheckRequest(service="")),
    f"{HEALTH}/List": ("unary", health_pb2.HealthListRequest),  # type: ignore[attr-defined]
    f"{HEALTH}/Watch": ("server stream", lambda: health_pb2.HealthCheckRequest(service="")),
    V1: ("both streams", _listing),
    V1ALPHA: ("both streams", _listing),
}
FORBIDDEN = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
INVALID = grpc.StatusCode.INVALID_ARGUMENT
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
# What some attacks must get: (status, ErrorInfo reason).
# (An unknown field, or a field longer than feastlog's own bounds, is no refusal here:
# a hosted request is read as protobuf reads it, so that a newer health or reflection
# client, a load balancer's probe, is answered.)
MUST: dict[str, tuple[grpc.StatusCode, str | None]] = {
    "undecodable": (INVALID, "UNDECODABLE_REQUEST"),
}
SERVER_LIMIT = server_options()[0][1]


@dataclass(frozen=True)
class Reply:
    """How a call ended, and how many replies came before."""

    code: grpc.StatusCode
    details: str = ""
    reason: str | None = None  # None: no ErrorInfo came with the status
    replies: int = 0


def _as_they_are(raw: bytes) -> bytes:
    """The identity serializer: bytes go on the wire, and come back, as they are."""
    return raw


def ask(channel: grpc.Channel, path: str, raw: bytes, timeout: float = 10.0) -> Reply:
    """Send raw request bytes to a hosted method.  A health watch ends at its first reply
    (the client cancels); a reflection stream sends a listing request, ``raw``, and a
    listing request again."""
    kind = HOSTED[path][0]
    same = _as_they_are
    replies = 0
    try:
        if kind == "unary":
            channel.unary_unary(path, request_serializer=same, response_deserializer=same)(
                raw, timeout=timeout
            )
            replies = 1
        elif kind == "server stream":
            watch: Any = channel.unary_stream(
                path, request_serializer=same, response_deserializer=same
            )(raw, timeout=timeout)
            next(watch)
            watch.cancel()
            replies = 1
        else:
            stream = channel.stream_stream(
                path, request_serializer=same, response_deserializer=same
            )
            for _ in stream(iter([LIST_SERVICES, raw, LIST_SERVICES]), timeout=timeout):
                replies += 1
    except grpc.RpcError as error:
        info = error_info(error)
        code = error.code()
        return Reply(code, error.details() or "", info.reason if info else None, replies)
    return Reply(grpc.StatusCode.OK, replies=replies)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ThreadedServer, Path]]:
    folder = tmp_path_factory.mktemp("hosted")
    log_path = folder / "requests.log"
    with log_path.open("w") as log:
        server = ThreadedServer(folder / "games.duckdb", request_log=log)
        try:
            yield server, log_path
        finally:
            server.stop()


def logged(log_path: Path) -> set[tuple[str, str, str]]:
    """The request log's (rpc, role, status) lines so far."""
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    return {(line["rpc"], line["role"], line["status"]) for line in lines}


def test_every_service_the_server_hosts_is_guarded(served: tuple[ThreadedServer, Path]) -> None:
    """Every method of every service the server lists (health's List among them) is one
    the guard checks: feastlog's by their descriptors, the hosted ones by their path."""
    pool = descriptor_pool.Default()  # the server has put reflection v1 in it
    hosted = [
        f"/{name}/{m.name}"
        for name in (*services.NAMES, *services.hosted())
        if name not in services.NAMES
        for m in pool.FindServiceByName(name).methods
    ]
    assert sorted(hosted) == sorted(hosted_requests()) == sorted(HOSTED)
    own = {
        f"/{name}/{m.name}" for name in services.NAMES for m in pool.FindServiceByName(name).methods
    }
    assert own == {path for path, _ in methods()}


def test_undecodable_bytes_to_health_and_reflection_are_invalid_argument_in_plain_words(
    served: tuple[ThreadedServer, Path], caplog: pytest.LogCaptureFixture
) -> None:
    server, log_path = served
    channel = grpc.insecure_channel(server.address)
    for path, (kind, _) in HOSTED.items():
        name = hosted_requests()[path][1]
        for raw in UNDECODABLE:
            reply = ask(channel, path, raw)
            assert (reply.code, reply.reason) == (INVALID, "UNDECODABLE_REQUEST"), (path, raw)
            assert reply.details == f"the request bytes are not a {name} message", path
            # a stream answers the request before the refused one, and ends at it
            assert reply.replies == (1 if kind == "both streams" else 0), (path, raw)
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    seen = logged(log_path)
    for rpc in ("Check", "List", "Watch", "ServerReflectionInfo"):
        assert (rpc, "anonymous", "INVALID_ARGUMENT") in seen, rpc


def test_health_and_reflection_refuse_requests_over_their_size(
    served: tuple[ThreadedServer, Path],
) -> None:
    """Over the call's size (64 KiB): RESOURCE_EXHAUSTED, REQUEST_TOO_LARGE, as feastlog's
    RPCs; over the server's (192 KiB), gRPC's own RESOURCE_EXHAUSTED, without ErrorInfo."""
    server, _ = served
    channel = grpc.insecure_channel(server.address)
    for path in HOSTED:
        limit = request_limit(hosted_requests()[path][0].DESCRIPTOR)
        for size, reason in ((limit + 1, "REQUEST_TOO_LARGE"), (SERVER_LIMIT + 1, None)):
            raw = b"\x9a\x05" + varint(size - 5) + b"z" * (size - 5)  # an unknown field
            assert len(raw) == size
            reply = ask(channel, path, raw)
            assert (reply.code, reply.reason) == (EXHAUSTED, reason), (path, size)


def test_valid_requests_are_still_answered(served: tuple[ThreadedServer, Path]) -> None:
    server, log_path = served
    channel = grpc.insecure_channel(server.address)
    check: Any = channel.unary_unary(
        f"{HEALTH}/Check",
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    serving = health_pb2.HealthCheckResponse.SERVING
    for service in ("", *services.NAMES):
        assert check(health_pb2.HealthCheckRequest(service=service)).status == serving
    # health reads no credentials: a malformed one is not refused there
    answer = check(health_pb2.HealthCheckRequest(), metadata=(("authorization", "Bearer"),))
    assert answer.status == serving
    assert check(health_pb2.HealthCheckRequest(), metadata=bearer(server.key)).status == serving
    watch: Any = channel.unary_stream(
        f"{HEALTH}/Watch",
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    stream = watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
    assert next(stream).status == serving
    stream.cancel()
    listing: Any = channel.unary_unary(
        f"{HEALTH}/List",
        request_serializer=health_pb2.HealthListRequest.SerializeToString,  # type: ignore[attr-defined]
        response_deserializer=health_pb2.HealthListResponse.FromString,  # type: ignore[attr-defined]
    )
    statuses = listing(health_pb2.HealthListRequest(), timeout=10).statuses  # type: ignore[attr-defined]
    assert {name: s.status for name, s in statuses.items()} == {
        name: serving for name in ("", *services.NAMES)
    }
    # a field this library does not know (a newer client's) is dropped, not refused
    raw = health_pb2.HealthCheckRequest(service="").SerializeToString() + b"\x9a\x05\x01z"
    assert ask(channel, f"{HEALTH}/Check", raw) == Reply(grpc.StatusCode.OK, replies=1)
    for path in (V1, V1ALPHA):
        info: Any = channel.stream_stream(
            path,
            request_serializer=v1alpha.ServerReflectionRequest.SerializeToString,
            response_deserializer=v1alpha.ServerReflectionResponse.FromString,
        )
        replies = list(info(iter([_listing(), _listing()]), timeout=10))
        assert len(replies) == 2, path
        names = {s.name for s in replies[0].list_services_response.service}
        assert names == {*services.NAMES, *services.hosted()}, path
    seen = logged(log_path)
    for line in (
        ("Check", "anonymous", "OK"),
        ("Check", "organiser", "OK"),
        ("Check", "unknown", "OK"),
        ("Watch", "anonymous", "CANCELLED"),
        ("ServerReflectionInfo", "anonymous", "OK"),
    ):
        assert line in seen, line


def _decodes(request_type: Any, raw: bytes) -> bool:
    try:
        request_type.FromString(raw)
    except DecodeError:
        return False
    return True


def _problem(path: str, attack: str, raw: bytes, reply: Reply) -> str:
    """What is wrong with how a hosted method answered a hostile request, if anything."""
    if reply.code in FORBIDDEN:
        return f"{reply.code.name}: {reply.details}"
    request_type = hosted_requests()[path][0]
    must = MUST.get(attack)
    if attack == "oversized request":
        must = (EXHAUSTED, "REQUEST_TOO_LARGE" if len(raw) <= SERVER_LIMIT else None)
    elif not _decodes(request_type, raw):
        must = MUST["undecodable"]
    if must and (reply.code, reply.reason) != must:
        return f"{reply.code.name} {reply.reason}: {reply.details}; expected {must}"
    stream = HOSTED[path][0] == "both streams"
    if reply.code == grpc.StatusCode.OK:
        return "" if reply.replies == (3 if stream else 1) else f"{reply.replies} replies"
    unknown_service = path == f"{HEALTH}/Check" and reply.code == grpc.StatusCode.NOT_FOUND
    if reply.reason is None and not (unknown_service or must):
        return f"{reply.code.name} without an ErrorInfo: {reply.details}"
    if stream and reply.reason is not None and reply.replies != 1:
        return f"{reply.replies} replies before the refusal (the first request's: 1)"
    return ""


def test_health_and_reflection_take_the_fuzz_corpus(tmp_path: Path) -> None:
    """The feastlog RPCs' fuzz corpus, to `feastlog serve`'s health and both reflection
    streams: no UNKNOWN or INTERNAL, the feastlog ErrorInfo on every refusal, nothing on
    stderr, and the server serving at the end."""
    server = ProcessServer(tmp_path / "games.duckdb", KEY)
    rng = random.Random(20261201)
    ids = ["", "feastlog.v1.GameService", "grpc.health.v1.Health", "feastlog/v1/record.proto"]
    tally: Counter[tuple[str, str]] = Counter()
    faults = []
    try:
        channel = grpc.insecure_channel(server.address)
        for path, (_, template) in HOSTED.items():
            request_type = hosted_requests()[path][0]
            corpus = [
                *(("undecodable", raw) for raw in UNDECODABLE),
                *hostile_payloads(request_type.DESCRIPTOR, template, rng, ids),
            ]
            for attack, raw in corpus:
                reply = ask(channel, path, raw)
                tally[attack, reply.code.name] += 1
                problem = _problem(path, attack, raw, reply)
                if problem:
                    faults.append(f"{path} {attack} {raw[:24]!r}: {problem}")
        assert ask(channel, f"{HEALTH}/Check", b"") == Reply(grpc.StatusCode.OK, replies=1)
        assert ask(channel, V1, LIST_SERVICES).replies == 3
    finally:
        stderr = server.terminate()
    for (attack, code), count in sorted(tally.items()):
        print(f"{attack:24} {code:20} {count}")
    assert faults == []
    assert sum(tally.values()) >= 4 * 45
    assert "Traceback" not in stderr and "Unexpected" not in stderr, stderr
