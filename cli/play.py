"""``feastlog play``: a seat at the table from a terminal, through a running server.

While it waits at its prompt it follows the game (``WatchGame`` as this seat, in a
background thread), and when the table changes it tells what happened and draws the
table and the moves again.  A move is never sent against a seq it knows is stale: one
chosen before the table changed is sent at the new seq when it is still legal there (in
sealed bidding another seat's bid changes nothing this seat may do), and held back, with
what changed, when it is not.  A move made of several cards (Picky Eaters' discards, a
Recipe's ingredients) is chosen one card at a time once it has more than ``MENU_MOST``
ways; cards are named as they are printed (``cli.cards``).
"""

from __future__ import annotations

import os
import select
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import click

from feastlog.cli.cards import CardNames
from feastlog.cli.errors import CliError, unreachable, usage
from feastlog.cli.narrate import Narrator, Seen, command_words, enum_words, move_name, view_lines
from feastlog.cli.output import echo_lines
from feastlog.cli.session import Session, connected
from feastlog.cli.target import connection_options, target_of, token_option
from feastlog.client.commands import command_from_json
from feastlog.client.data import as_dict
from feastlog.client.errors import FeastlogError
from feastlog.replay.games.text import plain_number
from feastlog.service.app.errors import StaleSeq, WaitingForEntropy
from feastlog.v1 import record_pb2

WAIT_SECONDS = 0.5  # between looks at a game that waits for seat entropy; input polls
MENU_MOST = 24  # a move with more ways than this is chosen one card at a time
RESENDS = 5  # a still-legal move sent again after the table moved under it (a race)


class NoMoreInput(Exception):
    """Standard input ended: the player has nothing more to say."""


class TableMoved(Exception):
    """The table changed while the player was choosing."""


class Follower:
    """The game's rows as this seat may see them, as they are recorded (a daemon thread
    on ``WatchGame``): the last seq known, and each row to tell."""

    def __init__(self, client: Session, game_id: str, token: str) -> None:
        self.client, self.game_id, self.token = client, game_id, token
        self.events: list[Any] = []
        self.changed = threading.Condition()
        self.failure: CliError | None = None
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    @property
    def seq(self) -> int:
        """The game's last seq this seat has been sent (0 before the genesis)."""
        with self.changed:
            return self.events[-1].seq if self.events else 0

    def _follow(self) -> None:
        stop = threading.Event()
        while not stop.is_set():
            try:
                for event in self.client.watch(self.game_id, len(self.events) + 1, self.token):
                    with self.changed:
                        self.events.append(event)
                        self.changed.notify_all()
                return  # the stream ended with the game
            except CliError as refused:
                if refused.reason == WaitingForEntropy.reason:
                    stop.wait(WAIT_SECONDS)  # nothing to follow before the deal
                    continue
                with self.changed:
                    self.failure = refused
                    self.changed.notify_all()
                return
            except ValueError:  # the channel was closed: the command has ended
                return

    def wait_past(self, seq: int, seconds: float) -> bool:
        """Wait up to ``seconds`` for a row after ``seq``; whether one came."""
        with self.changed:
            self.changed.wait_for(
                lambda: (self.events and self.events[-1].seq > seq) or self.failure is not None,
                timeout=seconds,
            )
            return bool(self.events) and self.events[-1].seq > seq

    def rows(self, after: int, upto: int) -> list[Any]:
        """The rows after ``after`` up to ``upto`` (waiting briefly for the stream to bring
        them: the view may be read a moment before the row reaches this seat)."""
        self.wait_past(upto - 1, 5.0)
        with self.changed:
            return [e for e in self.events if after < e.seq <= upto]


