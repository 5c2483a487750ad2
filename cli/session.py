"""How a command reaches the application: a channel, handed to the client library.

Every request the CLI sends is built, and every reply read, by ``feastlog.client`` (its
``Client``, over the channel given; its ``data`` readers for replies as plain data).
``connected(target)`` opens the ``Session`` of a command, whose channel is:

- a server's (gRPC, to the server the target names or that announced itself beside the
  file; TLS when the target says so);
- with no server holding the file, a channel answered in this process
  (``service.grpc.inprocess``): the server's own servicers, over the application's reads
  of the file or of an exported record (``service.app.offline``), as the organiser
  (whoever holds the file holds its seeds already).  Requests meet the server's checks
  and refusals come back as a server's, so both take the one error path
  (``cli.errors.from_failure``), which gives a file's refusal in its own words;
- commands that write (``new``, ``demo``, ``rule``, ``arbiter``) with no server: a
  server started here on the file (``embedded``), stopped when the command ends.

``session.rpc`` is the library's client, each failure raised as the CLI's ``CliError``.
What the session adds is the command line's own: the receipts file, a command's several
calls (bots playing a game, a replay told in words) and what no RPC does, done on the file
by the application itself, offline only: the replay page (``page``) and the bulk work of
``export --all`` and ``audit --all``, one scan per worker (``cli.season``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, wraps
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format

from feastlog.cli.errors import (
    REFUSED,
    CliError,
    ServerLog,
    cannot_read,
    failed,
    from_failure,
    unreachable,
    usage,
)
from feastlog.cli.narrate import Seen
from feastlog.cli.target import Target, require_file
from feastlog.client import data
from feastlog.client.channel import open_blocking_channel
from feastlog.client.commands import command_from_json as library_command
from feastlog.client.errors import FeastlogError, from_rpc
from feastlog.client.sync import SPECTATOR, Client
from feastlog.presentation.narrative import check_viewer
from feastlog.replay import games
from feastlog.replay.games.engine import Viewer
from feastlog.replay.proof.signed import Receipt
from feastlog.replay.record.export import read_record_file
from feastlog.service.app import offline
from feastlog.service.app.auth import ORGANISER, OrganiserKeyError
from feastlog.service.app.errors import BadRequest, WaitingForEntropy
from feastlog.service.app.proofcheck import receipt_line
from feastlog.service.grpc.inprocess import InProcessChannel, answered_here
from feastlog.service.store import CannotOpenStore
from feastlog.v1 import proof_pb2, record_pb2

T = TypeVar("T")
RECEIPT_FIELDS = tuple(proof_pb2.Receipt.DESCRIPTOR.fields_by_name)


@dataclass(frozen=True)
class Replay:
    """A game's rows up to a seq as a viewer saw them."""

    genesis: record_pb2.Genesis
    rows: list[Seen]
    viewer: str
    last_seq: int  # the game's last seq (beyond the rows asked for)


