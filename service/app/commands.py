"""What creating a game and taking a command decide, in memory: the rows to write.

Nothing here writes, waits or reads the clock (the application passes the time in): each
function takes a live game or a request and returns what the application then commits
and takes into memory, or raises the refusal.  The rules themselves are the fold's
(``replay.games.fold.step``, then the game's engine).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from feastlog.replay.games import engine as engine_of
from feastlog.replay.games import fold
from feastlog.replay.games.engine import Engine, Fact, PackError, pack_source, unknown_pack_key
from feastlog.replay.games.fold import Table, loaded_pack, state_hash
from feastlog.replay.games.text import unprintable
from feastlog.replay.record.history import begin, new_genesis, record_version
from feastlog.replay.record.rows import COMMAND, SEED_REVEAL, Row, make_row
from feastlog.replay.table import desk
from feastlog.service.app.auth import new_seat_token, token_sha256
from feastlog.service.app.errors import BadRequest, CommandIdReused, StaleSeq, refusal_of
from feastlog.service.app.limits import stored_refusal
from feastlog.service.app.live import LiveGame
from feastlog.service.store import Batch, NewGame, Rejection
from feastlog.service.store.projection import Ending, outcome_rows
from feastlog.v1 import record_pb2


@dataclass(frozen=True)
class Opening:
    """A new game: what goes in the store, the seat tokens, and the game once it begins
    (None while it waits for seat entropy)."""

    genesis: record_pb2.Genesis
    tokens: tuple[str, ...]
    stored: NewGame
    pack: object
    server_seed: bytes
    game: LiveGame | None


def begin_game(genesis: record_pb2.Genesis, server_seed: bytes, pack: object) -> LiveGame:
    """Set a game up: the genesis row, the table and the facts of setting up, live.

    The engine's setup refuses seats or options it cannot take (``SetupRefused``, naming
    the field and the rule).
    """
    return LiveGame.begun(genesis, pack, server_seed, begin(genesis, server_seed, pack))


def open_game(
    kind: str,
    players: Sequence[str],
    options: Mapping[str, str],
    seed: bytes,
    tournament_id: str,
    pack_bytes: bytes,
    seat_entropy: bool,
    now: str,
    server_key: str = "",
    seat_token: Callable[[str, int], str] | None = None,
) -> Opening:
    """Check a request for a new game and set it up; with ``seat_entropy`` it waits to begin.

    Each seat's token is fresh and random, or ``seat_token(game_id, seat)`` (a published
    round's tokens, which a retry of the publish makes again)."""
    engine = engine_of(kind)
    names = [p.strip() for p in players]
    if any(not n for n in names) or len(set(names)) != len(names):
        raise BadRequest("player names must be non-empty and different", field="players")
    if seed and len(seed) != 32:
        raise BadRequest("a supplied seed is 32 bytes", field="seed")
    supplied = bool(pack_bytes)
    if supplied:
        new_pack(engine, pack_bytes)
    pack_bytes = pack_bytes or engine.default_pack_bytes()
    pack = loaded_pack(engine, pack_bytes)  # parsed once per pack: most games share one
    server_seed = seed or secrets.token_bytes(32)
    game_id = "g_" + secrets.token_hex(8)
    genesis = new_genesis(
        game_id,
        kind,
        names,
        options,
        pack_bytes,
        pack,
        server_seed,
        now,
        seed_supplied=bool(seed),
        tournament_id=tournament_id,
        server_key=server_key,
    )
    game = begin_game(genesis, server_seed, pack)  # bad options refused even when it waits
    made = seat_token or (lambda _game, _seat: new_seat_token())
    tokens = tuple(made(game_id, seat) for seat in range(len(names)))
    stored = NewGame(
        None if seat_entropy else game.rows[0],
        [(n, token_sha256(t)) for n, t in zip(names, tokens, strict=True)],
        server_seed,
        genesis.pack_sha256,
        kind,
        genesis.pack_id,
        pack_bytes,
        game_id,
        genesis.SerializeToString(deterministic=True) if seat_entropy else b"",
    )
    return Opening(genesis, tokens, stored, pack, server_seed, None if seat_entropy else game)


def new_pack(engine: Engine, pack_bytes: bytes) -> None:
    """What an organiser's own pack must be beyond what its game loads: PackError naming
    the card and field, else nothing.  Checked before the game's own ``load_pack``, so a
    misspelt key is named as such, not as the field it leaves missing.

    Every key is one its game reads (``Engine.pack_keys``: games recorded before this
    check still load with theirs), and every word is plain text (``pack_text``).
    """
    raw = pack_source(pack_bytes)
    if engine.pack_keys is not None:
        unknown_pack_key(raw, engine.pack_keys, engine.spec.title)
    pack_text(raw)


def pack_text(raw: Mapping[str, Any]) -> None:
    """A supplied pack's words (its id, card names, every other string and key) are shown
    to players and printed on terminals: plain text, as names are.  PackError naming the
    card (a table of a list: ``dish #3``) and the field, else nothing."""
    for card, field, text in _pack_strings(raw):
        found = unprintable(text)
        if found is not None:
            raise PackError(
                card,
                field,
                f"holds {found}: a pack's words are plain text, with no control, line-break, "
                "bidi or invisible format characters",
            )


