"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


@dataclass
class Server:
    """A local HTTP server that serves ``files`` and records request paths."""

    base: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hits.append(self.path)
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def real_scifact() -> Path:
    """The real SciFact folder under ``$HIERRET_DATA``; the test is skipped without it."""
    env = os.environ.get("HIERRET_DATA")
    if not env or not (Path(env) / "scifact" / "corpus.jsonl").is_file():
        pytest.skip(
            "real SciFact not available: set HIERRET_DATA to a folder holding scifact/ "
            "(e.g. HIERRET_DATA=../shared/datasets on the project's machines) to run this test"
        )
    return Path(env) / "scifact"
