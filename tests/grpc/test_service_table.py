"""The service table (service/grpc/services.py) holds every RPC of every proto, each with
its servicer method, its access and its guard entry, and registers each as its kind."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import grpc

from feastlog.service.grpc import guard, services
from feastlog.service.grpc.inprocess import _Registered
from feastlog.v1 import access_pb2
from feastlog.v1 import game_service_pb2_grpc as game_grpc

PROTOS = Path(__file__).resolve().parents[2] / "proto" / "feastlog" / "v1"
KIND = {
    (False, False): "unary_unary",
    (False, True): "unary_stream",
    (True, False): "stream_unary",
    (True, True): "stream_stream",
}


def proto_rpcs() -> set[str]:
    """Every RPC the .proto files declare, read from their text (not the descriptors)."""
    found = set()
    for path in sorted(PROTOS.glob("*.proto")):
        service = ""
        for line in path.read_text().splitlines():
            if named := re.match(r"service (\w+) \{", line):
                service = named[1]
            elif rpc := re.match(r"\s+rpc (\w+)\(", line):
                found.add(f"/feastlog.v1.{service}/{rpc[1]}")
    return found


def gaps(service: services.Service) -> list[str]:
    """What a service's RPCs lack: a method of its servicer's own (not the generated
    base's UNIMPLEMENTED), an access, a guard entry."""
    guarded = {path for path, _ in guard.methods()}
    found = []
    for rpc in service.rpcs:
        servicer = service.servicer
        own = servicer is not None and any(
            rpc.name in vars(c)
            for c in servicer.__mro__
            if not c.__module__.startswith("feastlog.v1")
        )
        if not own:
            found.append(f"{rpc.path}: no servicer method")
        if rpc.access == access_pb2.ACCESS_UNSPECIFIED:
            found.append(f"{rpc.path}: no (feastlog.v1.access)")
        if rpc.path not in guarded:
            found.append(f"{rpc.path}: not guarded")
    return found


def test_every_rpc_of_every_proto_is_in_the_table() -> None:
    declared = proto_rpcs()
    assert len(declared) >= 48
    assert set(services.RPCS) == declared


def test_every_rpc_has_a_servicer_method_an_access_and_a_guard_entry() -> None:
    assert [gap for s in services.SERVICES for gap in gaps(s)] == []
    assert [s.name for s in services.SERVICES if s.servicer is None] == []
    assert list(services.SERVICERS) == list(services.NAMES)


def test_the_check_finds_a_servicer_without_the_method() -> None:
    game = next(s for s in services.SERVICES if s.name == "feastlog.v1.GameService")
    generated = services.Service(
        game.descriptor, cast(Any, game_grpc.GameServiceServicer), game.rpcs
    )
    assert len(gaps(generated)) == len(game.rpcs)
    unset = services.Rpc(game.rpcs[0].path, game.rpcs[0].method, access_pb2.ACCESS_UNSPECIFIED)
    assert gaps(services.Service(game.descriptor, game.servicer, (unset,))) == [
        f"{unset.path}: no (feastlog.v1.access)"
    ]


def test_registering_makes_each_rpc_a_handler_of_its_kind() -> None:
    registered = _Registered()
    services.register(cast(grpc.aio.Server, registered), cast(Any, object()))
    assert set(registered.handlers) == set(services.RPCS)
    for path, rpc in services.RPCS.items():
        handler = registered.handlers[path]
        kind = KIND[rpc.method.client_streaming, rpc.method.server_streaming]
        assert getattr(handler, kind) is not None, path
        assert handler.request_streaming == rpc.method.client_streaming, path
        assert handler.response_streaming == rpc.method.server_streaming, path
