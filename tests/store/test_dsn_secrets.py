"""A PostgreSQL DSN's password is never printed, however the DSN is wrong."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.service.store.port import redacted, shown

SHOWN = [
    ("postgresql://u:SECRETPW@db:5432/x", "postgresql://u@db:5432/x"),
    # a port out of range: urlsplit raised ValueError here, and the command exit 70
    ("postgresql://u:SECRETPW@127.0.0.1:99999/x", "postgresql://u@127.0.0.1:99999/x"),
    ("postgresql://u:SECRETPW@[::1/x", "postgresql://u@[::1/x"),  # a broken IPv6 host
    (
        "postgresql://u@db/x?password=SECRETPW&sslmode=require",
        "postgresql://u@db/x?sslmode=require",
    ),
    (
        "postgres://u@db/x?sslmode=require&PASSWORD=SECRETPW#f",
        "postgres://u@db/x?sslmode=require#f",
    ),
    ("postgresql:///x?host=/run/pg&sslpassword=SECRETPW", "postgresql:///x?host=/run/pg"),
    ("postgresql://db/x", "postgresql://db/x"),
    ("games.duckdb", "games.duckdb"),
]


@pytest.mark.parametrize(("dsn", "printed"), SHOWN)
def test_shown_leaves_every_password_out(dsn: str, printed: str) -> None:
    assert shown(dsn) == printed


def test_a_drivers_message_quoting_the_password_is_redacted() -> None:
    dsn = "postgresql://u:SECRET%zzPW@db/x?password=p%40w"
    quoted = 'invalid percent-encoded token: "SECRET%zzPW" near p@w'
    assert redacted(quoted, dsn) == 'invalid percent-encoded token: "…" near …'


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://u:SECRETPW@127.0.0.1:99999/x",
        "postgresql://u@127.0.0.1:1/x?password=SECRETPW",
        "postgresql://u:SECRET%zzPW@127.0.0.1:1/x",
    ],
)
@pytest.mark.parametrize("command", [["games"], ["audit", "--all"], ["stats"]])
def test_no_command_prints_the_password_of_a_dsn_it_cannot_open(
    dsn: str, command: list[str]
) -> None:
    """Each of these ended in exit 70 (a port out of range) or printed the password (after
    '?password=', or quoted back by psycopg); each is one line, exit 3, without it."""
    result = CliRunner().invoke(cli, [*command, "--db", dsn])
    assert result.exit_code == 3, result.output
    assert "SECRET" not in result.output and "Traceback" not in result.output
    assert result.stderr.startswith("Error: cannot open postgresql://u@127.0.0.1")
