"""``feastlog`` commands about one game: new, join, demo, replay and rules.

Each works through the server found beside the file (or ``--server``), or in the file
itself when no server holds it (``cli/target.py``, ``cli/session.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from feastlog.cli.audit_commands import SEQ, parse_viewer
from feastlog.cli.errors import FAILED, CliError, unreachable
from feastlog.cli.narrate import Narrator, table_lines
from feastlog.cli.output import echo_err, echo_json, echo_lines, number_option, repeated_option
from feastlog.cli.replay_html import write_replay_html
from feastlog.cli.seat_links import link_lines, seat_links
from feastlog.cli.session import Replay, connected
from feastlog.cli.target import connection_options, target_of, token_option
from feastlog.replay import games
from feastlog.replay.record.audit import summary_line
from feastlog.service.app.bounds import FIELD_BOUNDS

DEMO_NAMES = ("Ann", "Brian", "Celia", "Dev", "Eve", "Farid")


def parse_seed(text: str | None) -> bytes:
    """A 64-hex-digit seed option as bytes (empty when not given)."""
    if not text:
        return b""
    try:
        seed = bytes.fromhex(text)
    except ValueError as bad:
        raise click.BadParameter("the seed is 64 hex digits", param_hint="--seed") from bad
    if len(seed) != 32:
        raise click.BadParameter("the seed is 64 hex digits (32 bytes)", param_hint="--seed")
    return seed


class GameKind(click.ParamType):
    """A game kind of the registry, read when the command runs (not when it is defined)."""

    name = "kind"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        """The kinds, as click shows a closed set."""
        return "[" + "|".join(games.kinds()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """The kind, if the registry has it."""
        if value in games.kinds():
            return str(value)
        self.fail(f"{value!r} is not a game kind: use {', '.join(games.kinds())}", param, ctx)


def kind_argument() -> Any:
    """The game kind argument, a closed set."""
    return click.argument("kind", type=GameKind())


def seat_lines(made: dict[str, Any]) -> list[str]:
    """A new game in words: its id, seed commitment and one token per seat."""
    lines = [f"game {made['game_id']}", f"seed commitment {made['seed_commitment']}"]
    lines += [f"seat {s['seat']} {s['name']}: {s['token']}" for s in made["seats"]]
    return lines


@click.command("new")
@kind_argument()
@click.option("--players", required=True, help="Comma-separated names in seat order.")
@click.option("--seed", help="Supply the server seed (64 hex digits); recorded as supplied.")
@repeated_option("--option", "options", help="Rule option KEY=VALUE.")
@click.option(
    "--pack",
    type=click.File("rb"),
    help="The organiser's own content pack (TOML); the bundled one otherwise.",
)
@click.option(
    "--seat-entropy",
    is_flag=True,
    help="Start only once every seat has sent its own entropy (feastlog join).",
)
@click.option("--tournament", default="", help="The tournament this game counts for.")
@click.option("--json", "as_json", is_flag=True, help="The game id and seat tokens as JSON.")
@click.option(
    "--links", is_flag=True, help="Also print a one-time link to each seat's page (serve --http)."
)
@click.option("--link-base", default="", help="The web pages' public address, for --links.")
@click.option("--qr", is_flag=True, help="With --links: a QR code of each link too.")
@connection_options
def new_command(
    kind: str,
    players: str,
    seed: str | None,
    options: Sequence[str],
    pack: Any,
    seat_entropy: bool,
    tournament: str,
    as_json: bool,
    links: bool,
    link_base: str,
    qr: bool,
    **connection: Any,
) -> None:
    """Create a game (on the file's server, or in the file); prints the id and seat tokens."""
    names = [p.strip() for p in players.split(",") if p.strip()]
    if any("=" not in o for o in options):
        raise click.BadParameter("rule options are KEY=VALUE", param_hint="--option")
    chosen = dict(o.split("=", 1) for o in options)
    most = FIELD_BOUNDS["content_pack"]
    content_pack = pack.read(most + 1) if pack else b""  # no more: it may be /dev/zero
    if len(content_pack) > most:
        raise click.BadParameter(
            f"{pack.name} is larger than a content pack may be ({most // 1024} KiB)",
            param_hint="--pack",
        )
    if pack and not content_pack:  # on the wire, no pack at all: the game's bundled one
        raise click.BadParameter(f"{pack.name} is empty: a pack needs an id", param_hint="--pack")
    request = {
        "kind": kind,
        "players": names,
        "seed": parse_seed(seed),
        "options": chosen,
        "content_pack": content_pack,
        "seat_entropy": seat_entropy,
        "tournament_id": tournament,
    }
    if (qr or link_base) and not links:
        raise click.BadParameter("--qr and --link-base go with --links", param_hint="--links")
    with connected(target_of(connection), writes=True) as client:
        made = client.create_game(**request)
        if links:
            seats = [s["seat"] for s in made["seats"]]
            try:
                made["links"] = seat_links(client, made["game_id"], seats, link_base)
            except CliError:  # the game is made all the same: its tokens are shown once
                if as_json:
                    echo_json(made)
                else:
                    click.echo("\n".join(seat_lines(made)))
                raise
    warn(made)
    if as_json:
        echo_json(made)
        return
    click.echo("\n".join(seat_lines(made)))
    if links:
        click.echo("\n".join(link_lines(made["links"], names, qr)))
    if seat_entropy:
        click.echo("the game starts once every seat has run: feastlog join GAME_ID --token TOKEN")


@click.command("join")
@click.argument("game_id")
@token_option("The seat's token.", seat=True)
@click.option("--entropy", help="Hex bytes to mix into the seed; 32 fresh random bytes if not.")
@connection_options
def join_command(game_id: str, token: str, entropy: str | None, **connection: Any) -> None:
    """Send a seat's entropy to a game created with --seat-entropy."""
    try:
        mine = bytes.fromhex(entropy) if entropy else os.urandom(32)
    except ValueError as bad:
        raise click.BadParameter("entropy is hex", param_hint="--entropy") from bad
    with connected(target_of(connection)) as client:
        if client.local:  # a game's waiting room is a server's
            raise unreachable(
                f"joining a game needs a running server: no server holds {client.where} "
                "(start one with feastlog serve, or pass --server)"
            )
        started, waiting = client.join(game_id, token, mine)
    if started:
        click.echo(f"game {game_id} has started: every seat's entropy is in")
    else:
        click.echo(f"entropy recorded; waiting for {', '.join(f'seat {s}' for s in waiting)}")


@click.command("demo")
@kind_argument()
@number_option("--players", "count", default=3, high=6)
@click.option("--seed", help="Server seed (64 hex digits); bots also play from it.")
@click.option("--seat-entropy", is_flag=True, help="Each bot seat mixes its own entropy in.")
@click.option("--tournament", default="", help="The tournament this game counts for.")
@click.option("--json", "as_json", is_flag=True, help="The game id, scores and winners as JSON.")
@click.option(
    "--receipts",
    "receipts_file",
    metavar="FILE",
    help="Keep the server's signed receipt of every row in FILE (JSON lines, appended).",
)
@connection_options
def demo_command(
    kind: str,
    count: int,
    seed: str | None,
    seat_entropy: bool,
    tournament: str,
    as_json: bool,
    receipts_file: str | None,
    **connection: Any,
) -> None:
    """Bots play a complete game through the file's server (or one started on the file)."""
    names = list(DEMO_NAMES[:count])
    seed_bytes = parse_seed(seed)
    with connected(target_of(connection), writes=True) as client:
        client.receipts_file = receipts_file
        made = client.create_game(
            kind=kind,
            players=names,
            seed=seed_bytes,
            seat_entropy=seat_entropy,
            tournament_id=tournament,
        )
        warn(made)
        bot_seed = int.from_bytes(seed_bytes[:8] or os.urandom(8), "big")
        tokens = [s["token"] for s in made["seats"]]
        view = client.play_bots(made["game_id"], tokens, bot_seed)
    scores = [int(s) for s in view.get("scores") or []]
    winners = [int(w) for w in view.get("winners") or []]
    if as_json:
        echo_json(
            {"game_id": made["game_id"], "players": names, "scores": scores, "winners": winners}
        )
        return
    click.echo(f"game {made['game_id']}")
    click.echo(format_scores(scores, winners, names))


def warn(made: dict[str, Any]) -> None:
    """The server's warnings about a game it made, on standard error (its output stays the
    game's: text or JSON)."""
    for warning in made.get("warnings", []):
        echo_err(f"warning: {warning}")


def format_scores(scores: Sequence[int], winners: Sequence[int], names: Sequence[str]) -> str:
    """Final scores and winners."""
    lines = ["final scores:"]
    for seat, name in enumerate(names):
        points = scores[seat] if seat < len(scores) else 0
        lines.append(f"  {name}: {points}{'  (winner)' if seat in winners else ''}")
    return "\n".join(lines)


def is_record_file(game_id: str) -> bool:
    """Whether GAME_ID names an exported record (a .json file) rather than a game."""
    return game_id.endswith(".json")


@click.command("replay")
@click.argument("game_id", metavar="GAME_ID|EXPORT.json")
@click.option("--at", "at", type=SEQ, help="Stop at this seq: the table after it.")
@click.option("--as", "as_viewer", help="seat:N, spectator or arbiter: see what they saw.")
@click.option(
    "--html",
    "html_file",
    help="Write the replay page to FILE instead: one HTML file that opens from disk.",
)
@connection_options
def replay_command(
    game_id: str,
    at: int | None,
    as_viewer: str | None,
    html_file: str | None,
    **connection: Any,
) -> None:
    """The game round by round in plain words (--at SEQ, --as VIEWER: as seen then).

    GAME_ID may also be a file written by ``feastlog export`` of a finished game. --at and
    --as show the game up to that seq as that viewer saw it while the game ran (a seat: its
    own hand and private draws, the others' counts), even once the game is over. --html
    FILE draws it instead, step by step, as --as VIEWER saw it.
    """
    viewer = parse_viewer(as_viewer)
    record = game_id if is_record_file(game_id) else ""
    target = target_of(connection, local=not record)
    with connected(target, record=record) as client:
        # a file is anyone's to edit: an exported record, or a file no server holds
        checked = client.audit("") if record else None
        if html_file is not None:  # --html '' is refused as an empty name, not ignored
            if checked is None and client.local:
                checked = client.audit(game_id)
            click.echo(write_replay_html(client, game_id, html_file, viewer, checked))
        else:
            found = client.replay(game_id, at, viewer)
            echo_lines(replay_lines(found, at is not None or viewer is not None, at is None))
    if checked is not None and not checked["ok"]:
        # a file is anyone's to edit: its story is told, and that it does not verify
        echo_lines([f"warning: {game_id} does not verify: {summary_line(checked)}"], err=True)
        sys.exit(FAILED)


def replay_lines(found: Replay, with_table: bool, to_the_end: bool) -> list[str]:
    """A replay in words; with the table after the last row as its viewer saw it.

    Asked for the whole of a finished game as a seat or spectator, the table shown is the
    last one that viewer saw while the game ran: at the end every hand is public, so the
    table after the last row would show what the viewer never saw during the game.
    """
    narrator = Narrator(found.genesis)
    lines = narrator.story(found.rows)
    if not with_table:
        if found.viewer != "arbiter":
            lines.append(f"(seen as {found.viewer})")
        return lines
    shown, note = found.rows[-1], ""
    if to_the_end and found.viewer != "arbiter" and shown.view.get("over"):
        running = [r for r in found.rows if not r.view.get("over")]
        if running:
            shown, note = running[-1], " (the last table before the end)"
    heading, *table = table_lines(shown.view, shown.seq, found.viewer)
    return [*lines, heading.replace(" --", f"{note} --", 1) if note else heading, *table]


class RulesOf(GameKind):
    """A game kind, or ``tournament`` (the catalogue of a tournament's own rules)."""

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        """The kinds and tournament."""
        return "[" + "|".join((*games.kinds(), "tournament")) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """The kind, or tournament."""
        return "tournament" if value == "tournament" else super().convert(value, param, ctx)


@click.command("rules")
@click.argument("kind", type=RulesOf())
@click.option("--json", "as_json", is_flag=True, help="The catalogue as JSON.")
def rules_command(kind: str, as_json: bool) -> None:
    """A game's rule catalogue: every rule id, its rulebook section and what it says."""
    if kind == "tournament":
        tournament_rules(as_json)
        return
    spec = games.engine(kind).spec
    if as_json:
        from feastlog.replay.record.canonical import to_plain

        echo_json([to_plain(r) for r in spec.rules.values()])
        return
    click.echo(f"{spec.title}, ruleset {spec.ruleset_version}: {len(spec.rules)} rules")
    click.echo(f"rulesets folded: {', '.join(spec.rulesets)} (new games: {spec.ruleset_version})")
    for rule in spec.rules.values():
        mark = " (interpretation)" if rule.interpretation else ""
        mark += "" if rule.refuses else " (never refuses)"
        click.echo(f"{rule.id:<24} [{rule.section}]{mark} {rule.text}")
    defaults = ", ".join(f"{k}={v}" for k, v in spec.option_defaults.items())
    click.echo(f"options (defaults): {defaults}")


def tournament_rules(as_json: bool) -> None:
    """The tournament rule catalogue (TOUR-…), which every tournament refusal cites."""
    from feastlog.replay.record.canonical import to_plain
    from feastlog.replay.tournament.spec import DEFAULTS, RULES

    if as_json:
        echo_json([to_plain(r) for r in RULES.values()])
        return
    click.echo(f"Tournament: {len(RULES)} rules (docs/tournament.md)")
    for rule in RULES.values():
        mark = "" if rule.refuses else " (never refuses)"
        click.echo(f"{rule.id:<24} [{rule.section}]{mark} {rule.text}")
    click.echo(f"format (defaults): {', '.join(f'{k}={v}' for k, v in DEFAULTS.items())}")
