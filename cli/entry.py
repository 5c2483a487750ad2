"""The console script's entry point, kept light on purpose.

A worker process of ``audit --all``, ``export --all`` or a projection rebuild is
started with ``spawn``, which runs the parent's main module again, here the
``feastlog`` script: were the script to import the whole command line at its top (a
second of imports: gRPC, aiohttp, every command), each worker would pay that second
before its share of the games.  The script imports this module only; the command line
is imported when ``main`` runs.
"""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``feastlog`` console script: the command line, imported now."""
    from feastlog.cli.main import main as command_line

    command_line()
