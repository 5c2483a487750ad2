"""Bounded input: what every RPC the server hosts checks before its servicer runs.

One interceptor (``Guard``) wraps the handler of every method of the feastlog services
(the service table's, ``service/grpc/services.py``, read from the proto descriptors), and
of the services the server hosts from their libraries (health, reflection v1 and
v1alpha), each found by its path, so a new RPC is covered without edits here:

- the caller's credentials are resolved on every feastlog call: a malformed or unknown
  bearer token is refused with UNAUTHENTICATED even where a spectator may call (health
  and reflection read no credentials);
- the request bytes go through a checked deserializer: bytes over the RPC's size limit
  (RESOURCE_EXHAUSTED), bytes that are not the request type (INVALID_ARGUMENT,
  UNDECODABLE_REQUEST), fields this server does not know anywhere in the message
  (UNKNOWN_FIELDS: they would ride inside a command into the chain), strings, bytes or
  lists longer than their bound (FIELD_TOO_LONG, naming the field) and strings holding a
  character their field does not take (BAD_REQUEST, naming the field and the character)
  are refused: each field's bound and characters are the input policy's
  (``service.app.bounds``), applied here (``check_fields``) to every field of every
  request.  A stream of requests (reflection's) ends at the first one refused, with its
  status.

Every refusal is one of the errors of ``service.app.errors`` and leaves through the
status table (``service.grpc.status``).  Requests refused here never reach a game, so
they are not stored as rejections; how refusals that do reach one are kept, and how
whole-record folds are paced, is the application's (``service.app.limits``).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

import grpc
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from feastlog.service.app.auth import CALLER, Credentials
from feastlog.service.app.bounds import FIELDS, KIB, LIST_BOUND, OPTION, Field, field_of
from feastlog.service.app.errors import (
    FieldTooLong,
    RequestTooLarge,
    ServiceError,
    UndecodableRequest,
    UnknownFields,
)
from feastlog.service.grpc import services
from feastlog.service.grpc.status import Handler, WrappingInterceptor, abort

# Request bytes an RPC takes: this, plus the bound of any field of the request larger
# than it (a content pack).  The server-wide gRPC limit is the largest of these.
REQUEST_BYTES = 64 * KIB


def request_limit(request_type: Descriptor) -> int:
    """The most bytes a request of this type may have."""
    large = [FIELDS[f.name].bound for f in request_type.fields if f.name in FIELDS]
    return REQUEST_BYTES + sum(b for b in large if b > REQUEST_BYTES)


def methods() -> list[tuple[str, Any]]:
    """Every guarded method as (``/package.Service/Method`` path, method descriptor): every
    RPC of the service table (``service/grpc/services.py``)."""
    return [(path, rpc.method) for path, rpc in services.RPCS.items()]


def hosted_requests() -> dict[str, tuple[Any, str]]:
    """The methods of the services hosted beside feastlog's (health, reflection v1 and
    v1alpha), by path: the request type their library's servicer reads, and its name as
    the method's callers know it."""
    # only the server's guard asks: the client, which checks requests with check_fields,
    # loads neither library
    from grpc_health.v1 import health

    from feastlog.service.grpc import reflection

    service = descriptor_pool.Default().FindServiceByName(health.SERVICE_NAME)
    found = {
        f"/{service.full_name}/{m.name}": (
            message_factory.GetMessageClass(m.input_type),
            m.input_type.full_name,
        )
        for m in service.methods
    }
    return found | reflection.requests()


def server_options() -> list[tuple[str, int]]:
    """gRPC server options: no request larger than the largest any RPC takes."""
    largest = max(request_limit(m.input_type) for _, m in methods())
    return [("grpc.max_receive_message_length", largest)]


def _rule(field: FieldDescriptor) -> Field:
    return field_of(field.name, field.type == FieldDescriptor.TYPE_BYTES)


def _check_value(field: FieldDescriptor, value: Any, path: str, rule: Field) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        check_fields(value, path)
    elif field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        rule.check(value, path)


def _check_list(field: FieldDescriptor, values: Any, path: str) -> None:
    if len(values) > LIST_BOUND:
        raise FieldTooLong(
            f"{path} has {len(values)} entries; it takes at most {LIST_BOUND}",
            field=path,
            limit=str(LIST_BOUND),
        )
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
        named = FIELDS.get(field.name)  # a named map: its keys and values take its rule
        for k in values:
            _check_value(key, k, f"{path} key", named or _rule(key))
            _check_value(value, values[k], f"{path}[{k!r}]", named or _rule(value))
        return
    for i, item in enumerate(values):
        _check_value(field, item, f"{path}[{i}]", _rule(field))


