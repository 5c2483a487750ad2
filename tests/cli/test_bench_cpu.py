"""``feastlog bench`` tells where the CPU went: the server, its store process, the client."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from feastlog.cli.benchmarks.serving import (
    CpuShare,
    cpu_seconds,
    cpu_share,
    submit_only,
    with_children,
)
from feastlog.cli.wire import spawn_server

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def test_each_reading_is_divided_by_the_calls_made_between_it_and_the_one_before() -> None:
    start, checked, played = (1.0, 0.5, 2.0), (3.0, 0.7, 3.0), (9.0, 3.7, 7.0)
    share = cpu_share(start, checked, 100, played, 1000)
    assert share is not None
    assert vars(share) == pytest.approx(
        vars(
            CpuShare(server=0.006, store=0.003, client=0.004, check_server=0.022, check_client=0.01)
        )
    )
    assert cpu_share(None, checked, 100, played, 1000) is None
    line = share.line()
    assert "server 6.00 ms, its store process 3.00 ms, this client 4.00 ms (in all 13.00)" in line
    assert "health check: server 22.00 ms, client 10.00 ms (in all 32.00, 2.46 of" in line


def test_a_process_is_counted_with_its_children() -> None:
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    child = subprocess.Popen([sys.executable, "-c", burn + "time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while (cpu_seconds([child.pid]) or 0) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        family = with_children(os.getpid())
        assert family[0] == os.getpid() and child.pid in family
        mine = cpu_seconds([os.getpid()]) or 0.0
        # in clock ticks, as /proc counts them: 9.55 s + 0.3 s is 9.850000000000001 in
        # floating point, and a family of exactly 9.85 s failed.  One tick of slack: the
        # kernel splits a process's time into utime and stime anew at each read, each
        # rounded down, so their sum can read one tick less than a read before it did
        ticks = os.sysconf("SC_CLK_TCK")
        family_ticks = round((cpu_seconds(family) or 0.0) * ticks)
        assert family_ticks >= round(mine * ticks) + round(0.3 * ticks) - 1
    finally:
        child.kill()
        child.wait()


def test_a_submit_only_run_tells_the_cpu_of_the_server_its_store_and_the_client(
    tmp_path: Path,
) -> None:
    key = "org_" + secrets.token_urlsafe(32)
    proc, address = spawn_server(tmp_path / "bench.duckdb", key)
    try:
        done = asyncio.run(submit_only(address, key, "bon-appetit", 2, 2, server=proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert done.commands > 0 and done.cpu is not None
    cpu = done.cpu
    # every command costs the server, its store process (commits) and the client something
    assert cpu.server > 0 and cpu.store > 0 and cpu.client > 0
    assert cpu.check_server > 0 and cpu.check_client > 0
    assert cpu.line().startswith("CPU per command: server ")
