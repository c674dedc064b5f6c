"""For each agent, the MCP server started exactly as the written config says -- its command,
args and env, in the folder the agent starts it in -- answers a tool call through the MCP
SDK's client, and the call reaches this repository's memory.

Project configs are started in the repository (where the agents start them); user-level
configs (``--global``) in the home folder, the client offering the repository as its workspace
root, as an editor does."""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ListRootsResult, Root

from planning_memory.agents.install import run
from planning_memory.memory import Memory

from .test_mcp_server import pmem_command

# agent -> (file, parser, path to our entry, --global)
CONFIGS: dict[str, tuple[str, str, tuple[str, ...], bool]] = {
    "claude-code": (".mcp.json", "json", ("mcpServers",), False),
    "cursor": (".cursor/mcp.json", "json", ("mcpServers",), False),
    "vscode": (".vscode/mcp.json", "json", ("servers",), False),
    "codex": (".codex/config.toml", "toml", ("mcp_servers",), False),
    "gemini": (".gemini/settings.json", "json", ("mcpServers",), False),
    "windsurf": ("~/.codeium/windsurf/mcp_config.json", "json", ("mcpServers",), True),
    "cline": (
        "~/config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        "json",
        ("mcpServers",),
        True,
    ),
}


def entry_of(repo: Path, name: str) -> tuple[dict[str, Any], bool]:
    rel, kind, keys, user = CONFIGS[name]
    path = Path.home() / rel[2:] if rel.startswith("~/") else repo / rel
    text = path.read_text("utf-8")
    config = tomllib.loads(text) if kind == "toml" else json.loads(text)
    for key in keys:
        config = config[key]
    entry: dict[str, Any] = config["planning-memory"]
    return entry, user


def call_as_configured(entry: dict[str, Any], cwd: Path, roots: list[Path]) -> str:
    env = {**os.environ, **entry.get("env", {})}
    params = StdioServerParameters(
        command=entry["command"], args=entry.get("args", []), env=env, cwd=entry.get("cwd", cwd)
    )
    said: list[str] = []

    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=r.as_uri(), name=r.name) for r in roots])

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(
                params, read_timeout_seconds=30, list_roots_callback=list_roots
            ) as client:
                result = await client.call_tool(
                    "memory_save", {"title": "Started as configured", "type": "decision"}
                )
                text = "".join(getattr(c, "text", "") for c in result.content)
                assert not result.is_error, text
                said.append(text)

    anyio.run(main)
    return said[0]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_server_starts_as_the_config_says_and_answers(empty_repo: Path, name: str) -> None:
    command = shlex.join(pmem_command())
    run(name, empty_repo, command=command, user=CONFIGS[name][3])
    entry, user = entry_of(empty_repo, name)
    assert [entry["command"], *entry["args"]] == [*pmem_command(), "mcp"]
    cwd = Path.home() if user else empty_repo
    said = json.loads(call_as_configured(entry, cwd, [empty_repo]))
    assert said["action"] == "created"
    assert [r["title"] for r in Memory.open(empty_repo).records()] == ["Started as configured"]


def test_a_pmem_path_with_a_space_makes_a_working_config(empty_repo: Path, tmp_path: Path) -> None:
    real = pmem_command()
    if len(real) != 1:  # pragma: no cover - the test needs the pmem script
        pytest.skip("no pmem script next to the interpreter")
    folder = tmp_path / "my tools"
    folder.mkdir()
    (folder / "pmem").symlink_to(real[0])
    run("cursor", empty_repo, command=str(folder / "pmem"))
    entry, _ = entry_of(empty_repo, "cursor")
    assert entry["command"] == str(folder / "pmem") and entry["args"] == ["mcp"]
    said = json.loads(call_as_configured(entry, empty_repo, []))
    assert said["action"] == "created"
