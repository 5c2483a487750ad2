"""Cut the snapshot of the released protos that CI's ``buf breaking`` compares against.

python scripts/proto_snapshot.py --ref v0.2.0   # from a tag (or any git ref)
python scripts/proto_snapshot.py                # from the working tree (at a tagged checkout)

It writes ``proto/released/feastlog-v1.json``: a buf image (JSON, indented so a change of
the released API reads as a diff, without source info) of the ``proto/`` module, and
``proto/released/SOURCE`` naming where it came from. A CI clone may carry no tags, so CI
reads the committed file, never the tag. ``buf`` is taken from $BUF, else from PATH
(``npm install --prefix DIR @bufbuild/buf@1.75.0`` puts it in DIR/node_modules/.bin).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELEASED = ROOT / "proto" / "released"
SNAPSHOT = RELEASED / "feastlog-v1.json"


def buf() -> str:
    """The buf executable."""
    found = os.environ.get("BUF") or shutil.which("buf")
    if not found:
        raise SystemExit("no buf: set BUF or put buf on PATH (npm install @bufbuild/buf@1.75.0)")
    return found


def export(ref: str, into: Path) -> None:
    """buf.yaml and proto/ as they are at ``ref``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "buf.yaml", "proto"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def image(workspace: Path) -> dict[str, object]:
    """The buf image of the workspace's module, as JSON data."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "image.json"
        subprocess.run(
            [buf(), "build", str(workspace), "--exclude-source-info", "-o", str(out)], check=True
        )
        data: dict[str, object] = json.loads(out.read_text())
    return data


def main() -> int:
    """Write the snapshot from ``--ref`` or the working tree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", help="a tag or other git ref (default: the working tree)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = ROOT
        if args.ref:
            workspace = Path(tmp)
            export(args.ref, workspace)
        data = image(workspace)
    commit = ""
    if args.ref:
        commit = subprocess.run(
            ["git", "rev-parse", f"{args.ref}^{{commit}}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    RELEASED.mkdir(exist_ok=True)
    SNAPSHOT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    source = f"{args.ref} {commit}" if args.ref else "working tree"
    (RELEASED / "SOURCE").write_text(source + "\n")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)} from {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
