"""The case file of a call, built and told: the bundle (``bundle``) and its page (``page``).

What the bundle holds, as its viewer may see it (docs/table.md): the rows up to the call
(a body the viewer may not see is ``null``), the call, the explanation of the row it is
about with the rulebook's words, the what-if of the alternative it claims, the refusals
near it, and which rows a rewind superseded.  Explanations and what-ifs fold with hidden
cards, so while the game runs they are the arbiter's (a seat's file names the rules that
row was checked against instead); once the record is public, everyone's file has them.
``replay/table/casefile.py`` seals it with its digest and checks it offline.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from feastlog.presentation.explain import explain, message_dict, rule_entry, what_if
from feastlog.replay.games import fold
from feastlog.replay.games.engine import Viewer
from feastlog.replay.record.history import record_version, revealed_seed
from feastlog.replay.record.rows import COMMAND, FORMAT_1
from feastlog.replay.record.visibility import Record, command_for
from feastlog.replay.table import clocks, desk
from feastlog.replay.table.casefile import FORMAT, VERSION, sealed
from feastlog.v1 import record_pb2

NEAR = 3  # refusals this many rows before the row called about, up to the call, are near it


def _row_entry(
    record: Record, row: Any, viewer: Viewer, public: bool, version: int
) -> dict[str, Any]:
    engine = fold.engine_of(record.genesis)
    shown = row.kind != COMMAND or command_for(viewer, engine, row, public) is not None
    # a client may name its commands after their content: another's id stays hidden, as
    # in every watcher's stream, until the record is public
    own_id = public or viewer.role == "arbiter" or row.actor == str(viewer)
    entry: dict[str, Any] = {
        "seq": row.seq,
        "kind": row.kind,
        "actor": row.actor,
        "command_id": row.command_id if shown and own_id else None,
        "body": row.body.hex() if shown else None,
        "recorded_at": row.recorded_at,
        "prev_hash": row.prev_hash,
        "hash": row.hash,
        "state_hash": row.state_hash,
    }
    if version != FORMAT_1:
        entry["commitment"] = row.commitment
    return entry


def bundle(
    record: Record,
    call: desk.Call,
    viewer: Viewer,
    public: bool,
    refusals: Sequence[Any],
) -> str:
    """The case file of ``call`` as ``viewer`` may see it: canonical JSON text, sealed."""
    genesis = record.genesis
    engine = fold.engine_of(genesis)
    version = record_version(genesis)
    rows = record.rows[: call.seq]
    everything = public or viewer.role == "arbiter"
    about = record.rows[call.about_seq - 1]
    made = record_pb2.Command.FromString(record.rows[call.seq - 1].body).call
    out: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "game_id": genesis.game_id,
        "game_kind": genesis.game_kind,
        "viewer": str(viewer),
        "call": desk.call_dict(genesis.game_id, call),
        "rows": [_row_entry(record, r, viewer, public, version) for r in rows],
        # which of these rows a later rewind superseded (rulings are public)
        "superseded": {str(k): v for k, v in desk.superseded(record.rows).items() if k <= call.seq},
        "server_seed": (revealed_seed(record.rows) or b"").hex() or None if public else None,
        "refusals": [
            _refusal(r) for r in refusals if call.about_seq - NEAR <= r.after_seq < call.seq
        ],
        "clocks": _clocks_at(record, call.seq),
        "receipts": None,  # signed receipts are not in this build
    }
    if everything:
        out["explain"] = explain(record, call.about_seq)
        out["what_if"] = (
            what_if(record, call.about_seq, about.actor, made.alternative)
            if made.HasField("alternative") and call.about_seq >= 2
            else None
        )
    else:
        shown = about.kind == COMMAND and command_for(viewer, engine, about, public) is not None
        checks = []
        if shown:
            command = record_pb2.Command.FromString(about.body)
            checks = [rule_entry(engine, r) for r in fold.checked_rules(engine, command)]
        out["explain"] = {
            "seq": call.about_seq,
            "withheld": "the explanation folds with hidden cards: the arbiter's until the "
            "game ends",
            "checks": checks,
        }
        out["what_if"] = (
            {
                "withheld": "a what-if folds with hidden cards: the arbiter's until the game ends",
                "command": message_dict(made.alternative),
            }
            if made.HasField("alternative")
            else None
        )
    return sealed(json.loads(json.dumps(out, default=str)))


def _clocks_at(record: Record, seq: int) -> dict[str, Any] | None:
    """The clocks after the call's row (public at the table); None for a game without."""
    found = desk.desk_of(record.tables[seq - 1]).clocks
    return None if found is None else clocks.as_dict(found)


def _refusal(r: Any) -> dict[str, Any]:
    return {
        "after_seq": r.after_seq,
        "actor": r.actor,
        "recorded_at": r.recorded_at,
        "rule_id": r.rule_id,
        "message": r.message,
    }


def page(text: str) -> str:
    """The case file as an HTML page for people: each part under its heading."""
    bundle = json.loads(text)
    call = bundle["call"]
    esc = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Case file: call {call['call']} of {esc(bundle['game_id'])}</title></head><body>",
        f"<h1>Call {call['call']} of game {esc(bundle['game_id'])} "
        f"({esc(bundle['game_kind'])})</h1>",
        f"<p>Seat {call['seat']} about seq {call['about_seq']}: {esc(call['claim'])}"
        f"{' (holding the game)' if call['hold'] else ''}. State: {esc(call['state'])}"
        + (f", by {esc(call['ruled_by'])}: {esc(call['reason'])}" if call["answered_seq"] else "")
        + "</p>",
        f"<p>As {esc(bundle['viewer'])} may see it. Digest <code>{esc(bundle['digest'])}</code>"
        " (feastlog verify checks it).</p>",
    ]
    for title, key in (
        ("The row called about", "explain"),
        ("The claimed alternative", "what_if"),
        ("Refusals near it", "refusals"),
        ("Superseded rows", "superseded"),
    ):
        shown = json.dumps(bundle.get(key), indent=1, sort_keys=True)
        parts.append(f"<h2>{title}</h2><pre>{esc(shown)}</pre>")
    rows = "".join(
        f"<tr><td>{r['seq']}</td><td>{esc(r['kind'])}</td><td>{esc(r['actor'])}</td>"
        f"<td>{'hidden' if r['body'] is None else 'shown'}</td>"
        f"<td><code>{esc(r['hash'][:16])}</code></td></tr>"
        for r in bundle["rows"]
    )
    parts.append(
        "<h2>The rows up to the call</h2><table><tr><th>seq</th><th>kind</th><th>actor</th>"
        f"<th>body</th><th>hash</th></tr>{rows}</table></body></html>"
    )
    return "\n".join(parts)
