"""The server's metrics, in the Prometheus text format (``prometheus-client``).

One ``Metrics`` per server, with a registry of its own (several servers in one process, as
the tests run them, each count their own; on several nodes each node exports its own).
What is counted on a call's or a commit's path is a counter's increment or a histogram's
observation: the RPCs by service, method and status code, and their latency (the
interceptor, ``RpcMetrics``, beside the guard), and each commit's batches and seconds
(``Database.on_commit``).  Everything else is read when Prometheus scrapes
(``Now.collect``): the writer's queue and commits, the games folded in memory and who
watches them, the feeds, the log tree and its heads, the clocks, calls and holds, and the
refusals by rule (``Games.refused``).  The scrape runs on the event loop (aiohttp), as
every call does, so it reads the application's state with nothing else moving it.

Every label's values are a closed set: services and methods that have a handler here, gRPC
status codes, the refusals' reasons and the rules of the rulebooks' catalogues (a rule
id outside them is counted as ``other``).  No game id, token, player or witness key is
ever a label.  docs/serving.md lists every metric.
"""

from __future__ import annotations

import asyncio
import datetime
import importlib.metadata
import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import grpc
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from feastlog.replay import games
from feastlog.replay.games.fold import RECORD_RULES
from feastlog.replay.table import desk
from feastlog.service.grpc.status import Handler, WrappingInterceptor, status_name

if TYPE_CHECKING:
    from aiohttp import web

    from feastlog.service.app.application import Application


# Seconds: from half a millisecond (a view from memory) to ten seconds (an audit).
RPC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
COMMIT_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
GROUP_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # batches in one commit
# The classic text format, which every Prometheus reads (names here need no escaping)
TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
OTHER = "other"  # a rule id no catalogue has (a label's values stay a closed set)


