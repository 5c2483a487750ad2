"""How long the replay page of a 300-row game takes to make and to draw, and its size.

    python scripts/bench_page.py            # Python: build the page; Chromium: open, step

The game is the one ``feastlog bench-audit`` uses: a Menu Masters table of 4 after 299
commands (300 rows), built without a server.  In Chromium (Debian's /usr/bin/chromium,
as in the browser tests) it times opening the file until the first step is drawn, and
stepping through every seq with the page's own → key handler.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from feastlog.presentation.page import page_html
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.record.history import refold
from feastlog.service.app.live import live_from_folded
from feastlog.service.bench.data import build
from tests.conftest import BROWSER_ARGS, CHROMIUM

STEP_ALL = """() => {
  const t = performance.now();
  window.feastlog.go(window.feastlog.seqs()[0]);
  let steps = 0;
  for (;;) {
    const before = document.body.dataset.seq;
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
    if (document.body.dataset.seq === before) break;
    steps += 1;
  }
  return [steps, performance.now() - t];
}"""


def median_ms(fn: object, times: int) -> float:
    """The median wall time of ``fn()`` in milliseconds."""
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        spent.append((time.perf_counter() - start) * 1000)
    return statistics.median(spent)


def main() -> None:
    """Print the measurements."""
    built = build("menu-masters", players=4, seed_byte=200, stop_after=299, game_id="g_long")
    folded = refold(built.rows, built.seed, built.pack_bytes)
    game = live_from_folded(folded, built.seed, built.names)
    print(f"a {game.last_seq}-row Menu Masters game of 4")
    pages = {}
    for viewer in (ARBITER, SPECTATOR, Viewer.of_seat(1)):
        ms = median_ms(lambda v=viewer: page_html(game, v), 9)
        pages[str(viewer)] = page_html(game, viewer)
        size = len(pages[str(viewer)].encode("utf-8"))
        print(f"  as {viewer}: page built in {ms:.0f} ms (median of 9), {size / 1024:.0f} KB")
    if not CHROMIUM.exists():
        print(f"  (no {CHROMIUM}: no browser timings)")
        return
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        for name, text in pages.items():
            path = Path(folder) / f"{name.replace(':', '')}.html"
            path.write_text(text)
            opened = []
            for _ in range(5):
                start = time.perf_counter()
                tab.goto(path.as_uri())
                tab.wait_for_selector("body[data-seq]")
                opened.append((time.perf_counter() - start) * 1000)
            steps, stepped = tab.evaluate(STEP_ALL)
            print(
                f"  Chromium, as {name}: opened and drawn in {statistics.median(opened):.0f} ms "
                f"(median of 5); {steps} steps with → in {stepped:.0f} ms "
                f"({stepped / steps:.1f} ms a step)"
            )
        browser.close()


if __name__ == "__main__":
    main()
