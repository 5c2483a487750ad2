"""``feastlog head`` and ``feastlog witness``: a server's signed tree heads, fetched, kept,
checked against each other and co-signed (docs/record-format.md, "Proof beyond the
operator").

``head`` writes a head file (the latest head, with consistency proofs from earlier head
files), for ``feastlog verify --head`` and ``--later``.  ``witness`` follows a server's
heads: each new head must extend the last one it co-signed (a consistency proof, checked
here), and it co-signs it with its own key, kept in its folder, stores it there and gives
the cosignature back to the server, which serves it beside the head.  A head that does
not extend the last, or two roots for one size, is an alarm: one line naming both heads,
exit 1.  ``witness --compare`` holds two witnesses' folders to each other, which catches a
server that showed each its own history.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from feastlog.cli.errors import FAILED, CliError, cannot_read, cannot_write, unreachable, usage
from feastlog.cli.output import repeated_option
from feastlog.cli.session import Session, connected
from feastlog.cli.target import connection_options, target_of
from feastlog.cli.verify import read_proof_file
from feastlog.client import data
from feastlog.replay.proof.signed import Cosignature, TreeHead
from feastlog.service.app import proofcheck
from feastlog.service.app.notary import Notary, SigningKeyError, load_or_make, signed_by
from feastlog.service.app.proofcheck import HeadFile

WITNESS_FOLDER = ".feastlog-witness"
WITNESS_KEY = "witness.key"
WITNESSED = "heads.jsonl"  # one line per head co-signed: the head file and the cosignature


class Alarm(CliError):
    """The server showed a head that does not extend the last one seen (exit 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"ALARM: {message}", FAILED)


def read_head_file(path: str) -> HeadFile:
    """A head file (or an export, whose proof section holds its head)."""
    return read_proof_file(path, proofcheck.read_head)


def extended(client: Session, earlier: TreeHead, later: TreeHead) -> HeadFile:
    """``later`` with the server's consistency proof from ``earlier``'s size."""
    if later.size <= earlier.size or earlier.size == 0:
        return HeadFile(later)
    path = client.rpc.consistency_proof(earlier.size, later.size).path
    return HeadFile(later, ((earlier.size, earlier.root, tuple(path)),))


@click.command("head")
@repeated_option(
    "--since",
    "since",
    metavar="FILE",
    help="An earlier head file (or export): prove the new head extends it.",
)
@click.option(
    "-o", "--output", metavar="FILE", help="Write the head file here (default: standard output)."
)
@connection_options
def head_command(since: tuple[str, ...], output: str | None, **connection: Any) -> None:
    """A server's latest signed tree head, as a head file (for verify --head and --later)."""
    earlier = [read_head_file(p) for p in since]
    with connected(target_of(connection)) as client:
        head, _ = data.tree_head(client.rpc.tree_head())
        proofs: list[tuple[int, str, tuple[str, ...]]] = []
        for old in earlier:
            proofs += extended(client, old.head, head).consistency
    made = HeadFile(head, tuple(proofs))
    for old in earlier:  # checked here too: a head file that would not verify is not written
        problems = proofcheck.check_extends(old.head, made)
        if problems:
            raise Alarm(problems[0])
    text = json.dumps(made.to_dict(), indent=1, sort_keys=True) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as bad:
        raise cannot_write(output, bad) from bad
    click.echo(f"head {head.names()} written to {output}", err=True)


@dataclass
class Witness:
    """What a witness holds: its key, its folder, the heads it co-signed."""

    folder: Path
    notary: Notary
    seen: list[HeadFile] = field(default_factory=list)

    @classmethod
    def open(cls, folder: Path) -> Witness:
        """The witness of a folder: its key (made there on first use, 0600) and its heads."""
        try:
            notary = load_or_make(folder / WITNESS_KEY)
        except SigningKeyError as bad:
            raise unreachable(str(bad)) from bad
        return cls(folder, notary, list(witnessed(folder)))

    @property
    def last(self) -> TreeHead | None:
        """The last head co-signed."""
        return self.seen[-1].head if self.seen else None

    def check(self, client: Session, head: TreeHead, keys: set[str]) -> HeadFile | None:
        """The head to co-sign (None: nothing new); Alarm when it does not extend the last."""
        if not signed_by(head) or head.public_key not in keys:
            raise Alarm(f"the head {head.names()} is not signed by the server's key")
        last = self.last
        if last is None:
            return HeadFile(head)
        if head.size == last.size:
            if head.root != last.root:
                raise Alarm(
                    f"split view: two roots for size {head.size}: {last.names()} and {head.names()}"
                )
            return None
        if head.size < last.size:
            raise Alarm(f"the head {head.names()} does not extend {last.names()}: it is smaller")
        made = extended(client, last, head)
        problems = proofcheck.check_extends(last, made, keys)
        if problems:
            raise Alarm(f"the head {head.names()} does not extend {last.names()}: {problems[0]}")
        return made

    def keep(self, made: HeadFile, witnessed_at: str) -> Cosignature:
        """Co-sign a head and store it in the folder (before the server is told)."""
        cosignature = self.notary.cosign(made.head, witnessed_at)
        line = json.dumps({**made.to_dict(), "cosignature": vars(cosignature)}, sort_keys=True)
        try:
            with open(self.folder / WITNESSED, "a", encoding="utf-8") as out:
                out.write(line + "\n")
        except OSError as bad:
            raise cannot_write(str(self.folder / WITNESSED), bad) from bad
        self.seen.append(made)
        return cosignature