class Keyboard:
    """The player's lines: read as they come from a terminal or a pipe (so the table can
    be drawn again while the prompt waits); from anything else (a test's runner) with
    ``click.prompt``."""

    def __init__(self) -> None:
        try:
            self.fd: int | None = sys.stdin.fileno()
        except (AttributeError, ValueError, OSError):
            self.fd = None
        self.pending = b""
        self.ended = False

    def line(self, text: str, moved: Callable[[], bool]) -> str:
        """One answer; TableMoved when ``moved()`` turns true first, NoMoreInput at the end."""
        if self.fd is None:
            try:
                answer: str = click.prompt(text, type=str)
            except click.exceptions.Abort as ended:
                raise NoMoreInput from ended
            return answer
        click.echo(f"{text}: ", nl=False)
        while True:
            if b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                return line.decode("utf-8", "replace").strip()
            if self.ended:
                if self.pending:
                    line, self.pending = self.pending, b""
                    return line.decode("utf-8", "replace").strip()
                raise NoMoreInput
            if moved():
                click.echo("")
                raise TableMoved
            self.poll(WAIT_SECONDS)

    def poll(self, seconds: float) -> None:
        """Take what the player has typed, waiting up to ``seconds`` for it."""
        if self.fd is None or self.ended:
            return
        ready, _, _ = select.select([self.fd], [], [], seconds)
        if ready:
            read = os.read(self.fd, 4096)
            self.pending += read
            self.ended = read == b""

    def at_end(self) -> bool:
        """Whether input has ended with nothing left to read (a terminal's never does)."""
        self.poll(0)
        return self.ended and not self.pending.strip()


class Seat:
    """One seat at a game: its token, what it has been told, the game as it follows it."""

    def __init__(self, client: Session, game_id: str, token: str) -> None:
        self.client, self.game_id, self.token = client, game_id, token
        self.seen = 0
        self.narrator: Narrator | None = None
        self.names: CardNames | None = None
        self.follower = Follower(client, game_id, token)
        self.keyboard = Keyboard()

    def name(self, card: str) -> str:
        """A card id's printed name."""
        return self.names.of(card) if self.names else card

    def news(self, upto: int) -> list[str]:
        """What happened since this seat last looked, in plain words."""
        lines: list[str] = []
        if upto <= self.seen:
            return lines
        rows = self.follower.rows(self.seen, upto)
        if not rows or rows[-1].seq < upto:  # the stream lags: read them once
            rows = list(self.client.watch(self.game_id, self.seen + 1, self.token, to_seq=upto))
        for event in rows:
            if event.kind == "genesis":
                self.narrator = Narrator(event.genesis)
                self.names = CardNames(event.genesis)
            if self.narrator is not None:
                facts = [as_dict(f) for f in event.facts]
                lines += self.narrator.row(Seen(event.seq, event.kind, event.actor, facts, {}))
            self.seen = event.seq
        return [self.names.in_text(line) for line in lines] if self.names else lines

    def asker(self, seq: int) -> Callable[[str], str]:
        """Asks the player, giving up (TableMoved) once the game moves on from ``seq``."""

        def moved() -> bool:
            return self.follower.seq > seq or self.follower.failure is not None

        return lambda text: self.keyboard.line(text, moved)


def call_of(text: str) -> record_pb2.Command | None:
    """``call SEQ CLAIM`` (or ``hold SEQ CLAIM``, holding the game) as a call to the
    arbiter; None for any other answer."""
    word, _, rest = text.partition(" ")
    seq_text, _, claim = rest.strip().partition(" ")
    seq = plain_number(seq_text)
    if word not in ("call", "hold") or seq is None or not claim.strip():
        return None
    made = record_pb2.SeatCall(about_seq=seq, claim=claim.strip(), hold=word == "hold")
    return record_pb2.Command(call=made)


