"""The command blocks of the README and of every page under docs/, run as written, in
order, each page in a fresh folder of its own.

Every ``feastlog …`` line of a page's indented code blocks runs with the installed
``feastlog`` console script; the page's first ``feastlog serve …`` starts in the
background as the page says (terminal 1), with ``FEASTLOG_PORT=0`` so it takes a free
port (every other command finds it beside ``./feastlog.duckdb``); a page that starts no
server gets a plain ``feastlog serve`` before its first command. ``openssl`` and
``printf`` lines (docs/serving.md's certificates) run in a shell. GAME_ID stands for the
game id the commands before printed last, ``seat_…`` for the first seat token the last
``new`` printed. Lines that are not steps of a walkthrough (installing, the test suite,
other ways to start the server, benchmarks, development tools) are listed in SKIPPED,
and pages that are not walkthroughs in SKIPPED_PAGES, so a new line runs unless it is
added there.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# Pages whose commands are not a walkthrough, each with why.
SKIPPED_PAGES = {
    "scaling.md": "a cluster of its own (tests/e2e/test_cluster.py, test_many_nodes.py)",
    "benchmarks.md": "benchmarks: minutes each",
    "development.md": "development tools",
    # its commands name the seqs and calls of a game in play; they run, in that order, in
    # tests/cli/test_table_cli.py (and the README shows a walkthrough of them)
    "table.md": "a reference of the table's commands",
    # its export reads a file no server holds, which a walkthrough's server does: the
    # page's export and its three questions run in tests/cli/test_parquet.py
    "data.md": "an export of a file no server holds",
}
SHELL = ("openssl ", "printf ")  # a page's own setup steps (certificates)
GAME = re.compile(r"\bg_[0-9a-f]{16}\b")
TOKEN = re.compile(r"\bseat_[A-Za-z0-9_-]{16,}")
TOURNAMENT = re.compile(r"\bt_[0-9a-f]{16}\b")  # TOURNAMENT_ID: the one `tournament create` printed
COMMENT = re.compile(r"\s{2,}#.*$")  # a comment after a command: two spaces or more, then #

# What a walkthrough does not run, each with why.
SKIPPED = {
    # installing, and the test suite: the test runs in the installed environment
    "python3 -m venv .venv": "install",
    ". .venv/bin/activate": "install",
    "pip install .": "install",
    "pip install -e '.[dev]'": "install",
    "python -m pytest -n auto": "the test suite",
    # other ways to start the server (one server already holds the file)
    "feastlog serve --tls-cert server.pem --tls-key server.key": "another way to serve",
    "feastlog serve --tls-cert server.pem --tls-key server.key --ca ca.pem": "another way to serve",
    "feastlog serve --request-log requests.log": "another way to serve",
    # for a file whose log is damaged, with no server on it (tests/store/test_damaged_wal.py)
    "feastlog recover --db feastlog.duckdb": "a damaged file's command",
    # many nodes on PostgreSQL: their own tests (tests/e2e/test_cluster.py, test_many_nodes.py)
    "python scripts/cluster.py up": "a cluster of its own",
    "python scripts/cluster.py down": "a cluster of its own",
    "feastlog serve --db postgresql://feastlog:PASSWORD@db.example/feastlog": "another serve",
    # a backup names an absolute folder of the server's machine, and a restore wants its
    # server stopped: they run as these pages say in tests/e2e/test_backup.py and
    # tests/cli/test_backup_cli.py
    "feastlog backup /backups/hall.duckdb": "a backup to a folder of the operator's",
    "feastlog backup /backups/hall-sat.duckdb": "a backup to a folder of the operator's",
    "feastlog backup --db hall.duckdb /backups/hall-sat.duckdb": "a backup, offline",
    "feastlog restore /backups/hall-sat.duckdb --db hall.duckdb": "a restore, server stopped",
    "feastlog audit --all --db /backups/hall-sat.duckdb": "the backup's audit",
    # benchmarks: minutes each
    "python -m scripts.bench_nodes --games 64": "benchmark",
    "python -m scripts.bench_quiet --store SEASON.duckdb": "benchmark",
    "feastlog bench": "benchmark",
    "feastlog bench-audit": "benchmark",
    "feastlog bench-scale --games 1000,10000,100000 [--keep DIR]": "benchmark",
    "python scripts/bench_page.py": "benchmark",
    # development tools
    "python scripts/gen_proto.py": "development",
    "python scripts/gen_proto.py --check": "development",
    "ruff check .": "development",
    "ruff format --check .": "development",
    "mypy": "development",
    "bash .ci/run": "development",
    "FEASTLOG_SOAK_SECONDS=300 FEASTLOG_SOAK_KILLS=50 "
    "python -m pytest tests/e2e/test_kill_soak.py -s": "development",
}


def pages() -> list[Path]:
    """The README and every page under docs/ that shows a walkthrough."""
    docs = sorted((ROOT / "docs").glob("*.md"))
    return [README, *(p for p in docs if p.name not in SKIPPED_PAGES)]


def commands(page: Path = README) -> list[str]:
    """Every command of a page's indented code blocks, in order, comments removed."""
    found = []
    previous_blank = True
    in_block = False
    for line in page.read_text().splitlines():
        if line.startswith("    ") and (in_block or previous_blank):
            in_block = True
            text = COMMENT.sub("", line).strip()
            if text and not text.startswith("#"):
                found += [" ".join(part.split()) for part in text.split("&&")]
        else:
            in_block = False
        previous_blank = not line.strip()
    return found


