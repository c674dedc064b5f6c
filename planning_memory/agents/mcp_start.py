"""``pmem mcp``'s first answer: ``initialize``, given before the MCP SDK is imported.

Importing the SDK takes about a second of CPU, and MCP clients probe a new server with
``initialize`` and give up after a few seconds (Gemini CLI: 5 s). This module needs only the
standard library: it reads the client's first message and, when it is a well-formed
``initialize`` request, answers it at once with the answer the SDK itself gives for that
protocol version (``mcp_initialize.json``, written by ``write_answers`` from the SDK's own
answers and checked against them by the tests); then it starts the SDK (``mcp_server.run``)
with that request replayed to it, and drops the SDK's answer to it from the wire. Any other
first message goes to the SDK untouched.

``python -m planning_memory.agents.mcp_start --write`` rewrites ``mcp_initialize.json`` after
an SDK upgrade or a change to the server's name, version, instructions or capabilities.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # typing and pathlib are not imported before the answer
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

ANSWERS = os.path.join(os.path.dirname(__file__), "mcp_initialize.json")
OTHER_VERSION = "1999-01-01"  # a version no SDK supports: the SDK's default answer


def run(root: str | Path | None = None) -> int:
    """Serve MCP over stdio, answering a first ``initialize`` before loading the SDK; the
    memory is ``root``'s (a folder), else the working directory's."""
    first = sys.stdin.buffer.readline()
    request = initialize_request(first)
    answer = None if request is None else answer_for(request)
    if request is not None and answer is not None:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer}
        os.write(1, json.dumps(reply, separators=(",", ":")).encode() + b"\n")
    import pathlib

    from planning_memory.agents import mcp_server  # the SDK: about a second

    answered = request["id"] if request is not None and answer is not None else None
    mcp_server.run(None if root is None else pathlib.Path(root), first=first, answered=answered)
    return 0


def initialize_request(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC ``initialize`` request on ``line`` when it is one the SDK would accept
    (an id, a protocol version, capabilities and the client's name and version)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params, ident = message.get("params"), message.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        return None
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return None
    client = params.get("clientInfo")
    if not isinstance(params.get("capabilities"), dict) or not isinstance(client, dict):
        return None
    if not all(isinstance(client.get(key), str) for key in ("name", "version")):
        return None
    return message


def answer_for(request: dict[str, Any]) -> dict[str, Any] | None:
    """The SDK's ``initialize`` result for the request's protocol version; None when the
    stored answers cannot be read (the SDK then answers, a second later)."""
    try:
        with open(ANSWERS, "rb") as stored:
            answers = json.load(stored)
        found = answers["versions"].get(request["params"]["protocolVersion"])
        result: dict[str, Any] = found if found is not None else answers["otherwise"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return result


# -- the answers, from the SDK itself ----------------------------------------------------------
def sdk_answer(version: str, cwd: Path | None = None) -> dict[str, Any]:
    """The result the SDK's server (``mcp_server.run``, no early answer) gives an
    ``initialize`` asking for ``version``, from a process of its own."""
    import subprocess  # here: the early answer does without it

    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "pmem", "version": "0"},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    code = "from planning_memory.agents.mcp_server import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(message) + "\n",
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    line = done.stdout.partition("\n")[0]
    result: dict[str, Any] = json.loads(line)["result"]
    return result


def sdk_answers(cwd: Path | None = None) -> dict[str, Any]:
    """``{"versions": {version: result}, "otherwise": result}`` for every protocol version
    the SDK negotiates by ``initialize``."""
    from planning_memory.agents.mcp_server import handshake_versions

    versions = {version: sdk_answer(version, cwd) for version in handshake_versions()}
    return {"versions": versions, "otherwise": sdk_answer(OTHER_VERSION, cwd)}


def write_answers() -> None:
    text = json.dumps(sdk_answers(), indent=2, sort_keys=True, ensure_ascii=False)
    with open(ANSWERS, "w", encoding="utf-8") as stored:
        stored.write(text + "\n")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m planning_memory.agents.mcp_start --write")
    write_answers()
