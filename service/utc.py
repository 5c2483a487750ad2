"""The time now as the service writes it: RFC 3339 UTC with microseconds.

Neutral ground for what the application (``service/app/clock.py``) and the store's
process (which signs receipts as it commits) both write.
"""

from __future__ import annotations

import datetime


def utc_now() -> str:
    """The time now, RFC 3339 UTC with microseconds."""
    now = datetime.datetime.now(datetime.UTC)
    return now.isoformat(timespec="microseconds").replace("+00:00", "Z")
