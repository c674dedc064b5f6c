"""Seed 003: what MCP ``memory_save`` saves while a session is open belongs to that session
("Guardado en este chat"), through the SDK's real client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from planning_memory.memory import Memory
from planning_memory.viewer.saved import saved_in


def test_seed003_memory_save_in_an_open_session_is_saved_in_this_chat(empty_repo: Path) -> None:
    script = Path(sys.executable).parent / "pmem"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "planning_memory"]
    server = StdioServerParameters(
        command=command[0], args=[*command[1:], "mcp"], cwd=str(empty_repo), env=dict(os.environ)
    )
    said: dict[str, Any] = {}

    async def call(client: Client, tool: str, **args: Any) -> Any:
        result = await client.call_tool(tool, args)
        assert not result.is_error, result.content
        return json.loads("".join(c.text for c in result.content))

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server, read_timeout_seconds=30) as client:
                said["before"] = await call(client, "memory_save", title="Saved with no session")
                said["session"] = await call(client, "session_start", goal="Tidy the API")
                said["inside"] = await call(
                    client, "memory_save", title="The API answers in JSON:API", type="decision"
                )

    anyio.run(main)
    mem = Memory(empty_repo)
    sid = said["session"]["id"]
    assert mem.get(said["before"]["id"])["source"] == "mcp"
    assert mem.get(said["inside"]["id"])["source"] == f"session:{sid}"
    assert [r["id"] for r in saved_in(mem.records(), sid)] == [said["inside"]["id"]]
