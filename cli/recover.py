"""``feastlog recover``: a file whose write-ahead log cannot be replayed whole, brought back.

A server (or an offline command) refuses a DuckDB file whose log is damaged, moving and
deleting nothing (``service/store/duckdb/mark.py``).  This is the way on: it keeps the damaged log
and the commit mark aside, replays what DuckDB can of the log, and says what the database
holds now against what its last commit recorded.
"""

from __future__ import annotations

import click

from feastlog.cli.errors import unreachable, usage
from feastlog.cli.output import echo_json
from feastlog.cli.target import DEFAULT_DB, require_file


@click.command("recover")
@click.option(
    "--db",
    "db_path",
    default=DEFAULT_DB,
    show_default=True,
    help="The DuckDB file a server or command refused for its damaged write-ahead log.",
)
@click.option("--json", "as_json", is_flag=True)
def recover_command(db_path: str, as_json: bool) -> None:
    """Keep a damaged write-ahead log aside and open what the database holds without it.

    Run it on a file that ``serve`` (or an offline command) refused because its
    write-ahead log (FILE.wal) cannot be replayed whole. The log and the commit mark
    (FILE.commits) are copied aside as FILE.wal.damaged-STAMP and
    FILE.commits.damaged-STAMP; DuckDB replays what it can of the log (up to an entry
    whose checksum fails); the file is checkpointed; then it says what the database holds
    against what its last commit recorded, and what is lost. A file that opens whole is
    left untouched. Stop its server first: a file in use is refused (exit 3).
    """
    from feastlog.service.app.recovery import recover_file
    from feastlog.service.store import CannotOpenStore
    from feastlog.service.store.port import is_postgres

    if is_postgres(db_path):
        raise usage("recover is for a DuckDB file: a PostgreSQL database keeps no such log")
    require_file(db_path)
    try:
        done = recover_file(db_path)
    except CannotOpenStore as refused:
        raise unreachable(refused.message) from refused
    held, recorded, lost = done.held, done.recorded, done.lost()
    if as_json:
        echo_json(
            {
                "database": done.database,
                "recovered": done.needed,
                "kept_aside": list(done.kept_aside),
                "holds": done.counts(held),
                "recorded": done.counts(recorded) if recorded else None,
                "lost": lost,
            }
        )
        return
    if not done.needed:
        click.echo(
            f"{db_path} opens whole: it holds everything its last commit recorded "
            f"({done.in_words(done.counts(held))}); nothing was changed"
        )
        return
    for part in done.kept_aside:
        click.echo(f"kept aside: {part}")
    click.echo(f"{db_path} now holds {done.in_words(done.counts(held))}")
    if recorded is None:
        click.echo("its last commit left no readable record of what it held: compare with backups")
    elif lost:
        click.echo(
            f"lost against its last commit ({done.in_words(done.counts(recorded))}): "
            + done.in_words(lost)
        )
    else:
        click.echo("nothing its last commit recorded is lost")