def _pack_strings(raw: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """Every key and string of a parsed pack: (card, field, text)."""
    for key, value in raw.items():
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            for i, table in enumerate(value):
                yield from _strings(f"{key} #{i + 1}", "", table)
        else:
            yield from _strings("(pack)", "", {key: value})


def _strings(card: str, field: str, value: Any) -> Iterator[tuple[str, str, str]]:
    if isinstance(value, str):
        yield card, field or "(card)", value
    elif isinstance(value, dict):
        for key, inner in value.items():
            named = f"{field}.{key}" if field else str(key)
            yield card, named, str(key)
            yield from _strings(card, named, inner)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _strings(card, f"{field}[{i}]", inner)


def retried(game: LiveGame, actor: str, command_id: str, body: bytes) -> Row | None:
    """The row an earlier send of this command made (a retry), or None for a new one.

    The same ``command_id`` with another command is refused: ids are their sender's own.
    """
    seq = game.command_ids.get((actor, command_id))
    if seq is None:
        return None
    row = game.rows[seq - 1]
    if row.body != body:
        raise CommandIdReused(
            f"you used command_id {command_id!r} for another command at seq {seq}",
            seq=str(seq),
        )
    return row


@dataclass(frozen=True)
class Advance:
    """The rows a command adds (its own, and the seed reveal when it ends the game), the
    table and facts after each, and the batch that writes them."""

    rows: list[Row]
    tables: list[Table]
    facts: list[tuple[Fact, ...]]
    batch: Batch


def advance(
    game: LiveGame,
    actor: str,
    expected_seq: int | None,
    command: record_pb2.Command,
    body: bytes,
    command_id: str,
    now: str,
) -> Advance:
    """Check a command against the game now and work out the rows it adds."""
    if expected_seq is not None and expected_seq != game.last_seq:
        raise StaleSeq(
            f"the game is at seq {game.last_seq}, not {expected_seq}",
            last_seq=str(game.last_seq),
        )
    # the fold checks, in its one order: game closed, actor's role, seat to act, the move's own
    at = desk.At(game.last_seq + 1, game.tables, now)
    table, facts = fold.step(game.engine, game.table, actor, command, at)
    version = record_version(game.genesis)  # a game keeps the format it began in
    row = make_row(
        game.game_id,
        game.last_seq + 1,
        COMMAND,
        actor,
        body,
        now,
        game.rows[-1].hash,
        state_hash(table),
        command_id,
        version=version,
        server_seed=game.server_seed,
    )
    done = Advance([row], [table], [tuple(facts)], Batch(rows=[row]))
    return _with_reveal(game, done, now) if fold.is_over(game.engine, table) else done


def _with_reveal(game: LiveGame, done: Advance, now: str) -> Advance:
    """A command that ends the game brings the seed reveal and the game's outcome rows,
    written in the same commit."""
    after, table = done.rows[-1], done.tables[-1]
    body = record_pb2.SeedReveal(server_seed=game.server_seed).SerializeToString()
    reveal = make_row(
        game.game_id,
        after.seq + 1,
        SEED_REVEAL,
        "server",
        body,
        now,
        after.hash,
        state_hash(table),
        version=record_version(game.genesis),
    )
    revealed: Fact = {"type": "seed_revealed", "server_seed": game.server_seed.hex()}
    facts = [*done.facts, (revealed,)]
    ending = Ending(game.genesis, table, [*game.facts, *facts], reveal.seq)
    batch = Batch(rows=[*done.rows, reveal], outcomes=outcome_rows(ending))
    return Advance([*done.rows, reveal], [*done.tables, table], facts, batch)


def begun_and_advanced(game: LiveGame, done: Advance) -> Batch:
    """The batch of a game that waited for seat entropy, begun and advanced in one commit:
    its genesis row, then the rows ``done`` adds (the stream folds them on: the folded
    game handed with it holds the genesis alone)."""
    return Batch(
        rows=[game.rows[0], *done.batch.rows],
        started=[game.game_id],
        outcomes=done.batch.outcomes,
    )


def refusal(
    game: LiveGame,
    sender: str,
    command_id: str,
    body: bytes,
    error: Exception,
    unstored: int,
    now: str,
    foreign: bool = False,
) -> Rejection:
    """A refused command as the store keeps it: bounded, with its status and rule
    (``foreign``: sent with another game's seat token, kept without its body)."""
    code, reason, message, metadata = refusal_of(error)
    body, message = stored_refusal(body, message, unstored, foreign)
    return Rejection(
        game.game_id,
        game.last_seq,
        sender,
        command_id,
        body,
        code.value,
        reason,
        metadata.get("rule_id", ""),
        message,
        now,
    )


def begun(openings: Sequence[Opening]) -> dict[str, LiveGame]:
    """What a commit that makes games hands the stream: each game that begins at once
    (none waits for seat entropy), folded, so that it is live here from its commit on."""
    return {o.genesis.game_id: o.game for o in openings if o.game is not None}
