"""An ``@`` in memory text reaches an agent as written wherever nothing imports it.

Claude Code imports ``@path`` from CLAUDE.md only: the rendered CLAUDE.md keeps ``＠`` (inert),
while ``pmem context --format agent`` (the agent prompt) and every MCP tool answer give back
the ``@`` the person wrote ("@types/node", "@pytest.fixture")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from planning_memory.agents.mcp_tools import MemoryTools
from planning_memory.memory import Memory

FULLWIDTH_AT = "\uff20"
BIN = Path(sys.executable).parent


def seeded(repo: Path) -> Memory:
    mem = Memory.init(repo)
    mem.learn_utterance("Always pin @types/node to version 20")
    mem.save("Forgot @pytest.fixture on the db helper", "mistake", severity="high")
    return mem


def test_the_agent_prompt_keeps_the_at_sign(tmp_path: Path) -> None:
    mem = seeded(tmp_path)
    done = subprocess.run(
        [str(BIN / "pmem"), "context", "--format", "agent", "bump @types/node"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "pin @types/node to version 20" in done.stdout, done.stdout
    assert FULLWIDTH_AT not in done.stdout, done.stdout
    claude_md = (mem.layout.planning / "CLAUDE.md").read_text("utf-8")
    assert f"{FULLWIDTH_AT}types/node" in claude_md and "@types/node" not in claude_md


def test_mcp_answers_keep_the_at_sign(tmp_path: Path) -> None:
    seeded(tmp_path)
    tools = MemoryTools(tmp_path)
    for fmt in ("md", "xml", "json", "agent"):
        text = tools.memory_context(task="bump @types/node pytest fixture", format=fmt)
        assert "@types/node" in text and "@pytest.fixture" in text, (fmt, text)
        assert FULLWIDTH_AT not in text, (fmt, text)
    found = json.loads(tools.memory_search("pytest fixture db helper"))["results"]
    assert found and FULLWIDTH_AT not in json.dumps(found, ensure_ascii=False)
    assert any("@pytest.fixture" in row["title"] for row in found), found
