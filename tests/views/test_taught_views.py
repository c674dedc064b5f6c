"""What a person taught reaches the agent's instruction files: `.planning/CLAUDE.md` and, when
configured, the managed block of the repository's own AGENTS.md, from the first time."""

from __future__ import annotations

import json
from pathlib import Path

from planning_memory.memory import Memory


def test_a_taught_rule_is_in_claude_md_and_agents_md_at_once(empty_repo: Path) -> None:
    config_path = empty_repo / ".planning" / "memory-config.json"
    config = json.loads(config_path.read_text("utf-8"))
    config["memory"]["render"]["targets"] = {"claudeMd": False, "agentsMd": True}
    config_path.write_text(json.dumps(config), "utf-8")
    mem = Memory(empty_repo)
    mem.learn_utterance("Always use pnpm, never npm", source="session:ses_01TAUGHT")
    mem.learn_utterance("Never commit .env files", source="session:ses_01TAUGHT")
    claude = (empty_repo / ".planning" / "CLAUDE.md").read_text("utf-8")
    agents = (empty_repo / "AGENTS.md").read_text("utf-8")
    for text in (claude, agents):
        taught = text.split("## Taught rules")[1]
        assert "pnpm" in taught and ".env" in taught
    assert mem.render_check() == []
