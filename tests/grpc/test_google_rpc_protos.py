"""The google.rpc protos vendored for clients define what the server sends, field for field."""

from __future__ import annotations

import tempfile
from importlib import resources
from pathlib import Path

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[2]
VENDORED = ROOT / "third_party" / "googleapis"
FILES = ("google/rpc/status.proto", "google/rpc/error_details.proto", "google/rpc/code.proto")


def compiled() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """The vendored files compiled by protoc, by name."""
    well_known = str(resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        args = ["protoc", f"-I{VENDORED}", f"-I{well_known}", f"--descriptor_set_out={out}"]
        assert protoc.main([*args, *FILES]) == 0
        found = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return {f.name: f for f in found.file}


def fields(message: Descriptor) -> list[tuple[str, int, int, str]]:
    """A message's fields as (name, number, type, type name)."""
    return [
        (f.name, f.number, f.type, f.message_type.full_name if f.message_type else "")
        for f in message.fields
    ]


def proto_fields(message: descriptor_pb2.DescriptorProto) -> list[tuple[str, int, int, str]]:
    """The same from a compiled DescriptorProto."""
    return [(f.name, f.number, f.type, f.type_name.lstrip(".")) for f in message.field]


def test_status_error_info_and_code_match_what_the_server_sends() -> None:
    files = compiled()
    status = files["google/rpc/status.proto"]
    details = files["google/rpc/error_details.proto"]
    assert status.package == details.package == "google.rpc"
    by_name = {m.name: m for m in [*status.message_type, *details.message_type]}
    for used in (status_pb2.Status.DESCRIPTOR, error_details_pb2.ErrorInfo.DESCRIPTOR):
        vendored = by_name[used.name]
        assert proto_fields(vendored) == fields(used), used.full_name
        if used.name == "ErrorInfo":  # metadata is map<string, string>
            entry = next(n for n in vendored.nested_type if n.name == "MetadataEntry")
            assert entry.options.map_entry
    code: EnumDescriptor = code_pb2.DESCRIPTOR.enum_types_by_name["Code"]
    vendored_code = files["google/rpc/code.proto"].enum_type[0]
    assert [(v.name, v.number) for v in vendored_code.value] == [
        (v.name, v.number) for v in code.values
    ]
