"""Shared set-up: the test-only fourth game registered; a headless Chromium (Debian's) for
the browser tests, screenshots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from feastlog.replay import games
from tests import highcard
from tests.contract import kits

# The fourth game, test-only: registered before collection, so every test that runs over
# the registered kinds (the contract tests, the service ones) covers it.
games.register(highcard.ENGINE)
kits.register("high-card", highcard.KIT)

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