def pick(
    choices: list[record_pb2.Command],
    answer: Callable[[str], str],
    name: Callable[[str], str] = str,
    partial: bool = False,
) -> record_pb2.Command:
    """Ask for a number from the menu (a move of many ways: then its cards one at a time),
    a command as JSON, or a call to the arbiter (``call SEQ CLAIM``; ``hold SEQ CLAIM``
    holds the game until it is answered).  ``partial``: the server listed only some of
    the ways."""
    menu = menu_of(choices)
    while True:
        text = answer("your move (number, a command as JSON, or call SEQ CLAIM)").strip()
        number = plain_number(text)  # ASCII digits: "٣" is another script's 3, not a choice
        if number is not None and 1 <= number <= len(menu):
            ways = menu[number - 1]
            if len(ways) == 1:
                return ways[0]
            free = free_choice(ways) if partial else None
            return pick_free(*free, answer, name) if free else pick_cards(ways, answer, name)
        called = call_of(text)
        if called is not None:
            return called
        try:
            command: record_pb2.Command = command_from_json(text)
            return command
        except FeastlogError as bad:
            said = f" ({bad.message})" if bad.reason == "UNKNOWN_ENUM_NAME" else ""
            click.echo(
                f"  choose 1 to {len(menu)}, type a command as JSON, or call SEQ CLAIM{said}"
            )


def menu_of(choices: Sequence[record_pb2.Command]) -> list[list[record_pb2.Command]]:
    """The menu's entries: each command alone, but a move with more than ``MENU_MOST`` ways
    as one entry of them all (chosen card by card)."""
    by_move: dict[str, list[record_pb2.Command]] = {}
    for command in choices:
        by_move.setdefault(move_name(command), []).append(command)
    menu: list[list[record_pb2.Command]] = []
    for command in choices:
        ways = by_move[move_name(command)]
        if len(ways) <= MENU_MOST:
            menu.append([command])
        elif ways[0] is command:
            menu.append(ways)
    return menu


def menu_lines(
    menu: list[list[record_pb2.Command]], name: Callable[[str], str], partial: bool = False
) -> list[str]:
    """The numbered menu (``partial``: the server listed only the first of more ways)."""
    lines = []
    for number, ways in enumerate(menu, start=1):
        if len(ways) == 1:
            lines.append(f"  {number}. {command_words(ways[0], name)}")
        else:
            lines.append(
                f"  {number}. {move_name(ways[0])}: choose the cards one at a time "
                f"({'more than ' if partial else ''}{len(ways)} ways)"
            )
    return lines


def cards_of(command: record_pb2.Command) -> Counter[str]:
    """Every card a command names (its strings, and enum values in words: a gem's colour),
    counted."""
    found: Counter[str] = Counter()

    def walk(message: Any) -> None:
        for field, value in message.ListFields():
            values = list(value) if field.is_repeated else [value]
            for each in values:
                if field.message_type is not None:
                    walk(each)
                elif field.enum_type is not None:
                    found[enum_words(field.enum_type, each)] += 1
                elif isinstance(each, str):
                    found[each] += 1

    walk(command)
    return found


def pick_cards(
    ways: list[record_pb2.Command], answer: Callable[[str], str], name: Callable[[str], str]
) -> record_pb2.Command:
    """One way of a move of many, built a card at a time: each step lists the cards some
    way still has, and ``done`` once the cards chosen are a whole way."""
    chosen: Counter[str] = Counter()
    while True:
        fitting = [w for w in ways if not chosen - cards_of(w)]
        whole = [w for w in fitting if cards_of(w) == chosen]
        nexts = sorted({c for w in fitting for c in cards_of(w) - chosen}, key=name)
        if whole and not nexts:
            return _one_of(whole, answer, name)
        picked = ", ".join(name(c) for c in sorted(chosen.elements(), key=name)) or "none yet"
        click.echo(f"  {move_name(ways[0])}: chosen {picked}")
        for index, card in enumerate(nexts, start=1):
            click.echo(f"    {index}. {name(card)}")
        if whole:
            click.echo("    0. done")
        got = plain_number(answer("card (number)").strip())
        if got == 0 and whole:
            return _one_of(whole, answer, name)
        if got is not None and 1 <= got <= len(nexts):
            chosen[nexts[got - 1]] += 1
            continue
        click.echo(f"  choose 1 to {len(nexts)}" + (", or 0 for done" if whole else ""))