class Metrics:
    """A server's metrics: its registry, the interceptor of its RPCs, and what a scrape
    reads of its application."""

    def __init__(self, app: Application) -> None:
        disable_created_metrics()  # no ``_created`` series beside every counter
        self.registry = CollectorRegistry()
        for standard in (ProcessCollector, PlatformCollector, GCCollector):
            standard(registry=self.registry)
        self.rpcs = Counter(
            "feastlog_rpcs",
            "RPCs finished, by service, method and gRPC status code.",
            ["service", "method", "code"],
            registry=self.registry,
        )
        self.rpc_seconds = Histogram(
            "feastlog_rpc_duration_seconds",
            "How long unary RPCs took to answer, by service and method.",
            ["service", "method"],
            buckets=RPC_BUCKETS,
            registry=self.registry,
        )
        self.streams = Gauge(
            "feastlog_rpc_streams_open",
            "Streaming RPCs open now, by service and method.",
            ["service", "method"],
            registry=self.registry,
        )
        self.commit_seconds = Histogram(
            "feastlog_commit_duration_seconds",
            "How long each commit's transaction took.",
            buckets=COMMIT_BUCKETS,
            registry=self.registry,
        )
        self.group = Histogram(
            "feastlog_commit_batches",
            "Batches (commands, refusals, new games) per commit: the group commit's size.",
            buckets=GROUP_BUCKETS,
            registry=self.registry,
        )
        self.app = app
        app.db.on_commit = self.committed
        self.registry.register(Now(app))
        self.interceptor = RpcMetrics(self)
        self._runner: Any = None  # the listener of ``serve --metrics``, when there is one

    def committed(self, batches: int, seconds: float) -> None:
        """A commit (the writer's ``on_commit``)."""
        self.group.observe(batches)
        self.commit_seconds.observe(seconds)

    def text(self) -> bytes:
        """Every metric now, in the Prometheus text format."""
        return generate_latest(self.registry)

    async def page(self, request: web.Request) -> web.Response:
        """``GET /metrics``."""
        from aiohttp import web

        return web.Response(body=self.text(), headers={"Content-Type": TEXT_FORMAT})

    async def serve(self, host: str, port: int) -> int:
        """Serve ``/metrics`` on a listener of its own (port 0 picks one): its port.

        Raises OSError when the port cannot be had.
        """
        from aiohttp import web

        app = web.Application()
        app.router.add_get("/metrics", self.page)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        bound: int = runner.addresses[0][1]
        return bound

    async def stop(self) -> None:
        """Close the listener, if there is one."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def labels_of(path: str) -> tuple[str, str]:
    """An RPC's service and method labels, from its path (``/feastlog.v1.GameService/
    CreateGame``): only paths with a handler are counted, so their values are bounded."""
    service, _, method = path.lstrip("/").rpartition("/")
    return service, method


class RpcMetrics(WrappingInterceptor):
    """Counts every call that has a handler by its status code as it ends, and times the
    unary ones (outside the guard: its refusals are counted too)."""

    def __init__(self, metrics: Metrics) -> None:
        super().__init__()  # a path with no handler (UNIMPLEMENTED) is not wrapped: no label
        self.metrics = metrics

    def wrap(self, path: str, handler: Handler) -> Handler:
        """The method's handler, counted."""
        labels = labels_of(path)
        for kind in ("unary_unary", "stream_unary"):
            behaviour = getattr(handler, kind)
            if behaviour is not None:
                return handler._replace(**{kind: self._unary(labels, behaviour)})  # type: ignore[attr-defined]
        for kind in ("unary_stream", "stream_stream"):
            behaviour = getattr(handler, kind)
            if behaviour is not None:
                return handler._replace(**{kind: self._streaming(labels, behaviour)})  # type: ignore[attr-defined]
        return handler

    def _counted(self, labels: tuple[str, str]) -> Callable[[str], None]:
        """Count one call of ``labels`` that ended with a code (each code's child once)."""
        children: dict[str, Any] = {}

        def count(code: str) -> None:
            child = children.get(code)
            if child is None:
                child = children[code] = self.metrics.rpcs.labels(*labels, code)
            child.inc()

        return count

    def _unary(self, labels: tuple[str, str], behaviour: Callable[..., Any]) -> Any:
        count = self._counted(labels)
        timed = self.metrics.rpc_seconds.labels(*labels)

        async def measured(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with _ending(context, count):
                start = time.perf_counter()
                try:
                    return await behaviour(request, context)
                finally:
                    timed.observe(time.perf_counter() - start)

        return measured

    def _streaming(self, labels: tuple[str, str], behaviour: Callable[..., Any]) -> Any:
        count = self._counted(labels)
        open_now = self.metrics.streams.labels(*labels)

        async def measured(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            open_now.inc()
            try:
                with _ending(context, count):
                    replies = behaviour(request, context)
                    if inspect.isawaitable(replies):  # it writes through the context itself
                        await replies
                    else:
                        async for reply in replies:
                            yield reply
            finally:
                open_now.dec()

        return measured


class _ending:
    """Counts a call by the code it ends with: OK, CANCELLED (its caller gone, or the
    stream closed early), or the status it was refused with (as the request log names it)."""

    def __init__(self, context: grpc.aio.ServicerContext, count: Callable[[str], None]) -> None:
        self.context = context
        self.count = count

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *_: Any) -> None:
        if kind is None:
            self.count(status_name(self.context, "OK"))
        elif issubclass(kind, asyncio.CancelledError | GeneratorExit):
            self.count("CANCELLED")
        else:
            self.count(status_name(self.context, "UNKNOWN"))


def known_rules() -> frozenset[str]:
    """Every rule id of the record's catalogue and of each game kind's rulebook."""
    found = set(RECORD_RULES)
    for kind in games.kinds():
        found |= set(games.engine(kind).spec.rules)
    return frozenset(found)


def seconds_of(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 UTC time (a head's ``signed_at``)."""
    return datetime.datetime.fromisoformat(text).timestamp()


class Now(Collector):
    """What the application holds now, read at each scrape."""

    def __init__(self, app: Application) -> None:
        self.app = app
        try:
            self.version = importlib.metadata.version("feastlog")
        except importlib.metadata.PackageNotFoundError:
            self.version = ""

    def collect(self) -> Iterator[Metric]:
        """Every metric read from the application."""
        app = self.app
        info = GaugeMetricFamily(
            "feastlog_build_info", "This server's version (1).", labels=["version"]
        )
        info.add_metric([self.version], 1)
        yield info
        yield from self.store_metrics()
        yield from self.live_metrics()
        yield from self.tree_metrics()
        refusals = CounterMetricFamily(
            "feastlog_refusals",
            "Commands refused, by reason and rule id (rule_id empty: no rule, e.g. a stale seq).",
            labels=["reason", "rule_id"],
        )
        rules = known_rules()
        by_label: dict[tuple[str, str], int] = {}
        for (reason, rule), count in list(app.games.refused.items()):
            key = (reason, rule if not rule or rule in rules else OTHER)
            by_label[key] = by_label.get(key, 0) + count
        for key, count in sorted(by_label.items()):
            refusals.add_metric(list(key), count)
        yield refusals

    def store_metrics(self) -> Iterator[Metric]:
        """The writer's commits and its queue."""
        db = self.app.db
        yield CounterMetricFamily(
            "feastlog_commits", "Transactions this node committed.", value=db.commits
        )
        yield CounterMetricFamily(
            "feastlog_checkpoints",
            "Write-ahead log folds made in quiet moments.",
            value=db.checkpoints,
        )
        yield GaugeMetricFamily(
            "feastlog_store_queue_batches",
            "Batches waiting for the writer now (the store's queue depth).",
            value=db.queued,
        )

    def live_metrics(self) -> Iterator[Metric]:
        """The games folded in memory, their watchers, the feeds, clocks, calls, holds."""
        app = self.app
        running = finished = watchers = clocks = calls = holds = 0
        for game in app.live.folded():
            watchers += len(game.watchers)
            if game.over:
                finished += 1
                continue
            running += 1
            found = desk.desk_of(game.table)
            if found.clocks is not None:
                clocks += len(found.clocks.running)
            open_calls = [c for c in found.calls if c.open]
            calls += len(open_calls)
            holds += any(c.hold for c in open_calls)
        live = GaugeMetricFamily(
            "feastlog_live_games", "Games folded in memory, by state.", labels=["state"]
        )
        live.add_metric(["running"], running)
        live.add_metric(["finished"], finished)
        yield live
        yield GaugeMetricFamily(
            "feastlog_game_watchers",
            "Streams following a game's rows now (WatchGame, the pages' event streams).",
            value=watchers,
        )
        yield GaugeMetricFamily(
            "feastlog_feed_subscribers",
            "Feeds of every game open now (WatchAll, /feed/events).",
            value=app.feed.open,
        )
        yield GaugeMetricFamily(
            "feastlog_call_watchers", "WatchCalls streams open now.", value=len(app.table.watchers)
        )
        yield GaugeMetricFamily(
            "feastlog_clocks_running",
            "Seats whose clock runs now, in running games folded in memory.",
            value=clocks,
        )
        yield GaugeMetricFamily(
            "feastlog_clock_timers",
            "Clocked games with a timer set for their next deadline.",
            value=len(app.table.timers),
        )
        yield GaugeMetricFamily(
            "feastlog_calls_open",
            "Calls to the arbiter not answered yet, in running games folded in memory.",
            value=calls,
        )
        yield GaugeMetricFamily(
            "feastlog_holds",
            "Running games held by a call (no seat moves until the arbiter answers).",
            value=holds,
        )

    def tree_metrics(self) -> Iterator[Metric]:
        """The log tree, its latest head, and the witnesses' cosignatures."""
        tree = self.app.signing
        yield GaugeMetricFamily(
            "feastlog_tree_size", "Leaves of the log tree (rows committed).", value=tree.tree.size
        )
        yield CounterMetricFamily(
            "feastlog_tree_heads_signed", "Tree heads this node signed.", value=tree.signed
        )
        yield CounterMetricFamily(
            "feastlog_cosignatures",
            "Witnesses' cosignatures this node took.",
            value=tree.cosignatures,
        )
        latest = tree.latest
        if latest is not None:
            signed_at = seconds_of(latest.signed_at)
            now = seconds_of(self.app.clock.now())
            yield GaugeMetricFamily(
                "feastlog_tree_head_size", "Leaves under the latest signed head.", latest.size
            )
            yield GaugeMetricFamily(
                "feastlog_tree_head_timestamp_seconds",
                "When the latest head was signed (seconds since 1970).",
                signed_at,
            )
            yield GaugeMetricFamily(
                "feastlog_tree_head_age_seconds",
                "Seconds since the latest head was signed (on the server's clock).",
                max(0.0, now - signed_at),
            )
        if tree.cosigned is not None:
            head, witnesses = tree.cosigned
            yield GaugeMetricFamily(
                "feastlog_tree_head_cosigned_size",
                "Leaves under the newest head a witness cosigned (since start).",
                head.size,
            )
            yield GaugeMetricFamily(
                "feastlog_tree_head_cosigned_timestamp_seconds",
                "When the newest head a witness cosigned was signed (seconds since 1970).",
                seconds_of(head.signed_at),
            )
            yield GaugeMetricFamily(
                "feastlog_tree_head_cosigned_witnesses",
                "Witnesses that cosigned that head.",
                witnesses,
            )