def witnessed(folder: Path) -> Iterator[HeadFile]:
    """The heads a witness's folder holds, in the order it co-signed them."""
    path = folder / WITNESSED
    if not path.exists():
        return
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as bad:
        raise cannot_read(str(path), bad) from bad
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                yield proofcheck.read_head(f"{path}:{n}", line)
            except proofcheck.BadProofFile as bad:
                raise unreachable(str(bad)) from bad


@click.command("witness")
@click.option(
    "--folder",
    default=WITNESS_FOLDER,
    show_default=True,
    help="The witness's key and the heads it co-signed.",
)
@click.option(
    "--interval",
    default=2.0,
    show_default=True,
    type=click.FloatRange(0.05, 3600),
    help="Seconds between looks.",
)
@click.option(
    "--rounds", default=0, type=click.IntRange(0), help="Stop after this many looks (0: never)."
)
@click.option(
    "--compare",
    "compare",
    metavar="FOLDER",
    help="Hold this witness's heads to another witness's folder, and stop.",
)
@connection_options
def witness_command(
    folder: str, interval: float, rounds: int, compare: str | None, **connection: Any
) -> None:
    """Follow a server's signed heads: check each extends the last, co-sign it, keep it.

    Exit 1 with a line naming both heads when the server shows two roots for one size, or
    a head that does not extend the last one co-signed.
    """
    witness = Witness.open(Path(folder))
    with connected(target_of(connection)) as client:
        if compare is not None:
            compared(witness, Witness.open(Path(compare)), None if client.local else client)
            return
        if client.local:
            raise usage("witness follows a running server: pass --server HOST:PORT")
        click.echo(f"witness key {witness.notary.public_key}")
        looked = 0
        while True:
            keys = {k["public_key"] for k in data.server_info(client.rpc.server_info())["keys"]}
            head, _ = data.tree_head(client.rpc.tree_head())
            made = witness.check(client, head, keys)
            if made is not None:
                cosignature = witness.keep(made, utc_now())
                count = client.rpc.add_cosignature(made.head, cosignature)
                click.echo(f"witnessed {made.head.names()} ({count} witness(es))")
            looked += 1
            if rounds and looked >= rounds:
                return
            sys.stdout.flush()
            time.sleep(interval)


def compared(mine: Witness, other: Witness, client: Session | None) -> None:
    """Alarm when two witnesses hold different roots for one size; with a server, also
    when the last head of one does not extend into the other's (the server must prove it)."""
    roots = {h.head.size: h.head for h in mine.seen}
    for theirs in other.seen:
        ours = roots.get(theirs.head.size)
        if ours is not None and ours.root != theirs.head.root:
            raise Alarm(
                f"split view: two roots for size {ours.size}: {ours.names()} "
                f"({mine.folder}) and {theirs.head.names()} ({other.folder})"
            )
    if client is not None and mine.last is not None and other.last is not None:
        small, large = sorted((mine.last, other.last), key=lambda h: h.size)
        if small.size < large.size:
            try:
                made = extended(client, small, large)
            except CliError as refused:
                raise Alarm(
                    f"the server cannot prove {large.names()} extends {small.names()}: "
                    f"{refused.message}"
                ) from None
            problems = proofcheck.check_extends(small, made)
            if problems:
                raise Alarm(f"split view: {problems[0]}")
    click.echo(f"{len(mine.seen)} and {len(other.seen)} heads: one history")


def utc_now() -> str:
    """The time now, RFC 3339 UTC with microseconds."""
    import datetime

    now = datetime.datetime.now(datetime.UTC)
    return now.isoformat(timespec="microseconds").replace("+00:00", "Z")
