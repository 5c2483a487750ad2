"""The replay page: one self-contained HTML file that draws a game as one viewer saw it.

Pure: the steps a viewer saw (each row with its facts and its view, as the replay code
decides them) go in, an HTML string comes out.  Nothing here decides who sees what; the
page shows exactly the views and facts it is given.  The page's CSS and JavaScript are
package data (``presentation/page/``) inlined into the file, with a Content-Security-Policy
that lets a file opened from disk reach no network at all (a live page may reach back to
the server it came from, for its event stream).

The steps travel as data: the first step's view whole, every later one as a patch on
the view before it (a 300-row game stays well under 1 MB), with its narration lines and
scores.  The page's script rebuilds each view and draws it.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol

from feastlog.presentation.narrative import row_lines
from feastlog.presentation.page_cards import faces_for
from feastlog.replay.games import fold
from feastlog.replay.games.engine import Engine, Fact, Viewer
from feastlog.replay.games.fold import Table
from feastlog.replay.record.rows import Row
from feastlog.replay.record.visibility import Record, refusals_for, seen
from feastlog.v1 import record_pb2

# Where each game's view keeps the points scored so far, per seat.
SCORE_FIELDS = {
    "bon-appetit": ("seats", "points"),
    "menu-masters": ("chefs", "stars"),
    "picky-eaters": ("players", "points"),
}


class Seen(Protocol):
    """One row as a viewer saw it (``replay.record.visibility.Step`` is one)."""

    @property
    def row(self) -> Row:
        """The row."""

    @property
    def facts(self) -> Sequence[Fact]:
        """The facts the viewer was told."""

    @property
    def view(self) -> dict[str, Any]:
        """The table after the row, as the viewer saw it."""


class Refusal(Protocol):
    """A refused command (``service.store.Rejection`` or its protobuf message)."""

    @property
    def after_seq(self) -> int:
        """The seq the game was at."""

    @property
    def actor(self) -> str:
        """Who sent it."""

    @property
    def rule_id(self) -> str:
        """The rule it broke ('' for other refusals)."""

    @property
    def message(self) -> str:
        """Why, in the players' words."""


@dataclass(frozen=True)
class Live:
    """A live page's links on its own server: its event stream, the seat page, the board."""

    events: str
    seat: str
    board: str = "/"


def view_patch(before: Any, after: Any, path: tuple[Any, ...] = ()) -> list[list[Any]]:
    """The changes from ``before`` to ``after``: ``[path, value]`` sets, ``[path]`` deletes.

    Objects and lists of the same length are compared member by member; anything else
    that differs is replaced whole.
    """
    if before == after and type(before) is type(after):
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[list[Any]] = []
        for key, value in after.items():
            if key in before:
                ops += view_patch(before[key], value, (*path, key))
            else:
                ops.append([[*path, key], value])
        ops += [[[*path, key]] for key in before if key not in after]
        return ops
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            op
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for op in view_patch(b, a, (*path, i))
        ]
    return [[list(path), after]]


def apply_patch(before: Any, ops: Sequence[Sequence[Any]]) -> Any:
    """``before`` with a patch applied (the page's script does the same)."""
    root = json.loads(json.dumps(before))
    for op in ops:
        path = list(op[0])
        if not path:
            root = op[1]
            continue
        parent = root
        for key in path[:-1]:
            parent = parent[key]
        if len(op) == 1:
            del parent[path[-1]]
        else:
            parent[path[-1]] = op[1]
    return root


def scores_in(view: dict[str, Any]) -> list[int]:
    """The points each seat has scored so far, as the view shows them."""
    field = SCORE_FIELDS.get(str(view.get("kind")))
    if field is None:
        return []
    seats, points = field
    return [int(seat.get(points) or 0) for seat in view.get(seats) or []]


def step_entry(
    engine: Engine, names: Sequence[str], seen: Seen, before: dict[str, Any] | None
) -> dict[str, Any]:
    """One step of the page: the row's public fields, its narration, its view or patch."""
    row = seen.row
    entry: dict[str, Any] = {
        "seq": row.seq,
        "kind": row.kind,
        "actor": row.actor,
        "at": row.recorded_at,
        "lines": row_lines(engine, row, seen.facts, names),
        "ruling": row.actor == "arbiter",
        "scores": scores_in(seen.view),
    }
    if before is None:
        entry["view"] = seen.view
    else:
        entry["patch"] = view_patch(before, seen.view)
    return entry


