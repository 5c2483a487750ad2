"""Text from outside: numbers in plain ASCII digits, names and ids free of control characters.

Requests (a viewer ``seat:2``, a rule option, a page token) and records name numbers in
text.  Python's ``int`` takes far more than digits: other scripts' digits (``'١'``),
fullwidth ones (``'３'``), spaces around, a sign and underscores (``' +3_0 '``).
``plain_number`` takes only ASCII digits, so one number has one spelling.

Names, ids and reasons are stored in records and printed on terminals and pages, so they
hold no character that moves the cursor, clears the screen, ends a line, reorders text or
hides in it: ``unprintable`` finds the first such character (the service refuses the
text), ``escaped`` spells every such character out (for text already stored).

A value sent in a call's header is printable ASCII (``fits_header``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# Any number a request names (a seat, a seq, a place in a list) has fewer digits; so does
# any int64.  A longer string of digits is refused rather than turned into a huge int.
MOST_DIGITS = 18

# Control characters (Cc: C0, DEL, C1), format characters (Cf: bidi overrides and
# isolates, marks, zero-width spaces, the BOM, soft hyphens, tags), lone surrogates (Cs)
# and the line and paragraph separators (Zl, Zp).
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# The two format characters that ordinary names need: the zero-width joiner builds emoji
# sequences (👩‍🍳) and both joiners shape letters in scripts such as Persian and Hindi.
JOINERS = frozenset("\u200c\u200d")
# The one use of tag characters in ordinary text: a subdivision flag (🏴 + tags + cancel
# tag, as for Scotland).  Tags anywhere else hide text, so they are refused.
FLAG_TAGS = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")


def fits_header(text: str) -> bool:
    """Whether ``text`` can be a call's header value (a token, a key, a routing header):
    printable ASCII.  gRPC refuses any other header value itself, with log lines of its
    own and INTERNAL."""
    return text.isascii() and text.isprintable()


def plain_number(text: str) -> int | None:
    """``text`` as a whole number when it is 1 to MOST_DIGITS ASCII digits, else None."""
    if not 0 < len(text) <= MOST_DIGITS or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def _unprintable_at(text: str) -> Iterator[int]:
    """The positions of the characters a name, id or reason may not hold."""
    if text.isprintable():  # nearly always: no character of Python's "Other" or "Separator"
        return
    flags = {i for found in FLAG_TAGS.finditer(text) for i in range(*found.span())}
    for i, char in enumerate(text):
        if (
            i not in flags
            and char not in JOINERS
            and unicodedata.category(char) in REFUSED_CATEGORIES
        ):
            yield i


def unprintable(text: str) -> str | None:
    """The first character ``text`` may not hold as a name, id or reason, in words
    (``U+001B ESCAPE at character 3``), or None when it holds none.

    Refused: control characters (Unicode category Cc, newlines and tabs included),
    format characters (Cf: bidi overrides and isolates, zero-width spaces, the BOM, tag
    characters) other than the zero-width joiner and non-joiner, and the line and
    paragraph separators (Zl, Zp).  Letters, marks, digits, punctuation, symbols, emoji
    (flags of subdivisions included) and spaces of any script are all taken.
    """
    first = next(_unprintable_at(text), None)
    if first is None:
        return None
    char = text[first]
    name = unicodedata.name(char, "") or _CONTROL_NAMES.get(char, "a control character")
    if unicodedata.category(char) == "Cs":
        name = "a lone surrogate"
    return f"U+{ord(char):04X} {name} at character {first + 1}"


def escaped(text: str) -> str:
    """``text`` safe to print: each character ``unprintable`` finds spelt as ``\\x1b``,
    ``\\u202e`` or ``\\U000e0041``; everything else (backslashes too) as it is."""
    found = set(_unprintable_at(text))
    if not found:
        return text
    return "".join(_escape(c) if i in found else c for i, c in enumerate(text))


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# unicodedata has no names for the C0 and C1 controls: the common ones, for messages
_CONTROL_NAMES = {
    "\x00": "NULL",
    "\t": "CHARACTER TABULATION",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
}
