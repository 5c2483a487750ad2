"""The service table: every feastlog service and RPC, read once from the proto descriptors.

Each service is found in the generated modules of ``feastlog.v1`` (its ``*_pb2`` files'
``DESCRIPTOR.services_by_name``), and each RPC says who may call it by its own method
option, ``(feastlog.v1.access)`` (``proto/feastlog/v1/access.proto``).  The one thing the
descriptors cannot say is which class serves a service: ``SERVICERS`` below, a line per
service.  Everything that lists services or RPCs reads them here:

- the server registers each service's servicer, a handler per RPC made from its
  descriptor as the generated ``add_<Service>Servicer_to_server`` makes it
  (``register``), and the in-process channel does the same over its stand-in for a server;
- health answers for each service's name, and reflection lists them (``NAMES``), beside
  the services hosted from their libraries (``HOSTED``);
- the guard checks every RPC's request and credentials (``RPCS``, by path);
- the request log names each RPC as its descriptor does;
- docs/api.md lists the RPCs by their access, and the authorisation test holds the server
  to it (``tests/grpc/test_authorisation_matrix.py``).

A new RPC in a service's proto is served, guarded, logged and listed from here with no
edit of this module; a new service adds its servicer's line to ``SERVICERS``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor

import feastlog.v1
from feastlog.service.grpc.servicers.admin import AdminService
from feastlog.service.grpc.servicers.audit import AuditService
from feastlog.service.grpc.servicers.feed import FeedService
from feastlog.service.grpc.servicers.game import GameService
from feastlog.service.grpc.servicers.proof import ProofService
from feastlog.service.grpc.servicers.replay import ReplayService
from feastlog.service.grpc.servicers.seat_link import SeatLinkService
from feastlog.service.grpc.servicers.table import TableService
from feastlog.service.grpc.servicers.tournament import TournamentService
from feastlog.v1 import access_pb2

if TYPE_CHECKING:
    from feastlog.service.app.application import Application
    from feastlog.service.grpc.servicers.base import Servicer

# Which class serves each service (the order is the one health and reflection list).
SERVICERS: dict[str, type[Servicer]] = {
    "feastlog.v1.GameService": GameService,
    "feastlog.v1.ReplayService": ReplayService,
    "feastlog.v1.AuditService": AuditService,
    "feastlog.v1.TournamentService": TournamentService,
    "feastlog.v1.AdminService": AdminService,
    "feastlog.v1.ProofService": ProofService,
    "feastlog.v1.TableService": TableService,
    "feastlog.v1.SeatLinkService": SeatLinkService,
    "feastlog.v1.FeedService": FeedService,
}


@dataclass(frozen=True)
class Rpc:
    """One RPC: its path, its descriptor and who may call it."""

    path: str  # /feastlog.v1.GameService/CreateGame
    method: MethodDescriptor
    access: int  # an access_pb2.Access value; ACCESS_UNSPECIFIED when the proto sets none

    @property
    def name(self) -> str:
        """The method's name (``CreateGame``)."""
        return str(self.method.name)

    @property
    def access_name(self) -> str:
        """The access in the proto's words (``ACCESS_ORGANISER``)."""
        return access_pb2.Access.Name(self.access)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Service:
    """One service: its descriptor, the class that serves it (None: no line in
    ``SERVICERS``, which a test and ``register`` refuse) and its RPCs."""

    descriptor: ServiceDescriptor
    servicer: type[Servicer] | None
    rpcs: tuple[Rpc, ...]

    @property
    def name(self) -> str:
        """The full name (``feastlog.v1.GameService``)."""
        return str(self.descriptor.full_name)

    def handlers(self, app: Application) -> dict[str, Any]:
        """Each RPC's handler over a new servicer on ``app``, as the generated
        ``add_<Service>Servicer_to_server`` makes them (its kind, the request type's
        decoder, the reply's encoder: the servicer's own where it has one)."""
        if self.servicer is None:
            raise LookupError(f"{self.name} has no servicer: add it to SERVICERS")
        servicer = self.servicer(app)
        found = {}
        for rpc in self.rpcs:
            method = rpc.method
            make = KINDS[method.client_streaming, method.server_streaming]
            reply = message_factory.GetMessageClass(method.output_type)
            found[rpc.name] = make(
                getattr(servicer, rpc.name),
                request_deserializer=message_factory.GetMessageClass(method.input_type).FromString,
                response_serializer=servicer.SERIALIZERS.get(rpc.name, reply.SerializeToString),
            )
        return found


# The handler of each kind of RPC: (a stream of requests, a stream of replies).
KINDS: dict[tuple[bool, bool], Callable[..., Any]] = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


def _access(method: MethodDescriptor) -> int:
    value: int = method.GetOptions().Extensions[access_pb2.access]
    return value


def descriptors() -> list[ServiceDescriptor]:
    """Every service of every generated ``feastlog.v1`` module, in file order."""
    found = []
    for info in sorted(pkgutil.iter_modules(feastlog.v1.__path__), key=lambda i: i.name):
        if info.name.endswith("_pb2"):
            module = importlib.import_module(f"feastlog.v1.{info.name}")
            found += list(module.DESCRIPTOR.services_by_name.values())
    return found


@cache
def _table() -> tuple[Service, ...]:
    order = list(SERVICERS)
    found = sorted(
        descriptors(),
        key=lambda s: order.index(s.full_name) if s.full_name in order else len(order),
    )
    return tuple(
        Service(
            s,
            SERVICERS.get(s.full_name),
            tuple(Rpc(f"/{s.full_name}/{m.name}", m, _access(m)) for m in s.methods),
        )
        for s in found
    )


SERVICES: tuple[Service, ...] = _table()
RPCS: dict[str, Rpc] = {rpc.path: rpc for s in SERVICES for rpc in s.rpcs}
NAMES: tuple[str, ...] = tuple(s.name for s in SERVICES)


def hosted() -> tuple[str, ...]:
    """The services hosted beside feastlog's from their libraries: health, then
    reflection v1 and v1alpha (their libraries loaded only when asked: a client that
    checks requests with the guard loads neither)."""
    from grpc_health.v1 import health

    from feastlog.service.grpc import reflection

    return (health.SERVICE_NAME, *reflection.SERVICE_NAMES)


def register(server: grpc.aio.Server, app: Application) -> None:
    """Register each service's servicer on ``server`` (a server, or the in-process
    channel's stand-in for one), by name as the generated code registers them."""
    for service in SERVICES:
        handlers = service.handlers(app)
        generic = grpc.method_handlers_generic_handler(service.name, handlers)
        server.add_generic_rpc_handlers((generic,))
        server.add_registered_method_handlers(service.name, handlers)


def rpc_name(path: str) -> str:
    """An RPC's name as the request log writes it: its method's, for a feastlog RPC;
    the last part of the path for a hosted one."""
    found = RPCS.get(path)
    return found.name if found is not None else path.rsplit("/", 1)[-1]
