"""The server's metrics (service/grpc/metrics.py) on a real server: scraped over HTTP, the
RPCs by method and code agree with the calls the test made, the refusals with the rules
they broke, the commits, games, clocks, calls, holds, streams and heads with what the
server holds; no label carries a game id or a token; ``serve --metrics`` serves them."""

from __future__ import annotations

import collections
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import feed_service_pb2_grpc as fpb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import table_service_pb2 as tpb
from feastlog.v1 import table_service_pb2_grpc as tpb_grpc
from tests.serverutil import ThreadedServer, bearer, create, error_info, stub, view_of

GAME = "feastlog.v1.GameService"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> tuple[str, Samples]:
    """The page's text and every sample on it, by name and labels."""
    with urllib.request.urlopen(url, timeout=10) as page:
        assert page.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = page.read().decode()
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return text, found


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample's value (0 when it is not there: a counter not yet counted)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ThreadedServer, str]]:
    served = ThreadedServer(tmp_path / "games.duckdb", metrics=True)
    try:
        metrics = served.running.metrics
        assert metrics is not None
        port = served.call(metrics.serve("127.0.0.1", 0))
        yield served, f"http://127.0.0.1:{port}/metrics"
    finally:
        served.stop()


class Tally:
    """The calls the test made, by method and the code they ended with."""

    def __init__(self) -> None:
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()

    def call(self, stub_method: Any, name: str, request: Any, **kwargs: Any) -> Any:
        try:
            reply = stub_method(request, **kwargs)
        except grpc.RpcError as error:
            self.calls[name, error.code().name] += 1
            raise
        self.calls[name, "OK"] += 1
        return reply

    def refused(self, stub_method: Any, name: str, request: Any, **kwargs: Any) -> Any:
        with pytest.raises(grpc.RpcError) as caught:
            self.call(stub_method, name, request, **kwargs)
        return caught.value


def test_the_counts_agree_with_the_calls_made_and_the_rules_broken(
    server: tuple[ThreadedServer, str],
) -> None:
    served, url = server
    client = stub(served.address)
    table = tpb_grpc.TableServiceStub(grpc.insecure_channel(served.address))
    tally = Tally()
    game = tally.call(
        client.CreateGame,
        "CreateGame",
        pb.CreateGameRequest(
            game_kind="picky-eaters", players=["Ann", "Brian"], options={"clock": "bank:300+5"}
        ),
        metadata=bearer(served.key),
    )
    game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
    accepted = 0
    for number in range(6):
        view = view_of(tally.call(client.GetView, "GetView", pb.GetViewRequest(game_id=game_id)))
        seat = int(view["to_act"][0])
        legal = tally.call(
            client.ListLegalCommands,
            "ListLegalCommands",
            pb.ListLegalCommandsRequest(game_id=game_id),
            metadata=bearer(tokens[seat]),
        )
        request = pb.SubmitCommandRequest(
            game_id=game_id, command_id=f"m{number}", command=legal.commands[0]
        )
        if number == 2:  # the other seat sends it: refused by a turn rule
            error = tally.refused(
                client.SubmitCommand, "SubmitCommand", request, metadata=bearer(tokens[1 - seat])
            )
            turn_rule = error_info(error).metadata["rule_id"]
        if number == 4:  # at a seq already passed: refused as stale (no rule)
            stale = pb.SubmitCommandRequest(
                game_id=game_id, command_id="stale", command=legal.commands[0], expected_seq=1
            )
            error = tally.refused(
                client.SubmitCommand, "SubmitCommand", stale, metadata=bearer(tokens[seat])
            )
            stale_reason = error_info(error).reason
        tally.call(client.SubmitCommand, "SubmitCommand", request, metadata=bearer(tokens[seat]))
        accepted += 1
    # the guard's refusal is counted by its code too (no refusal of the game's: no rule)
    tally.refused(client.SubmitCommand, "SubmitCommand", request, metadata=bearer("not-a-token"))
    held = tally.call(
        table.CallArbiter,
        "CallArbiter",
        tpb.CallArbiterRequest(game_id=game_id, command_id="c1", about_seq=2, claim="x", hold=True),
        metadata=bearer(tokens[0]),
    )
    assert held.call
    error = tally.refused(
        table.CallArbiter,
        "CallArbiter",
        tpb.CallArbiterRequest(game_id=game_id, command_id="c2", about_seq=2, claim="y", hold=True),
        metadata=bearer(tokens[1]),
    )
    assert error_info(error).metadata["rule_id"] == "FL-CALL-SECOND-HOLD"
    seq = client.GetView(pb.GetViewRequest(game_id=game_id)).seq
    tally.calls["GetView", "OK"] += 1
    text, samples = scrape(url)

    for (method, code), count in tally.calls.items():
        service = "feastlog.v1.TableService" if method == "CallArbiter" else GAME
        labels = {"service": service, "method": method}
        assert value(samples, "feastlog_rpcs_total", **labels, code=code) == count, (method, code)
    by_method: collections.Counter[str] = collections.Counter()
    for (method, _), count in tally.calls.items():
        by_method[method] += count
    for method, count in by_method.items():
        service = "feastlog.v1.TableService" if method == "CallArbiter" else GAME
        labels = {"service": service, "method": method}
        assert value(samples, "feastlog_rpc_duration_seconds_count", **labels) == count

    refusals = {
        dict(labels)["rule_id"] or dict(labels)["reason"]: v
        for (name, labels), v in samples.items()
        if name == "feastlog_refusals_total"
    }
    assert refusals == {turn_rule: 1, stale_reason: 1, "FL-CALL-SECOND-HOLD": 1}
    assert value(samples, "feastlog_refusals_total", reason="RULE_VIOLATION", rule_id=turn_rule)

    # a commit per batch (the calls came one at a time): the game, each move, the call,
    # and the three refusals the server recorded
    batches = 1 + accepted + 1 + 3
    assert value(samples, "feastlog_commit_batches_sum") == batches
    assert value(samples, "feastlog_commits_total") == value(
        samples, "feastlog_commit_duration_seconds_count"
    )
    assert value(samples, "feastlog_commits_total") == batches
    assert value(samples, "feastlog_store_queue_batches") == 0
    assert value(samples, "feastlog_tree_size") == seq
    assert value(samples, "feastlog_live_games", state="running") == 1
    assert value(samples, "feastlog_live_games", state="finished") == 0
    assert value(samples, "feastlog_calls_open") == 1
    assert value(samples, "feastlog_holds") == 1
    assert value(samples, "feastlog_clocks_running") == 0  # a call holds the game: no clock
    assert value(samples, "feastlog_clock_timers") == 0

    # no label is a game id, a token or a player's name
    for secret in (game_id, served.key, *tokens, "Ann", "Brian"):
        assert secret not in text
    check_names(samples)


