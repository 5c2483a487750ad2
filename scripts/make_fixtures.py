"""Record golden games through a real (embedded) server into tests/fixtures/.

    python scripts/make_fixtures.py bon-appetit 3 1   # kind, players, seed byte

Games are recorded under the game's current ruleset version, which the file name says.

Each fixture is one JSON file: the server seed, the content pack and every stored row.
The tests refold them and compare every hash, so a released ruleset can never drift.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from feastlog.cli.wire import new_game, play_with_bots
from feastlog.replay.record.history import genesis_of
from feastlog.service.grpc.server import create_server
from feastlog.service.store import StoredGame
from feastlog.service.store.duckdb import Store
from feastlog.v1 import game_service_pb2_grpc as pb_grpc

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
NAMES = ("Ann", "Brian", "Celia", "Dev", "Eve", "Farid")


async def record(db_path: str, kind: str, players: int, seed_byte: int) -> str:
    """Play one bot game with a supplied seed; return its game id."""
    import grpc

    running = await create_server(db_path, "127.0.0.1:0")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            seed = bytes([seed_byte]) * 32
            game = await new_game(stub, running.organiser_key, kind, NAMES[:players], seed)
            tokens = [t.token for t in game.seat_tokens]
            await play_with_bots(stub, game.game_id, tokens, seed_byte)
            return game.game_id
    finally:
        await running.stop()


def as_json(stored: StoredGame) -> dict[str, object]:
    """A stored game as fixture JSON."""
    return {
        "format": "feastlog-fixture-1",
        "server_seed": stored.server_seed.hex(),
        "pack": stored.pack_body.decode("utf-8"),
        "rows": [{**vars(row), "body": row.body.hex()} for row in stored.rows],
    }


def main() -> int:
    """Record one fixture."""
    kind, players, seed_byte = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with tempfile.TemporaryDirectory() as tmp:
        db_path = str(Path(tmp) / "fixture.duckdb")
        game_id = asyncio.run(record(db_path, kind, players, seed_byte))
        store = Store(db_path, read_only=True)
        stored = store.load(game_id)
        store.close()
    assert stored is not None
    ruleset = genesis_of(stored.rows[0]).ruleset_version
    out = FIXTURES / f"{kind}-ruleset{ruleset}-{players}p-seed{seed_byte}.json"
    out.write_text(json.dumps(as_json(stored), indent=1) + "\n")
    print(f"wrote {out} ({len(stored.rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
