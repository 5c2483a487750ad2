"""docs/api.md's table of who may call what is the descriptors' (each RPC's
``(feastlog.v1.access)``): every RPC, under its access, and no other."""

from __future__ import annotations

import re
from pathlib import Path

from feastlog.service.grpc import services

API = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_access_table_lists_every_rpc_under_its_access() -> None:
    text = API.read_text().split("### Who may call what", 1)[1].split("\n## ", 1)[0]
    listed = {}
    for line in text.splitlines():
        if found := re.match(r"\| `(ACCESS_\w+)` \| .* \| (.*) \|$", line):
            listed[found[1]] = set(re.findall(r"`(\w+)`", found[2]))
    declared: dict[str, set[str]] = {}
    for rpc in services.RPCS.values():
        declared.setdefault(rpc.access_name, set()).add(rpc.name)
    assert listed == declared
