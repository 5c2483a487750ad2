"""A real Prometheus (Debian's ``prometheus`` package) scrapes a server under a bot load:
PromQL over its HTTP API returns the commands the bots sent, by method, and the refusals
by rule, and they agree with the bots' own tally and with the server's /metrics; the alert
rules of deploy/ load into it, ``promtool`` accepts them and their unit tests pass, and the
Grafana dashboard's queries parse and name only metrics the server exports.

Without Prometheus these tests skip; with ``FEASTLOG_REQUIRE_PROMETHEUS`` set (``.ci/run``
sets it) they fail instead.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from feastlog.cli.wire import bearer, new_game, play_with_bots, reason_of
from feastlog.client import calls
from feastlog.client.aio import sent as send
from feastlog.client.errors import error_info
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from tests.grpc.test_metrics import scrape, value
from tests.serverutil import ThreadedServer, create, stub

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "feastlog.rules.yml"
RULE_TESTS = ROOT / "deploy" / "feastlog.rules.test.yml"
DASHBOARD = ROOT / "deploy" / "feastlog.grafana.json"
REQUIRE = "FEASTLOG_REQUIRE_PROMETHEUS"
GAMES = 4  # bot games at once: a short load (a few seconds)
GAME = "feastlog.v1.GameService"


def tool(name: str) -> str:
    """The path of ``prometheus`` or ``promtool``; fails or skips the test without it."""
    found = shutil.which(name)
    if found is None:
        why = f"no {name} here: apt-get install prometheus (.ci/run does)"
        if os.environ.get(REQUIRE):
            pytest.fail(why)
        pytest.skip(why)
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Prometheus:
    """Prometheus on loopback scraping one target every half second, with deploy's rules."""

    def __init__(self, folder: Path, target: str) -> None:
        config = folder / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 500ms\n  evaluation_interval: 1s\n"
            f"rule_files:\n  - {RULES}\n"
            "scrape_configs:\n  - job_name: feastlog\n"
            f"    static_configs:\n      - targets: ['{target}']\n"
        )
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                tool("prometheus"),
                f"--config.file={config}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"prometheus did not start: {self.proc.communicate()[1]}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as ready:
                    if ready.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        pytest.fail("prometheus was not ready within 30 s")

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as reply:
            answer = json.loads(reply.read())
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, promql: str) -> dict[str, float]:
        """An instant query's vector, each sample keyed by its labels (sorted, joined)."""
        found = self.api("query", query=promql)
        assert found["resultType"] == "vector"
        return {
            ",".join(f"{k}={v}" for k, v in sorted(s["metric"].items())): float(s["value"][1])
            for s in found["result"]
        }

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ThreadedServer, str]]:
    tool("prometheus")  # before the server is started
    server = ThreadedServer(tmp_path / "games.duckdb", metrics=True)
    try:
        assert server.running.metrics is not None
        port = server.call(server.running.metrics.serve("127.0.0.1", 0))
        yield server, f"127.0.0.1:{port}"
    finally:
        server.stop()


async def bot_load(address: str, key: str) -> tuple[int, collections.Counter[str]]:
    """GAMES bot games at once to their ends, then a command sent to each finished game
    and one from a seat not to act in a new game: the commands sent, the refusals by rule."""
    refused: collections.Counter[str] = collections.Counter()
    async with grpc.aio.insecure_channel(address) as channel:
        stub: Any = pb_grpc.GameServiceStub(channel)  # its asyncio form, on this channel
        made = [
            await new_game(stub, key, "picky-eaters", ["Ann", "Brian"], bytes([n + 1]) * 32)
            for n in range(GAMES)
        ]
        played = await asyncio.gather(
            *(
                play_with_bots(stub, g.game_id, [t.token for t in g.seat_tokens], seed=n)
                for n, g in enumerate(made)
            )
        )
        sent = sum(p.commands for p in played)
        fresh = await new_game(stub, key, "picky-eaters", ["Ann", "Brian"], b"\x09" * 32)
        tokens = [t.token for t in fresh.seat_tokens]
        view = (await send(stub, calls.view(fresh.game_id))).table
        seat = int(view["to_act"][0])
        legal = await send(stub, calls.legal(fresh.game_id), bearer(tokens[seat]))
        aims = [(g.game_id, g.seat_tokens[0].token) for g in made]
        aims.append((fresh.game_id, tokens[1 - seat]))  # a seat not to act
        for game_id, token in aims:
            request = pb.SubmitCommandRequest(
                game_id=game_id, command_id=f"late-{game_id}", command=legal.commands[0]
            )
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.SubmitCommand(request, metadata=bearer(token))
            assert reason_of(caught.value) == "RULE_VIOLATION"
            info = error_info(caught.value)
            assert info is not None
            refused[info.metadata["rule_id"]] += 1
    return sent, refused


