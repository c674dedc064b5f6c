"""The viewer as a real process, over plain HTTP: every page answers, the Host check, the
safety headers, read-only, escaping, and the change stamp."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path

import pytest
from viewer_support import Viewer, pmem, wait_for

PAGES = (
    "/",
    "/records",
    "/records?q=bcrypt",
    "/records?type=mistake&severity=high",
    "/records?deleted=only",
    "/record?id=mis_01HMKQA4809F3T24XBDJ2GW80P",
    "/sessions",
    "/sessions?channel=claude-code&status=active",
    "/session?id=ses_01HMKP5GC0QR5G41H5MY08Y01C",
    "/session?id=ses_01HMKP5GC0QR5G41H5MY08Y01C&saved_type=decision&saved_q=auth",
    "/context?task=add+password+reset+to+the+login+form&budget=700",
    "/code",
    "/code?find=LoginForm",
    "/code/folder?dir=src/components/Auth",
    "/code/file?path=src/components/Auth/LoginForm.tsx",
    "/code/name?q=LoginForm",
    "/code/name?q=authentication",
    "/code/name?q=src/lib/auth/validators.ts",
)


def get(
    viewer: Viewer, path: str, host: str | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True)
        conn.putheader("Host", host or f"127.0.0.1:{viewer.port}")
        conn.endheaders()
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode("utf-8")
    finally:
        conn.close()


def settled(viewer: Viewer, path: str) -> str:
    """The page once the work it started is done (no progress line left in it)."""

    def done() -> str:
        body = get(viewer, path)[2]
        return "" if 'data-job="' in body else body

    return str(wait_for(done, 120))


@pytest.mark.parametrize("path", PAGES)
def test_every_page_answers_with_its_safety_headers(viewer: Viewer, path: str) -> None:
    status, headers, body = get(viewer, path)
    assert status == 200, body
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert not [h for h in headers if h.lower().startswith("access-control-")]
    assert 'id="content"' in body and "internal error" not in body
    assert float(headers["Server-Timing"].split("dur=")[1].split(",")[0]) < 5000


def test_pages_hold_the_memory(viewer: Viewer) -> None:
    assert "Comparar contraseñas con ===" in settled(viewer, "/records")
    record = settled(viewer, "/record?id=mis_01HMKQA4809F3T24XBDJ2GW80P")
    assert "bcrypt.compare" in record and "src/lib/auth/validators.ts" in record
    assert "demo app" in record  # its history in git: the commit that added the file
    assert "validateCredentials" in settled(viewer, "/code/folder?dir=src/lib/auth")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1", "localhost:1"])
def test_a_foreign_host_is_refused(viewer: Viewer, host: str) -> None:
    status, _, body = get(viewer, "/", host=host)
    assert status == 403
    assert "memory" not in body.lower() and "Comparar" not in body


def test_localhost_with_the_right_port_is_answered(viewer: Viewer) -> None:
    assert get(viewer, "/", host=f"localhost:{viewer.port}")[0] == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
def test_it_only_reads(viewer: Viewer, method: str) -> None:
    status, headers, _ = get(viewer, "/records", method=method)
    assert status == 405
    assert headers["Allow"] == "GET, HEAD"


def test_unknown_pages_and_ids_are_404s_not_errors(viewer: Viewer) -> None:
    assert get(viewer, "/nope")[0] == 404
    status, _, body = get(viewer, "/record?id=pat_01HZZZZZZZZZZZZZZZZZZZZZZZ")
    assert status == 404 and "internal error" not in body
    assert get(viewer, "/session?id=ses_01HZZZZZZZZZZZZZZZZZZZZZZZ")[0] == 404
    assert get(viewer, "/code/file?path=no/such/file.ts")[0] == 404
    assert get(viewer, "/static/../server.py")[0] == 404


def test_the_stamp_changes_when_memory_is_written(viewer: Viewer) -> None:
    before = json.loads(get(viewer, "/api/stamp")[2])["stamp"]
    assert json.loads(get(viewer, "/api/stamp")[2])["stamp"] == before  # reading changes nothing
    settled(viewer, "/records?q=password")  # a search (which syncs the index) is no change
    assert json.loads(get(viewer, "/api/stamp")[2])["stamp"] == before
    pmem(viewer.root, viewer.env, "save", "Stamp check: prefer small commits", "-t", "learning")
    wait_for(lambda: json.loads(get(viewer, "/api/stamp")[2])["stamp"] != before)
    assert "Stamp check: prefer small commits" in settled(viewer, "/records")


PAYLOADS = (
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "</td></tr></table><h1>forged</h1>",
    '" onmouseover="alert(3)',
)


def test_what_agents_wrote_is_escaped(viewer: Viewer) -> None:
    for i, payload in enumerate(PAYLOADS):
        pmem(viewer.root, viewer.env, "save", f"payload {i} {payload}", "--what", payload)
    body = settled(viewer, "/records?q=payload")
    for payload in PAYLOADS:
        assert payload not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    page = body.split("</head>", 1)[1]
    assert "<script" not in page and "<img" not in page and page.count("<h1>") == 1


def test_nothing_under_planning_changes(viewer: Viewer) -> None:
    planning = Path(viewer.root) / ".planning"
    kept = ("long-term", "short-term", "entity")

    def files() -> dict[str, int]:
        return {
            str(p): p.stat().st_mtime_ns
            for p in planning.rglob("*")
            if p.is_file() and any(k in p.parts for k in kept)
        }

    before = files()
    for path in PAGES:
        get(viewer, path)
    assert files() == before


def test_a_busy_port_is_one_line_and_json_gives_the_url(viewer: Viewer) -> None:
    argv = [sys.executable, "-m", "planning_memory", "-C", str(viewer.root), "ui"]
    busy = subprocess.run(
        [*argv, "--no-browser", "--port", str(viewer.port)],
        capture_output=True,
        text=True,
        env=viewer.env,
        timeout=60,
        check=False,
    )
    assert busy.returncode == 4
    assert "Traceback" not in busy.stderr and len(busy.stderr.strip().splitlines()) == 1
    assert f"port {viewer.port} on 127.0.0.1 is in use" in busy.stderr
    process = subprocess.Popen(
        [*argv, "--no-browser", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env=viewer.env,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline()]
        while lines[-1].strip() != "}":
            lines.append(process.stdout.readline())
        info = json.loads("".join(lines))
        assert info["url"] == f"http://127.0.0.1:{info['port']}/" and info["port"] > 0
        assert info["memory"] == ".planning"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_a_folder_outside_the_map_is_refused(viewer: Viewer) -> None:
    status, _, body = get(viewer, "/code/folder?dir=../..")
    assert status == 400 and "outside the repository" in body
