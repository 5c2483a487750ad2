"""Records built without a server, and stored in DuckDB files (shared with bench-audit)."""

from feastlog.service.bench.data import NAMES, Built, build, games_batch, store_games

__all__ = ["NAMES", "Built", "build", "games_batch", "store_games"]
