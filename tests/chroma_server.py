"""The test session's Chroma server (``bench._servers.ChromaServer``, ``chroma run`` on a
free loopback port) as the fixture ``chroma_server``, which test modules take by importing
it from here, and ``TokenProxy``, which stands in front of it as a deployment's reverse
proxy does (Chroma 1.x serves without authentication): only requests with the bearer token
pass.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench._servers import ChromaServer, free_port


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One Chroma server for the test session; each test uses its own collection."""
    with ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data") as server:
        yield server


class TokenProxy:
    """An HTTP proxy on a free loopback port that lets through requests bearing the token."""

    def __init__(self, upstream_port: int, token: str) -> None:
        self.server = ThreadingHTTPServer(
            ("127.0.0.1", free_port()), _handler(upstream_port, token)
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> TokenProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(upstream_port: int, token: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def forward(self) -> None:
            if self.headers.get("Authorization") != f"Bearer {token}":
                self.send_error(401, "Unauthorized")
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            upstream.request(self.command, self.path, body or None, headers)
            reply = upstream.getresponse()
            data = reply.read()
            self.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            upstream.close()

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = forward

        def log_message(self, *args: object) -> None:
            pass

    return Handler
