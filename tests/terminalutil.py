"""Terminals for tests, opened by a launcher process that never imports gRPC.

A fork copies only the thread that calls it, but gRPC's fork handlers start its threads
again in the child, and pexpect's child then closes every descriptor above 2 before it
execs: in between, those threads found their epoll and wake-up descriptors closed
(``epoll_wait error: Bad file descriptor``, ``Check failed: wakeup_fd_->Wakeup().ok()``)
and a seat's ``feastlog play`` ended. A test process has gRPC loaded, and its threads
running once it has made a call, so it never forks a terminal itself: it starts this
file as a subprocess (``subprocess`` runs no Python between fork and exec, and on Linux
vforks, which runs no fork handler), and this process, one thread and no gRPC, forks
the terminal and relays it over a socket.

``note_fork`` is the tripwire for the rest: registered in ``tests/conftest.py`` as a
before-fork hook, it notes every fork a test process makes while gRPC's threads run, and
the test that made it fails.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
import traceback
from pathlib import Path

from pexpect import EOF
from pexpect.fdpexpect import fdspawn

LAUNCHER = Path(__file__).resolve()
# The names grpcio gives its own threads (1.85): the EventEngine's pool, the timer
# manager, the pool's lifeguard. tests/cli/test_terminals.py checks they are still these.
GRPC_THREADS = ("event_engine", "grpc_global_tim", "lifeguard")
REFUSED = 70  # the launcher's exit code when it will not fork (EX_SOFTWARE)

# Each fork this process made while gRPC's threads ran: their names and where it forked.
FORKS_BESIDE_GRPC: list[str] = []


def thread_names() -> list[str]:
    """The names of this process's threads, as the kernel knows them (gRPC's included,
    which ``threading`` does not see); none where there is no /proc."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return []
    names = []
    for task in tasks:
        try:
            names.append(Path(f"/proc/self/task/{task}/comm").read_text().strip())
        except OSError:  # a thread that ended meanwhile
            continue
    return names


def grpc_threads() -> list[str]:
    """The names of gRPC's threads running in this process."""
    return sorted(name for name in thread_names() if name.startswith(GRPC_THREADS))


def note_fork() -> None:
    """A before-fork hook: note the fork when gRPC's threads run (a hook cannot refuse it)."""
    running = grpc_threads()
    if running:
        where = "".join(traceback.format_stack(limit=12)[:-1])
        FORKS_BESIDE_GRPC.append(f"forked beside gRPC's threads {running}, from:\n{where}")


class Terminal(fdspawn):
    """A command in a pseudo-terminal of the launcher's, expected like ``pexpect.spawn``."""

    def __init__(
        self, argv: list[str], env: dict[str, str], dimensions: tuple[int, int], timeout: float
    ) -> None:
        ours, theirs = socket.socketpair()
        rows, cols = dimensions
        with theirs:
            self.launcher = subprocess.Popen(
                [sys.executable, str(LAUNCHER), str(rows), str(cols), "--", *argv],
                stdin=theirs.fileno(),
                stdout=theirs.fileno(),
                stderr=theirs.fileno(),
                env=env,
            )
        super().__init__(ours.detach(), timeout=timeout, encoding="utf-8")

    def send(self, s: str | bytes) -> int:
        """Send ``s`` after ``delaybeforesend`` (0.05 s), as ``pexpect.spawn`` does: the
        terminal tests were written at that pace (without it, a seat answered before its
        WatchGame brought the other seat's move, and the server stored the stale try that
        ``play`` then sent again).  Typed after the command ended, it goes nowhere (as into
        a pseudo-terminal whose command has gone): what it printed is still to be read."""
        if self.delaybeforesend is not None:
            time.sleep(self.delaybeforesend)
        try:
            sent: int = super().send(s)
        except (BrokenPipeError, ConnectionResetError):
            return 0
        return sent

    def read_nonblocking(self, size: int = 1, timeout: float | None = -1) -> str:
        """What the terminal printed; its end once the launcher has ended, also when it
        ended with typed lines it never read (the socket then says ECONNRESET, not EOF,
        after the last of what it printed)."""
        try:
            shown: str = super().read_nonblocking(size, timeout)
        except ConnectionResetError:
            self.flag_eof = True
            raise EOF("the launcher ended") from None
        return shown

    def close(self, timeout: float = 30) -> None:
        """Hang up (the command gets SIGHUP if it still runs) and wait for its exit status."""
        super().close()
        status = self.launcher.wait(timeout=timeout)
        self.exitstatus = status if status >= 0 else None
        self.signalstatus = -status if status < 0 else None


def spawn(
    argv: list[str],
    env: dict[str, str],
    dimensions: tuple[int, int] = (24, 80),
    timeout: float = 30,
) -> Terminal:
    """``argv`` in a terminal of its own, forked by a launcher with no gRPC in it."""
    return Terminal(argv, env, dimensions, timeout)


# The launcher: ``python tests/terminalutil.py ROWS COLS -- ARGV...``. It imports nothing
# of the project (nor gRPC), and relays its stdin to the terminal and the terminal to its
# stdout until the command ends; its exit status is the command's.


def unclean() -> str:
    """Why this process may not fork a terminal (empty when it may)."""
    if "grpc" in sys.modules:
        return "gRPC is imported in the launcher"
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:
        threads = 1
    return f"the launcher runs {threads} threads" if threads > 1 else ""


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``."""
    while data:
        data = data[os.write(fd, data) :]


def relay(master: int) -> None:
    """Stdin to the terminal, the terminal to stdout, until the terminal closes; a
    hang-up on stdin hangs the terminal up (as closing a ``pexpect.spawn`` does)."""
    while True:
        ready, _, _ = select.select([0, master], [], [])
        if 0 in ready:
            typed = os.read(0, 4096)
            if not typed:
                return
            with contextlib.suppress(OSError):  # EIO: the command ended (its print is read)
                write_all(master, typed)
        if master in ready:
            try:
                shown = os.read(master, 4096)
            except OSError:  # EIO: the command ended and the terminal closed
                return
            if not shown:
                return
            try:
                write_all(1, shown)
            except OSError:  # the test went away
                return


def main(args: list[str]) -> None:
    """Fork ``args``'s command in a terminal of ROWS x COLS and relay it."""
    rows, cols, _, *argv = args
    why = unclean()
    if why:
        os.write(2, f"terminal refused: {why} (a fork beside gRPC's threads)\n".encode())
        sys.exit(REFUSED)
    pid, master = pty.fork()
    if pid == 0:  # the command's side: the terminal is 0, 1 and 2
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", int(rows), int(cols), 0, 0))
        try:
            os.execvp(argv[0], argv)
        except OSError as failed:
            os.write(2, f"cannot run {argv[0]}: {failed.strerror}\n".encode())
        os._exit(127)
    relay(master)
    os.close(master)  # the command gets SIGHUP if it still runs
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: so is the launcher, for its parent to see
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
