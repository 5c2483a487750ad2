"""Reading a replay page in the browser and comparing what it draws with a replay view.

Every value the page draws carries ``data-path`` (where it sits in the view) and
``data-v`` (its JSON).  ``table_matches`` checks that each drawn value is the view's value
at that path, that its text (or tooltip) shows it, that every value of the view is drawn
somewhere, and that a list drawn item by item has every item.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

# The page as drawn now: the seq shown, the bound elements with their text, the narration.
READ = """() => {
  // each bound element's text with the tooltips and labels inside it, in one walk
  const bound = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return node.data;
    if (node.nodeType !== Node.ELEMENT_NODE) return "";
    const title = node.getAttribute("title") || "";
    let out = " " + title + " " + (node.getAttribute("aria-label") || "");
    for (const child of node.childNodes) out += walk(child);
    if (node.dataset.path !== undefined) bound.push([node.dataset.path, node.dataset.v, out]);
    return out;
  };
  walk(document.getElementById("table"));
  return {
    seq: Number(document.body.dataset.seq),
    bound,
    lines: [...document.querySelectorAll("#now li:not(.refused):not(.quiet)")].map(
      (li) => li.textContent),
  };
}"""

# From the first step to the last with the → key (as a keydown the page's handler takes),
# reading the page at every ``every``-th step and at the last: one round trip for a game.
READ_EVERY_STEP = (
    "(every) => { const read = ("
    + READ
    + """);
  const out = [];
  window.feastlog.go(window.feastlog.seqs()[0]);
  for (let i = 0; ; i++) {
    const before = document.body.dataset.seq;
    if (i % every === 0) out.push(read());
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
    if (document.body.dataset.seq === before) {
      if (i % every !== 0) out.push(read());
      return out;
    }
  }
}"""
)

Path = tuple[str, ...]


def at(view: Any, path: Path) -> Any:
    """The value at ``path`` (KeyError/IndexError when the view has nothing there)."""
    value = view
    for key in path:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def leaves(value: Any, path: Path = ()) -> Iterator[Path]:
    """Every leaf path of a view; an empty list or object is a leaf too."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from leaves(item, (*path, str(i)))
    else:
        yield path


def shown_words(value: Any) -> Iterator[str]:
    """The strings and numbers a drawn value must show (booleans and nulls are marks)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, str | int | float):
        yield str(value).lower()
    elif isinstance(value, dict):
        for item in value.values():
            yield from shown_words(item)
    elif isinstance(value, list):
        for item in value:
            yield from shown_words(item)


def table_problems(view: dict[str, Any], bound: Sequence[Sequence[str]]) -> list[str]:
    """What the drawn table gets wrong against ``view`` (empty when it matches)."""
    problems = []
    drawn: dict[Path, Any] = {}
    for dotted, encoded, text in bound:
        path = tuple(dotted.split("."))
        drawn[path] = value = json.loads(encoded)
        try:
            expected = at(view, path)
        except (KeyError, IndexError, ValueError, TypeError):
            problems.append(f"{dotted} is drawn but not in the view")
            continue
        if expected != value:
            problems.append(f"{dotted}: drawn {value!r}, the view has {expected!r}")
        lowered = text.lower()
        problems += [f"{dotted}: {w!r} not shown" for w in shown_words(value) if w not in lowered]
    for leaf in leaves(view):
        if not any(leaf[:n] in drawn for n in range(len(leaf) + 1)):
            problems.append(f"{'.'.join(leaf)} is in the view but not drawn")
    items: dict[Path, set[str]] = {}
    for path in drawn:
        if path[:-1] in drawn:
            items.setdefault(path[:-1], set()).add(path[-1])
    for path, found in items.items():
        value = drawn[path]
        if isinstance(value, list) and found != {str(i) for i in range(len(value))}:
            problems.append(f"{'.'.join(path)}: items drawn {sorted(found)} of {len(value)}")
    return problems
