"""Regenerate the Python (and .pyi) code beside proto/feastlog/v1/*.proto.

python scripts/gen_proto.py           # rewrite the generated files
python scripts/gen_proto.py --check   # exit 1 when they are stale (CI)
"""

from __future__ import annotations

import filecmp
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = PROTO_ROOT / "feastlog" / "v1"
GENERATED = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")


def generate(out: Path) -> None:
    """Run protoc with the grpc and mypy plugins into ``out``."""
    well_known = str(resources.files("grpc_tools") / "_proto")
    sources = sorted(str(p.relative_to(PROTO_ROOT)) for p in PACKAGE.glob("*.proto"))
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *sources,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


def generated_files(folder: Path) -> list[str]:
    """The generated file names in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(GENERATED))


def main() -> int:
    """Regenerate, or with --check compare against a fresh generation."""
    check = "--check" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        generate(out)
        fresh_dir = out / "feastlog" / "v1"
        fresh = generated_files(fresh_dir)
        if check:
            stale = fresh != generated_files(PACKAGE) or any(
                not filecmp.cmp(fresh_dir / name, PACKAGE / name, shallow=False) for name in fresh
            )
            if stale:
                print("generated code is stale: run python scripts/gen_proto.py")
                return 1
            print("generated code is up to date")
            return 0
        for name in generated_files(PACKAGE):
            (PACKAGE / name).unlink()
        for name in fresh:
            shutil.copyfile(fresh_dir / name, PACKAGE / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
