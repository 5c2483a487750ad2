"""How a client's method is made from the call it names: ``unary`` and ``streamed``
turn a method whose body is a call of ``feastlog.client.calls`` and its token into
``Client``'s blocking method and ``AsyncClient``'s awaited one; a list read page by page
(``Pages``), a stream followed across dropped connections (``Resumed``) and a value
waited for along such a stream (``Awaited``, a ``unary`` method's answer) are said once
here too, each client reading them its own way (``paged``, ``resumed``, ``awaited``)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from feastlog.client.calls import Call, Stream
from feastlog.client.errors import FeastlogError

if TYPE_CHECKING:
    from feastlog.client.aio import AsyncClient
    from feastlog.client.sync import Client

P = ParamSpec("P")
T = TypeVar("T")

ENDED = "STREAM_ENDED"  # the reason of a wait whose stream ended first
PAGE_SIZE = 500  # games a page of the list (the most a server gives)

Sent = tuple[Call[T], str | None]  # a unary call and the token it is sent with
Streamed = tuple[Stream[T], str | None]  # a server stream and its token
# unary calls asked one after another: each ``Call`` yielded is sent and its answer sent
# back in; what the generator returns is what they found
Asked = Generator[Call[Any], Any, T]


class Pages(Generic[T]):
    """A list read page by page, in the server's order: ``page(page_token, size)`` is the
    call for one page (a reply with ``next_page_token``), ``items`` its items; at most
    ``most`` items (0: every one)."""

    def __init__(
        self,
        page: Callable[[str, int], Call[Any]],
        items: Callable[[Any], Sequence[T]],
        most: int = 0,
    ) -> None:
        self.page, self.items, self.most = page, items, most
        self.token, self.given, self.done = "", 0, False

    def call(self) -> Call[Any]:
        """The next page's call."""
        size = min(self.most - self.given, PAGE_SIZE) if self.most else PAGE_SIZE
        return self.page(self.token, size)

    def read(self, reply: Any) -> Sequence[T]:
        """A page's items, its place noted (``done`` after the last page, or ``most``)."""
        found = self.items(reply)
        self.given += len(found)
        self.token = reply.next_page_token
        self.done = not self.token or bool(self.most and self.given >= self.most)
        return found


class Resumed(Generic[T]):
    """A stream opened again after each dropped connection from where it stood:
    ``opened()`` is the stream from there, ``seen`` notes an item's place and says
    whether the stream is done; sent with ``token``."""

    def __init__(
        self, opened: Callable[[], Stream[T]], seen: Callable[[T], bool], token: str | None
    ) -> None:
        self.opened, self.seen, self.token = opened, seen, token


class Awaited(Generic[T]):
    """A value waited for along a ``Resumed`` stream: ``check()`` asks for it (unary
    calls, see ``Asked``) and returns it, or None while it is not there; it is asked
    once, then again after each item of ``follow()`` (made after the first check, so it
    starts where that check stood) until it is there.  Sent with ``token``; a stream
    that ends first raises ``ENDED``."""

    def __init__(
        self,
        check: Callable[[], Asked[T | None]],
        follow: Callable[[], Resumed[Any]],
        token: str | None,
    ) -> None:
        self.check, self.follow, self.token = check, follow, token


def ended() -> FeastlogError:
    """The failure of a wait whose stream ended before the value was there."""
    return FeastlogError("the stream ended before what was waited for", "", ENDED)


def _named(method: Any, made: Callable[..., Any]) -> None:
    """A decorated method named and documented as its body (for ``help``)."""
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(method, name, getattr(made, name))
    method.__wrapped__ = made


def _bound(made: Callable[..., Any], instance: Any, runs: Callable[[Any, Any], Any]) -> Any:
    @functools.wraps(made)
    def method(*args: Any, **kwargs: Any) -> Any:
        return runs(instance, made(instance, *args, **kwargs))

    return method


class unary(Generic[P, T]):
    """A method whose body names a unary call and its token (or an ``Awaited`` value):
    ``Client`` returns the call's answer (the value once it is there), ``AsyncClient``
    an awaitable of it."""

    def __init__(self, made: Callable[Concatenate[Any, P], Sent[T] | Awaited[T]]) -> None:
        self.made = made
        _named(self, made)

    @overload
    def __get__(self, instance: None, owner: type) -> unary[P, T]: ...
    @overload
    def __get__(self, instance: Client, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, instance: AsyncClient, owner: type
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return _bound(self.made, instance, _answered)


class streamed(Generic[P, T]):
    """A method whose body names a server stream (or a ``Pages`` list, a ``Resumed``
    stream) and its token: ``Client`` iterates it, ``AsyncClient`` iterates it async."""

    def __init__(
        self, made: Callable[Concatenate[Any, P], Streamed[T] | Pages[T] | Resumed[T]]
    ) -> None:
        self.made = made
        _named(self, made)

    @overload
    def __get__(self, instance: None, owner: type) -> streamed[P, T]: ...
    @overload
    def __get__(self, instance: Client, owner: type) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, instance: AsyncClient, owner: type) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return _bound(self.made, instance, _iterated)


def _answered(client: Any, made: Any) -> Any:
    """What a ``unary`` method's body named, answered the client's way."""
    if isinstance(made, Awaited):
        return client.awaited(made)
    return client.run(*made)


def _iterated(client: Any, made: Any) -> Any:
    """What a ``streamed`` method's body named, iterated the client's way."""
    if isinstance(made, Pages):
        return client.paged(made)
    if isinstance(made, Resumed):
        return client.resumed(made)
    return client.stream(*made)
