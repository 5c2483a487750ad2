"""The ``feastlog`` command: one group, whose commands are imported only when they run.

``COMMANDS`` below lists every command: its name, the module and attribute that define
it, and the first sentence of its help, which ``feastlog --help`` shows. A command's
module (and what it needs: the gRPC server, aiohttp, DuckDB, the benches) is imported
when that command runs or shows its own help, so ``feastlog --help`` and each command
pay only for their own imports.

Every command finds its server beside the database (``cli/target.py``), sends every
request through the client library (``feastlog.client``) over a server's channel or one
answered in this process (``cli/session.py``), fails with one error class
(``cli/errors.py``, whose docstring lists the exit codes) and tells games with one
narrator (``cli/narrate.py``).
"""

from __future__ import annotations

import importlib
import os
from typing import Any, NamedTuple

# gRPC's core writes its own log lines to standard error (a TLS handshake that failed, at
# INFO, before the command's one line says so): a command says each failure once, in its
# words, so gRPC's are kept to its errors unless the user asks for more
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import click

from feastlog.cli.errors import BUG, INTERRUPTED, CliError, unreachable

EXIT_CODES = """Exit codes: 0 done; 1 a record does not verify; 2 a bad option or value;
3 cannot reach the server or the file; 4 refused (unknown game, wrong token, a rule…);
70 a bug in feastlog."""


class Listed(NamedTuple):
    """A command as the group lists it, before its module is imported."""

    where: str  # "module:attribute" of the click command
    summary: str  # the first sentence of its help (tests check it is the command's own)


COMMANDS: dict[str, Listed] = {
    "arbiter": Listed(
        "feastlog.cli.arbiter:arbiter_group",
        "Named arbiter keys (the organiser's): add, revoke, list.",
    ),
    "audit": Listed(
        "feastlog.cli.audit_commands:audit_command",
        "Verify stored records from the log alone; exit 0 when all verify, 1 when any fails.",
    ),
    "backup": Listed(
        "feastlog.cli.backup:backup_command",
        "A consistent copy of a DuckDB file at OUT, with its commit mark, made while it is served.",
    ),
    "bench": Listed(
        "feastlog.cli.bench:bench_command",
        "Submit-only commands/s at 64 games beside the health-check rate, p99 at half that "
        "load; then the bot loop; the fold rate.",
    ),
    "bench-audit": Listed(
        "feastlog.cli.bench:bench_audit_command",
        "Audit --all rows/s (1 and every worker) beside one ordered read+decode scan of the "
        "same rows; state-at-seq time for a 300-row game.",
    ),
    "bench-proof": Listed(
        "feastlog.cli.bench:bench_proof_command",
        "The log tree at a million rows: build, proof sizes and times; a receipt's and a "
        "head's cost.",
    ),
    "bench-scale": Listed(
        "feastlog.cli.bench:bench_scale_command",
        "Build stores of each size and report how their figures grow.",
    ),
    "call": Listed(
        "feastlog.cli.table:call_command",
        "Call the arbiter about row SEQ of GAME_ID, as your seat; recorded as a row.",
    ),
    "calls": Listed(
        "feastlog.cli.table:calls_command",
        "The calls to the arbiter: of GAME_ID, or the queue of every running game (arbiters).",
    ),
    "case": Listed(
        "feastlog.cli.table:case_command",
        "The case file of CALL in GAME_ID: one self-verifying bundle (feastlog verify checks it).",
    ),
    "clocks": Listed(
        "feastlog.cli.table:clocks_command",
        "A clocked game's clocks now: each seat's time left and used, which run.",
    ),
    "demo": Listed(
        "feastlog.cli.game_commands:demo_command",
        "Bots play a complete game through the file's server (or one started on the file).",
    ),
    "explain": Listed(
        "feastlog.cli.audit_commands:explain_command",
        "One row: command, sender, time, rule checks with rulebook text, values, state change.",
    ),
    "export": Listed(
        "feastlog.cli.audit_commands:export_command",
        "Write a game's portable record (the seed only once revealed) to FILE.",
    ),
    "games": Listed(
        "feastlog.cli.listing:games_command",
        "The games, newest first (--kind, --tournament): id, state, last seq, players.",
    ),
    "head": Listed(
        "feastlog.cli.proof:head_command",
        "A server's latest signed tree head, as a head file (for verify --head and --later).",
    ),
    "import": Listed(
        "feastlog.cli.season:import_command",
        "Verify exported records (FILE.json, or .jsonl from export --all) and load them in bulk.",
    ),
    "join": Listed(
        "feastlog.cli.game_commands:join_command",
        "Send a seat's entropy to a game created with --seat-entropy.",
    ),
    "new": Listed(
        "feastlog.cli.game_commands:new_command",
        "Create a game (on the file's server, or in the file); prints the id and seat tokens.",
    ),
    "play": Listed(
        "feastlog.cli.play:play_command",
        "Play your seat from the terminal: what happened, your hand, your legal moves.",
    ),
    "projection": Listed(
        "feastlog.cli.season:projection_group",
        "The outcomes projection (SQL tables of finished games' results) of a file.",
    ),
    "recover": Listed(
        "feastlog.cli.recover:recover_command",
        "Keep a damaged write-ahead log aside and open what the database holds without it.",
    ),
    "rejections": Listed(
        "feastlog.cli.audit_commands:rejections_command",
        "Refused commands of a game: seat, time, rule id and message.",
    ),
    "replay": Listed(
        "feastlog.cli.game_commands:replay_command",
        "The game round by round in plain words (--at SEQ, --as VIEWER: as seen then).",
    ),
    "restore": Listed(
        "feastlog.cli.backup:restore_command",
        "Put BACKUP (made by feastlog backup) in place of --db; refused if --db is newer.",
    ),
    "rule": Listed(
        "feastlog.cli.audit_commands:rule_command",
        "Append a ruling (note, adjust, forfeit, void, close, rewind); nothing earlier changes.",
    ),
    "rules": Listed(
        "feastlog.cli.game_commands:rules_command",
        "A game's rule catalogue: every rule id, its rulebook section and what it says.",
    ),
    "serve": Listed(
        "feastlog.cli.serve:serve_command",
        "Serve the gRPC API on a DuckDB file (made on first start, owner-only).",
    ),
    "standings": Listed(
        "feastlog.cli.tournament:standings_command",
        "A tournament's standings: games, wins (shared victories split) and points per player.",
    ),
    "stats": Listed(
        "feastlog.cli.audit_commands:stats_command",
        "Per game kind: games played, win rate by seat position, a game-specific figure.",
    ),
    "tournament": Listed(
        "feastlog.cli.tournament:tournament_group",
        "Run a tournament on the record: create, register, drop, pair, publish, start, "
        "extend, call, penalty, standings, export, watch.",
    ),
    "verify": Listed(
        "feastlog.cli.verify:verify_command",
        "Verify exported records (.json, or export --all's .jsonl) alone; exit 1 if one fails.",
    ),
    "watch": Listed(
        "feastlog.cli.watch:watch_command",
        "Follow a game live in plain words, as a spectator (or --token, --arbiter), to its end.",
    ),
    "whatif": Listed(
        "feastlog.cli.audit_commands:whatif_command",
        "COMMAND (JSON) in place of row SEQ: legal or not (which rule), and its facts.",
    ),
    "witness": Listed(
        "feastlog.cli.proof:witness_command",
        "Follow a server's signed heads: check each extends the last, co-sign it, keep it.",
    ),
}


