"""Move a branch begun before the rename onto the installed names (one-off; delete once
every branch has it): replay, service and cli become feastlog.replay, feastlog.service
and feastlog.cli.

python scripts/rename_to_feastlog.py     # from the repository's root
ruff check --fix . && ruff format . && pip install -e '.[dev]'

It rewrites imports and module paths written as strings ("replay.x",
resources.files("replay"), "from cli.main import main") in replay/, service/, cli/,
tests/ and scripts/, and makes the symlinks under proto/feastlog/. pyproject.toml is
already right on a branch that merged the rename; a file added since is rewritten too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("replay", "service", "cli", "tests", "scripts")
OLD = "replay|service|cli"
FROM = re.compile(rf"^(\s*)from ({OLD})(\.[\w.]+)? import ", re.M)
IMPORT = re.compile(rf"^(\s*)import ({OLD})(\.[\w.]+)?(\s|$)", re.M)
STRING = re.compile(rf"""(["'])({OLD})\.(?=[\w{{])""")
RESOURCES = re.compile(r"""resources\.files\((["'])replay\1\)""")
CODE = re.compile(rf"""(["'])from ({OLD})\.""")  # python -c "from cli.main import main; …"
# the state-format page names classes by their source folder; its test says so itself
KEEP = ('"replay.fold.Table"',)


def renamed(text: str) -> str:
    """``text`` with the old top-level names moved under feastlog."""
    text = FROM.sub(lambda m: f"{m[1]}from feastlog.{m[2]}{m[3] or ''} import ", text)
    text = IMPORT.sub(lambda m: f"{m[1]}import feastlog.{m[2]}{m[3] or ''}{m[4]}", text)
    for kept in KEEP:
        text = text.replace(kept, kept.replace("replay.", "\0"))
    text = STRING.sub(r"\1feastlog.\2.", text)
    for kept in KEEP:
        text = text.replace(kept.replace("replay.", "\0"), kept)
    text = CODE.sub(r"\1from feastlog.\2.", text)
    return RESOURCES.sub('resources.files("feastlog.replay")', text)


def main() -> None:
    """Rewrite every module, then make the symlinks."""
    if not (ROOT / "proto" / "feastlog").is_dir():
        raise SystemExit("run this in a feastlog checkout")
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == Path(__file__).name:
                continue
            text = path.read_text()
            new = renamed(text)
            if new != text:
                path.write_text(new)
                print(f"rewrote {path.relative_to(ROOT)}")
    for name in ("replay", "service", "cli"):
        link = ROOT / "proto" / "feastlog" / name
        if not link.is_symlink():
            os.symlink(f"../../{name}", link)
            print(f"linked proto/feastlog/{name} -> ../../{name}")


if __name__ == "__main__":
    main()
