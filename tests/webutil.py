"""A real server with its web pages (``serve --http``) for tests, and plain HTTP calls."""

from __future__ import annotations

import http.client
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from feastlog.service.web.server import serve_http
from tests.serverutil import ThreadedServer


class WebServer(ThreadedServer):
    """A feastlog server on port 0 with its web pages on another free port."""

    def __init__(self, db_path: Path, link_base: str = "") -> None:
        super().__init__(db_path)
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
