"""The input policy: what each request field takes, declared once, by field name.

Every field has a bound (characters for a string, bytes for bytes) and a rule for its
characters (``Characters``).  ``FIELDS`` names them in any request message, at any depth;
a field it does not name takes a default (``STRING``, ``BYTES``, ``OPTION``), and a test
holds every string field of every request to being named here or to being a word of a
game's own command, which ``STRING`` is for.  A list or a map takes ``LIST_BOUND``
entries.

The policy is applied in one place to every request: the gRPC guard's check of its fields
(``service.grpc.guard.check_fields``), which the CLI's offline reads hold their requests
to as well.  Inputs that come another way are held to the same rules through ``Field``:
the game id in a web page's path (``checked``) and the names an imported record carries
(``service.app.season``).  Nothing here imports gRPC.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from feastlog.replay.games.text import unprintable
from feastlog.service.app.errors import BadRequest, FieldTooLong

KIB = 1024
LIST_BOUND = 64  # entries of any list or map (a hand, a bid, the players, the options)
# what a feed's position of its earlier format is told (``service.app.feed``)
EARLIER_POSITION = (
    "of the feed's earlier format (a compressed map of every game's seq), which this "
    "server no longer reads: watch again without a position (from the start), or from a "
    "position the feed gave since"
)


class Characters(Enum):
    """Which characters a field's value may hold."""

    # names, ids, reasons, notes and a command's words are stored in records and printed
    # on terminals and pages: none of the characters ``replay.games.text.unprintable`` finds
    # (control, line-break, bidi or invisible format characters); any script's letters,
    # marks, digits, punctuation, symbols, emoji and spaces are taken
    PLAIN = "plain"
    # not text (a seed, entropy, a pack's file): any bytes; a pack's own words are held
    # to PLAIN when it is read (``service.app.commands.pack_text``)
    BYTES = "bytes"


@dataclass(frozen=True)
class Field:
    """What one field takes: its longest value and its characters."""

    bound: int
    characters: Characters = Characters.PLAIN
    note: str = ""  # said after the bound when a value is longer

    def refused_character(self, value: str | bytes) -> str | None:
        """The first character the value may not hold, in words (``U+001B ESCAPE at
        character 3``), or None."""
        if self.characters is Characters.PLAIN and isinstance(value, str):
            return unprintable(value)
        return None

    def check(self, value: str | bytes, path: str) -> None:
        """FieldTooLong or BadRequest naming ``path`` (where the value is in its request)
        unless the value is within the bound and of the characters this field takes."""
        if len(value) > self.bound:
            unit = "characters" if isinstance(value, str) else "bytes"
            note = f": {self.note}" if self.note else ""
            raise FieldTooLong(
                f"{path} is {len(value)} {unit} long; it takes at most {self.bound}{note}",
                field=path,
                limit=str(self.bound),
            )
        found = self.refused_character(value)
        if found is not None:
            raise BadRequest(
                f"{path} holds {found}: names, ids and reasons are plain text, with no "
                "control, line-break, bidi or invisible format characters",
                field=path,
            )


# Each field by its name in any request message.  Ids are far shorter than their bounds
# (game ids are 18 characters); texts are an arbiter's notes and reasons.
FIELDS: dict[str, Field] = {
    "game_id": Field(64),
    "other_game_id": Field(128),  # a typed actor's or viewer's seat of another game
    "command_id": Field(128),
    "tournament_id": Field(64),
    "players": Field(40),  # each player's name
    "game_kind": Field(32),
    "viewer": Field(32),
    "actor": Field(32),
    "text": Field(2000),  # a note's
    "reason": Field(500),
    "claim": Field(1000),  # a seat's call to the arbiter, in its words
    "ruled_by": Field(128),  # the server writes the ruler's name over what is sent
    "name": Field(40),  # a named arbiter's, a tournament player's
    "first": Field(40),  # the players of a tournament's swap
    "second": Field(40),
    "penalty": Field(32),  # a tournament penalty's kind
    "byes": Field(40),  # the names of the players a fixed round gives a bye
    "format": Field(64),  # each tournament format option's key and value
    "page_token": Field(128),
    # WatchAll's token (22 characters) or an SSE feed's event id (a log position); the
    # earlier format's tokens (a compressed map of every game's seq) ran to 48 KiB
    "position": Field(64, note="a longer one is " + EARLIER_POSITION),
    "options": Field(64),  # each rule option's key and value
    # a witness's cosignature of a head (ProofService.AddCosignature): hex and RFC 3339
    "root": Field(64),
    "signed_at": Field(40),
    "witnessed_at": Field(40),
    "public_key": Field(64),
    "witness_key": Field(64),
    "signature": Field(128),
    "seed": Field(32, Characters.BYTES),
    "entropy": Field(1024, Characters.BYTES),
    # an organiser's own pack: the shipped ones are 3-16 KB, 400 cards about 50 KB.  It is
    # read on the event loop, and TOML is read at about 0.5 MB/s at worst (1 MB of small
    # numbers took 2.3 s), so a larger one would stall every game meanwhile
    "content_pack": Field(128 * KIB, Characters.BYTES),
    # where the server writes a backup (AdminService.Backup): a path on its machine, as
    # long as Linux allows one (PATH_MAX)
    "path": Field(4096),
}
# Any other string: the words of a game's own command (card ids, ingredients, recipes,
# items), which its rules then look up; any other bytes; a map's keys and values unless
# the map is named (the ``key`` and ``value`` of its entries).
STRING = Field(128)
BYTES = Field(1024, Characters.BYTES)
OPTION = FIELDS["options"]

# The bounds alone, by field name (the CLI's check of a pack's size before it sends it).
FIELD_BOUNDS: dict[str, int] = {name: field.bound for name, field in FIELDS.items()}


def field_of(name: str, is_bytes: bool = False) -> Field:
    """What the field of this name takes (``is_bytes``: a bytes field, for the default)."""
    return FIELDS.get(name, BYTES if is_bytes else STRING)


def checked(name: str, value: str) -> str:
    """``value`` when the field ``name`` takes it, else the refusal naming the field."""
    field_of(name).check(value, name)
    return value
