"""What every servicer holds: the application, and who is calling."""

from __future__ import annotations

import grpc

from feastlog.service.app.application import Application
from feastlog.service.app.auth import CALLER, Caller


class Servicer:
    """The base of the four servicers."""

    def __init__(self, app: Application) -> None:
        self.app = app

    def caller(self, context: grpc.aio.ServicerContext) -> Caller:
        """Who is calling, from the authorization metadata (as the guard found it)."""
        found = CALLER.get()
        if found is not None:
            return found
        return self.app.credentials.caller(tuple(context.invocation_metadata() or ()))