def check_fields(message: Message, path: str = "") -> None:
    """Refuse unknown fields, and values longer than their bound or holding characters
    their field does not take (the input policy, ``service.app.bounds``), anywhere in
    ``message``."""
    found = UnknownFieldSet(message)
    unknown = sorted({found[i].field_number for i in range(len(found))})
    known = cast(dict[int, FieldDescriptor], message.DESCRIPTOR.fields_by_number)
    mistyped = [known[n] for n in unknown if n in known]
    if mistyped:  # a field this server knows, sent as another type: protobuf sets it aside
        field = mistyped[0]
        where = f"{path}.{field.name}" if path else field.name
        raise UndecodableRequest(
            f"{where} (field {field.number}) is sent as the wrong type: it is {_type_words(field)}",
            field=where,
        )
    if unknown:
        where = path or "the request"
        numbers = ", ".join(str(n) for n in unknown)
        raise UnknownFields(
            f"{where} carries field number(s) {numbers}, which this server does not know; "
            f"send only the fields of {message.DESCRIPTOR.file.package}",
            field=path or "request",
            unknown_fields=",".join(f"{path or message.DESCRIPTOR.name}#{n}" for n in unknown),
        )
    for field, value in message.ListFields():
        where = f"{path}.{field.name}" if path else field.name
        if field.is_repeated:
            _check_list(field, value, where)
        else:
            _check_value(field, value, where, _rule(field))


def _type_words(field: FieldDescriptor) -> str:
    """A field's type in words: ``a string``, ``a BonAppetitBid message``, ``a list of …``."""
    if field.message_type is not None:
        one = f"a {field.message_type.name} message"
    elif field.enum_type is not None:
        one = f"a {field.enum_type.name} value"
    else:
        one = _SCALAR_WORDS.get(field.type, "a whole number")
    return f"a list, each {one}" if field.is_repeated else one


_SCALAR_WORDS = {
    FieldDescriptor.TYPE_STRING: "a string",
    FieldDescriptor.TYPE_BYTES: "bytes",
    FieldDescriptor.TYPE_BOOL: "true or false",
    FieldDescriptor.TYPE_DOUBLE: "a number",
    FieldDescriptor.TYPE_FLOAT: "a number",
}


def smallest_bound(descriptor: Descriptor) -> int:
    """The smallest bound of any string, bytes, list or map field a message of this type
    may hold, at any depth.

    A string of n characters, bytes of n bytes and a list of n entries each take at least
    n bytes of the request, so a request shorter than this breaks no bound: most commands
    (20 to 60 bytes) need no walk through their fields for it, only a glance at their
    strings' characters (``_printable``).
    """
    return _smallest(descriptor, set())


def _smallest(descriptor: Descriptor, seen: set[str]) -> int:
    seen.add(descriptor.full_name)
    smallest = REQUEST_BYTES
    for field in descriptor.fields:
        if field.is_repeated:
            smallest = min(smallest, LIST_BOUND, OPTION.bound)
        if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
            smallest = min(smallest, _rule(field).bound, OPTION.bound)
        inner = field.message_type
        if inner is not None and inner.full_name not in seen:
            smallest = min(smallest, _smallest(inner, seen))
    return smallest


def _printable(message: Message) -> bool:
    """Whether every string in ``message``, at any depth, is printable by Python's
    measure (``str.isprintable``), which refuses more than the policy does (spaces other
    than ' ' too): a message that passes holds no character any field refuses, and one
    that does not is walked by ``check_fields``.  Several times quicker than that walk."""
    for field, value in message.ListFields():
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            if entry.fields_by_name["value"].message_type is not None:
                return False  # a map of messages: walked (no request has one)
            values: Any = [*value.keys(), *value.values()]
        else:
            values = value if field.is_repeated else (value,)
        for one in values:
            if isinstance(one, str):
                if not one.isprintable():
                    return False
            elif isinstance(one, Message) and not _printable(one):
                return False
    return True


def _has_unknown_fields(message: Message) -> bool:
    """Whether a message holds unknown fields at any depth (it loses them if so): they
    are part of its size, so dropping them shrinks it (protobuf's C code, at once)."""
    size = message.ByteSize()
    message.DiscardUnknownFields()
    return message.ByteSize() != size


@dataclass(frozen=True)
class Refused:
    """What the checked deserializer hands on instead of a request it refuses."""

    error: ServiceError


