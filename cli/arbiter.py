"""``feastlog arbiter add|revoke|list``: named arbiter keys, on the file's server.

An arbiter's key makes rulings and sees what the arbiter sees; each ruling records the
arbiter's name. Keys are shown once and stored hashed; a revoked key is refused from the
next call on, by the running server.
"""

from __future__ import annotations

from typing import Any

import click

from feastlog.cli.output import echo_json
from feastlog.cli.session import connected
from feastlog.cli.target import connection_options, target_of
from feastlog.client import data


@click.group("arbiter")
def arbiter_group() -> None:
    """Named arbiter keys (the organiser's): add, revoke, list."""


@arbiter_group.command("add")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def arbiter_add_command(name: str, as_json: bool, **connection: Any) -> None:
    """Add arbiter NAME and print its key (shown once: hand it to the arbiter)."""
    with connected(target_of(connection), writes=True) as client:
        added = data.arbiter_added(client.rpc.add_arbiter(name))
    if as_json:
        echo_json(added)
        return
    click.echo(f"arbiter {added['name']}: {added['key']}")
    click.echo("the key is shown once; the arbiter passes it as --organiser-key")


@arbiter_group.command("revoke")
@click.argument("name")
@connection_options
def arbiter_revoke_command(name: str, **connection: Any) -> None:
    """Revoke arbiter NAME's key: refused from the next call on."""
    with connected(target_of(connection), writes=True, creates=False) as client:
        revoked = data.arbiter_revoked(client.rpc.revoke_arbiter(name))
    click.echo(f"arbiter {revoked['name']} revoked at {revoked['revoked_at']}")


@arbiter_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def arbiter_list_command(as_json: bool, **connection: Any) -> None:
    """Every named arbiter, with when it was added and revoked (never a key)."""
    with connected(target_of(connection), writes=True, creates=False) as client:
        found = [data.arbiter(a) for a in client.rpc.arbiters()]
    if as_json:
        echo_json(found)
        return
    for a in found:
        state = f"revoked {a['revoked_at']}" if a["revoked_at"] else "active"
        click.echo(f"{a['name']:<24} added {a['added_at']}  {state}")
    click.echo(f"{len(found)} arbiter{'' if len(found) == 1 else 's'}")
