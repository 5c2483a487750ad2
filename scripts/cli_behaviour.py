"""The CLI's behaviour, recorded: a broad set of commands, their output and exit codes.

    python scripts/cli_behaviour.py record before.txt
    python scripts/cli_behaviour.py record after.txt
    python scripts/cli_behaviour.py compare before.txt after.txt

Runs, in a fresh folder: games made by ``demo`` and ``new`` with fixed seeds on a real
``feastlog serve`` (create, join, view through watch and play, legal, submit, list,
rulings, calls, clocks, tournament commands, proof, head, witness, arbiters, seat
links), then the same file with no server holding it (the in-process channel: replay,
audit, export, explain, whatif, rejections, stats, the page) and exported records
(replay, verify, the page), and refusals of each kind.  Each command's exit code,
standard output and standard error are written, with what is random by nature put in
words: game, tournament and call ids, seat tokens and keys, times and dates, row and
state hashes and signatures (they cover the times), command ids, the log tree's roots and
the size of its latest signed head (signed on an interval of its own), rates, ports and
the folder.  A tournament's seating is drawn from its own server seed, which no option
fixes: its tables' order differs from run to run.  Everything else, pages byte for
byte, must be the same from one run to the next.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEED = "5a" * 32
KEY = "org_behaviour-key-0123456789abcdef"
# what differs between two runs by nature, in the order it is replaced
RANDOM = [
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<time>"),
    (re.compile(r"\b(seat|arb|org|sl)_[A-Za-z0-9_\-]{8,}"), r"<\1-token>"),
    (re.compile(r"\bg_[0-9a-f]{16}\b"), "<game>"),
    (re.compile(r"\bt_[0-9a-f]{16}\b"), "<tournament>"),
    (re.compile(r"\b[0-9a-f]{128}\b"), "<signature>"),
    (re.compile(r"\b[0-9a-f]{64}\b"), "<hash>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<command-id>"),
    (re.compile(r"[A-Za-z0-9+/]{80,}={0,2}"), "<base64>"),
    # the log tree's heads: signed on the signer's own interval, so of any size since
    (re.compile(r"size \d+ root [0-9a-f]+…"), "size <n> root <root>…"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "<duration>"),
    (re.compile(r"[\d,]*<?[\w]*>? ?(rows|games|records)/s"), r"<rate> \1/s"),
    (re.compile(r"\(\d\.\d+ of it\)"), "(<ratio> of it)"),
]


class Run:
    """Commands in one folder, their results appended to ``out``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.out: list[str] = []
        self.names: dict[str, str] = {}  # an id seen -> its name in the record
        self.env = {**os.environ, "FEASTLOG_ORGANISER_KEY": KEY, "COLUMNS": "100"}
        self.env.pop("FEASTLOG_SERVER", None)

    def name(self, value: str, kind: str) -> str:
        """Record ``value`` (an id) as ``<kind-N>`` wherever it appears from now on."""
        if value and value not in self.names:
            self.names[value] = (
                f"<{kind}-{sum(k.startswith(f'<{kind}-') for k in self.names.values()) + 1}>"
            )
        return value

    def clean(self, text: str) -> str:
        """The text with what is random by nature put in words."""
        text = text.replace(str(self.folder), "<folder>")
        for value, placeholder in sorted(self.names.items(), key=lambda i: -len(i[0])):
            text = text.replace(value, placeholder)
        for pattern, placeholder in RANDOM:
            text = pattern.sub(placeholder, text)
        return text

    def __call__(
        self, *args: str, stdin: str = "", timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run ``feastlog ARGS`` and record it."""
        done = subprocess.run(
            [sys.executable, "-m", "feastlog.cli.main", *args],
            cwd=self.folder,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        self.out.append(f"$ feastlog {self.clean(' '.join(args))}\nexit {done.returncode}")
        self.out.append("--- stdout\n" + self.clean(done.stdout))
        self.out.append("--- stderr\n" + self.clean(done.stderr))
        return done

    def file(self, path: str) -> None:
        """Record a file a command wrote."""
        target = self.folder / path
        text = target.read_text() if target.exists() else "<missing>"
        self.out.append(f"--- file {path}\n" + self.clean(text))


def record(folder: Path) -> str:
    """Every command's result in ``folder``, as text."""
    run = Run(folder)
    db = "games.duckdb"
    # --- on the file, no server: a server started on it for each command that writes
    made = run("demo", "bon-appetit", "--players", "2", "--seed", SEED, "--json", "--db", db)
    game = run.name(json.loads(made.stdout)["game_id"], "game")
    run("arbiter", "add", "rosa", "--db", db)
    # --- a real server
    serve = subprocess.Popen(
        [sys.executable, "-m", "feastlog.cli.main", "serve", "--db", db, "--port", "0"],
        cwd=folder,
        env=run.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        run.out.append("--- serve\n" + run.clean(first))
        online(run, db, game)
    finally:
        serve.terminate()
        serve.wait(timeout=60)
    offline(run, db, game)
    return "\n".join(run.out)


def online(run: Run, db: str, demo: str) -> None:
    """The commands that reach a server (found beside the file)."""
    run("demo", "picky-eaters", "--players", "2", "--seed", SEED, "--db", db)
    run(
        "demo",
        "menu-masters",
        "--players",
        "3",
        "--seed",
        SEED,
        "--receipts",
        "r.jsonl",
        "--db",
        db,
    )
    made = run("new", "bon-appetit", "--players", "Ann,Brian", "--seed", SEED, "--json", "--db", db)
    created = json.loads(made.stdout)
    game = run.name(created["game_id"], "game")
    tokens = [run.name(s["token"], "token") for s in created["seats"]]
    run(
        "new",
        "picky-eaters",
        "--players",
        "Ann,Dev",
        "--seed",
        SEED,
        "--option",
        "clock=bank:600+5",
        "--db",
        db,
    )
    entropy = run("new", "menu-masters", "--players", "A,B", "--seat-entropy", "--json", "--db", db)
    waiting = json.loads(entropy.stdout)
    run.name(waiting["game_id"], "game")
    for seat in waiting["seats"]:
        run.name(seat["token"], "token")
    run("replay", waiting["game_id"], "--db", db)  # waiting for entropy
    run(
        "join",
        waiting["game_id"],
        "--token",
        waiting["seats"][0]["token"],
        "--entropy",
        "ab" * 16,
        "--db",
        db,
    )
    run(
        "join",
        waiting["game_id"],
        "--token",
        waiting["seats"][1]["token"],
        "--entropy",
        "cd" * 16,
        "--db",
        db,
    )
    run("join", waiting["game_id"], "--token", "seat_nottherightone", "--db", db)
    for _ in range(3):
        for token in tokens:
            run("play", game, "--token", token, "--once", "--db", db, stdin="1\n")
    run("play", game, "--token", "seat_wrongwrongwrong", "--once", "--db", db)
    run("watch", demo, "--db", db, timeout=30)  # a game over: its stream ends
    run("watch", demo, "--arbiter", "--from", "5", "--db", db, timeout=30)
    run("watch", demo, "--token", "seat_wrongwrongwrong", "--db", db, timeout=30)
    run("games", "--db", db)
    run("games", "--json", "--limit", "2", "--db", db)
    run("games", "--kind", "picky-eaters", "--db", db)
    run("replay", game, "--db", db)
    run("replay", game, "--as", "seat:0", "--at", "3", "--db", db)
    run("replay", demo, "--as", "spectator", "--db", db)
    run("replay", demo, "--html", "online.html", "--db", db)
    run.file("online.html")
    run("audit", demo, "--db", db)
    run("audit", "--all", "--json", "--db", db)
    run("explain", demo, "3", "--db", db)
    run("explain", demo, "3", "--json", "--db", db)
    run("rejections", game, "--db", db)
    run("rejections", game, "--json", "--db", db)
    run("whatif", demo, "2", '{"bid": {"gems": ["red"]}}', "--db", db)
    run("export", demo, "-o", "demo.json", "--db", db)
    run("export", "--all", "-o", "all.jsonl", "--db", db)
    run("stats", "--db", db)
    run("stats", "--json", "--db", db)
    run("rule", game, "note", "--reason", "looked at it", "--db", db)
    run("rule", game, "adjust", "--reason", "a slip", "--seat", "1", "--points", "2", "--db", db)
    run("rule", "no-such-game", "note", "--reason", "x", "--db", db)
    called = run(
        "call",
        game,
        "--token",
        tokens[0],
        "--seq",
        "1",
        "--claim",
        "the deal looks wrong",
        "--db",
        db,
    )
    call = (re.findall(r"call (\d+)", called.stdout) or ["1"])[0]
    run("calls", "--db", db)
    run("calls", game, "--json", "--db", db)
    run("calls", "--open", "--json", "--db", db)
    run("case", game, call, "-o", "case.json", "--db", db)
    run("verify", "case.json")
    run("clocks", game, "--db", db)
    run("arbiter", "list", "--db", db)
    run("arbiter", "list", "--json", "--db", db)
    run("arbiter", "add", "sam", "--db", db)
    run("arbiter", "revoke", "sam", "--db", db)
    run("arbiter", "revoke", "nobody", "--db", db)
    run("head", "-o", "head1.json", "--db", db)
    run("witness", "--rounds", "1", "--folder", "w", "--db", db)
    run("demo", "picky-eaters", "--players", "2", "--seed", "6b" * 32, "--db", db)
    run("head", "--since", "head1.json", "-o", "head2.json", "--db", db)
    run("verify", "--head", "head1.json", "--later", "head2.json")
    run("export", demo, "-o", "signed.json", "--db", db)
    players = [a for p in ("Ann", "Bo", "Cy", "Di") for a in ("--player", p)]
    made = run("tournament", "create", "--format", "rounds=1", *players, "--json", "--db", db)
    try:
        tournament = run.name(json.loads(made.stdout)["tournament"]["tournament_id"], "tournament")
    except (ValueError, KeyError):
        tournament = ""
    if tournament:
        run("tournament", "register", tournament, "Ed", "--db", db)
        run("tournament", "drop", tournament, "Ed", "--db", db)
        run("tournament", "pair", tournament, "--db", db)
        published = run("tournament", "publish", tournament, "--json", "--db", db)
        for found in re.findall(r"seat_[A-Za-z0-9_\-]{8,}", published.stdout):
            run.name(found, "token")
        for found in re.findall(r'"game_id": "([^"]+)"', published.stdout):
            run.name(found, "game")
        run("tournament", "start", tournament, "--db", db)
        run("tournament", "standings", tournament, "--db", db)
        run("tournament", "standings", tournament, "--json", "--db", db)
        run("standings", tournament, "--db", db)
        run("games", "--tournament", tournament, "--db", db)
        run("tournament", "call", tournament, "--db", db)
        run("tournament", "end", tournament, "--db", db)
        run("tournament", "export", tournament, "-o", "tour.json", "--db", db)
        run("tournament", "watch", tournament, "--db", db, timeout=30)
    run(
        "new",
        "picky-eaters",
        "--players",
        "Ann,Brian",
        "--links",
        "--link-base",
        "http://x",
        "--db",
        db,
    )
    # refusals through the server
    run("replay", "no-such-game", "--db", db)
    run("explain", demo, "9999", "--db", db)
    run("games", "--server", "127.0.0.1:1", "--db", db)
    run("new", "bon-appetit", "--players", "Solo", "--db", db)


def offline(run: Run, db: str, demo: str) -> None:
    """The same file with no server holding it, and the exported records."""
    run("games", "--db", db)
    run("replay", demo, "--db", db)
    run("replay", demo, "--as", "seat:1", "--at", "5", "--db", db)
    run("replay", demo, "--as", "seat:7", "--db", db)
    run("replay", demo, "--at", "99999", "--db", db)
    run("replay", demo, "--html", "offline.html", "--db", db)
    run.file("offline.html")
    run("audit", demo, "--db", db)
    run("audit", "--all", "--workers", "1", "--db", db)
    run("explain", demo, "4", "--db", db)
    run("whatif", demo, "2", '{"bid": {"gems": ["red"]}}', "--json", "--db", db)
    run("rejections", demo, "--db", db)
    run("stats", "--db", db)
    run("export", demo, "-o", "off.json", "--db", db)
    run("export", "--all", "-o", "off.jsonl", "--workers", "1", "--db", db)
    run("calls", "--db", db)
    run("arbiter", "list", "--db", db)
    run("replay", "no-such-game", "--db", db)
    for record_file in ("demo.json", "signed.json", "off.json"):
        run("verify", record_file)
        run("verify", record_file, "--json")
        run("replay", record_file)
        run("replay", record_file, "--as", "seat:0", "--at", "4")
    run("replay", "demo.json", "--html", "record.html")
    run.file("record.html")
    run("verify", "off.jsonl")
    run("verify", "signed.json", "--receipts", "r.jsonl")
    run("import", "demo.json", "--db", "imported.duckdb")
    run("games", "--db", "missing.duckdb")
    run("replay", "missing.json")


def compare(before: str, after: str) -> int:
    """The lines that differ between two records (each cleaned again by today's rules)."""
    cleaner = Run(Path(tempfile.gettempdir()))
    old = cleaner.clean(Path(before).read_text()).splitlines()
    new = cleaner.clean(Path(after).read_text()).splitlines()
    changed = list(difflib.unified_diff(old, new, before, after, lineterm="", n=1))
    print("\n".join(changed) or f"{before} and {after}: the same")
    return 1 if changed else 0


def main() -> None:
    """``record FILE``: write the behaviour to FILE; ``compare A B``: what differs."""
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 3 or sys.argv[1] != "record":
        sys.exit(__doc__)
    folder = Path(tempfile.mkdtemp(prefix="feastlog-behaviour-"))
    started = time.monotonic()
    try:
        text = record(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    Path(sys.argv[2]).write_text(text + "\n")
    commands = text.count("\n$ feastlog") + 1
    print(f"{sys.argv[2]}: {commands} commands in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
