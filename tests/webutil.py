"""A real server with its web pages (``serve --http``) for tests, and plain HTTP calls."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from feastlog.service.web.server import serve_http
from tests.serverutil import ThreadedServer


class WebServer(ThreadedServer):
    """A feastlog server on port 0 with its web pages on another free port."""

    def __init__(self, db_path: Path | str, link_base: str = "", **options: Any) -> None:
        super().__init__(db_path, **options)
        self.http_port = self.call(serve_http(self.running, "127.0.0.1", 0, link_base=link_base))
        self.url = f"http://127.0.0.1:{self.http_port}"


@dataclass
class Reply:
    """An HTTP reply: status, headers (lower-case names; Set-Cookie kept whole) and body."""

    status: int
    headers: dict[str, str]
    body: str


def request(
    server: WebServer,
    method: str,
    path: str,
    form: dict[str, str] | None = None,
    cookie: str = "",
    until: str = "",
) -> Reply:
    """One request, no redirects followed; with ``until``, read only until that text comes."""
    connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=20)
    headers = {"Cookie": cookie} if cookie else {}
    body = None
    if form is not None:
        body = urlencode(form)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read() if not until else b""
        while until and until.encode() not in data:
            chunk = response.read1(65536)
            if not chunk:
                break
            data += chunk
        found = {k.lower(): v for k, v in response.getheaders()}
        return Reply(response.status, found, data.decode("utf-8", "replace"))
    finally:
        connection.close()


class ProcessWebServer:
    """``feastlog serve --http 0`` in its own process, on port 0 (its memory its own:
    ``rss_mib``, ``cpu_seconds``); ``prelude`` is Python run in it first."""

    def __init__(self, db_path: Path, key: str, prelude: str = "") -> None:
        env = {**os.environ, "FEASTLOG_ORGANISER_KEY": key}
        code = f"{prelude}\nfrom feastlog.cli.main import main; main()"
        args = ["serve", "--db", str(db_path), "--port", "0", "--http", "0"]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        said = ""
        while "web pages on" not in said:
            line = self.proc.stdout.readline()
            if not line:
                self.proc.kill()
                raise RuntimeError(f"the server did not start: {said}{self.proc.stderr.read()}")  # type: ignore[union-attr]
            said += line
        self.address = re.search(r"listening on (\S+)", said).group(1)  # type: ignore[union-attr]
        self.http_port = int(re.search(r"web pages on \S+:(\d+)/", said).group(1))  # type: ignore[union-attr]
        self.key = key

    def rss_mib(self) -> float:
        """The server's resident memory now, in MiB (``/proc``)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS line")

    def cpu_seconds(self) -> float:
        """The CPU time the server has used so far (user and system)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> str:
        """SIGTERM (graceful) and the stderr it left."""
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=30)
        return err
