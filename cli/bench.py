"""``feastlog bench``, ``bench-audit`` and ``bench-scale``: the commands; what each
measures, and how, is in ``cli/benchmarks/`` (imported only when one runs)."""

from __future__ import annotations

from typing import Any

import click

from feastlog.cli.output import INT64, Bounded, counts, number_option
from feastlog.replay.games import kinds


@click.command("bench")
@click.option("--kind", default="bon-appetit", show_default=True, type=click.Choice(kinds()))
@number_option("--players", default=3, low=2, high=6)
@click.option(
    "--games",
    "levels",
    default="16,64",
    show_default=True,
    callback=counts,
    help="Concurrent games per level, comma-separated.",
)
@number_option("--seed", default=1, low=-INT64 - 1, help="Bots' choices.")
@number_option("--submit-games", default=64, help="Games at once, submit-only.")
@number_option("--rounds", default=3, help="Games each submit-only lane plays one after another.")
@click.option(
    "--struct-facts",
    is_flag=True,
    help="Submit-only answers carry every fact as a Struct too (typed_facts_only unset).",
)
def bench_command(struct_facts: bool, **measured: Any) -> None:
    """Submit-only commands/s at 64 games beside the health-check rate, p99 at half that
    load; then the bot loop; the fold rate."""
    from feastlog.cli.benchmarks import serving

    for line in serving.run(**measured, typed_only=not struct_facts):
        click.echo(line)


@click.command("bench-audit")
@number_option("--games", "count", default=2000)
@click.option(
    "--workers",
    type=Bounded(1),
    default=None,
    help="For audit --all beside one worker (default: every core).",
)
def bench_audit_command(count: int, workers: int | None) -> None:
    """Audit --all rows/s (1 and every worker) beside one ordered read+decode scan of the
    same rows; state-at-seq time for a 300-row game."""
    from feastlog.cli.benchmarks import audit
    from feastlog.service.app.bulk import default_workers

    for line in audit.run(count, workers or default_workers()):
        click.echo(line)


@click.command("bench-scale")
@click.option("--games", "sizes", default="1000,10000", show_default=True, callback=counts)
@click.option("--keep", type=click.Path(file_okay=False), help="Leave the stores in DIR.")
@click.option(
    "--reuse",
    is_flag=True,
    help="Measure the stores a --keep DIR already holds (of the right size) without building "
    "them again.",
)
@click.option(
    "--workers",
    type=Bounded(1),
    default=None,
    help="For audit --all (default: every core).",
)
def bench_scale_command(
    sizes: list[int], keep: str | None, reuse: bool, workers: int | None
) -> None:
    """Build stores of each size and report how their figures grow."""
    if reuse and not keep:
        raise click.UsageError("--reuse measures the stores of a --keep DIR")
    from feastlog.cli.benchmarks import scale
    from feastlog.service.app.bulk import default_workers

    shown = scale.run(
        sizes, keep, reuse, workers or default_workers(), lambda line: click.echo(line, err=True)
    )
    for line in shown:
        click.echo(line)


@click.command("bench-proof")
@number_option("--rows", default=1_000_000, low=2)
@number_option("--samples", default=50)
def bench_proof_command(rows: int, samples: int) -> None:
    """The log tree at a million rows: build, proof sizes and times; a receipt's and a
    head's cost."""
    from feastlog.cli.benchmarks import proof

    for line in proof.run(rows, samples):
        click.echo(line)
