"""The rules at the table (calls, holds, answers, rewinds): ids, where they come from,
and what they say.  ``replay/table/desk.py`` checks them; the fold's catalogue includes them."""

from __future__ import annotations

from collections.abc import Mapping

from feastlog.replay.games.engine import Rule, catalogue

# the Command members that are the table's, not a game's: public at the table
TABLE_MEMBERS = ("call", "clock")

OPEN_CALLS = 5  # open calls a seat may have at once: a call costs the arbiter's time

TABLE_RULES: Mapping[str, Rule] = catalogue(
    Rule(
        "FL-CALL-ROW", "feastlog table", "A call is about a row of the record: 1 to its last seq."
    ),
    Rule("FL-CALL-CLAIM", "feastlog table", "A call says in words what it claims."),
    Rule(
        "FL-CALL-LIMIT",
        "feastlog table",
        f"A seat has at most {OPEN_CALLS} calls open at once.",
    ),
    Rule(
        "FL-CALL-SECOND-HOLD",
        "feastlog table",
        "One call at a time holds the game: a second hold waits for the first answer.",
    ),
    Rule(
        "FL-CALL-ALTERNATIVE",
        "feastlog table",
        "A call's alternative is a command of this game.",
    ),
    Rule(
        "FL-CALL-HOLD",
        "feastlog table",
        "While a call holds the game no seat moves, until the arbiter answers it.",
    ),
    Rule("FL-CALL-UNKNOWN", "feastlog table", "A ruling answers a call the record holds."),
    Rule("FL-CALL-ANSWERED", "feastlog table", "A call is answered once."),
    Rule(
        "FL-CALL-VERDICT",
        "feastlog table",
        "A ruling that answers a call upholds or denies it; only such a ruling has a verdict.",
    ),
    Rule(
        "FL-REWIND-TARGET",
        "feastlog table",
        "A rewind goes back to a row before it, after the genesis at the earliest.",
    ),
    Rule(
        "FL-REWIND-RULING",
        "feastlog table",
        "A rewind never goes back past an earlier rewind: that would abandon its ruling.",
    ),
    Rule(
        "FL-CLOCK-OPTION",
        "feastlog table",
        "A clock is bank:SECONDS+INCREMENT (bank 10 to 86,400 s, increment 0 to 3,600 s) or "
        "move:SECONDS (5 to 86,400 s); clock_timeout is arbiter, forfeit or pass.",
    ),
    Rule("FL-CLOCK-NONE", "feastlog table", "Only a game with clocks has clocks to pause."),
    Rule(
        "FL-CLOCK-PAUSED",
        "feastlog table",
        "The arbiter pauses running clocks and resumes paused ones.",
    ),
    Rule(
        "FL-CLOCK-EARLY",
        "feastlog table",
        "A time-out is recorded only once a running seat's time is spent.",
    ),
    Rule(
        "FL-CLOCK-TIMEOUT",
        "feastlog table",
        "A time-out calls the arbiter, the game held, and the seat plays on without a "
        "clock (with clock_timeout=forfeit it forfeits); with clock_timeout=pass the seat "
        "passes instead, where the rulebook lets it.",
    ),
    Rule("FL-CLOCK-SERVER", "feastlog table", "Only the server records a time-out."),
    Rule("FL-CLOCK-TIME", "feastlog table", "A clocked game's rows carry RFC 3339 times."),
    Rule(
        "FL-REWIND-NOTHING",
        "feastlog table",
        "A rewind takes back at least one seat move.",
    ),
)
