"""Incident ids: what ties a client's error to its line in the server log."""

from __future__ import annotations

import secrets


def new_incident_id() -> str:
    """A fresh id that ties a client's error to its line in the server log."""
    return "inc_" + secrets.token_hex(6)
