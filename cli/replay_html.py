"""``feastlog replay GAME_ID --html FILE``: the replay page, one self-contained HTML file.

Offline on a DuckDB file or an exported record, the game is folded here and drawn with
the replay code's steps (``presentation.page``).  Through a server, a running game is drawn
from the server's own replay stream (the server decides what the viewer sees); a finished
game's record is public, so it is fetched whole and drawn the same way as offline (unless
the server holds it back, its seed shared by a game still running: then from the stream).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from feastlog.cli.errors import cannot_write, output_file
from feastlog.cli.session import Session
from feastlog.client.data import as_dict
from feastlog.presentation.page import page_data, render_page, with_verification
from feastlog.replay import games
from feastlog.replay.games.engine import ARBITER, Fact, Viewer
from feastlog.replay.record.audit import summary_line
from feastlog.replay.record.rows import Row
from feastlog.replay.record.visibility import refusals_for
from feastlog.service.app.auth import ORGANISER
from feastlog.service.app.offline import OfflineRecord, answer
from feastlog.service.store import Rejection
from feastlog.v1 import audit_service_pb2 as apb


@dataclass(frozen=True)
class EventStep:
    """A row of the server's replay stream, as its viewer saw it."""

    row: Row
    facts: Sequence[Fact]
    view: dict[str, Any]


def rejection_of(game_id: str, message: apb.Rejection) -> Rejection:
    """A refusal from the server, in the store's shape."""
    return Rejection(
        game_id,
        message.after_seq,
        message.actor,
        message.command_id,
        b"",
        message.status,
        message.reason,
        message.rule_id,
        message.message,
        message.recorded_at,
    )


def bundled_pack(genesis: Any) -> Any:
    """The bundled content pack when the game was recorded with it (for the cards' faces)."""
    engine = games.engine(genesis.game_kind)
    data = engine.default_pack_bytes()
    return (
        engine.load_pack(data) if hashlib.sha256(data).hexdigest() == genesis.pack_sha256 else None
    )


def page_from_server(client: Session, game_id: str, viewer: Viewer | None) -> str:
    """The page through a running server, as ``viewer`` (the caller's own view by default)."""
    asked = str(viewer) if viewer else ""
    now = client.rpc.state_at(game_id, 0, asked)
    refused = client.rpc.rejections(game_id)
    chosen = Viewer.parse(now.viewer)
    rejections = [rejection_of(game_id, r) for r in refused]
    revealed = any(as_dict(f).get("type") == "seed_revealed" for f in now.event.facts)
    if now.event.kind == "seed_reveal" and revealed:  # a public record: drawn whole
        text, _ = client.export(game_id)
        record = OfflineRecord(text, game_id)
        return answer(record.replays.page(ORGANISER, game_id, str(chosen)))
    events = list(client.rpc.replay(game_id, 0, asked))
    genesis = events[0].genesis
    seen = [
        EventStep(
            Row(game_id, e.seq, e.kind, e.actor, "", b"", e.recorded_at, "", e.hash, e.state_hash),
            [as_dict(f) for f in e.facts],
            as_dict(e.view),
        )
        for e in events
    ]
    engine = games.engine(genesis.game_kind)
    refusals = refusals_for(chosen, rejections, over=False)
    return render_page(page_data(genesis, engine, chosen, seen, bundled_pack(genesis), refusals))


def write_replay_html(
    client: Session,
    game_id: str,
    output: str,
    viewer: Viewer | None,
    checked: dict[str, Any] | None = None,
) -> str:
    """Write the page to ``output``; returns a line saying what was written.  ``checked``:
    the record's audit report, which a page of a record that does not verify shows at
    its top (why, in the page itself, not only on standard error)."""
    output_file(output)
    if client.local:  # a DuckDB file no server holds, or an exported record
        page = client.page(game_id, viewer or ARBITER)
    else:
        page = page_from_server(client, game_id, viewer)
    if checked is not None and not checked["ok"]:
        faults = [
            f"seq {f['seq']}: {f['kind']}: {f['message']}".rstrip(": ") for f in checked["faults"]
        ]
        page = with_verification(page, summary_line(checked), faults)
    data = page.encode("utf-8")
    try:
        Path(output).write_bytes(data)
    except OSError as bad:
        raise cannot_write(output, bad) from bad
    return f"wrote {output} ({len(data) / 1024:.0f} KB); open {output}#seq=N to start at seq N"
