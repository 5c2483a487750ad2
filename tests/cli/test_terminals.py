"""The test terminals' launcher (``tests/terminalutil.py``): a terminal is forked only by
a process with no gRPC in it, and a fork beside gRPC's threads in a test process is
caught, so a terminal that now and then died before its command ran cannot come back
unseen."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect

from tests import terminalutil

ROOT = Path(__file__).resolve().parents[2]


def test_a_terminal_runs_its_command_with_its_size_and_exit_status() -> None:
    asks = (
        "import os, sys; print(os.get_terminal_size(), sys.stdin.isatty());"
        "print('hello', input('name: ')); sys.exit(3)"
    )
    terminal = terminalutil.spawn([sys.executable, "-c", asks], dict(os.environ), (60, 400))
    terminal.expect(r"columns=400, lines=60\) True")
    terminal.expect("name: ")
    terminal.sendline("Ann")
    terminal.expect("hello Ann")
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 3


def test_a_terminal_hung_up_ends_its_command() -> None:
    terminal = terminalutil.spawn([sys.executable, "-c", "input('name: ')"], dict(os.environ))
    terminal.expect("name: ")
    terminal.close(timeout=10)
    assert terminal.exitstatus != 0


def test_lines_typed_as_the_command_ends_go_nowhere_and_what_it_printed_is_read() -> None:
    """The launcher may end with typed lines unread: the socket then says ECONNRESET,
    which is the terminal's end, as typing into a finished terminal is lost."""
    ends = "import time; time.sleep(0.3); print('bye')"
    terminal = terminalutil.spawn([sys.executable, "-c", ends], dict(os.environ))
    terminal.delaybeforesend = None
    while terminal.launcher.poll() is None:
        terminal.sendline("typed ahead")
        time.sleep(0.005)
    for _ in range(20):  # past the launcher's end: typed into the void
        terminal.sendline("typed after")
    terminal.expect("bye")
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 0


def test_the_launcher_refuses_to_fork_with_grpc_loaded() -> None:
    launch = (
        "import grpc, runpy, sys\n"
        f"sys.argv = [{str(terminalutil.LAUNCHER)!r}, '24', '80', '--', 'echo', 'ran']\n"
        f"runpy.run_path({str(terminalutil.LAUNCHER)!r}, run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", launch], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == terminalutil.REFUSED, done.stderr
    assert "gRPC is imported" in done.stderr and "ran" not in done.stdout


def test_a_fork_beside_grpcs_threads_is_noted_and_one_without_them_is_not() -> None:
    """The names of gRPC's threads are grpcio's (1.85): a version that renames them
    fails here, not silently in the tripwire."""
    forks = (
        "import os, grpc\n"
        "from tests import terminalutil\n"
        "os.register_at_fork(before=terminalutil.note_fork)\n"
        "def fork():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "    return len(terminalutil.FORKS_BESIDE_GRPC)\n"
        "print(fork())\n"
        "channel = grpc.insecure_channel('127.0.0.1:9')\n"
        "try:\n"
        "    grpc.channel_ready_future(channel).result(timeout=0.2)\n"
        "except grpc.FutureTimeoutError:\n"
        "    pass\n"
        "print(terminalutil.grpc_threads())\n"
        "print(fork())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", forks], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    without, threads, beside = done.stdout.splitlines()
    assert without == "0" and beside == "1", done.stdout
    assert "event_engine" in threads, threads


def test_no_test_forks_a_terminal_but_through_the_launcher() -> None:
    """pexpect's ``spawn`` and ``pty.fork`` fork the process that calls them: in a test
    process, that is one with gRPC in it."""
    forking = ("pexpect.spawn(", "pty.fork(", "ptyprocess", "os.forkpty(")
    found = [
        f"{path.relative_to(ROOT)}: {call}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.resolve() not in (terminalutil.LAUNCHER, Path(__file__).resolve())
        for call in forking
        if call in path.read_text()
    ]
    assert found == [], found