def _superseded(steps: Sequence[Seen]) -> dict[int, int]:
    """The seats' moves (and clock rows) a rewind superseded → the rewind's seq, from the
    facts a viewer was told (a page drawn from a server's replies has no bodies): each
    ``rewound`` fact names its seqs, of which a seat's call (a ``call`` fact) stands."""
    by_seq = {s.row.seq: s for s in steps}
    found: dict[int, int] = {}
    for step in steps:
        for fact in step.facts:
            if fact.get("type") != "rewound":
                continue
            for seq in range(int(fact["superseded_from"]), int(fact["superseded_to"]) + 1):
                row = by_seq.get(seq)
                if row is None or seq in found or row.row.actor == "arbiter":
                    continue
                if not any(f.get("type") == "call" for f in row.facts):
                    found[seq] = step.row.seq
    return found


def step_entries(
    engine: Engine, names: Sequence[str], seen: Iterable[Seen]
) -> list[dict[str, Any]]:
    """Every step: the first with its whole view, the rest as patches."""
    out: list[dict[str, Any]] = []
    before: dict[str, Any] | None = None
    steps = list(seen)
    abandoned = _superseded(steps)  # rows a rewind took back: still shown, marked
    for step in steps:
        out.append(step_entry(engine, names, step, before))
        if step.row.seq in abandoned:
            out[-1]["superseded_by"] = abandoned[step.row.seq]
        before = step.view
    return out


def new_faces(kind: str, pack: Any, view: dict[str, Any], known: set[str]) -> dict[str, Any]:
    """The faces of cards ``view`` names that are not in ``known`` (which then holds them).

    A live page learns of cards as the game names them, so each step brings its new faces.
    """
    faces = {k: face for k, face in faces_for(kind, pack, [view]).items() if k not in known}
    known.update(faces)
    return faces


def final_result(engine: Engine, table: Table) -> dict[str, Any] | None:
    """The final result with the arbiter's rulings applied (None while the game runs)."""
    if not fold.is_over(engine, table):
        return None
    outcome = fold.outcome(engine, table)
    return {
        "points": list(outcome.points) if outcome else [],
        "winners": list(outcome.winners) if outcome else [],
        "tiebreak": list(outcome.tiebreak) if outcome else [],
        "adjustments": list(table.adjustments),
        "forfeited": sorted(table.forfeited),
        "voided": table.voided,
        "closed": table.closed,
    }


def viewer_label(viewer: Viewer, names: Sequence[str]) -> str:
    """How the page names its viewer: ``Brian (seat 1)``, ``spectator``, ``arbiter``."""
    if viewer.role == "seat" and viewer.seat is not None and 0 <= viewer.seat < len(names):
        return f"{names[viewer.seat]} (seat {viewer.seat})"
    return str(viewer)


def page_data(
    genesis: record_pb2.Genesis,
    engine: Engine,
    viewer: Viewer,
    seen: Sequence[Seen],
    pack: Any,
    refusals: Iterable[Refusal] = (),
    result: dict[str, Any] | None = None,
    live: Live | None = None,
) -> dict[str, Any]:
    """Everything the page draws, as JSON-able data."""
    names = [s.name for s in genesis.seats]
    entries = step_entries(engine, names, seen)
    # every card a view names is in the first view or in the value of some patch
    named = [
        e["view"] if "view" in e else [op[1] for op in e["patch"] if len(op) == 2] for e in entries
    ]
    return {
        "game": {
            "id": genesis.game_id,
            "kind": genesis.game_kind,
            "title": engine.spec.title,
            "ruleset": genesis.ruleset_version,
            "pack": genesis.pack_id,
            "seats": names,
            "tournament": genesis.tournament_id,
            "created_at": genesis.created_at,
            "seed_commitment": genesis.seed_commitment,
        },
        "viewer": {"id": str(viewer), "label": viewer_label(viewer, names)},
        "cards": faces_for(genesis.game_kind, pack, named),
        "steps": entries,
        "rejections": [
            {"after_seq": r.after_seq, "actor": r.actor, "rule_id": r.rule_id, "message": r.message}
            for r in refusals
        ],
        "result": result,
        "live": {"events": live.events, "seat": live.seat, "board": live.board} if live else None,
    }


@lru_cache(maxsize=8)
def asset(name: str) -> str:
    """A file of the page's package data (``page.css``, ``page.js``, ``board.js``)."""
    return (resources.files("feastlog.presentation") / "page" / name).read_text(encoding="utf-8")


def csp_hash(text: str) -> str:
    """The CSP source expression allowing one inline script or style."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def content_policy(script: str, live: bool) -> str:
    """The page's Content-Security-Policy: its own script and style, no other source.

    A file from disk may connect nowhere; a live page only back to its own server.
    """
    connect = "'self'" if live else "'none'"
    return (
        f"default-src 'none'; script-src {csp_hash(script)}; "
        f"style-src {csp_hash(asset('page.css'))}; img-src data:; connect-src {connect}; "
        "form-action 'self'; base-uri 'none'"
    )


def json_for_script(value: Any) -> str:
    """JSON safe to put inside a ``<script>`` element (no ``<`` that could close it)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# The head every page shares: the no-network CSP, the title and the inline style.
HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
"""

_SHELL = (
    HEAD
    + """<header class="top">
 <div class="heading"><h1>{heading}</h1><p class="sub" id="sub"></p></div>
 <div class="tools">
  <span id="live" class="live" hidden></span>
  <button type="button" id="large" aria-pressed="false" title="Large type (L)">A+</button>
 </div>
</header>
<!--feastlog-verification-->
<nav class="controls" aria-label="Steps">
 <button type="button" id="first" title="First (Home)" aria-label="First step">&#xAB;</button>
 <button type="button" id="prev" title="Back (&#x2190;)" aria-label="Step back">&#x2039;</button>
 <button type="button" id="play" title="Play (space)" aria-label="Play">&#x25B6;</button>
 <button type="button" id="next" title="Forward (&#x2192;)"
  aria-label="Step forward">&#x203A;</button>
 <button type="button" id="last" title="Last (End)" aria-label="Last step">&#xBB;</button>
 <div class="slider"><input type="range" id="slider" min="0" max="0" value="0" aria-label="Seq">
  <div id="marks" class="marks"></div></div>
 <output id="seq" class="seq"></output>
</nav>
<main class="layout">
 <section id="table" class="table" aria-live="polite"></section>
 <aside class="side">
  <section class="now"><h2 id="now-title">What happened</h2>
   <ol id="now" class="lines"></ol></section>
  <section class="charts"><h2>Scores</h2><div id="chart"></div><div id="gem-chart"></div></section>
  <section class="log"><h2>Timeline</h2><ol id="log"></ol></section>
 </aside>
</main>
<section id="result" class="result" hidden></section>
<script type="application/json" id="feastlog-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""
)


VERIFICATION_MARK = "<!--feastlog-verification-->"


def with_verification(page: str, summary: str, faults: Sequence[str]) -> str:
    """The page with a banner at its top saying its record does not verify, and why: a
    file is anyone's to edit, and a page drawn from an edited one looks like any other."""
    listed = "".join(f"<li>{html.escape(fault)}</li>" for fault in faults[:20])
    more = f"<li>… and {len(faults) - 20} more</li>" if len(faults) > 20 else ""
    banner = (
        '<section id="unverified" class="unverified" role="alert">'
        "<h2>This record does not verify</h2>"
        f"<p>{html.escape(summary)}</p><ul>{listed}{more}</ul>"
        "<p>What this page shows is what the file says, not what was played: "
        "<code>feastlog verify</code> tells the whole of it.</p></section>"
    )
    return page.replace(VERIFICATION_MARK, banner, 1)


def render_page(data: dict[str, Any]) -> str:
    """The page as one HTML string: markup, inlined CSS and script, and its data."""
    script = asset("page.js")
    title = f"{data['game']['title']} — {data['game']['id']} — as {data['viewer']['label']}"
    return _SHELL.format(
        policy=html.escape(content_policy(script, data["live"] is not None)),
        title=html.escape(title),
        heading=html.escape(f"{data['game']['title']} · as {data['viewer']['label']}"),
        css=asset("page.css"),
        data=json_for_script(data),
        script=script,
    )


class Game(Record, Protocol):
    """A game folded row by row, as a page draws it (``service.app.live.LiveGame``)."""

    @property
    def engine(self) -> Engine:
        """The game kind's rules engine."""

    @property
    def pack(self) -> Any:
        """The game's pack."""

    @property
    def table(self) -> Table:
        """The state after the last row."""

    @property
    def last_seq(self) -> int:
        """The seq of the last row."""

    @property
    def over(self) -> bool:
        """Whether the game has ended."""


def page_html(
    game: Game,
    viewer: Viewer,
    rejections: Sequence[Refusal] = (),
    live: Live | None = None,
    released: bool = True,
) -> str:
    """The replay page of a folded game, every seq as ``viewer`` saw it then
    (``released``: False while the game is held back, ``replay.record.visibility.Release``); the
    refusals the viewer was shown while it ran (``replay.record.visibility.refusals_for``)."""
    steps = [seen(game, seq, viewer, released) for seq in range(1, game.last_seq + 1)]
    data = page_data(
        game.genesis,
        game.engine,
        viewer,
        steps,
        game.pack,
        # the page shows each seq as then: the refusals the viewer was shown while it ran
        refusals_for(viewer, rejections, over=False),
        final_result(game.engine, game.table) if game.over else None,
        live,
    )
    return render_page(data)
