"""The Claude Code plugin (``plugin/claude-code``) and its marketplace entry
(``.claude-plugin/marketplace.json``): the documented shapes, the same hooks and server the
settings-file install writes, and Claude Code's own offline validation when its CLI is here
(``claude`` on PATH, or ``$CLAUDE_BIN``; the test never downloads it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from planning_memory.agents.installers.claude_code import HOOK_EVENTS, merge_settings

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugin" / "claude-code"


def load(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def test_the_manifest_and_the_marketplace_entry() -> None:
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "planning-memory"
    assert isinstance(manifest["description"], str) and manifest["version"]
    assert list((PLUGIN / ".claude-plugin").iterdir()) == [PLUGIN / ".claude-plugin/plugin.json"]
    market = load(REPO / ".claude-plugin" / "marketplace.json")
    assert market["name"] and isinstance(market["owner"]["name"], str)
    [entry] = market["plugins"]
    assert entry["name"] == manifest["name"] and entry["version"] == manifest["version"]
    assert entry["source"].startswith("./") and (REPO / entry["source"]).resolve() == PLUGIN


def test_the_plugin_hooks_and_server_are_the_installers() -> None:
    hooks = load(PLUGIN / "hooks" / "hooks.json")
    assert hooks["hooks"] == merge_settings({}, ("pmem",), Path("settings.json"))["hooks"]
    assert set(hooks["hooks"]) == set(HOOK_EVENTS)
    servers = load(PLUGIN / ".mcp.json")["mcpServers"]
    assert servers == {"planning-memory": {"command": "pmem", "args": ["mcp"]}}


def claude() -> str | None:
    return os.environ.get("CLAUDE_BIN") or shutil.which("claude")


@pytest.mark.skipif(claude() is None, reason="Claude Code's CLI is not installed")
@pytest.mark.parametrize("folder", [PLUGIN, REPO], ids=["plugin", "marketplace"])
def test_claude_code_validates_them(folder: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    done = subprocess.run(
        [str(claude()), "plugin", "validate", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