def check_names(samples: Samples) -> None:
    """Prometheus' conventions: feastlog's own names begin with ``feastlog_``; a counter's
    samples end with ``_total``; units are base units (seconds, not milliseconds)."""
    names = {name for name, _ in samples}
    own = {n for n in names if not n.startswith(("process_", "python_"))}
    assert own and all(n.startswith("feastlog_") for n in own), own
    assert not any(re.search(r"_(ms|milliseconds|minutes)(_|$)", n) for n in names)
    for name in own:
        if name.endswith("_created"):
            pytest.fail(f"{name}: a _created series")


def test_clocks_heads_streams_and_the_feed(server: tuple[ThreadedServer, str]) -> None:
    served, url = server
    client = stub(served.address)
    game = create(client, served.key, "picky-eaters", ["Ann", "Brian"], clock="bank:300+5")
    _, samples = scrape(url)
    assert value(samples, "feastlog_clocks_running") == 1
    assert value(samples, "feastlog_clock_timers") == 1

    head = served.call(served.running.app.signing.issue())
    _, samples = scrape(url)
    latest = served.running.app.signing.latest
    assert latest is not None and (head is None or head == latest)
    assert value(samples, "feastlog_tree_heads_signed_total") >= 1
    assert value(samples, "feastlog_tree_head_size") == value(samples, "feastlog_tree_size") == 1
    assert 0 <= value(samples, "feastlog_tree_head_age_seconds") < 60
    assert abs(value(samples, "feastlog_tree_head_timestamp_seconds") - time.time()) < 60

    watch = client.WatchGame(pb.WatchGameRequest(game_id=game.game_id, from_seq=1))
    feed = fpb_grpc.FeedServiceStub(grpc.insecure_channel(served.address)).WatchAll(
        fpb.WatchAllRequest()
    )
    next(watch), next(feed)
    _, samples = scrape(url)
    assert value(samples, "feastlog_feed_subscribers") == 1
    assert value(samples, "feastlog_game_watchers") == 1
    streams = "feastlog_rpc_streams_open"
    assert value(samples, streams, service=GAME, method="WatchGame") == 1
    assert value(samples, streams, service="feastlog.v1.FeedService", method="WatchAll") == 1
    watch.cancel()
    feed.cancel()
    watch_game = {"service": GAME, "method": "WatchGame"}
    for _ in range(200):
        _, samples = scrape(url)
        ended = value(samples, "feastlog_rpcs_total", **watch_game, code="CANCELLED")
        if ended and not value(samples, "feastlog_feed_subscribers"):
            break
        time.sleep(0.02)
    assert value(samples, streams, service=GAME, method="WatchGame") == 0
    assert value(samples, "feastlog_game_watchers") == 0
    assert value(samples, "feastlog_feed_subscribers") == 0
    # a stream is counted when it ends, and not timed (its length is its reader's)
    assert (
        value(samples, "feastlog_rpc_duration_seconds_count", service=GAME, method="WatchGame") == 0
    )


def test_metrics_are_served_beside_the_pages(server: tuple[ThreadedServer, str]) -> None:
    from feastlog.service.web.server import serve_http

    served, _ = server
    port = served.call(serve_http(served.running, "127.0.0.1", 0))
    _, samples = scrape(f"http://127.0.0.1:{port}/metrics")
    assert value(samples, "feastlog_build_info", version="0.1.0") == 1


