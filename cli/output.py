"""How the CLI prints: one JSON style (sorted keys, numbers as numbers), progress on
stderr, audit reports in one shape for ``audit`` and ``verify``; and how it reads
numbers (``Bounded``, ``number_option``) and repeated options (``repeated_option``)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click

from feastlog.replay.games.engine import how_many
from feastlog.replay.games.text import escaped
from feastlog.replay.record.audit import summary_line


def echo_json(value: Any) -> None:
    """Print JSON: sorted keys, one-space indent."""
    click.echo(json.dumps(value, indent=1, sort_keys=True))


def echo_lines(lines: Iterable[str], err: bool = False) -> None:
    """Print lines that may hold names, ids or reasons from a record, each control, bidi
    or invisible character spelt out (``replay.games.text.escaped``): a stored name cannot clear
    the screen, forge a line or turn the text around."""
    for line in lines:
        click.echo(escaped(line), err=err)


def echo_err(line: str) -> None:
    """A line on stderr (stdout stays clean for --json)."""
    click.echo(line, err=True)


def progress(length: int, label: str) -> Any:
    """A progress bar on stderr."""
    bar: Any = click.progressbar(length=length, label=label, file=sys.stderr)
    return bar


def show_reports(reports: Sequence[dict[str, Any]], as_json: bool) -> None:
    """Audit reports: as JSON ({"ok", "games", "reports"}), or one line each and a total."""
    if as_json:
        echo_json(
            {"ok": all(r["ok"] for r in reports), "games": len(reports), "reports": list(reports)}
        )
        return
    echo_lines(summary_line(found) for found in reports)
    if len(reports) > 1:
        bad = sum(1 for r in reports if not r["ok"])
        click.echo(f"{how_many(len(reports), 'game')}, {len(reports) - bad} verified, {bad} failed")


def counts(ctx: click.Context, param: click.Parameter, value: str) -> list[int]:
    """A click callback: comma-separated whole numbers of 1 or more (``16,64``)."""
    try:
        found = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        found = []
    if not found or any(n < 1 for n in found):
        raise click.BadParameter(f"{value!r}: give whole numbers of 1 or more, like 16,64")
    return found


# What the wire can carry (int64 seqs, int32 seats and points): a larger number is the
# user's mistake, refused by click naming the option, never a crash in protobuf.  Every
# whole-number option and argument is one of these.
PLAIN_INTEGER = re.compile(r"-?[0-9]{1,30}")
INT64 = 2**63 - 1  # the widest whole number the wire and the store carry


class Bounded(click.ParamType):
    """An integer from ``low`` to ``high``, refused in words: "x>=1", or "too large"."""

    name = "integer"

    def __init__(self, low: int, high: int = INT64) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):  # a default
            number = value
        elif isinstance(value, str) and PLAIN_INTEGER.fullmatch(value):
            number = int(value)
        else:  # int() takes "+3", " 3" and other scripts' digits ("٣"): a typo, or a trick
            self.fail(f"{value!r} is not a whole number in ASCII digits", param, ctx)
        if number < self.low:
            self.fail(f"{number} is not x>={self.low}", param, ctx)
        if number > self.high:
            self.fail(f"{number} is too large (at most {self.high})", param, ctx)
        return number


def number_option(
    *names: str, default: int, low: int = 1, high: int = INT64, help: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A whole-number option from ``low`` to ``high`` (``Bounded``), its default shown."""
    return click.option(
        *names, default=default, show_default=True, type=Bounded(low, high), help=help
    )


def repeated_option(
    *names: str, help: str, metavar: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An option given any number of times: a tuple of its values, in the order given."""
    return click.option(*names, multiple=True, metavar=metavar, help=help)
