"""What acts after a commit, as docs/architecture.md's path of one command tells it
(step 6, Publish), is what the application subscribes to the stream of committed rows,
in the same order: the doc names each subscriber by its class and method."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
APPLICATION = ROOT / "service" / "app" / "application.py"
# What each attribute of the application is, by the class it is made from.
MADE = re.compile(r"self\.(\w+)(?::\s*\w+)?\s*=\s*(\w+)\(")


def subscribed() -> list[str]:
    """``Class.method`` of every subscriber ``Application.__init__`` names, in order."""
    source = APPLICATION.read_text()
    classes = dict(MADE.findall(source))
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "subscribe":
            target = node.args[1]
            assert isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute)
            out.append(f"{classes[target.value.attr]}.{target.attr}")
    return out


def told() -> list[str]:
    """The subscribers step 6 of the doc names, in the order it names them."""
    step = DOC.read_text().split("6. **Publish**", 1)[1].split("7. **Answer**", 1)[0]
    step = step.split("The subscribers", 1)[1].split("No\n   feature is called", 1)[0]
    return re.findall(r"`(\w+\.(?:committed|begun))`", step)


def test_the_doc_names_every_subscriber_in_order() -> None:
    found = subscribed()
    assert len(found) >= 6 and found[0] == "LiveGames.committed"  # memory first
    assert told() == found