def test_a_server_without_metrics_counts_nothing(tmp_path: Path) -> None:
    served = ThreadedServer(tmp_path / "games.duckdb")
    try:
        assert served.running.metrics is None
        assert served.running.db.on_commit is None
    finally:
        served.stop()


def test_serve_metrics_listens_on_its_own_port(tmp_path: Path) -> None:
    code = "from feastlog.cli.main import main; main()"
    command = [sys.executable, "-c", code, "serve", "--db", str(tmp_path / "s.duckdb")]
    proc = subprocess.Popen(
        [*command, "--port", "0", "--metrics", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(5)]
        found = next(filter(None, (re.match(r"metrics on (http://\S+)", line) for line in lines)))
        _, samples = scrape(found.group(1))
        assert value(samples, "feastlog_live_games", state="running") == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    assert proc.returncode == 0

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = str(taken.getsockname()[1])
        refused = subprocess.run(
            [*command, "--port", "0", "--metrics", busy], capture_output=True, text=True
        )
    assert refused.returncode == 3
    assert f"cannot listen on 127.0.0.1:{busy}" in refused.stderr
    assert "--metrics" in refused.stderr and "Traceback" not in refused.stderr
    same = subprocess.run(
        [*command, "--port", "8123", "--metrics", "8123"], capture_output=True, text=True
    )
    assert same.returncode == 2
    assert "--metrics 8123 is the gRPC --port too" in same.stderr


def documented() -> dict[str, str]:
    """docs/serving.md's table of metrics: each name and its type."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "serving.md").read_text()
    section = doc.split("## Metrics", 1)[1]
    return dict(re.findall(r"^\| `(feastlog_\w+)` \| (\w+) \|", section, re.M))


def test_the_doc_lists_every_metric_the_server_exports(
    server: tuple[ThreadedServer, str],
) -> None:
    served, url = server
    create(stub(served.address), served.key, "picky-eaters", ["Ann", "Brian"])
    served.call(served.running.app.signing.issue())  # a head: its gauges are there
    text, _ = scrape(url)
    exported = {
        (f"{name.removesuffix('_total')}_total" if kind == "counter" else name): kind
        for name, kind in re.findall(r"^# TYPE (feastlog_\w+) (\w+)", text, re.M)
    }
    listed = documented()
    # the cosigned head's gauges appear once a witness has cosigned
    later = {n for n in listed if n.startswith("feastlog_tree_head_cosigned_")}
    assert len(later) == 3
    assert {n: k for n, k in listed.items() if n not in later} == exported


def test_cosignatures_are_counted_per_head_never_by_witness_key(
    server: tuple[ThreadedServer, str], tmp_path: Path
) -> None:
    from feastlog.service.app.notary import load_or_make

    served, url = server
    create(stub(served.address), served.key, "picky-eaters", ["Ann", "Brian"])
    signing = served.running.app.signing
    served.call(signing.issue())
    head = signing.latest
    assert head is not None
    witnesses = [load_or_make(tmp_path / f"witness{n}.key") for n in range(2)]
    for witness in witnesses:
        cosignature = witness.cosign(head, "2026-06-01T12:00:00.000000Z")
        served.call(signing.take_cosignature(head, cosignature))
    text, samples = scrape(url)
    assert value(samples, "feastlog_cosignatures_total") == 2
    assert value(samples, "feastlog_tree_head_cosigned_witnesses") == 2
    assert value(samples, "feastlog_tree_head_cosigned_size") == head.size
    assert value(samples, "feastlog_tree_head_cosigned_timestamp_seconds") == value(
        samples, "feastlog_tree_head_timestamp_seconds"
    )
    for witness in witnesses:
        assert witness.public_key not in text


def test_hosted_services_are_counted_under_their_own_names(
    server: tuple[ThreadedServer, str],
) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    served, url = server
    health: Any = health_pb2_grpc.HealthStub(grpc.insecure_channel(served.address))
    health.Check(health_pb2.HealthCheckRequest(service=GAME))
    watch = health.Watch(health_pb2.HealthCheckRequest(service=GAME))
    assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
    labels = {"service": "grpc.health.v1.Health"}
    _, samples = scrape(url)
    assert value(samples, "feastlog_rpcs_total", **labels, method="Check", code="OK") == 1
    assert value(samples, "feastlog_rpc_streams_open", **labels, method="Watch") == 1
    watch.cancel()
    for _ in range(200):
        _, samples = scrape(url)
        if value(samples, "feastlog_rpcs_total", **labels, method="Watch", code="CANCELLED"):
            break
        time.sleep(0.02)
    assert value(samples, "feastlog_rpcs_total", **labels, method="Watch", code="CANCELLED") == 1
    assert value(samples, "feastlog_rpc_streams_open", **labels, method="Watch") == 0
    # a method no server has is answered UNIMPLEMENTED by gRPC and given no label
    unknown: Any = grpc.insecure_channel(served.address).unary_unary("/no.Such/Method")
    with pytest.raises(grpc.RpcError) as caught:
        unknown(b"")
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
    text, _ = scrape(url)
    assert "no.Such" not in text and "UNIMPLEMENTED" not in text