def free_choice(
    ways: list[record_pb2.Command],
) -> tuple[record_pb2.Command, str, int, Counter[str]] | None:
    """A move whose ways differ only in which cards one list holds, all as many (discard
    down to a hand size): a way to copy, the list's field, how many, and the cards there
    are to choose from.  Any such choice may then be made, not only the ways listed (when
    the server lists the first 1000 of more).  None for any other move."""
    fields: set[str] = set()
    counts: set[int] = set()
    pool: Counter[str] = Counter()
    for way in ways:
        move = _move(way)
        set_fields = move.ListFields()
        if len(set_fields) != 1:
            return None
        field, values = set_fields[0]
        if not (field.is_repeated and field.type == field.TYPE_STRING):
            return None
        fields.add(field.name)
        counts.add(len(values))
        pool |= Counter(values)
    if len(fields) != 1 or len(counts) != 1:
        return None
    return ways[0], fields.pop(), counts.pop(), pool


def _move(command: record_pb2.Command) -> Any:
    """The move message inside a command (``discard_down``)."""
    game = command.WhichOneof("game")
    moves = getattr(command, game or "")
    oneofs = moves.DESCRIPTOR.oneofs
    chosen = moves.WhichOneof(oneofs[0].name) if len(oneofs) == 1 else None
    return getattr(moves, chosen) if chosen else moves


def pick_free(
    like: record_pb2.Command,
    field: str,
    count: int,
    pool: Counter[str],
    answer: Callable[[str], str],
    name: Callable[[str], str],
) -> record_pb2.Command:
    """``count`` cards of ``pool``, one at a time, made into a command like ``like``."""
    chosen: list[str] = []
    while len(chosen) < count:
        left = sorted((pool - Counter(chosen)).elements(), key=name)
        picked = ", ".join(name(c) for c in chosen) or "none yet"
        click.echo(f"  {move_name(like)}: {count - len(chosen)} more; chosen {picked}")
        for index, card in enumerate(left, start=1):
            click.echo(f"    {index}. {name(card)}")
        got = plain_number(answer("card (number)").strip())
        if got is not None and 1 <= got <= len(left):
            chosen.append(left[got - 1])
            continue
        click.echo(f"  choose 1 to {len(left)}")
    made = record_pb2.Command()
    made.CopyFrom(like)
    values = getattr(_move(made), field)
    del values[:]
    values.extend(chosen)
    return made


def _one_of(
    whole: list[record_pb2.Command], answer: Callable[[str], str], name: Callable[[str], str]
) -> record_pb2.Command:
    """The one way the chosen cards make (asked when they make several)."""
    if len(whole) == 1:
        return whole[0]
    for index, command in enumerate(whole, start=1):
        click.echo(f"    {index}. {command_words(command, name)}")
    while True:
        got = plain_number(answer("which (number)").strip())
        if got is not None and 1 <= got <= len(whole):
            return whole[got - 1]
        click.echo(f"  choose 1 to {len(whole)}")


@click.command("play")
@click.argument("game_id")
@token_option("Your seat token.", seat=True)
@click.option("--once", is_flag=True, help="Make one move (or none if it is not your turn).")
@connection_options
def play_command(game_id: str, token: str, once: bool, **connection: Any) -> None:
    """Play your seat from the terminal: what happened, your hand, your legal moves.

    It follows the table while it waits and draws it again when it changes.  After a
    refused move it shows the table again and asks again; when piped input ends, it
    stops (exit 0).
    """
    with connected(target_of(connection)) as client:
        if client.local:
            raise unreachable(
                f"play needs a running server: no server holds {client.where} "
                "(start feastlog serve beside it, or pass --server)"
            )
        try:
            play(Seat(client, game_id, token), once)
        except NoMoreInput:
            click.echo("\nno more input: stopping (your seat keeps its place)")


