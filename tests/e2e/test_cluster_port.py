"""scripts/cluster.py names the port it cannot take, before it starts anything."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from scripts.cluster import STATE, ClusterError, up


def test_a_taken_port_is_named_and_nothing_starts(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ClusterError) as taken:
            up(tmp_path / "cluster", 1, port)
    assert f"port {port}" in str(taken.value) and "--port 0" in str(taken.value)
    assert not (tmp_path / "cluster" / STATE).exists()
    assert not (tmp_path / "cluster" / "postgres").exists()
