"""``feastlog backup`` and ``feastlog restore``: a consistent copy of a DuckDB file, and
that copy put back.

``backup`` asks the server holding the file for the copy (``AdminService.Backup``: the
server writes it between two commits, while it keeps serving) and copies a file no
server holds itself; either way the copy is opened, held to its commit mark and
checkpointed into one file before it takes its name (``service/app/backup.py``).
``restore`` refuses a file a server holds, and one whose log is newer than the backup's.
"""

from __future__ import annotations

import os
from typing import Any

import click

from feastlog.cli.errors import REFUSED, CliError, output_file, unreachable, usage
from feastlog.cli.output import echo_json
from feastlog.cli.session import connected
from feastlog.cli.target import DEFAULT_DB, connection_options, require_file, target_of


@click.command("backup")
@click.argument("out")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def backup_command(out: str, as_json: bool, **connection: Any) -> None:
    """A consistent copy of a DuckDB file at OUT, with its commit mark, made while it is served.

    The server holding --db (or --server) writes the copy itself between two commits
    (OUT is a path on its machine): every game acknowledged before the backup began is
    in it, nothing half written, and commits wait only while the file is copied. A file
    no server holds is copied here. The copy is opened and held to its commit mark
    before it takes its name; OUT must not exist. A PostgreSQL store is backed up with
    pg_dump (docs/scaling.md).
    """
    target = target_of(connection)
    output_file(out)
    path = os.path.abspath(out)
    if target.server:
        with connected(target) as client:
            made = _said(client.rpc.backup(path))
    else:
        made = _offline(target.db, path)
    if as_json:
        echo_json(made)
        return
    by = f"by the server at {target.server}" if target.server else "here: no server holds it"
    click.echo(
        f"backed up to {made['path']}: {made['games']} games, {made['rows']} rows "
        f"({made['bytes']} bytes copied {by}; commits waited {made['paused_seconds']:.3f} s)"
    )


def _offline(db: str, path: str) -> dict[str, Any]:
    """A copy of a file no server holds."""
    from feastlog.service.app.backup import PG_RECIPE, back_up_file
    from feastlog.service.app.errors import BadRequest
    from feastlog.service.store import CannotOpenStore
    from feastlog.service.store.port import is_postgres

    if is_postgres(db):
        raise usage(PG_RECIPE)
    require_file(db)
    try:
        made = back_up_file(db, path)
    except BadRequest as bad:
        raise usage(bad.message) from bad
    except CannotOpenStore as refused:
        raise unreachable(refused.message) from refused
    return _said(made)


def _said(made: Any) -> dict[str, Any]:
    """A backup as the command says it: the server's reply or the one made here (the same
    fields)."""
    fields = ("path", "games", "rows", "bytes", "paused_seconds")
    return {name: getattr(made, name) for name in fields}


@click.command("restore")
@click.argument("backup")
@click.option(
    "--db",
    "db_path",
    default=DEFAULT_DB,
    show_default=True,
    help="The DuckDB file to put the backup in place of (no server may hold it).",
)
@click.option("--json", "as_json", is_flag=True)
def restore_command(backup: str, db_path: str, as_json: bool) -> None:
    """Put BACKUP (made by feastlog backup) in place of --db; refused if --db is newer.

    The backup is opened and held to its commit mark first; --db is refused while a
    server holds it (exit 3), and when its log is longer than the backup's, or as long
    and ending in another row (exit 4): move it aside to restore over it. Its old
    write-ahead log goes with it.
    """
    from feastlog.service.app.backup import NewerFile, restore_file
    from feastlog.service.store import CannotOpenStore
    from feastlog.service.store.port import is_postgres

    if is_postgres(db_path):
        raise usage("restore is for a DuckDB file: see docs/scaling.md for PostgreSQL")
    try:
        done = restore_file(backup, db_path)
    except NewerFile as newer:
        raise CliError(newer.message, REFUSED) from newer
    except CannotOpenStore as refused:
        raise unreachable(refused.message) from refused
    if as_json:
        echo_json(
            {
                "database": done.path,
                "games": done.games,
                "rows": done.rows,
                "rows_before": done.rows_before,
            }
        )
        return
    click.echo(
        f"restored {backup} to {db_path}: {done.games} games, {done.rows} rows "
        f"(it held {done.rows_before} rows before)"
    )