def test_promql_agrees_with_the_bots_and_the_server(
    served: tuple[ThreadedServer, str], tmp_path: Path
) -> None:
    server, target = served
    prometheus = Prometheus(tmp_path, target)
    try:
        sent, refused = asyncio.run(bot_load(server.address, server.key))
        assert sent > 0 and sum(refused.values()) == GAMES + 1
        _, own = scrape(f"http://{target}/metrics")  # the server's own count, after the load
        submitted = value(
            own, "feastlog_rpcs_total", service=GAME, method="SubmitCommand", code="OK"
        )
        assert submitted == sent

        by_method = f'sum by (method) (feastlog_rpcs_total{{job="feastlog",service="{GAME}"}})'
        expected = _by_method(own)
        found: dict[str, float] = {}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # until a scrape after the load is in
            found = prometheus.query(by_method)
            if found == expected:
                break
            time.sleep(0.25)
        assert found == expected
        assert found["method=SubmitCommand"] == sent + GAMES + 1  # the refused ones too
        assert found["method=CreateGame"] == GAMES + 1
        ok = prometheus.query('sum(feastlog_rpcs_total{method="SubmitCommand",code="OK"})')
        assert ok == {"": sent}

        rules = prometheus.query("sum by (rule_id) (feastlog_refusals_total)")
        assert rules == {f"rule_id={rule}": float(n) for rule, n in refused.items()}
        assert rules == {
            f"rule_id={dict(labels)['rule_id']}": v
            for (name, labels), v in own.items()
            if name == "feastlog_refusals_total"
        }
        commits = prometheus.query("feastlog_commits_total")
        assert list(commits.values()) == [value(own, "feastlog_commits_total")]

        groups = prometheus.api("rules")["groups"]
        assert [g["name"] for g in groups] == ["feastlog"]
        alerts = {r["name"] for r in groups[0]["rules"]}
        assert {"FeastlogNoTreeHead", "FeastlogWitnessBehind", "FeastlogErrorRate"} <= alerts
        firing = [a for a in prometheus.api("alerts")["alerts"] if a["state"] == "firing"]
        assert firing == []
    finally:
        prometheus.stop()


def _by_method(samples: dict[Any, float]) -> dict[str, float]:
    """The server's RPCs of GameService summed by method, as the PromQL query keys them."""
    found: dict[str, float] = collections.defaultdict(float)
    for (name, labels), count in samples.items():
        labelled = dict(labels)
        if name == "feastlog_rpcs_total" and labelled["service"] == GAME:
            found[f"method={labelled['method']}"] += count
    return dict(found)


def test_promtool_accepts_the_rules_and_their_tests_pass() -> None:
    promtool = tool("promtool")
    checked = subprocess.run(
        [promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 5 rules found" in checked.stdout
    tested = subprocess.run(
        [promtool, "test", "rules", RULE_TESTS.name],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=RULE_TESTS.parent,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


def dashboard_queries() -> list[str]:
    """Every PromQL expression of the Grafana dashboard, its variables filled in."""
    board = json.loads(DASHBOARD.read_text())
    found = []
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$__rate_interval", "1m")
            found.append(expr.replace("$instance", ".*"))
    return found


def test_the_dashboard_queries_parse_and_name_what_the_server_exports(
    tmp_path: Path,
) -> None:
    promtool = tool("promtool")
    queries = dashboard_queries()
    assert len(queries) >= 15
    recorded = tmp_path / "dashboard.rules.yml"
    lines = ["groups:", "  - name: dashboard", "    rules:"]
    for n, expr in enumerate(queries):
        lines += [f"      - record: dashboard:query{n}", f"        expr: {json.dumps(expr)}"]
    recorded.write_text("\n".join(lines) + "\n")
    checked = subprocess.run(
        [promtool, "check", "rules", str(recorded)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    served = ThreadedServer(tmp_path / "games.duckdb", metrics=True)
    try:
        metrics = served.running.metrics
        assert metrics is not None
        create(stub(served.address), served.key, "picky-eaters", ["Ann", "Brian"])
        served.call(served.running.app.signing.issue())  # a head of the game's row
        exported = metrics.text().decode()
    finally:
        served.stop()
    names = set(re.findall(r"^# TYPE (\w+) (\w+)", exported, re.M))
    series = {n for n, kind in names} | {f"{n}_total" for n, kind in names if kind == "counter"}
    series |= {
        f"{n}_{end}"
        for n, kind in names
        if kind == "histogram"
        for end in ("bucket", "sum", "count")
    }
    used = set(re.findall(r"\b(feastlog_\w+)", " ".join([*queries, RULES.read_text()])))
    # the cosigned head's series appear once a witness has cosigned: named in the doc
    later = {n for n in used if n.startswith("feastlog_tree_head_cosigned_")}
    assert used - series - later == set()
