"""The README's picture: the replay page of a demo game, drawn in headless Chromium.

    python scripts/screenshot.py               # writes docs/replay-page.png
    python scripts/screenshot.py --out FILE

A Bon Appetit! game played by bots from a fixed seed in a temporary folder (the CLI's
``demo``), its page written by ``replay --html`` as seat 1 saw it, opened from disk and
photographed at its middle step.  Needs '.[dev]' (Playwright) and Debian's Chromium
(``apt-get install chromium``; Playwright never downloads a browser).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from click.testing import CliRunner

from feastlog.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
SEED = "2a" * 32
NO_ENV = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": "", "FEASTLOG_CA": ""}


def page_of_a_demo(folder: Path) -> tuple[Path, int]:
    """A demo game's replay page in ``folder``, and the seq to show."""
    runner = CliRunner(env=NO_ENV)
    db = str(folder / "feastlog.duckdb")
    made = runner.invoke(cli, ["demo", "bon-appetit", "--players", "3", "--seed", SEED, "--db", db])
    assert made.exit_code == 0, made.output
    found = re.search(r"\bg_[0-9a-f]{16}\b", made.output)
    assert found, made.output
    page = folder / "game.html"
    args = ["replay", found.group(0), "--html", str(page), "--as", "seat:1", "--db", db]
    drawn = runner.invoke(cli, args)
    assert drawn.exit_code == 0, drawn.output
    return page, 24


def main() -> None:
    """Write the picture."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "replay-page.png"))
    out = Path(parser.parse_args().out)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        page_file, seq = page_of_a_demo(Path(folder))
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.goto(f"file://{page_file}#seq={seq}")
            tab.wait_for_selector(f"body[data-seq='{seq}']")
            tab.screenshot(path=str(out))
        finally:
            browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