def checked_deserializer(
    request_type: Any, name: str = "", strict: bool = True
) -> Callable[[bytes], Message | Refused]:
    """Parse request bytes, or a ``Refused`` saying in plain words why not.

    ``name``: the request type's name in the refusal, when its callers know it by
    another (reflection v1's requests are read as v1alpha's).  ``strict``: refuse unknown
    fields, and values over their bound or holding a character their field does not
    take, too (feastlog's own requests, by the input policy); a hosted service's
    request (health, reflection) is held to its size and to being its message, and its
    unknown fields are dropped as protobuf would: a newer health or reflection client
    (a load balancer's probe) may send fields this library does not know.
    """
    name = name or request_type.DESCRIPTOR.full_name
    limit = request_limit(request_type.DESCRIPTOR)
    short = smallest_bound(request_type.DESCRIPTOR)

    def deserialize(raw: bytes) -> Message | Refused:
        if len(raw) > limit:
            return Refused(
                RequestTooLarge(
                    f"the request is {len(raw)} bytes; this call takes at most {limit}",
                    limit=str(limit),
                )
            )
        try:
            request: Message = request_type.FromString(raw)
            if not strict:
                request.DiscardUnknownFields()
            elif len(raw) >= short or not _printable(request):
                check_fields(request)
            elif _has_unknown_fields(request):
                check_fields(request_type.FromString(raw))  # names them, and refuses
        except DecodeError:
            return Refused(
                UndecodableRequest(f"the request bytes are not a {name} message", field="request")
            )
        except ServiceError as error:
            return Refused(error)
        return request

    return deserialize


class Guard(WrappingInterceptor):
    """Checks credentials and request bytes on every feastlog RPC, and the request bytes
    of every hosted one (see the module doc)."""

    def __init__(self, credentials: Credentials) -> None:
        super().__init__()
        self.credentials = credentials
        own = {
            path: (message_factory.GetMessageClass(m.input_type), m.input_type.full_name)
            for path, m in methods()
        }
        self._requests = {**hosted_requests(), **own}
        self._own = set(own)  # the feastlog methods: their credentials are checked too

    def wraps(self, path: str) -> bool:
        """A feastlog or hosted method (health, reflection) is guarded."""
        return path in self._requests

    def wrap(self, path: str, handler: Handler) -> Handler:
        """The method's handler, guarded."""
        own = path in self._own
        deserializer = checked_deserializer(*self._requests[path], strict=own)
        kinds = {
            "unary_unary": self._unary,
            "unary_stream": self._streaming,
            "stream_unary": self._unary_in_stream,
            "stream_stream": self._streaming_in_stream,
        }
        for kind, guard in kinds.items():
            behaviour = getattr(handler, kind)
            if behaviour is not None:
                return handler._replace(  # type: ignore[attr-defined]
                    request_deserializer=deserializer, **{kind: guard(behaviour, own)}
                )
        raise NotImplementedError(f"{path}: a handler of no kind gRPC has")

    async def _admit(self, request: Any, context: grpc.aio.ServicerContext, own: bool) -> None:
        """Abort the call unless its credentials (a feastlog call's) and request pass."""
        if own:
            try:
                CALLER.set(self.credentials.caller(tuple(context.invocation_metadata() or ())))
            except ServiceError as error:
                await abort(context, error)
        if isinstance(request, Refused):
            await abort(context, request.error)

    async def _checked(
        self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        """A stream's requests, the call ended with its status at the first one refused
        (for a servicer that reads them as an iterator, as reflection's does)."""
        async for request in requests:
            await self._admit(request, context, own=False)
            yield request

    def _unary(
        self, behaviour: Callable[..., Awaitable[Any]], own: bool
    ) -> Callable[..., Awaitable[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await self._admit(request, context, own)
            return await behaviour(request, context)

        return guarded

    def _streaming(self, behaviour: Callable[..., Any], own: bool) -> Callable[..., Any]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            await self._admit(request, context, own)
            async for reply in _replies(behaviour(request, context)):
                yield reply

        return guarded

    def _unary_in_stream(
        self, behaviour: Callable[..., Awaitable[Any]], own: bool
    ) -> Callable[..., Awaitable[Any]]:
        async def guarded(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
            await self._admit(None, context, own)
            return await behaviour(self._checked(requests, context), context)

        return guarded

    def _streaming_in_stream(self, behaviour: Callable[..., Any], own: bool) -> Callable[..., Any]:
        async def guarded(
            requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            await self._admit(None, context, own)
            async for reply in _replies(behaviour(self._checked(requests, context), context)):
                yield reply

        return guarded


async def _replies(replies: Any) -> AsyncIterator[Any]:
    """A streaming handler's replies: those it yields, or none when it writes them through
    the context itself (health's Watch) and returns an awaitable."""
    if inspect.isawaitable(replies):
        await replies
        return
    async for reply in replies:
        yield reply
