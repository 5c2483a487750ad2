"""Shared set-up: the test-only fourth game registered; a headless Chromium (Debian's) for
the browser tests, screenshots; the two store adapters (a DuckDB file, a PostgreSQL
database) for the contract tests; no test forks beside gRPC's threads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from feastlog.replay import games
from tests import highcard, terminalutil
from tests.contract import kits

# The fourth game, test-only: registered before collection, so every test that runs over
# the registered kinds (the contract tests, the service ones) covers it.
games.register(highcard.ENGINE)
kits.register("high-card", highcard.KIT)

# A child forked beside gRPC's running threads can die before it execs (see
# tests/terminalutil.py): every fork a test process makes is looked at, and a test that
# forked so fails, rather than now and then on a busy machine.
os.register_at_fork(before=terminalutil.note_fork)


@pytest.fixture(autouse=True)
def no_fork_beside_grpc() -> Iterator[None]:
    """Fail the test if it forked this process while gRPC's threads ran."""
    before = len(terminalutil.FORKS_BESIDE_GRPC)
    yield
    forks = terminalutil.FORKS_BESIDE_GRPC[before:]
    if forks:
        pytest.fail("\n".join(forks), pytrace=False)


CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Set by .ci/run: there a missing browser fails the browser tests instead of skipping them.
REQUIRE_BROWSER = "FEASTLOG_REQUIRE_BROWSER"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium driven by Playwright (never downloaded: the system's own build).

    One per test module (the browser tests are one module, run by one xdist worker): the
    sync Playwright API keeps an event loop running in the thread while it is open, which
    would make ``asyncio.run`` fail in the other tests that worker runs afterwards.
    """
    missing = ""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the playwright package is not installed (pip install -e '.[dev]')"
    if not missing and not CHROMIUM.exists():
        missing = f"no {CHROMIUM} (apt-get install chromium)"
    if missing:
        if os.environ.get(REQUIRE_BROWSER):
            pytest.fail(f"browser tests cannot run: {missing}")
        pytest.skip(f"browser tests need Chromium: {missing}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the browser tests leave their screenshots (git-ignored)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


ADAPTERS = ("duckdb", "postgresql")


@pytest.fixture
def postgres(request: pytest.FixtureRequest) -> str:
    """The DSN of an empty PostgreSQL database for this test."""
    from tests.pgutil import empty_database

    return empty_database("test")


@pytest.fixture(params=ADAPTERS)
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ``--db`` value for each adapter: a new DuckDB file, an empty PostgreSQL database."""
    if request.param == "duckdb":
        return str(tmp_path / "feastlog.duckdb")
    return str(request.getfixturevalue("postgres"))


@pytest.fixture(scope="module", params=ADAPTERS)
def module_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A ``--db`` value for each adapter, shared by a test module's tests."""
    if request.param == "duckdb":
        return str(tmp_path_factory.mktemp("store") / "games.duckdb")
    from tests.pgutil import empty_database

    return empty_database(f"module:{request.module.__name__}")
