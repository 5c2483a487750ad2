"""Server reflection answers under v1 (what grpcurl and buf curl ask first) and v1alpha."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha

from tests.serverutil import ThreadedServer

FEASTLOG_SERVICES = {
    "feastlog.v1.GameService",
    "feastlog.v1.ReplayService",
    "feastlog.v1.AuditService",
    "feastlog.v1.TournamentService",
}

# grpc.reflection.v1.ServerReflectionRequest as a v1 client encodes it, by the field
# numbers of grpc/grpc's src/proto/grpc/reflection/v1/reflection.proto: list_services is
# field 7 (a string), file_containing_symbol field 4.
LIST_SERVICES = b"\x3a\x00"


def symbol_request(symbol: str) -> bytes:
    """A v1 request for the file that defines ``symbol``."""
    raw = symbol.encode()
    return b"\x22" + bytes([len(raw)]) + raw


def ask(address: str, service: str, request: bytes) -> v1alpha.ServerReflectionResponse:
    """One request on ``service``'s ServerReflectionInfo stream, raw bytes in."""
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(
            f"/{service}/ServerReflectionInfo",
            request_serializer=lambda b: b,
            # the response's field numbers are the same in v1 and v1alpha
            response_deserializer=v1alpha.ServerReflectionResponse.FromString,
        )
        replies = list(call(iter([request]), timeout=10))
    assert len(replies) == 1
    return replies[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedServer]:
    running = ThreadedServer(Path(tmp_path_factory.mktemp("reflection")) / "games.duckdb")
    yield running
    running.stop()


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_lists_every_service(server: ThreadedServer, version: str) -> None:
    reply = ask(server.address, f"grpc.reflection.{version}.ServerReflection", LIST_SERVICES)
    names = {s.name for s in reply.list_services_response.service}
    assert names >= FEASTLOG_SERVICES | {"grpc.health.v1.Health"}
    assert {"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= (
        names
    )


@pytest.mark.parametrize(
    ("symbol", "file_name", "package"),
    [
        ("feastlog.v1.GameService", "feastlog/v1/game_service.proto", "feastlog.v1"),
        (
            "grpc.reflection.v1.ServerReflection",
            "grpc/reflection/v1/reflection.proto",
            "grpc.reflection.v1",
        ),
    ],
)
def test_v1_reflection_describes_the_services_and_itself(
    server: ThreadedServer, symbol: str, file_name: str, package: str
) -> None:
    reply = ask(server.address, "grpc.reflection.v1.ServerReflection", symbol_request(symbol))
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in reply.file_descriptor_response.file_descriptor_proto
    ]
    found = next(f for f in files if f.name == file_name)
    assert found.package == package
    service = symbol.rsplit(".", 1)[1]
    assert service in [s.name for s in found.service]
