"""A webhook receiver on 127.0.0.1: an HTTP/1.1 server in a thread that records every POST.

with Receiver() as receiver:
    ... create_webhook(url=receiver.url) ...
    receiver.wait_for(3)          # three requests received
    receiver.status = 500         # answer 500 from now on (or a function of the request)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered

    @property
    def id(self) -> str:
        return self.headers["webhook-id"]

    @property
    def data(self) -> dict[str, Any]:
        return json.loads(self.body)["data"]

    def verified(self, secret: str) -> dict[str, Any]:
        """The body, once the standardwebhooks package has verified its signature."""
        return Webhook(secret).verify(self.body, self.headers)


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.status: int | Callable[[Received], int] = 200
        self.location: str | None = None  # a Location header sent with each 3xx answer
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = self.rfile.read(length)
                if len(body) < length:  # the sender died mid-request: nothing to answer
                    self.close_connection = True
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                status = receiver.answer(Received(headers, body, 0))
                with receiver.lock:
                    receiver.received.append(Received(headers, body, status))
                self.send_response(status)
                if 300 <= status < 400 and receiver.location is not None:
                    self.send_header("location", receiver.location)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, request: Received) -> int:
        return self.status(request) if callable(self.status) else self.status

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def acknowledged(self) -> list[Received]:
        with self.lock:
            return [r for r in self.received if 200 <= r.status < 300]

    def wait_for(self, n: int, timeout: float = 30, acknowledged: bool = True) -> list[Received]:
        """The first n requests (acknowledged ones, unless told otherwise), once they came."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                got = [r for r in self.received if not acknowledged or 200 <= r.status < 300]
            if len(got) >= n or time.monotonic() > deadline:
                assert len(got) >= n, f"{len(got)} of {n} requests arrived in {timeout}s"
                return got[:n]
            time.sleep(0.02)
