"""``pmem mcp`` answers ``initialize`` before importing the MCP SDK: with the SDK's own
answer, once, and the SDK then serves the session as if it had answered itself (the tests of
tests/agents/test_mcp_server.py run every tool through the SDK's client over this path)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planning_memory.agents import mcp_start
from planning_memory.agents.mcp_server import handshake_versions

PMEM = str(Path(sys.executable).parent / "pmem")


def message(ident: int, method: str, params: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    return json.dumps(body | ({"params": params} if params is not None else {})) + "\n"


def initialize(version: str) -> str:
    client = {"name": "probe", "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return message(1, "initialize", params)


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"


@pytest.mark.slow
def test_the_stored_answers_are_the_sdks_own(empty_repo: Path) -> None:
    """Each protocol version's answer is what the SDK's server gives (run
    ``python -m planning_memory.agents.mcp_start --write`` when this fails)."""
    stored = json.loads(Path(mcp_start.ANSWERS).read_text("utf-8"))
    assert set(stored["versions"]) == set(handshake_versions())
    assert stored == mcp_start.sdk_answers(empty_repo)


def test_initialize_is_answered_before_the_sdk_is_imported(empty_repo: Path) -> None:
    """``-X importtime`` writes each import to stderr, here the same pipe as the wire: no
    line of the ``mcp`` package, of click or of the facade comes before the answer."""
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", PMEM, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=empty_repo,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(initialize("2025-06-18"))
    proc.stdin.flush()
    before, answer, after = [], None, []
    for line in proc.stdout:
        if answer is None and line.startswith("{"):
            answer = json.loads(line)
        elif answer is None:
            before.append(line)
        elif line.rpartition("|")[2].strip().startswith("mcp"):
            after.append(line)  # the SDK, imported once the answer is out
            break
    proc.kill()
    proc.communicate(timeout=30)
    assert answer is not None and answer["id"] == 1
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["serverInfo"]["name"] == "planning-memory"
    imported = [line.rpartition("|")[2].strip() for line in before if "import time:" in line]
    assert "planning_memory.cli" in imported and after  # the log sees our imports
    assert not [name for name in imported if name.split(".")[0] in ("mcp", "mcp_types")]
    # nor the command line's group (click) or the facade: the answer comes first
    assert not {"click", "planning_memory.cli.base", "planning_memory.memory"} & set(imported)


@pytest.mark.parametrize("version", ["2025-06-18", "1999-01-01"])
def test_the_session_goes_on_with_one_answer_per_request(empty_repo: Path, version: str) -> None:
    """The SDK's own answer to the first ``initialize`` never reaches the client; the
    next requests are the SDK's."""
    proc = subprocess.Popen(
        [PMEM, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=empty_repo,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    requests = (initialize(version) + INITIALIZED, message(2, "tools/list"), message(3, "ping"))
    for request in requests:
        proc.stdin.write(request)
        proc.stdin.flush()
        answers.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    rest = proc.stdout.read()  # the SDK's answer to the first initialize never comes
    proc.wait(timeout=60)
    assert [a.get("id") for a in answers] == [1, 2, 3] and rest == "", rest
    stored = json.loads(Path(mcp_start.ANSWERS).read_text("utf-8"))
    expected = stored["versions"].get(version, stored["otherwise"])
    assert answers[0]["result"] == expected
    assert "memory_search" in {tool["name"] for tool in answers[1]["result"]["tools"]}


@pytest.mark.parametrize(
    "first",
    [
        "not json\n",
        message(7, "tools/list"),
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize"}) + "\n",  # no params
        json.dumps({"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {}}) + "\n",
    ],
)
def test_any_other_first_message_is_the_sdks_to_answer(first: str) -> None:
    assert mcp_start.initialize_request(first.encode()) is None


def test_a_well_formed_initialize_is_recognised() -> None:
    got = mcp_start.initialize_request(initialize("2025-03-26").encode())
    assert got is not None and got["id"] == 1
    assert (
        mcp_start.answer_for(got)
        == json.loads(Path(mcp_start.ANSWERS).read_text("utf-8"))["versions"]["2025-03-26"]
    )


def test_pmem_mcp_with_a_root_or_anything_else(tmp_path: Path) -> None:
    """``pmem mcp`` and ``pmem -C DIR mcp`` go straight to the early answer; anything else
    (a root that is a file, help, more arguments) to the command line's group."""
    from planning_memory.cli import _mcp_root

    (tmp_path / "file").write_text("x", "utf-8")
    assert _mcp_root(["mcp"]) == ""
    assert _mcp_root(["-C", str(tmp_path), "mcp"]) == str(tmp_path)
    assert _mcp_root(["--root", str(tmp_path), "mcp"]) == str(tmp_path)
    for args in (["-C", str(tmp_path / "file"), "mcp"], ["mcp", "--help"], ["-C", "", "mcp"]):
        assert _mcp_root(args) is None, args
    done = subprocess.run(
        [PMEM, "-C", str(tmp_path / "file"), "mcp"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "is a file" in done.stderr
