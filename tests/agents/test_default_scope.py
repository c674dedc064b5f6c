"""``agents.defaultScope: personal`` (memory-config.json): a save that names no scope goes to
the personal store, on every path: the Python API, ``pmem save``, MCP ``memory_save``, and
what the Claude Code hooks save (taught rules, ``[MEMORIZE: ...]`` facts); a save that names
``project`` stays in the repository."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from claude_sessions import ClaudeCode
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from planning_memory.cli import cli
from planning_memory.memory import Memory

CLAUDE_ID = "2b3c4d5e-0001-4f6a-9b0c-1d2e3f4a5b61"


def personal_by_default(repo: Path) -> None:
    path = repo / ".planning/memory-config.json"
    config = json.loads(path.read_text("utf-8"))
    config["memory"]["agents"] = {"defaultScope": "personal"}
    path.write_text(json.dumps(config), "utf-8")


def titles(mem: Memory) -> list[str]:
    return sorted(r["title"] for r in mem.records())


def test_the_python_api(empty_repo: Path) -> None:
    personal_by_default(empty_repo)
    mem = Memory(empty_repo)
    saved = mem.save_observation("Staging deploys need the VPN", "config", what="VPN first")
    assert saved.record["scope"] == "personal" and saved.record["project"] == mem.project_id
    taught = mem.learn_utterance("Always use pnpm").outcome
    assert taught is not None and taught.record["scope"] == "personal"
    mem.save_observation("Use zod for request bodies", "decision", scope="project")
    assert titles(mem) == ["Use zod for request bodies"]
    assert titles(mem.personal()) == ["Staging deploys need the VPN", "Use pnpm"]


def test_pmem_save(empty_repo: Path) -> None:
    personal_by_default(empty_repo)
    runner = CliRunner()
    mine = runner.invoke(cli, ["-C", str(empty_repo), "save", "I review PRs in the morning"])
    ours = ["-C", str(empty_repo), "save", "Feature flags live in flags.ts", "--scope", "project"]
    assert runner.invoke(cli, ours).exit_code == 0
    assert mine.exit_code == 0, mine.output
    mem = Memory(empty_repo)
    assert titles(mem) == ["Feature flags live in flags.ts"]
    assert titles(mem.personal()) == ["I review PRs in the morning"]


def test_mcp_memory_save(empty_repo: Path) -> None:
    personal_by_default(empty_repo)
    pmem = Path(sys.executable).parent / "pmem"
    server = StdioServerParameters(
        command=str(pmem), args=["mcp"], cwd=str(empty_repo), env=dict(os.environ)
    )

    async def save(client: Client, **arguments: Any) -> dict[str, Any]:
        result = await client.call_tool("memory_save", arguments)
        body = "".join(getattr(c, "text", "") for c in result.content)
        assert not result.is_error, body
        answer: dict[str, Any] = json.loads(body)
        return answer

    async def scenario() -> None:
        with anyio.fail_after(60):
            async with Client(server, read_timeout_seconds=30) as client:
                mine = await save(client, title="I like small commits", type="preference")
                assert mine["project"] == Memory(empty_repo).project_id  # a personal one's
                ours = await save(client, title="Migrations run in CI", scope="project")
                assert ours.get("project") is None

    anyio.run(scenario)
    mem = Memory(empty_repo)
    assert titles(mem) == ["Migrations run in CI"]
    assert titles(mem.personal()) == ["I like small commits"]


def test_what_the_claude_code_hooks_save(empty_repo: Path) -> None:
    personal_by_default(empty_repo)
    one = ClaudeCode(empty_repo, Path(os.environ["HOME"]), CLAUDE_ID)
    one.start()
    one.prompt("Siempre usa pnpm. Add the price filter")
    one.say("Done. [MEMORIZE: prices are stored in cents]")
    one.stop()
    one.end()
    mem = Memory(empty_repo)
    assert titles(mem) == []
    assert titles(mem.personal()) == ["Usa pnpm", "prices are stored in cents"]
