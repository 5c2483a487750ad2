"""Traces, off by default: an OpenTelemetry span per RPC, with its commit and the store's
write of it as child spans.

``feastlog serve --traces`` (or ``OTEL_TRACES_EXPORTER`` set to ``otlp`` or ``console``)
turns them on. The exporter is OpenTelemetry's own, set by the standard variables:
``OTEL_EXPORTER_OTLP_ENDPOINT`` (default ``http://localhost:4317``), ``OTEL_SERVICE_NAME``
(default ``feastlog``), ``OTEL_RESOURCE_ATTRIBUTES`` and the rest. Spans go out in
batches from a thread of the SDK's, so a collector that is slow or down costs a command
nothing but the spans.

- Each RPC is a server span of ``opentelemetry-instrumentation-grpc``'s interceptor
  (``rpc.system``, ``rpc.service``, ``rpc.method``, the status code). No request field,
  token or key is put on a span; a game id is no attribute either.
- ``feastlog.commit`` (a child of the RPC's span): the batch queued for the writer until
  it is committed and on the stream of committed rows, with how many rows it appends.
- ``feastlog.store.write`` (a child of ``feastlog.commit``): the group commit the batch
  went in, from the writer taking the group to the store's answer, with the group's
  size; on a DuckDB file that is the hand-off to the store's process and back.

While traces are off, nothing here does any work: the writer tests ``TRACER`` once a
commit.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, Tracer

SERVICE_NAME = "feastlog"
EXPORTERS = ("otlp", "console")  # the values of OTEL_TRACES_EXPORTER that turn traces on
TRACER: Tracer | None = None  # set while traces are on
PROVIDER: TracerProvider | None = None


def wanted(flag: bool) -> bool:
    """Whether traces are asked for: ``--traces``, or ``OTEL_TRACES_EXPORTER`` naming an
    exporter (``none`` or unset: off)."""
    return flag or os.environ.get("OTEL_TRACES_EXPORTER", "none").strip() in EXPORTERS


def start(exporter: SpanExporter | None = None) -> Any:
    """Turn traces on (``exporter``: a test's; else the one the variables name) and give
    the server interceptor that makes each RPC's span."""
    global TRACER, PROVIDER
    from opentelemetry.instrumentation.grpc import aio_server_interceptor
    from opentelemetry.sdk.resources import OTEL_SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    name = os.environ.get(OTEL_SERVICE_NAME) or SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    elif os.environ.get("OTEL_TRACES_EXPORTER", "").strip() == "console":
        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    PROVIDER, TRACER = provider, provider.get_tracer("feastlog")
    return aio_server_interceptor(tracer_provider=provider)


def stop() -> None:
    """Send the spans still waiting, and turn traces off (at the server's stop)."""
    global TRACER, PROVIDER
    if PROVIDER is not None:
        PROVIDER.shutdown()
    TRACER = PROVIDER = None


@contextlib.contextmanager
def commit_span(rows: int) -> Iterator[Span | None]:
    """``feastlog.commit`` around a batch's commit (None while traces are off; the writer
    asks ``TRACER`` first, so that no context manager runs on its path then)."""
    if TRACER is None:
        yield None
        return
    with TRACER.start_as_current_span(
        "feastlog.commit", attributes={"feastlog.rows": rows}
    ) as span:
        yield span


def store_write(parents: list[Span | None], began_ns: int, ended_ns: int, failed: bool) -> None:
    """``feastlog.store.write`` under each batch's commit span: the group commit it went in,
    from ``began_ns`` to ``ended_ns`` (recorded once the store has answered)."""
    if TRACER is None:
        return
    from opentelemetry import trace
    from opentelemetry.trace import Status, StatusCode

    for parent in parents:
        if parent is None:
            continue
        span = TRACER.start_span(
            "feastlog.store.write",
            context=trace.set_span_in_context(parent),
            start_time=began_ns,
            attributes={"feastlog.group": len(parents)},
        )
        if failed:
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=ended_ns)