class Refusals:
    """The library's client with each of its failures raised as a ``CliError``, in the
    words of ``failure`` (streams too, as they are read)."""

    def __init__(self, client: Client, failure: Callable[[FeastlogError], CliError]) -> None:
        self._client, self._failure = client, failure

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method

        @wraps(method)
        def called(*args: Any, **kwargs: Any) -> Any:
            try:
                found = method(*args, **kwargs)
            except FeastlogError as refused:
                raise self._failure(refused) from None
            return self._read(found) if isinstance(found, Iterator) else found

        return called

    def _read(self, items: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from items
        except FeastlogError as refused:
            raise self._failure(refused) from None


class Session:
    """A command's way to the application (see the module doc), through the channel
    ``channel`` opens: a server's; without one (``local``), one answered in this process
    on ``db`` or on the exported ``record``.  ``key``: the organiser's (or a named
    arbiter's) key a server is sent."""

    def __init__(
        self,
        where: str,
        channel: Callable[[], grpc.Channel] | None = None,
        key: str | None = None,
        key_hint: str = "",
        db: str = "",
        record: str = "",
    ) -> None:
        self.where = where
        self._open = channel
        self.key, self.key_hint = key, key_hint
        self.db, self.record = db, record
        self.local = channel is None  # answered here, on a file no server holds
        self._stop: Callable[[], None] | None = None  # an embedded server's
        self.receipts_file: str | None = None  # where the receipts answered are kept

    @cached_property
    def channel(self) -> grpc.Channel:
        """The channel, opened on first use (in process: the file, or the record, read then)."""
        if self._open is not None:
            return self._open()
        return InProcessChannel(self.file, ORGANISER)

    @cached_property
    def rpc(self) -> Any:
        """The library's client on the channel, its failures as CliError (``Refusals``):
        sent once each (a command is run again by its user), with no deadline."""
        client = Client(channel=self.channel, organiser_key=self.key, retries=0, timeout=None)
        return Refusals(client, self.failure)

    def failure(self, refused: FeastlogError) -> CliError:
        """A refusal in words, with why a key file was not sent when that explains it."""
        found = from_failure(refused, self.where, self.local)
        if self.key_hint and refused.status in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
            return CliError(f"{found.message} ({self.key_hint})", found.exit_code, found.reason)
        return found

    def close(self) -> None:
        """Close the channel, and stop an embedded server."""
        if "channel" in self.__dict__:
            self.channel.close()
        if self._stop is not None:
            self._stop()

    def keep(self, receipts: Sequence[Any], body: bytes = b"", command_id: str = "") -> None:
        """Append the receipts of an answer to the receipts file (when one is kept), each
        with what this command sent for its command row."""
        if self.receipts_file is None or not receipts:
            return
        lines = []
        for i, message in enumerate(receipts):  # the command's row first, then a seed reveal
            receipt = Receipt(**{f: getattr(message, f) for f in RECEIPT_FIELDS})
            lines.append(receipt_line(receipt, body if i == 0 else b"", command_id))
        try:
            with open(self.receipts_file, "a", encoding="utf-8") as out:
                out.write("".join(line + "\n" for line in lines))
        except OSError as bad:
            raise cannot_read(self.receipts_file, bad) from bad

    def here(self, work: Callable[[], T]) -> T:
        """Work the application does in this process with no RPC (offline only: the page,
        bulk work over the file); its refusals as a call's."""
        try:
            return answered_here(work)
        except grpc.RpcError as error:
            raise self.failure(from_rpc(error)) from None

    def game(self, game_id: str) -> str:
        """The game a request names: an exported record's own, whatever its file is called."""
        return "" if self.record else game_id

    # --- the calls whose answers carry receipts ----------------------------------

    def create_game(self, **options: Any) -> dict[str, Any]:
        """Create a game (organiser; ``options``: ``Client.create_game``'s): its id, seed
        commitment and seat tokens, as data."""
        if not self.key:
            hint = self.key_hint or (
                "run this beside the server's database, or pass --organiser-key "
                "(or set FEASTLOG_ORGANISER_KEY)"
            )
            raise CliError(f"no organiser key: {hint}", REFUSED)  # as the server would
        reply = self.rpc.create_game(**options).reply
        self.keep(reply.receipts)
        return data.created(reply)

    def join(self, game_id: str, token: str, entropy: bytes) -> tuple[bool, list[int]]:
        """Send a seat's entropy: whether the game started, and who it still waits for."""
        reply = self.rpc.join(game_id, entropy, token)
        self.keep(reply.receipts)
        return reply.started, list(reply.waiting_for)

    def submit(self, game_id: str, token: str, command: record_pb2.Command, seq: int) -> int:
        """Send a command guarded by the seq it was chosen at; the seq it was recorded at."""
        # the seq is all it reads: no facts as data
        done = self.rpc.submit(game_id, command, seq, token, typed_facts_only=True)
        body = command.SerializeToString(deterministic=True)
        self.keep(done.reply.receipts, body, done.command_id)
        return int(done.seq)

    def rule(self, game_id: str, ruling: record_pb2.ArbiterCommand) -> tuple[int, str]:
        """Append a ruling: (seq, hash)."""
        reply = self.rpc.rule(game_id, ruling)
        self.keep(reply.receipts)
        return int(reply.seq), reply.hash

    # --- a command's several calls -----------------------------------------------

    def watch(
        self,
        game_id: str,
        from_seq: int = 1,
        token: str | None = None,
        arbiter: bool = False,
        to_seq: int = 0,
    ) -> Iterator[Any]:
        """A game's rows from ``from_seq`` (RecordEvent messages), the stored ones then each
        as it is recorded, to ``to_seq`` (0: to the end): as the seat of ``token``, with
        the target's key (``arbiter``), or as a spectator, who sends no credentials."""
        sent = None if arbiter else (token or SPECTATOR)
        for event in self.rpc.follow(game_id, from_seq, sent):
            yield event
            if to_seq and event.seq >= to_seq:
                return

    def play_bots(self, game_id: str, tokens: Sequence[str], seed: int) -> dict[str, Any]:
        """Bots play every seat to the end (joining first when the game waits for entropy);
        the final view."""
        import os
        import random

        rng = random.Random(seed)
        try:
            self.rpc.view(game_id)
        except CliError as waiting:
            if waiting.reason != WaitingForEntropy.reason:
                raise
            for token in tokens:
                self.join(game_id, token, os.urandom(32))
        while True:
            view = self.rpc.view(game_id)
            if view.over:
                return view.table
            if not view.to_act:
                raise CliError(f"game {game_id} is not over but nobody is to act", 70)
            for seat in view.to_act:
                legal = self.rpc.legal(game_id, tokens[seat])
                if legal.commands:
                    self.submit(game_id, tokens[seat], rng.choice(legal.commands), legal.seq)

    def replay(self, game_id: str, at: int | None, viewer: Viewer | None) -> Replay:
        """Rows 1..at (the last without it) as ``viewer`` saw them (by default the caller:
        on a file, the arbiter)."""
        game_id, asked = self.game(game_id), str(viewer) if viewer else ""
        # a file's reader is told which seats and seqs its record has, in the record's
        # words (a server's caller, the server's refusal of the request)
        first = self.rpc.state_at(game_id, 1, "" if self.local else asked)
        if self.local:
            in_record(first.event.genesis, int(first.last_seq), at, viewer)
        rows = [
            Seen(e.seq, e.kind, e.actor, [data.as_dict(f) for f in e.facts], data.as_dict(e.view))
            for e in self.rpc.replay(game_id, at or 0, asked)
        ]
        return Replay(first.event.genesis, rows, asked or first.viewer, int(first.last_seq))

    def page(self, game_id: str, viewer: Viewer) -> str:
        """The replay page, drawn here by the application from the file (offline only: no
        RPC draws one; through a server, ``cli.replay_html`` draws its replies)."""
        game_id = self.game(game_id)
        # the game is asked for as any call asks: its id checked, found, folded
        self.rpc.state_at(game_id, 1)
        reads = self.file
        return self.here(
            lambda: offline.answer(reads.replays.page(ORGANISER, game_id, str(viewer)))
        )

    def export(self, game_id: str) -> tuple[str, bool]:
        """A game's export file and whether it is complete (seed revealed)."""
        reply = self.rpc.export(self.game(game_id))
        return reply.content.decode(), reply.complete

    def export_all(self, output: str, workers: int | None) -> tuple[int, int, int]:
        """Every game's record, one a line: (written, complete, left out).  On a file, in
        one scan per worker; through a server, every game it lists, exported in turn."""
        if self.local:
            from feastlog.cli.season import export_file

            return self.here(lambda: export_file(require_file(self.db), output, workers))
        written = complete = 0
        with Path(output).open("w") as out:
            for game in self.rpc.games():
                if game.waiting_for_entropy:
                    continue  # no record yet: its genesis is written when it starts
                text, done = self.export(game.game_id)
                out.write(json.dumps(json.loads(text), sort_keys=True) + "\n")
                written, complete = written + 1, complete + done
        return written, complete, 0

    def audit(self, game_id: str) -> dict[str, Any]:
        """One game's audit report, as data."""
        return data.report(self.rpc.verify(self.game(game_id)))

    def audit_all(self, workers: int | None) -> list[dict[str, Any]]:
        """Every game's audit report, with a progress bar.  On a file, over ``workers``
        processes (and how fast, on standard error); through a server, its stream
        (organiser key)."""
        from feastlog.cli.output import echo_err, progress

        if self.local:
            from feastlog.cli.season import audit_file

            reports, speed = self.here(lambda: audit_file(require_file(self.db), workers))
            echo_err(speed.line("audit"))
            return reports
        found: list[dict[str, Any]] = []
        bar: Any = None
        try:
            for each in self.rpc.verify_all_counted():
                if bar is None:
                    bar = progress(int(each.total), "verifying").__enter__()
                found.append(data.report(each.report))
                bar.update(1)
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
        return found

    def what_if(
        self, game_id: str, seq: int, actor: str, command: Callable[[str], record_pb2.Command]
    ) -> dict[str, Any]:
        """A command (made for the game's kind) in place of row ``seq``."""
        game_id = self.game(game_id)
        made = command(self.rpc.state_at(game_id, 1).event.genesis.game_kind)
        return data.as_dict(self.rpc.what_if(game_id, seq, actor, made).details)

    @cached_property
    def file(self) -> offline.Offline:
        """The application's reads of the file or the record (in process; read on first
        use): a record that cannot be read says so (exit 3), one that does not fold too
        (exit 1)."""
        if self.record:
            try:
                text = read_record_file(self.record)
            except (OSError, UnicodeDecodeError) as bad:
                raise cannot_read(self.record, bad) from bad
            try:
                return offline.OfflineRecord(text, self.record)
            except BadRequest as bad:
                raise unreachable(bad.message) from bad
            except offline.UNREADABLE as bad:
                raise failed(f"{self.record}: not a record that replays: {bad}") from bad
        return offline.OfflineFile(require_file(self.db))


def in_record(
    genesis: record_pb2.Genesis, last_seq: int, at: int | None, viewer: Viewer | None
) -> None:
    """Usage (2) for a seat the record's game does not have, refused (4) for a seq it has
    not: a file's reader is told what the record holds."""
    if viewer is not None:
        try:
            check_viewer(genesis, viewer)
        except ValueError as bad:
            raise usage(str(bad)) from bad
    if at is not None and not 1 <= at <= last_seq:
        raise CliError(f"there is no seq {at}: it has seqs 1 to {last_seq}", REFUSED)


def on_server(target: Target) -> Session:
    """A session with the server the target names (TLS when it says so)."""
    assert target.server is not None
    server, credentials = target.server, None
    if target.tls is not None:
        credentials = target.tls.channel_credentials()
    # every call about a game carries the routing header (client.channel.ROUTING_HEADER)
    return Session(
        f"the server at {server}",
        lambda: open_blocking_channel(server, credentials),
        target.key,
        target.key_hint,
    )


def on_file(db: str = "", record: str = "") -> Session:
    """A session answered in this process on a DuckDB file no server holds, or an
    exported record, as the organiser."""
    return Session(record or db, db=db, record=record)


def embedded(target: Target) -> Session:
    """A session with a server started here on the target's file (port 0)."""
    # only a command that writes to a file no server holds needs the server's modules
    from feastlog.service.grpc.server import CannotListen, create_server

    # its log is the user's terminal: an incident in one line, not a page of traceback
    log = ServerLog()
    logging.getLogger("feastlog").addHandler(log)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    # a command's server lives as long as the command: its store stays in this process
    serving = create_server(target.db, "127.0.0.1:0", store_process=False)
    start = asyncio.run_coroutine_threadsafe(serving, loop)
    try:
        running = start.result(timeout=120)
    except (CannotOpenStore, OrganiserKeyError, CannotListen) as refused:
        loop.call_soon_threadsafe(loop.stop)
        logging.getLogger("feastlog").removeHandler(log)
        message = getattr(refused, "message", None) or str(refused)
        raise unreachable(message) from refused
    inner = Target(
        f"127.0.0.1:{running.port}", target.db, target.key or running.organiser_key, None
    )
    session = on_server(inner)

    def stop() -> None:
        stopping = asyncio.run_coroutine_threadsafe(running.stop(1), loop)
        stopping.result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        logging.getLogger("feastlog").removeHandler(log)

    session._stop = stop
    return session


def open_session(
    target: Target, writes: bool = False, record: str = "", creates: bool = True
) -> Session:
    """The session of a command: a server's, the file's, or an exported record's.

    ``creates``: a command that writes may make the file (new, demo, arbiter add); one
    that needs what a file already holds (a ruling on its game, its arbiters) is refused
    when there is none, rather than making a database, its folder and a key to say so.
    """
    if record:
        return on_file(record=record)
    if target.server:
        return on_server(target)
    if writes:
        if not creates:
            require_file(target.db)
        return embedded(target)
    return on_file(db=target.db)


def command_from_json(text: str, kind: str) -> record_pb2.Command:
    """A command from JSON: a ``feastlog.v1.Command``, or the game's own command message;
    enum values by their short names too (``red``: ``feastlog.client.commands``)."""
    try:
        return library_command(text)
    except FeastlogError as bad:
        if bad.reason != "BAD_JSON":
            raise usage(bad.message) from bad
    command = record_pb2.Command()
    try:
        library_command(text, getattr(command, games.engine(kind).spec.command_field))
    except FeastlogError as bad:
        raise usage(bad.message) from bad
    return command


def command_text(command: record_pb2.Command) -> str:
    """A command as one line of JSON (the form ``whatif`` and clients use too)."""
    return json.dumps(json_format.MessageToDict(command, preserving_proto_field_name=True))


@contextmanager
def connected(
    target: Target, writes: bool = False, record: str = "", creates: bool = True
) -> Iterator[Session]:
    """``open_session`` for the length of a ``with``; closed whatever happens."""
    session = open_session(target, writes, record, creates)
    try:
        yield session
    finally:
        session.close()
