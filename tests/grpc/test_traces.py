"""Traces: off by default; on, each RPC is a server span, a command's commit a child of
it and the store's write of the commit a child of that, with nothing secret on any span."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from feastlog.service import tracing
from feastlog.v1 import game_service_pb2 as pb
from tests.serverutil import ThreadedServer, bearer, create, stub


def test_traces_are_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    assert not tracing.wanted(False) and tracing.wanted(True)
    for value, on in (("otlp", True), ("console", True), ("none", False), ("", False)):
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", value)
        assert tracing.wanted(False) is on, value


def test_a_command_is_a_span_with_its_commit_and_the_stores_write(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    server = ThreadedServer(tmp_path / "feastlog.duckdb", traces=exporter)
    try:
        client = stub(server.address)
        game = create(client, server.key, "bon-appetit", ["Ann", "Bo"], bytes([7]) * 32)
        token = game.seat_tokens[0].token
        legal = client.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=game.game_id), metadata=bearer(token)
        )
        request = pb.SubmitCommandRequest(
            game_id=game.game_id, command_id=uuid.uuid4().hex, command=legal.commands[0]
        )
        client.SubmitCommand(request, metadata=bearer(token))
    finally:
        server.stop()
    spans = exporter.get_finished_spans()
    by_name: dict[str, list] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    (submit,) = by_name["/feastlog.v1.GameService/SubmitCommand"]
    assert submit.attributes is not None and submit.attributes["rpc.method"] == "SubmitCommand"
    commits = [s for s in by_name["feastlog.commit"] if s.parent is not None]
    (commit,) = [s for s in commits if s.parent.span_id == submit.context.span_id]
    assert commit.attributes is not None and commit.attributes["feastlog.rows"] == 1
    (write,) = [
        s for s in by_name["feastlog.store.write"] if s.parent.span_id == commit.context.span_id
    ]
    assert write.context.trace_id == submit.context.trace_id
    assert commit.start_time <= write.start_time <= write.end_time <= commit.end_time
    assert "/feastlog.v1.GameService/CreateGame" in by_name  # every RPC has its span
    # nothing secret rides on a span: no token, no key, no command
    text = json.dumps([dict(s.attributes or {}) for s in spans] + [s.name for s in spans])
    for secret in (token, server.key, game.game_id):
        assert secret not in text