def load_command(where: str) -> click.Command:
    """The click command at ``module:attribute``, its module imported now."""
    module, _, attribute = where.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{where} is not a click command")
    return command


class FeastlogGroup(click.Group):
    """The command group: commands load when they run; whatever one raises ends in one
    line, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, from the table: none is imported."""
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command of that name, its module imported on first use."""
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(load_command(COMMANDS[cmd_name].where), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command the arguments name; a mistyped name is told the nearest ones."""
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as unknown:
            # click suggests from the commands loaded so far: suggest from all of them
            raise click.exceptions.NoSuchCommand(
                unknown.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The Commands section, each with its summary, as click lays it out."""
        listed = [
            (name, self.commands.get(name) or click.Command(name, help=COMMANDS[name].summary))
            for name in self.list_commands(ctx)
        ]
        shown = [(name, command) for name, command in listed if not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        with formatter.section("Commands"):
            formatter.write_dl([(name, c.get_short_help_str(limit)) for name, c in shown])

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an unexpected failure becomes a one-line error (exit 70)."""
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit):
            raise
        except (click.exceptions.Abort, KeyboardInterrupt):
            raise CliError("interrupted", INTERRUPTED) from None
        except BrokenPipeError:  # feastlog replay … | head: the reader left
            raise click.exceptions.Exit(0) from None
        except OSError as failed:
            where = f" ({failed.filename})" if failed.filename else ""
            raise unreachable(f"{failed.strerror or failed}{where}") from failed
        except Exception as bug:
            if os.environ.get("FEASTLOG_DEBUG"):
                import traceback  # only here: no command's start-up pays for it

                traceback.print_exc()
            raise CliError(
                f"feastlog failed unexpectedly ({type(bug).__name__}: {bug}); "
                "FEASTLOG_DEBUG=1 shows where",
                BUG,
            ) from bug


@click.group(cls=FeastlogGroup, epilog=EXIT_CODES)
@click.version_option(package_name="feastlog")
def cli() -> None:
    """feastlog: record, replay and audit Bon Appetit!, Menu Masters and Picky Eaters games."""


def main() -> None:
    """Entry point of the console script."""
    cli(prog_name="feastlog")


if __name__ == "__main__":
    main()
