"""The command line starts light: the group lists every command from one table
(``cli/main.py``'s COMMANDS) and imports a command's module only when that command runs."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
import textwrap

import click
from click.testing import CliRunner

import feastlog.cli
from feastlog.cli.main import COMMANDS, FeastlogGroup, cli, load_command

# Runs the command line with the given arguments in a fresh interpreter, then prints the
# exit code and every module imported, as the last line.
RUN = textwrap.dedent(
    """
    import json, sys
    from feastlog.cli.main import main

    sys.argv = ["feastlog", *sys.argv[1:]]
    try:
        main()
        code = 0
    except SystemExit as done:
        code = done.code
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
    """
)
# What no command but its own may import: the web server, gRPC's server and the
# drivers, the benches and the commands that need a client or bulk work.
HEAVY = (
    "aiohttp",
    "grpc",
    "duckdb",
    "psycopg",
    "feastlog.service.grpc.server",
    "feastlog.service.web.server",
    "feastlog.service.bench.data",
    "feastlog.cli.bench",
    "feastlog.cli.benchmarks.serving",
    "feastlog.cli.benchmarks.audit",
    "feastlog.cli.benchmarks.scale",
)
OTHER_COMMANDS = (
    "feastlog.cli.bench",
    "feastlog.cli.benchmarks.serving",
    "feastlog.cli.benchmarks.audit",
    "feastlog.cli.benchmarks.scale",
    "feastlog.cli.season",
    "feastlog.cli.arbiter",
    "feastlog.cli.narrate",
    "feastlog.cli.session",
    "feastlog.cli.play",
    "feastlog.cli.game_commands",
    "feastlog.cli.audit_commands",
    "feastlog.service.bench.data",
    "feastlog.service.app.season",
)


def imported_by(*args: str) -> tuple[int, str, set[str]]:
    """Exit code, output and imported modules of ``feastlog ARGS`` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    output, _, last = done.stdout.rstrip("\n").rpartition("\n")
    found = json.loads(last)
    return found["code"], output, set(found["modules"])


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (or a module under one) were imported."""
    return sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in names))


def commands_section(help_text: str) -> str:
    """The Commands section of a group's help."""
    return help_text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]


def test_the_group_and_its_help_import_no_command() -> None:
    """``feastlog --help`` lists every command with its summary and imports only click and
    the group: none of the commands' modules, gRPC, aiohttp, DuckDB or the benches."""
    code, output, modules = imported_by("--help")
    assert code == 0
    assert loaded(modules, HEAVY) == []
    assert sorted(m for m in modules if m.startswith("feastlog.")) == [
        "feastlog.cli",
        "feastlog.cli.errors",
        "feastlog.cli.main",
    ]
    listed = commands_section(output).splitlines()
    assert [line.split()[0] for line in listed] == sorted(COMMANDS)
    for line in listed:
        name, summary = line.split(maxsplit=1)
        # as wide as the terminal allows: the start of the command's own summary
        assert COMMANDS[name].summary.startswith(summary.removesuffix("..."))


def test_serve_imports_the_server_and_none_of_the_other_commands() -> None:
    code, output, modules = imported_by("serve", "--help")
    assert code == 0 and "--http" in output
    assert "feastlog.service.grpc.server" in modules
    assert loaded(modules, OTHER_COMMANDS) == []
    assert "aiohttp" not in modules  # the web pages' server: only with --http
    assert "psycopg" not in modules  # PostgreSQL's driver: only for a shared store


def test_verify_imports_nothing_of_a_server_or_a_database() -> None:
    code, output, modules = imported_by("verify", "--help")
    assert code == 0 and "exported record" in output
    assert loaded(modules, HEAVY) == []
    assert (
        loaded(modules, ("feastlog.service", "feastlog.cli.session", "feastlog.cli.target")) == []
    )


def test_every_listed_command_is_where_the_table_says_with_its_own_summary() -> None:
    """A typo in the table would otherwise hide until someone runs that command."""
    for name, listed in COMMANDS.items():
        command = load_command(listed.where)
        assert isinstance(command, click.Command), name
        assert command.name == name
        assert command.get_short_help_str(limit=10_000) == listed.summary, name
        assert not command.hidden


def test_every_command_defined_in_cli_is_listed() -> None:
    """A command written in cli/ but left out of the table could never be run."""
    defined: dict[int, click.Command] = {}
    for module in pkgutil.iter_modules(feastlog.cli.__path__):
        found = vars(importlib.import_module(f"feastlog.cli.{module.name}")).values()
        defined |= {id(c): c for c in found if isinstance(c, click.Command)}
    del defined[id(cli)]
    groups = [g for g in defined.values() if isinstance(g, click.Group)]
    for sub in [c for g in groups for c in g.commands.values()]:
        defined.pop(id(sub), None)
    listed = {id(load_command(listed.where)) for listed in COMMANDS.values()}
    assert sorted(c.name or "" for i, c in defined.items() if i not in listed) == []


def test_the_listing_is_what_the_loaded_commands_would_show_at_any_width() -> None:
    """The Commands section made from the table, none imported, is click's own section
    made from the commands themselves, however the summaries are cut."""
    eager = click.Group("feastlog", {n: load_command(c.where) for n, c in COMMANDS.items()})
    sections = {}
    for width in (50, 80, 250):
        lazy = CliRunner().invoke(FeastlogGroup("feastlog"), ["--help"], terminal_width=width)
        made = CliRunner().invoke(eager, ["--help"], terminal_width=width)
        assert lazy.exit_code == made.exit_code == 0
        sections[width] = commands_section(lazy.output)
        assert sections[width] == commands_section(made.output), width
    assert "..." in sections[50] and "..." not in sections[250]  # cut, and whole


def test_a_mistyped_command_is_told_the_nearest_one_though_none_was_loaded() -> None:
    done = CliRunner().invoke(FeastlogGroup("feastlog"), ["serv"])
    assert done.exit_code == 2
    assert "No such command 'serv'. Did you mean 'serve'?" in done.output
