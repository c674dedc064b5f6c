"""The viewer's HTTP server: routes, the safety checks and the headers of every answer.

Standard library only (``http.server``, one thread per request). Safe on a developer's
machine: it binds 127.0.0.1 unless told otherwise, answers only requests whose ``Host`` is its
own address (a page of another site that resolves its name to 127.0.0.1, DNS rebinding, gets
403), sends no CORS headers, only answers ``GET`` and ``HEAD`` (it writes nothing), and every
page carries a Content-Security-Policy that allows only its own script and style sheet.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from planning_memory.errors import NotFoundError, PlanningMemoryError
from planning_memory.viewer import agent, code, overview, records, sessions
from planning_memory.viewer.html import tag
from planning_memory.viewer.jobs import Pending, line
from planning_memory.viewer.layout import Page, Request, document
from planning_memory.viewer.reads import Reads

if TYPE_CHECKING:
    from planning_memory.memory import Memory

ROUTES: dict[str, Callable[[Request], Page]] = {
    "/": overview.page,
    "/records": records.listing,
    "/record": records.detail,
    "/sessions": sessions.listing,
    "/session": sessions.detail,
    "/context": agent.page,
    "/code": code.page,
    "/code/folder": code.folder,
    "/code/file": code.file,
    "/code/name": code.lookup,
}
STATIC = {"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")


class ViewerServer(ThreadingHTTPServer):
    """The server: one memory's reads, and the ``Host`` values it answers to."""

    daemon_threads = True

    def __init__(self, mem: Memory, host: str, port: int, *, quiet: bool = True) -> None:
        super().__init__((host, port), Handler)
        self.reads = Reads(mem)
        self.quiet = quiet
        self.host = host
        real_port = self.server_address[1]
        names = {host, *LOOPBACK} if host in LOOPBACK else {host}
        self.allowed_hosts = {f"{n}:{real_port}" for n in names}
        self.allowed_hosts |= {f"[{n}]:{real_port}" for n in names if ":" in n and "[" not in n}

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


class Handler(BaseHTTPRequestHandler):
    """One request: check the Host, route it, answer with the safety headers."""

    server: ViewerServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _refuse_method(self) -> None:
        self.close_connection = True  # its body, if any, is not read
        self._send(
            HTTPStatus.METHOD_NOT_ALLOWED,
            b"read-only: GET only\n",
            "text/plain",
            {"Allow": "GET, HEAD", "Connection": "close"},
        )

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method

    def log_message(self, format: str, *args: object) -> None:
        if not self.server.quiet:
            super().log_message(format, *args)

    def _answer(self, *, head: bool) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        if self.headers.get("Host", "") not in self.server.allowed_hosts:
            self._send(
                HTTPStatus.FORBIDDEN, b"refused: unknown Host header\n", "text/plain", head=head
            )
            return
        parts = urlsplit(self.path)
        if parts.path.startswith("/static/"):
            self._static(parts.path.removeprefix("/static/"), head)
            return
        if parts.path == "/api/stamp":
            reads = self.server.reads
            body = json.dumps({"stamp": reads.stamp(), "jobs": reads.jobs.running()}).encode()
            self._send(HTTPStatus.OK, body, "application/json", head=head)
            return
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.server.reads.jobs.begin()
        page, stamp = self._page(parts.path, params)
        if self.server.reads.jobs.stale():  # older data shown: the page asks again soon
            stamp = "stale " + stamp
        html = document(page, parts.path, stamp, self.server.reads.mem.layout.repo_root.name)
        wall, used = time.perf_counter() - started, time.thread_time() - cpu
        timing = {"Server-Timing": f"app;dur={wall * 1000:.1f}, cpu;dur={used * 1000:.1f}"}
        self._send(
            page.status,
            html.encode("utf-8"),
            "text/html; charset=utf-8",
            {**page.headers, **timing},
            head=head,
        )

    def _page(self, path: str, params: dict[str, str]) -> tuple[Page, str]:
        reads = self.server.reads
        stamp = reads.stamp()
        route = ROUTES.get(path.rstrip("/") or "/")
        if route is None:
            return Page("Not found", tag("p", f"no page {path}", class_="error"), 404), stamp
        try:
            return route(Request(path, params, reads, stamp)), stamp
        except Pending as waiting:  # long work: its progress line, the page follows it
            return Page(waiting.job.label, line(waiting.job)), stamp
        except NotFoundError as exc:
            return Page("Not found", tag("p", exc.one_line(), class_="error"), 404), stamp
        except PlanningMemoryError as exc:
            return Page("Cannot show this", tag("p", exc.one_line(), class_="error"), 400), stamp
        except Exception:
            traceback.print_exc(file=sys.stderr)
            body = tag(
                "p",
                "internal error: this is a bug; the server's output has the trace",
                class_="error",
            )
            return Page("Internal error", body, 500), stamp

    def _static(self, name: str, head: bool) -> None:
        if name not in STATIC:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain", head=head)
            return
        body = resources.files("planning_memory.viewer").joinpath("static", name).read_bytes()
        self._send(HTTPStatus.OK, body, STATIC[name], head=head)

    def _send(
        self,
        status: int,
        body: bytes,
        kind: str,
        extra: dict[str, str] | None = None,
        *,
        head: bool = False,
    ) -> None:
        self.send_response(status)
        for key, value in {**SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


def serve(
    mem: Memory,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    ready: Callable[[ViewerServer], None] | None = None,
    quiet: bool = True,
) -> None:
    """Serve ``mem``'s viewer until interrupted; ``ready`` is called once it listens (with the
    server: its ``url`` has the real port when ``port`` is 0)."""
    server = ViewerServer(mem, host, port, quiet=quiet)
    server.reads.warm()  # the records are read in the background as the server starts
    try:
        if ready is not None:
            ready(server)
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
