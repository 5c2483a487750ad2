"""``feastlog bench-scale`` measures a served season file: its listing follows page tokens."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest

from feastlog.cli.benchmarks.scale import served_figures, templates
from feastlog.cli.wire import spawn_server
from feastlog.service.bench.data import build_store

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def test_the_served_figures_of_a_file_of_several_pages(tmp_path: Path) -> None:
    """120 games are three pages of 50: the unfiltered list is followed page by page while
    the kind- and tournament-filtered lists start at their first page (a page token is
    bound to the filter it was issued for, so sending one across filters is refused)."""
    path = tmp_path / "season.duckdb"
    build_store(path, 120, templates())
    proc, address = spawn_server(path, secrets.token_urlsafe(32))
    try:
        figures = asyncio.run(served_figures(address, proc.pid, 120))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert 0 < figures["list_p50_ms"] <= figures["list_p99_ms"]
    assert figures["stats_s"] > 0 and figures["standings_s"] > 0
