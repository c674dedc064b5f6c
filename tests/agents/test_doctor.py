"""``pmem doctor``: one line per check with the fix, against real installs, real servers and
real hook commands."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from planning_memory.agents.doctor import Answer, diagnose, run_hook
from planning_memory.agents.install import HOOK_EVENTS, run
from planning_memory.agents.installers.parts import Server
from planning_memory.cli import cli
from planning_memory.memory import Memory

from .test_mcp_server import pmem_command


def script(folder: Path, body: str) -> Path:
    """An executable ``pmem`` in ``folder`` running the shell ``body``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pmem"
    path.write_text(f"#!/bin/sh\n{body}\n", "utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(autouse=True)
def _hooks_in_their_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PMEM_SERVER", "0")  # no background hook server from these tests


@pytest.fixture
def pmem() -> str:
    found = pmem_command()
    if len(found) != 1:  # pragma: no cover - these tests need the pmem script
        pytest.skip("no pmem script next to the interpreter")
    return found[0]


def doctor(repo: Path, *agents: str) -> tuple[int, list[dict[str, object]], str]:
    runner = CliRunner()
    as_json = runner.invoke(cli, ["-C", str(repo), "doctor", *agents, "--json"])
    text = runner.invoke(cli, ["-C", str(repo), "doctor", *agents])
    assert as_json.exit_code == text.exit_code
    return as_json.exit_code, json.loads(as_json.stdout), text.stdout


@pytest.mark.slow
def test_a_working_setup_is_all_ok(empty_repo: Path, pmem: str) -> None:
    run("claude-code", empty_repo, command=pmem)
    run("cursor", empty_repo, command=pmem)
    run("windsurf", empty_repo, command=pmem, user=True)  # started in ~, found through roots
    Memory.open(empty_repo).reindex(code=False)
    code, checks, text = doctor(empty_repo)
    assert code == 0, text
    seen = {(c["subject"], c["check"]) for c in checks}
    for agent in ("claude-code", "cursor", "windsurf"):
        assert {(agent, "config"), (agent, "pmem"), (agent, "mcp")} <= seen
    assert ("claude-code", "hooks") in seen and ("cursor", "rules") in seen
    assert {("memory", "tree"), ("memory", "index"), ("memory", "views")} <= seen
    assert all(c["ok"] for c in checks)
    lines = text.splitlines()
    assert len(lines) == len(checks) and all(line.startswith("ok   ") for line in lines)
    assert any("claude-code hooks: 7 ran" in line for line in lines)


def test_each_problem_is_one_line_with_its_fix(empty_repo: Path, tmp_path: Path, pmem: str) -> None:
    broken = script(tmp_path / "broken", "echo boom >&2; exit 3")
    run("claude-code", empty_repo, command=str(broken))
    run("gemini", empty_repo, command=str(tmp_path / "nowhere" / "pmem"))
    run("cursor", empty_repo, command=pmem)
    (empty_repo / ".cursor" / "mcp.json").write_text('{"mcpServers": ', "utf-8")
    code, checks, text = doctor(empty_repo)
    assert code == 1
    failed = {(c["subject"], c["check"]): c for c in checks if not c["ok"]}
    assert "boom" in str(failed["claude-code", "mcp"]["detail"])
    assert "boom" in str(failed["claude-code", "hooks"]["detail"])
    assert "--command" in str(failed["gemini", "pmem"]["fix"])
    assert "mcp.json" in str(failed["cursor", "config"]["detail"])
    assert failed["memory", "index"]["fix"] == "pmem reindex"
    for line in text.splitlines():
        if line.startswith("FAIL"):
            assert " -> " in line


def test_stale_views_and_a_missing_tree(
    tmp_path_factory: pytest.TempPathFactory, empty_repo: Path
) -> None:
    claude = empty_repo / ".planning" / "CLAUDE.md"
    claude.write_text(claude.read_text("utf-8") + "\nhand edit\n", "utf-8")
    views = [c for c in diagnose(empty_repo) if c.name == "views"]
    assert not views[0].ok and views[0].fix == "pmem sync" and "CLAUDE.md" in views[0].detail
    bare = tmp_path_factory.mktemp("bare")
    [tree] = [c for c in diagnose(bare) if c.name == "tree"]
    assert not tree.ok and tree.fix == "pmem init"


def test_nothing_installed_says_how(empty_repo: Path) -> None:
    [first, *_] = diagnose(empty_repo)
    assert not first.ok and first.fix == "pmem install <agent>"


def test_a_hook_over_its_timeout_is_reported() -> None:
    code, seconds, _ = run_hook("sleep 5", 1)
    assert code is None and seconds >= 1  # stopped at its timeout, not run to the end
    assert run_hook("echo said >&2", 5)[::2] == (0, "said")


def test_a_hook_whose_guard_finds_no_pmem_is_reported(empty_repo: Path, tmp_path: Path) -> None:
    run("claude-code", empty_repo, command=str(tmp_path / "gone" / "pmem"))
    [hooks] = [c for c in diagnose(empty_repo, ["claude-code"]) if c.name == "hooks"]
    assert not hooks.ok and "pmem did not run" in hooks.detail


def fast(server: Server, root: Path | None) -> Answer:
    """A probe that says the server answered at once (the hooks are what is checked)."""
    return Answer(True, 0.1, 0.2, "# Memory context")


def test_a_hook_taken_out_of_the_settings_is_reported(empty_repo: Path, pmem: str) -> None:
    run("claude-code", empty_repo, command=pmem)
    path = empty_repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text("utf-8"))
    del settings["hooks"]["SessionStart"]
    del settings["hooks"]["PreCompact"]
    path.write_text(json.dumps(settings, indent=2), "utf-8")
    [hooks] = [c for c in diagnose(empty_repo, ["claude-code"], probe=fast) if c.name == "hooks"]
    assert not hooks.ok
    assert hooks.detail == f"SessionStart, PreCompact missing from {path}"
    assert hooks.fix == "pmem install claude-code"
    del settings["hooks"]
    path.write_text(json.dumps(settings, indent=2), "utf-8")  # the server is still there
    [hooks] = [c for c in diagnose(empty_repo, ["claude-code"], probe=fast) if c.name == "hooks"]
    assert not hooks.ok and all(event in hooks.detail for event in HOOK_EVENTS)


def test_a_slow_start_is_a_problem_with_its_figure(empty_repo: Path, pmem: str) -> None:
    run("cursor", empty_repo, command=pmem)

    def slow(server: Server, root: Path | None) -> Answer:
        return Answer(True, 7.8, 8.1, "# Memory context")

    [mcp] = [c for c in diagnose(empty_repo, ["cursor"], probe=slow) if c.name == "mcp"]
    assert not mcp.ok
    assert "started in 7.8 s" in mcp.detail and "5 s" in mcp.detail and mcp.fix
    [mcp] = [c for c in diagnose(empty_repo, ["cursor"], probe=fast) if c.name == "mcp"]
    assert mcp.ok and mcp.detail.endswith("started in 0.1 s, answered in 0.2 s")
