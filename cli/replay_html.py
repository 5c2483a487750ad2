"""``feastlog replay GAME_ID --html FILE``: the replay page, one self-contained HTML file.

Offline on a DuckDB file or an exported record, the game is folded here and drawn with
the replay code's steps (``service.pages``).  Through a server, a running game is drawn
from the server's own replay stream (the server decides what the viewer sees); a finished
game's record is public, so it is fetched whole and drawn the same way as offline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from feastlog.cli.audit_commands import AuditError, offline, rpc
from feastlog.cli.client import as_dict
from feastlog.replay import games
from feastlog.replay.engine import ARBITER, Fact, MalformedCommand, PackError, RuleViolation, Viewer
from feastlog.replay.export import BadExport, load_record
from feastlog.replay.history import refold
from feastlog.replay.page import page_data, render_page
from feastlog.replay.record import Row
from feastlog.replay.visibility import refusals_for
from feastlog.service.auth import ORGANISER
from feastlog.service.live import LiveGame, live_from_folded
from feastlog.service.offline import OfflineFile, answer
from feastlog.service.pages import page_html
from feastlog.service.store import Rejection
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc

# What folding a damaged record can raise; each is reported in words, not a traceback.
UNREADABLE = (
    BadExport,
    ValueError,
    KeyError,
    RuleViolation,
    MalformedCommand,
    PackError,
    DecodeError,
)


@dataclass(frozen=True)
class EventStep:
    """A row of the server's replay stream, as its viewer saw it."""

    row: Row
    facts: Sequence[Fact]
    view: dict[str, Any]


def game_from_record(text: str, source: str) -> LiveGame:
    """A finished game folded from its exported record."""
    try:
        record = load_record(text)
        if record.server_seed is None:
            raise AuditError(
                f"{source}: the game was still running when exported, so its seed is not "
                "revealed; draw it through the server (--server)"
            )
        folded = refold(record.rows, record.server_seed, record.pack_bytes)
    except UNREADABLE as bad:
        raise AuditError(f"{source}: not a record that replays: {bad}") from bad
    names = tuple(s.name for s in folded.genesis.seats)
    return live_from_folded(folded, record.server_seed, names)


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


def page_from_server(server: str, game_id: str, viewer: Viewer | None, key: str | None) -> str:
    """The page through a running server, as ``viewer`` (the caller's own view by default)."""
    asked = str(viewer) if viewer else ""

    async def call(channel: grpc.aio.Channel, meta: Any) -> tuple[Any, list[Any], Any, str]:
        replay = rpb_grpc.ReplayServiceStub(channel)
        now = await replay.GetStateAt(
            rpb.GetStateAtRequest(game_id=game_id, viewer=asked), metadata=meta
        )
        audit = apb_grpc.AuditServiceStub(channel)
        refused = await audit.ListRejections(
            apb.ListRejectionsRequest(game_id=game_id), metadata=meta
        )
        if now.event.kind == "seed_reveal":
            wanted = rpb.ExportRecordRequest(game_id=game_id)
            export = await replay.ExportRecord(wanted, metadata=meta)
            return now, [], refused, export.content.decode()
        request = rpb.StreamReplayRequest(game_id=game_id, viewer=asked)
        events = [r.event async for r in replay.StreamReplay(request, metadata=meta)]
        return now, events, refused, ""

    now, events, refused, record = rpc(server, key, call)
    chosen = Viewer.parse(now.viewer)
    rejections = [rejection_of(game_id, r) for r in refused.rejections]
    if record:
        return page_html(game_from_record(record, game_id), chosen, rejections)
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


def page_offline(db_path: str, game_id: str, viewer: Viewer) -> str:
    """The page from a DuckDB file no server holds."""
    source = OfflineFile(db_path)
    return offline(lambda: answer(source.page(ORGANISER, game_id, str(viewer))))


def write_replay_html(
    game_id: str,
    output: str,
    viewer: Viewer | None,
    server: str | None,
    db_path: str,
    key: str | None,
) -> str:
    """Write the page to ``output``; returns a line saying what was written."""
    path = Path(game_id)
    if game_id.endswith(".json") and path.is_file():
        page = page_html(game_from_record(path.read_text(), game_id), viewer or ARBITER)
    elif server:
        page = page_from_server(server, game_id, viewer, key)
    else:
        page = page_offline(db_path, game_id, viewer or ARBITER)
    data = page.encode("utf-8")
    try:
        Path(output).write_bytes(data)
    except OSError as bad:
        raise AuditError(f"cannot write {output}: {bad.strerror or bad}") from bad
    return f"wrote {output} ({len(data) / 1024:.0f} KB); open {output}#seq=N to start at seq N"
