"""Records made row by row without a server, through the fold the service uses (calls,
answers, rewinds included): for the table's rule and property tests."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import Engine, Fact
from feastlog.replay.games.fold import Table, state_hash
from feastlog.replay.record.history import begin, new_genesis
from feastlog.replay.record.rows import COMMAND, CURRENT_VERSION, SEED_REVEAL, Row, make_row
from feastlog.replay.table import desk
from feastlog.v1 import record_pb2


@dataclass
class Recorder:
    """A game's record as it grows: rows, the table after each, the facts of each."""

    kind: str
    players: int = 3
    seed_byte: int = 1
    engine: Engine = field(init=False)
    seed: bytes = field(init=False)
    pack_bytes: bytes = field(init=False)
    rows: list[Row] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    facts: list[list[Fact]] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    times: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.engine = games.engine(self.kind)
        self.seed = bytes([self.seed_byte]) * 32
        self.pack_bytes = self.engine.default_pack_bytes()
        pack = self.engine.load_pack(self.pack_bytes)
        names = ("Ann", "Brian", "Celia", "Dev", "Eve", "Farid")[: self.players]
        genesis = new_genesis(
            f"g_table{self.seed_byte:03d}",
            self.kind,
            names,
            {},
            self.pack_bytes,
            pack,
            self.seed,
            "2026-01-01T00:00:00Z",
        )
        genesis.options.update(self.options)
        row, table, facts = begin(genesis, self.seed, pack)
        self.rows, self.tables, self.facts = [row], [table], [facts]

    @property
    def table(self) -> Table:
        """The table after the last row."""
        return self.tables[-1]

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return fold.is_over(self.engine, self.table)

    def send(self, actor: str, command: record_pb2.Command) -> list[Fact]:
        """Fold one command (raising its refusal) and append its row; then the reveal."""
        seq = len(self.rows) + 1
        at = desk.At(seq, self.tables, self.time(seq))
        table, facts = fold.step(self.engine, self.table, actor, command, at)
        self._append(COMMAND, actor, command.SerializeToString(deterministic=True), table, facts)
        if fold.is_over(self.engine, table):
            body = record_pb2.SeedReveal(server_seed=self.seed).SerializeToString()
            self._append(SEED_REVEAL, "server", body, table, [])
        return facts

    def time(self, seq: int) -> str:
        """When row ``seq`` is recorded: ``self.times`` if it names it, else a second a row."""
        return self.times.get(
            seq, f"2026-01-01T{seq // 3600:02d}:{seq // 60 % 60:02d}:{seq % 60:02d}Z"
        )

    def _append(self, kind: str, actor: str, body: bytes, table: Table, facts: list[Fact]) -> None:
        prev = self.rows[-1]
        row = make_row(
            prev.game_id,
            prev.seq + 1,
            kind,
            actor,
            body,
            self.time(prev.seq + 1),
            prev.hash,
            state_hash(table),
            f"c{prev.seq + 1}" if kind == COMMAND else "",
            version=CURRENT_VERSION,
            server_seed=self.seed,
        )
        self.rows.append(row)
        self.tables.append(table)
        self.facts.append(facts)

    def move(self, chooser: random.Random) -> tuple[str, record_pb2.Command]:
        """A random legal move of a seat to act, sent."""
        seat = chooser.choice(sorted(self.engine.to_act(self.table.game)))
        inner = chooser.choice(self.engine.legal_commands(self.table.game, seat))
        command = fold.wrap_command(self.engine.spec.command_field, inner)
        self.send(f"seat:{seat}", command)
        return f"seat:{seat}", command

    def call(self, seat: int, about: int, claim: str, hold: bool = False) -> int:
        """Seat ``seat`` calls the arbiter; the call's id (its seq)."""
        made = record_pb2.SeatCall(about_seq=about, claim=claim, hold=hold)
        self.send(f"seat:{seat}", record_pb2.Command(call=made))
        return len(self.rows) if not self.over else len(self.rows) - 1

    def rule(self, ruling: record_pb2.ArbiterCommand) -> list[Fact]:
        """An arbiter's ruling."""
        return self.send("arbiter", record_pb2.Command(arbiter=ruling))


def rewind_ruling(
    to_seq: int, call: int = 0, reason: str = "play it again"
) -> record_pb2.ArbiterCommand:
    """A rewind to ``to_seq`` (upholding ``call`` when given)."""
    ruling = record_pb2.ArbiterCommand(reason=reason, ruled_by="ada")
    ruling.rewind.to_seq = to_seq
    if call:
        ruling.answers_call, ruling.verdict = call, record_pb2.CALL_VERDICT_UPHELD
    return ruling
