"""What every servicer holds: the application, and who is calling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import grpc

from feastlog.service.app.application import Application
from feastlog.service.app.auth import CALLER, Caller


class Servicer:
    """The base of the servicers."""

    # A reply encoder per method, where one is not its reply message's own
    # (``SerializeToString``): FeedService's replies go out as made once for every feed.
    SERIALIZERS: ClassVar[dict[str, Callable[[Any], bytes]]] = {}

    def __init__(self, app: Application) -> None:
        self.app = app

    def caller(self, context: grpc.aio.ServicerContext) -> Caller:
        """Who is calling, from the authorization metadata (as the guard found it)."""
        found = CALLER.get()
        if found is not None:
            return found
        return self.app.credentials.caller(tuple(context.invocation_metadata() or ()))
