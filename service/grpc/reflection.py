"""Server reflection, v1 beside v1alpha.

grpcio-reflection (1.85) serves only ``grpc.reflection.v1alpha.ServerReflection``; current
tools (grpcurl, Postman, buf curl) ask ``grpc.reflection.v1.ServerReflection`` first. The
two protocols are the same messages under another package name: every field keeps its
number and type, so the bytes on the wire are identical. The v1 service is the v1alpha
servicer reached under the v1 name, and the v1 file is added to the descriptor pool so
reflection can describe itself under both names.

Both streams' requests pass the guard (``service.grpc.guard``) as feastlog's do: a request that
is not one ends the stream with INVALID_ARGUMENT (``requests`` says what it reads).
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha

V1_PACKAGE = "grpc.reflection.v1"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1_SERVICE_NAME = f"{V1_PACKAGE}.ServerReflection"
V1ALPHA_SERVICE_NAME: str = reflection.SERVICE_NAME
SERVICE_NAMES = (V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)


def requests() -> dict[str, tuple[Any, str]]:
    """Each reflection method by path, v1 and v1alpha: the request type the servicer reads
    (v1alpha's, under both names) and its name as that version's callers know it."""
    service = descriptor_pool.Default().FindServiceByName(V1ALPHA_SERVICE_NAME)
    return {
        f"/{name}/{m.name}": (
            message_factory.GetMessageClass(m.input_type),
            f"{name.rpartition('.')[0]}.{m.input_type.name}",
        )
        for name in SERVICE_NAMES
        for m in service.methods
    }


def _v1_file() -> descriptor_pb2.FileDescriptorProto:
    """The v1 reflection file: the v1alpha one under the v1 package (same fields, numbers)."""
    proto = descriptor_pb2.FileDescriptorProto()
    v1alpha.DESCRIPTOR.CopyToProto(proto)
    old = f".{v1alpha.DESCRIPTOR.package}."
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    proto.options.java_package = "io.grpc.reflection.v1"
    proto.options.go_package = "google.golang.org/grpc/reflection/grpc_reflection_v1"
    for message in proto.message_type:
        for field in message.field:
            if field.HasField("type_name"):
                field.type_name = field.type_name.replace(old, f".{V1_PACKAGE}.")
    for method in proto.service[0].method:
        method.input_type = method.input_type.replace(old, f".{V1_PACKAGE}.")
        method.output_type = method.output_type.replace(old, f".{V1_PACKAGE}.")
    return proto


def _register_v1_file(pool: descriptor_pool.DescriptorPool) -> None:
    """Add the v1 file to ``pool`` once (a second server in the process finds it there)."""
    try:
        pool.FindFileByName(V1_FILE)
    except KeyError:
        pool.Add(_v1_file())


def enable(service_names: tuple[str, ...], server: grpc.aio.Server) -> None:
    """Serve reflection v1 and v1alpha on ``server``, listing ``service_names`` and both."""
    _register_v1_file(descriptor_pool.Default())
    names = (*service_names, *SERVICE_NAMES)
    reflection.enable_server_reflection(names, server)
    servicer = reflection.aio.ReflectionServicer(names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=v1alpha.ServerReflectionRequest.FromString,
        response_serializer=v1alpha.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": handler}),)
    )
