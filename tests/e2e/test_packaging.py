"""Installed under one name: the wheel holds feastlog (and its dist-info), nothing else.

The folders replay/, service/ and cli/ stay at the top of the repository; proto/feastlog/
holds a symlink to each, so the wheel carries them as feastlog.replay, feastlog.service and
feastlog.cli, with the games' packs and the replay page's assets.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# what a wheel is not built from; setuptools' own build/ left in a checkout would carry
# modules deleted since into the wheel
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", "*_cache", "node_modules"
)


def test_the_wheel_installs_everything_under_feastlog(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy, so the build writes nothing into the checkout
    shutil.copytree(ROOT, source, symlinks=True, ignore=LEFT_OUT)
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("feastlog-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"feastlog"}
    for module in (
        "feastlog/v1/game_service_pb2.py",
        "feastlog/replay/games/fold.py",
        "feastlog/service/grpc/server.py",
        "feastlog/cli/main.py",
    ):
        assert module in names
    # data the code reads at run time: each game's content pack and the page's assets
    games = {n.split("/")[3] for n in names if n.startswith("feastlog/replay/games/")}
    for game in ("bon_appetit", "menu_masters", "picky_eaters"):
        assert game in games
        assert any(
            n.startswith(f"feastlog/replay/games/{game}/") and n.endswith(".toml") for n in names
        )
    assert any(n.startswith("feastlog/presentation/page/") and n.endswith(".js") for n in names)
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "feastlog = feastlog.cli.entry:main" in zipfile.ZipFile(wheel).read(entry).decode()