def test_the_readme_lists_what_it_skips() -> None:
    found = [
        c
        for page in [*pages(), *(ROOT / "docs" / p for p in SKIPPED_PAGES)]
        for c in commands(page)
    ]
    assert [c for c in SKIPPED if c not in found] == [], "SKIPPED names a line no longer there"
    assert "feastlog serve" in commands() and "feastlog demo picky-eaters --players 2" in found
    assert [p for p in SKIPPED_PAGES if not (ROOT / "docs" / p).exists()] == []


def test_the_walkthroughs_cover_the_commands() -> None:
    """Between them, the pages run every kind of command a newcomer meets."""
    verbs = {c.split()[1] for page in pages() for c in commands(page) if c.startswith("feastlog ")}
    for verb in ("new", "play", "demo", "replay", "audit", "verify", "rule", "import", "watch"):
        assert verb in verbs


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_the_walkthrough_runs_as_written(tmp_path: Path, page: Path) -> None:
    steps = commands(page)
    if not any(c.startswith("feastlog ") for c in steps):
        return  # a page of prose: nothing to run
    bin_dir = Path(sys.executable).parent
    feastlog = bin_dir / "feastlog"
    if not feastlog.exists():
        pytest.fail(f"no feastlog console script beside {sys.executable}: pip install -e .")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("FEASTLOG_") or k == "FEASTLOG_NODE_MODULES"
    }
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "FEASTLOG_PORT": "0"}
    server: subprocess.Popen[str] | None = None
    game_id = token = tournament = ""
    ran = []
    try:
        for command in steps:
            if command.startswith(SHELL):
                subprocess.run(command, shell=True, cwd=tmp_path, check=True, capture_output=True)
                continue
            if command.startswith("feastlog serve") and server is None and page != README:
                server = start(command, tmp_path, env)  # the page's own server
                continue
            if command in SKIPPED or not command.startswith("feastlog "):
                assert command in SKIPPED, (
                    f"a {page.name} line that is not a feastlog command: {command}"
                )
                continue
            if command == "feastlog serve":
                if server is None:  # terminal 1; later mentions are the same server
                    server = start(command, tmp_path, env)
                continue
            if server is None:  # a page that starts none: the server is already there
                server = start("feastlog serve", tmp_path, env)
            text = command.replace("GAME_ID", game_id).replace("seat_…", token)
            text = text.replace("TOURNAMENT_ID", tournament)
            args = shlex.split(text)
            stdin = "1\n" if args[1] == "play" else ""
            done = subprocess.run(
                args,
                cwd=tmp_path,
                env=env,
                input=stdin,
                capture_output=True,
                text=True,
                timeout=300,
            )
            said = done.stdout + done.stderr
            assert "Traceback" not in said, (text, said)
            assert done.returncode == 0, (text, said)
            ran.append(args[1])
            if args[1] in ("new", "demo") and GAME.search(done.stdout):
                game_id = GAME.findall(done.stdout)[-1]
            if args[1:3] == ["tournament", "create"] and TOURNAMENT.search(done.stdout):
                tournament = TOURNAMENT.findall(done.stdout)[0]
            if args[1] == "new" and TOKEN.search(done.stdout):
                token = TOKEN.findall(done.stdout)[0]
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            _, err = server.communicate(timeout=60)
            assert server.returncode == 0, err
    assert server is not None, f"{page.name} never starts feastlog serve"
    assert not (tmp_path / "feastlog.duckdb.server").exists()  # gone at the clean stop
    assert ran


def start(command: str, folder: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """``feastlog serve`` in the background, once it listens."""
    proc = subprocess.Popen(
        shlex.split(command),
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if "listening on" not in first:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"feastlog serve did not start: {first}{err}")
    return proc
