"""``pmem install claude-code``: hooks in .claude/settings.json, the server in .mcp.json and
the import of .planning/CLAUDE.md in the repository's CLAUDE.md, merged with what is there,
idempotent, never clobbering, nothing written on a bad file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planning_memory.agents.doctor import diagnose
from planning_memory.agents.install import HOOK_EVENTS, install_claude_code, merge_settings, run
from planning_memory.cli import cli
from planning_memory.errors import InputError
from planning_memory.memory import Memory

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
    "model": "opus",
}
GUARD = "command -v pmem >/dev/null 2>&1 &&"
USER_MCP = {"mcpServers": {"github": {"command": "gh-mcp", "args": [], "env": {"X": "1"}}}}


def read(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        {**h, "matcher": g.get("matcher")}
        for g in settings["hooks"].get(event, [])
        for h in g["hooks"]
        if "hook claude-code" in h["command"]
    ]


def test_fresh_install_writes_both_files(tmp_path: Path) -> None:
    (tmp_path / ".planning").mkdir()
    report = install_claude_code(tmp_path)
    assert report.settings_changed and report.mcp_changed
    settings = read(tmp_path / ".claude" / "settings.json")
    for event, (matcher, timeout) in HOOK_EVENTS.items():
        [hook] = ours(settings, event)
        assert hook["command"] == f"{GUARD} pmem hook claude-code {event} || true"
        assert hook["type"] == "command" and hook["timeout"] == timeout
        assert hook["matcher"] == matcher
    assert ours(settings, "PostToolUse")[0]["matcher"] == "Read|Edit|MultiEdit|Write|Bash"
    server = read(tmp_path / ".mcp.json")["mcpServers"]["planning-memory"]
    assert server == {"type": "stdio", "command": "pmem", "args": ["mcp"], "env": {}}
    assert (tmp_path / ".claude" / "settings.json").read_text("utf-8").endswith("}\n")


def test_merging_keeps_the_users_settings_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS), "utf-8")
    (tmp_path / ".mcp.json").write_text(json.dumps(USER_MCP), "utf-8")
    install_claude_code(tmp_path)
    settings = read(tmp_path / ".claude" / "settings.json")
    assert settings["permissions"] == USER_SETTINGS["permissions"]
    assert settings["model"] == "opus"
    assert settings["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert [h["command"] for h in settings["hooks"]["Stop"][1]["hooks"]] == [
        f"{GUARD} pmem hook claude-code Stop || true"
    ]  # the user's Stop hook stays first; ours is added after it
    assert settings["hooks"]["PostToolUse"][0] == USER_SETTINGS["hooks"]["PostToolUse"][0]
    assert len(settings["hooks"]["PostToolUse"]) == 2
    servers = read(tmp_path / ".mcp.json")["mcpServers"]
    assert servers["github"] == USER_MCP["mcpServers"]["github"]
    assert "planning-memory" in servers

    before = {
        p: p.read_bytes() for p in (tmp_path / ".claude/settings.json", tmp_path / ".mcp.json")
    }
    again = install_claude_code(tmp_path)
    assert not again.settings_changed and not again.mcp_changed
    assert {p: p.read_bytes() for p in before} == before


def test_a_new_command_updates_our_entries_only(tmp_path: Path) -> None:
    install_claude_code(tmp_path)
    install_claude_code(tmp_path, command="uv run pmem")
    settings = read(tmp_path / ".claude" / "settings.json")
    for event in HOOK_EVENTS:
        [hook] = ours(settings, event)
        assert hook["command"] == (
            f"command -v uv >/dev/null 2>&1 && uv run pmem hook claude-code {event} || true"
        )
    server = read(tmp_path / ".mcp.json")["mcpServers"]["planning-memory"]
    assert server["command"] == "uv" and server["args"] == ["run", "pmem", "mcp"]


def test_a_foreign_server_under_our_name_is_left_alone(tmp_path: Path) -> None:
    foreign = {"mcpServers": {"planning-memory": {"command": "something-else", "args": []}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(foreign), "utf-8")
    report = install_claude_code(tmp_path)
    assert read(tmp_path / ".mcp.json") == foreign
    assert any("left as it is" in n for n in report.notes)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        (".claude/settings.json", '{"hooks": {'),
        (".claude/settings.json", "[]"),
        (".claude/settings.json", '{"hooks": []}'),
        (".claude/settings.json", '{"hooks": {"SessionStart": {}}}'),
        (".claude/settings.json", '{"hooks": {"SessionStart": [{"hooks": 3}]}}'),
        (".mcp.json", '{"mcpServers": [1]}'),
        (".mcp.json", "not json"),
    ],
)
def test_a_malformed_file_is_an_error_and_nothing_is_written(
    tmp_path: Path, name: str, content: str
) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(content, "utf-8")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(InputError) as caught:
        install_claude_code(tmp_path)
    assert name.split("/")[-1] in caught.value.one_line()
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / name).read_text("utf-8") == content


def test_merge_settings_does_not_change_its_input() -> None:
    given = json.loads(json.dumps(USER_SETTINGS))
    merge_settings(given, ("pmem",), Path("settings.json"))
    assert given == USER_SETTINGS


def test_the_cli_command(empty_repo: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(empty_repo), "install", "claude-code", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["changed"] and report["agent"] == "claude-code"
    assert {Path(f["path"]) for f in report["files"]} == {
        empty_repo / ".claude" / "settings.json",
        empty_repo / ".mcp.json",
        empty_repo / "CLAUDE.md",
    }
    text = runner.invoke(cli, ["-C", str(empty_repo), "install", "claude-code"]).output
    assert "nothing to change" in text


def test_missing_memory_tree_is_a_note(tmp_path: Path) -> None:
    report = install_claude_code(tmp_path, command="definitely-not-a-program-xyz")
    assert any("pmem init" in n for n in report.notes)
    assert any("not on PATH" in n for n in report.notes)


def test_the_api_example_in_the_agent_docs_runs() -> None:
    """docs/agents.md points at docs/examples/api_example.py; it must keep working."""
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "api_example.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "### Patterns to Follow" in done.stdout and "## Task" in done.stdout
    assert "'mistakes': 1" in done.stdout


def test_recording_hooks_run_in_the_background() -> None:
    """PostToolUse, PostToolUseFailure and Stop only record: Claude Code runs them with
    ``"async": true`` and does not wait; the hooks whose answer it reads (SessionStart,
    UserPromptSubmit) and the ones that must finish (PreCompact, SessionEnd) stay
    synchronous."""
    hooks = merge_settings({}, ("pmem",), Path("settings.json"))["hooks"]
    waits = {
        event: not groups[0]["hooks"][0].get("async", False) for event, groups in hooks.items()
    }
    assert waits == {
        "SessionStart": True,
        "UserPromptSubmit": True,
        "PostToolUse": False,
        "PostToolUseFailure": False,
        "Stop": False,
        "PreCompact": True,
        "SessionEnd": True,
    }


def test_claude_md_imports_the_rendered_memory(empty_repo: Path) -> None:
    """Claude Code reads the repository's CLAUDE.md: the install puts the import of
    .planning/CLAUDE.md there (Claude Code's ``@path``), in the managed block, and takes it
    back out (a CLAUDE.md it created goes)."""
    run("claude-code", empty_repo)
    text = (empty_repo / "CLAUDE.md").read_text("utf-8")
    assert text.startswith("<!-- planning-memory:start -->\n")
    assert text.endswith("\n\n@.planning/CLAUDE.md\n<!-- planning-memory:end -->\n")
    assert (empty_repo / ".planning" / "CLAUDE.md").is_file()  # what it imports
    [rules] = [c for c in diagnose(empty_repo, ["claude-code"]) if c.name == "rules"]
    assert rules.ok and rules.detail.endswith("CLAUDE.md")
    run("claude-code", empty_repo, remove=True)
    assert not (empty_repo / "CLAUDE.md").exists()


def test_a_claude_md_block_the_views_render_is_left_to_them(empty_repo: Path) -> None:
    root = empty_repo / "CLAUDE.md"
    root.write_text("# App\n", "utf-8")
    Memory.open(empty_repo).set_render_target("CLAUDE.md", True)  # the memory itself, rendered
    rendered = root.read_bytes()
    report = run("claude-code", empty_repo)
    assert root.read_bytes() == rendered
    assert any("rendered memory" in note for note in report.notes)
    [rules] = [c for c in diagnose(empty_repo, ["claude-code"]) if c.name == "rules"]
    assert rules.ok
    run("claude-code", empty_repo, remove=True)
    assert root.read_bytes() == rendered
