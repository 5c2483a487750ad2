"""feastlog's tables in PostgreSQL: those of the DuckDB store, in PostgreSQL's types, in a
schema of their own."""

from __future__ import annotations

import re

from feastlog.service.store import projection

SCHEMA_NAME = "feastlog"
# payload "GAME_ID SEQ": a game's last seq a placement gave a position (``placing.py``)
NOTIFY_CHANNEL = "feastlog_rows"

TABLES = """
CREATE TABLE IF NOT EXISTS events (
    game_id text NOT NULL,
    seq bigint NOT NULL,
    kind text NOT NULL,
    actor text NOT NULL,
    command_id text NOT NULL,
    body bytea NOT NULL,
    recorded_at text NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    state_hash text NOT NULL,
    commitment text NOT NULL DEFAULT '',
    PRIMARY KEY (game_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS events_command_ids
    ON events (game_id, actor, command_id) WHERE command_id <> '';
CREATE TABLE IF NOT EXISTS rejections (
    game_id text NOT NULL,
    after_seq bigint NOT NULL,
    actor text NOT NULL,
    command_id text NOT NULL,
    body bytea NOT NULL,
    status text NOT NULL,
    reason text NOT NULL,
    rule_id text NOT NULL,
    message text NOT NULL,
    recorded_at text NOT NULL
);
CREATE INDEX IF NOT EXISTS rejections_by_game ON rejections (game_id);
CREATE TABLE IF NOT EXISTS seats (
    game_id text NOT NULL,
    seat integer NOT NULL,
    name text NOT NULL,
    token_sha256 text NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS seats_by_token ON seats (token_sha256);
CREATE TABLE IF NOT EXISTS seeds (
    game_id text PRIMARY KEY,
    server_seed bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS pending_games (
    game_id text PRIMARY KEY,
    draft bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS seat_entropy (
    game_id text NOT NULL,
    seat integer NOT NULL,
    entropy bytea NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS packs (
    sha256 text PRIMARY KEY,
    game_kind text NOT NULL,
    pack_id text NOT NULL,
    body bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id text PRIMARY KEY,
    n bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    created_at text NOT NULL,
    game_kind text NOT NULL,
    tournament_id text NOT NULL,
    players text[] NOT NULL
);
CREATE INDEX IF NOT EXISTS games_by_tournament ON games (tournament_id);
CREATE TABLE IF NOT EXISTS meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE IF NOT EXISTS arbiters (
    name text PRIMARY KEY,
    key_sha256 text NOT NULL,
    added_at text NOT NULL,
    revoked_at text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS arbiters_by_key ON arbiters (key_sha256);
CREATE TABLE IF NOT EXISTS log_tree (
    one integer PRIMARY KEY CHECK (one = 1),
    size bigint NOT NULL
);
INSERT INTO log_tree VALUES (1, 0) ON CONFLICT (one) DO NOTHING;
CREATE TABLE IF NOT EXISTS log_leaves (
    position bigint PRIMARY KEY,
    game_id text NOT NULL,
    seq bigint NOT NULL,
    leaf_hash bytea NOT NULL,
    UNIQUE (game_id, seq)
);
CREATE TABLE IF NOT EXISTS log_pending (
    n bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    game_ids text[] NOT NULL,
    seqs bigint[] NOT NULL,
    leaf_hashes bytea[] NOT NULL
);
CREATE TABLE IF NOT EXISTS tree_heads (
    size bigint NOT NULL,
    root text NOT NULL,
    signed_at text NOT NULL,
    public_key text NOT NULL,
    signature text NOT NULL
);
CREATE TABLE IF NOT EXISTS cosignatures (
    size bigint NOT NULL,
    root text NOT NULL,
    signed_at text NOT NULL,
    server_key text NOT NULL,
    witness_key text NOT NULL,
    witnessed_at text NOT NULL,
    signature text NOT NULL
);
CREATE TABLE IF NOT EXISTS server_keys (
    public_key text PRIMARY KEY,
    first_used text NOT NULL
);
"""

# Seat links (``EventStore.add_seat_code``…): a seat's unused one-time code (one a seat:
# a new one replaces it in one statement, whichever node makes it) and the browser
# sessions codes opened, each by its sha256 alone; ``n`` numbers the sessions in the
# order they were opened (the oldest go first past the bound).
SEAT_LINKS = """
CREATE TABLE IF NOT EXISTS seat_codes (
    code_sha256 text PRIMARY KEY,
    game_id text NOT NULL,
    seat integer NOT NULL,
    UNIQUE (game_id, seat)
);
CREATE TABLE IF NOT EXISTS seat_sessions (
    session_sha256 text PRIMARY KEY,
    game_id text NOT NULL,
    seat integer NOT NULL,
    n bigint GENERATED ALWAYS AS IDENTITY UNIQUE
);
"""

# DuckDB's column types as PostgreSQL spells them (the projection's DDL is DuckDB's).
_TYPES = {
    "VARCHAR": "text",
    "BLOB": "bytea",
    "JSON": "jsonb",
    "INTEGER": "integer",
    "DOUBLE": "double precision",
}


def projection_schema() -> str:
    """The outcomes projection's tables in PostgreSQL's types."""
    ddl = projection.schema()
    return re.sub(r"\b(VARCHAR|BLOB|JSON|INTEGER|DOUBLE)\b", lambda m: _TYPES[m.group(1)], ddl)