def play(seat: Seat, once: bool) -> None:
    """The loop: news, the table, the moves, the player's choice; again until the end."""
    waited = False
    while True:
        now = seat.client.rpc.view(seat.game_id, seat.token)
        seq, viewer, view = now.seq, now.viewer, now.table
        echo_lines(seat.news(seq))
        if view.get("over"):
            click.echo(game_over(view, seat))
            return
        if not viewer.startswith("seat:"):
            raise usage(f"--token is not a seat's token here (it acts as {viewer})")
        me = int(viewer.removeprefix("seat:"))
        if me not in view.get("to_act", []):
            if once:
                click.echo("not your turn")
                return
            if not waited:
                click.echo("waiting for the others…")
                waited = True
            if seat.keyboard.at_end():
                raise NoMoreInput
            seat.follower.wait_past(seq, WAIT_SECONDS)
            continue
        waited = False
        legal = seat.client.rpc.legal(seat.game_id, seat.token)
        legal_seq, choices, partial = legal.seq, legal.commands, legal.partial
        if legal_seq != seq:
            continue  # someone moved meanwhile: show the table as it is now
        shown = seat.names.in_view(view) if seat.names else view
        echo_lines(view_lines(shown, me))
        if not choices:  # held for the arbiter: a call may still be made
            click.echo("no move is taken now (the game is held for the arbiter's answer)")
        if partial:
            click.echo(f"(the first {len(choices)} legal moves of more; or type one as JSON)")
        echo_lines(menu_lines(menu_of(choices), seat.name, partial))
        try:
            command = pick(choices, seat.asker(seq), seat.name, partial)
        except TableMoved:
            continue  # the news, the table and the moves again
        if send(seat, command, seq) and once:
            return


def send(seat: Seat, command: record_pb2.Command, seq: int) -> bool:
    """Send a chosen move at the seq the table is at now (True: recorded).  Chosen at an
    older seq, it goes only if still legal now; if not, the player is told what changed."""
    look = False  # whether the table may have moved since the move was chosen
    call = command.WhichOneof("game") == "call"  # about a row: the table moving leaves it be
    for _ in range(RESENDS):
        if (look or seat.follower.seq > seq) and call:
            seq = seat.follower.seq
        elif look or seat.follower.seq > seq:
            seq, still = still_legal(seat, command)
            if not still:
                changed = seat.news(seq)
                click.echo(
                    f"not sent: the table changed before your move went "
                    f"({'; '.join(changed) or f'now at seq {seq}'}), and "
                    f"'{command_words(command, seat.name)}' is no longer a legal move; "
                    "the table now:"
                )
                return False
        try:
            done = seat.client.submit(seat.game_id, seat.token, command, seq)
        except CliError as refused:
            if refused.reason == StaleSeq.reason:  # a row recorded as it went
                look = True
                continue
            if refused.exit_code not in (2, 4):
                raise
            click.echo(f"refused: {refused.message}; the table now:")
            return False
        click.echo(f"recorded at seq {done}")
        return True
    click.echo("not sent: the table keeps changing; the table now:")
    return False


def still_legal(seat: Seat, command: record_pb2.Command) -> tuple[int, bool]:
    """The seq now, and whether ``command`` is among this seat's legal moves there (a
    command typed as JSON, not from the menu, is the server's to judge)."""
    legal = seat.client.rpc.legal(seat.game_id, seat.token)
    legal_seq, choices, partial = legal.seq, legal.commands, legal.partial
    body = command.SerializeToString(deterministic=True)
    listed = any(c.SerializeToString(deterministic=True) == body for c in choices)
    return legal_seq, listed or (partial and bool(choices))


def game_over(view: dict[str, Any], seat: Seat) -> str:
    """The end in words: each seat's score, the winners by name."""
    seats = next(
        (v for v in view.values() if isinstance(v, list) and v and isinstance(v[0], dict)), []
    )
    names = [str(s.get("name", f"seat {i}")) for i, s in enumerate(seats)]
    scores = view.get("scores") or []
    winners = view.get("winners") or []
    if len(names) < len(scores):
        names += [f"seat {i}" for i in range(len(names), len(scores))]
    told = ", ".join(f"{names[i]} {p}" for i, p in enumerate(scores))
    won = " and ".join(names[w] for w in winners if 0 <= w < len(names))
    return f"game over; scores {scores}, winners {winners} ({told}; won by {won or 'nobody'})"
