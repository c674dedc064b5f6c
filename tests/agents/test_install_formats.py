"""``pmem install AGENT`` for every agent: each written file parsed with its format's own
parser (json, tomllib, yaml, MDC front matter) and checked against the documented shape;
merging keeps what is there, a second run changes nothing, ``--dry-run`` writes nothing,
``pmem uninstall`` gives back the files byte for byte, a malformed file writes nothing."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from planning_memory.agents.install import run
from planning_memory.cli import cli
from planning_memory.errors import InputError

MARK = "<!-- planning-memory:start -->"
AGENTS = ["claude-code", "cursor", "vscode", "codex", "gemini", "windsurf", "cline", "aider"]
USER_ONLY_MCP = {"windsurf", "cline"}  # no project MCP file: the server needs --global


def home() -> Path:
    return Path.home()


def vscode_user() -> Path:
    return home() / "config" / "Code" / "User"  # $XDG_CONFIG_HOME/Code/User (tests/conftest)


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """An MDC / Markdown rule's YAML front matter and its body."""
    assert text.startswith("---\n"), text[:40]
    head, _, body = text[4:].partition("\n---\n")
    meta = yaml.safe_load(head)
    assert isinstance(meta, dict)
    return meta, body


def stdio(entry: dict[str, Any], *, typed: bool = False) -> None:
    """The documented stdio server shape: a command and its string arguments."""
    assert isinstance(entry["command"], str) and entry["command"]
    assert isinstance(entry["args"], list) and all(isinstance(a, str) for a in entry["args"])
    assert entry["args"][-1] == "mcp"
    if typed:
        assert entry["type"] == "stdio"
    if "env" in entry:
        assert isinstance(entry["env"], dict)


def block(text: str) -> str:
    assert text.count(MARK) == 1 and text.count("<!-- planning-memory:end -->") == 1
    return text.split(MARK)[1]


def check_claude_code(repo: Path) -> None:
    server = json.loads((repo / ".mcp.json").read_text("utf-8"))["mcpServers"]["planning-memory"]
    stdio(server, typed=True)
    hooks = json.loads((repo / ".claude" / "settings.json").read_text("utf-8"))["hooks"]
    assert set(hooks) == {
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "PreCompact",
        "SessionEnd",
    }
    for groups in hooks.values():
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            for hook in group["hooks"]:
                assert hook["type"] == "command" and isinstance(hook["command"], str)
                assert isinstance(hook.get("timeout", 60), int)
    ours = [h for gs in hooks.values() for g in gs for h in g["hooks"] if "pmem" in h["command"]]
    assert len(ours) == 7 and all(h["command"].endswith(" || true") for h in ours)
    inner = block((repo / "CLAUDE.md").read_text("utf-8"))
    assert "\n@.planning/CLAUDE.md\n" in inner  # Claude Code's import, on its own line


def check_cursor(repo: Path) -> None:
    config = json.loads((repo / ".cursor" / "mcp.json").read_text("utf-8"))
    stdio(config["mcpServers"]["planning-memory"])
    meta, body = front_matter((repo / ".cursor/rules/planning-memory.mdc").read_text("utf-8"))
    assert meta["alwaysApply"] is True and isinstance(meta["description"], str)
    assert set(meta) <= {"description", "globs", "alwaysApply"}
    assert "@.planning/CLAUDE.md" in block(body)


def check_vscode(repo: Path) -> None:
    config = json.loads((repo / ".vscode" / "mcp.json").read_text("utf-8"))
    assert "planning-memory" not in config.get("mcpServers", {})
    stdio(config["servers"]["planning-memory"], typed=True)
    assert "memory_context" in block((repo / ".github/copilot-instructions.md").read_text("utf-8"))


def check_codex(repo: Path) -> None:
    config = tomllib.loads((repo / ".codex" / "config.toml").read_text("utf-8"))
    stdio(config["mcp_servers"]["planning-memory"])
    assert "planning-memory view=CLAUDE.md" in block((repo / "AGENTS.md").read_text("utf-8"))
    settings = json.loads((repo / ".planning" / "memory-config.json").read_text("utf-8"))
    assert settings["memory"]["render"]["targets"]["agentsMd"] is True


def check_gemini(repo: Path) -> None:
    config = json.loads((repo / ".gemini" / "settings.json").read_text("utf-8"))
    stdio(config["mcpServers"]["planning-memory"])
    inner = block((repo / "GEMINI.md").read_text("utf-8"))
    assert "\n@./.planning/CLAUDE.md\n" in inner  # an import on its own line


def check_windsurf(repo: Path) -> None:
    path = home() / ".codeium" / "windsurf" / "mcp_config.json"
    stdio(json.loads(path.read_text("utf-8"))["mcpServers"]["planning-memory"])
    meta, body = front_matter((repo / ".windsurf/rules/planning-memory.md").read_text("utf-8"))
    assert meta == {"trigger": "always_on"}
    assert "memory_context" in block(body)


def check_cline(repo: Path) -> None:
    path = vscode_user() / "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
    server = json.loads(path.read_text("utf-8"))["mcpServers"]["planning-memory"]
    stdio(server)
    assert server["disabled"] is False
    assert "memory_context" in block((repo / ".clinerules/planning-memory.md").read_text("utf-8"))


def check_aider(repo: Path) -> None:
    config = yaml.safe_load((repo / ".aider.conf.yml").read_text("utf-8"))
    assert config["read"][-2:] == ["CONVENTIONS.md", ".planning/CLAUDE.md"]
    assert all(isinstance(item, str) for item in config["read"])
    assert ".planning/CLAUDE.md" in block((repo / "CONVENTIONS.md").read_text("utf-8"))


CHECKS: dict[str, Callable[[Path], None]] = {
    "claude-code": check_claude_code,
    "cursor": check_cursor,
    "vscode": check_vscode,
    "codex": check_codex,
    "gemini": check_gemini,
    "windsurf": check_windsurf,
    "cline": check_cline,
    "aider": check_aider,
}


def snapshot(*folders: Path) -> dict[Path, bytes]:
    """Every file's bytes (but the derived, gitignored caches under memory/contextual/, and
    pmem's own state: the install ledger)."""
    return {
        p: p.read_bytes()
        for f in folders
        for p in sorted(f.rglob("*"))
        if p.is_file() and not skipped(p)
    }


def folders(*roots: Path) -> set[Path]:
    return {p for f in roots for p in f.rglob("*") if p.is_dir() and not skipped(p)}


def skipped(path: Path) -> bool:
    return "contextual" in path.parts or path.is_relative_to(home() / "state")


def install(name: str, repo: Path, **options: Any) -> Any:
    user = name in USER_ONLY_MCP
    if user and "user" not in options:
        run(name, repo, **options)  # the project's rules file
    return run(name, repo, **{"user": user, **options})


@pytest.mark.parametrize("name", AGENTS)
def test_each_file_has_its_documented_shape(empty_repo: Path, name: str) -> None:
    install(name, empty_repo)
    CHECKS[name](empty_repo)


# What a user may already have in each kind of file (ours must be merged in beside it).
USER_TEXT = {
    ".json": json.dumps(
        {
            "theme": "dark",
            "mcpServers": {"github": {"command": "gh-mcp", "args": ["serve"]}},
            "servers": {"github": {"type": "stdio", "command": "gh-mcp"}},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
        },
        indent=4,
    )
    + "\n",
    ".toml": '# my settings\nmodel = "o3"\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n',
    ".yml": "model: gpt-4o  # mine\nread: [NOTES.md]\nauto-commits: false\n",
    ".md": "# Notes\n\nKeep this line.\n",
}


@pytest.mark.parametrize("name", AGENTS)
def test_merge_keep_idempotent_and_uninstall_gives_the_files_back(
    empty_repo: Path, name: str
) -> None:
    planned = install(name, empty_repo, dry_run=True).files
    seeded = []
    for entry in planned:  # every shared file exists already, with the user's own content
        path = Path(entry["path"])
        if path.suffix in USER_TEXT and "planning-memory" not in path.name:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(USER_TEXT[path.suffix], "utf-8")
            seeded.append(path)
    assert seeded
    before = snapshot(empty_repo, home())
    before_folders = folders(empty_repo, home())

    first = install(name, empty_repo)
    assert first.changed
    CHECKS[name](empty_repo)
    for path in seeded:  # the user's content is all still there
        data = before[path]
        if path.suffix == ".json":
            merged = json.loads(path.read_text("utf-8"))
            assert merged["theme"] == "dark" and merged["mcpServers"]["github"]["args"] == ["serve"]
            assert merged["hooks"]["Stop"][0]["hooks"][0]["command"] == "say done"
        elif path.suffix == ".toml":
            merged = tomllib.loads(path.read_text("utf-8"))
            assert merged["model"] == "o3" and merged["mcp_servers"]["github"] == {
                "command": "gh-mcp"
            }
            assert path.read_text("utf-8").startswith(data.decode())
        elif path.suffix == ".yml":
            merged = yaml.safe_load(path.read_text("utf-8"))
            assert merged["model"] == "gpt-4o" and merged["auto-commits"] is False
            assert merged["read"] == ["NOTES.md", "CONVENTIONS.md", ".planning/CLAUDE.md"]
        else:
            assert path.read_text("utf-8").startswith(data.decode())

    installed = snapshot(empty_repo, home())
    again = install(name, empty_repo)
    assert not again.changed and again.files == [] and again.diff == ""
    assert snapshot(empty_repo, home()) == installed

    run(name, empty_repo, remove=True, user=name in USER_ONLY_MCP)
    if name in USER_ONLY_MCP:
        run(name, empty_repo, remove=True)
    after = snapshot(empty_repo, home())
    changed = {p for p in before if after.get(p) != before[p]}
    assert changed == set(), f"not given back: {sorted(map(str, changed))}"
    assert set(after) - set(before) == set()  # and the files it created are gone
    assert folders(empty_repo, home()) == before_folders  # and the folders made for them


@pytest.mark.parametrize("name", AGENTS)
def test_dry_run_prints_the_diff_and_writes_nothing(empty_repo: Path, name: str) -> None:
    before = snapshot(empty_repo, home())
    user = name in USER_ONLY_MCP
    result = CliRunner().invoke(
        cli,
        ["-C", str(empty_repo), "install", name, "--dry-run", *(["--global"] if user else [])],
    )
    assert result.exit_code == 0, result.output
    assert snapshot(empty_repo, home()) == before
    assert result.stdout.startswith("--- ")
    planned = run(name, empty_repo, dry_run=True, user=user)
    assert result.stdout == planned.diff
    for entry in planned.files:
        label = Path(entry["path"])
        shown = (
            f"+++ b/{label.relative_to(empty_repo).as_posix()}"
            if label.is_relative_to(empty_repo)
            else f"+++ ~/{label.relative_to(home()).as_posix()}"
        )
        assert shown in result.stdout


@pytest.mark.parametrize(
    ("name", "rel", "bad"),
    [
        ("claude-code", ".mcp.json", '{"mcpServers": ['),
        ("claude-code", ".claude/settings.json", '{"hooks": []}'),
        ("cursor", ".cursor/mcp.json", "[]"),
        ("vscode", ".vscode/mcp.json", '{"servers": "x"}'),
        ("gemini", ".gemini/settings.json", "{,}"),
        ("codex", ".codex/config.toml", "[mcp_servers\n"),
        ("aider", "CONVENTIONS.md", f"{MARK}\nno end marker\n"),
    ],
)
def test_a_malformed_file_is_one_error_and_nothing_is_written(
    empty_repo: Path, name: str, rel: str, bad: str
) -> None:
    (empty_repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (empty_repo / rel).write_text(bad, "utf-8")
    before = snapshot(empty_repo, home())
    with pytest.raises(InputError) as caught:
        run(name, empty_repo)
    assert Path(rel).name in caught.value.one_line()
    assert snapshot(empty_repo, home()) == before


@pytest.mark.parametrize(
    ("name", "rel"),
    [
        ("claude-code", ".mcp.json"),
        ("cursor", ".cursor/mcp.json"),
        ("gemini", ".gemini/settings.json"),
    ],
)
def test_a_server_of_that_name_that_is_not_ours_is_left_alone(
    empty_repo: Path, name: str, rel: str
) -> None:
    foreign = {"mcpServers": {"planning-memory": {"command": "someone-else", "args": []}}}
    (empty_repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (empty_repo / rel).write_text(json.dumps(foreign), "utf-8")
    report = run(name, empty_repo)
    assert json.loads((empty_repo / rel).read_text("utf-8")) == foreign
    assert any("left as it is" in note for note in report.notes)
    run(name, empty_repo, remove=True)
    assert json.loads((empty_repo / rel).read_text("utf-8")) == foreign


def test_a_rules_file_not_ours_is_left_alone(empty_repo: Path) -> None:
    mine = empty_repo / ".cursor" / "rules" / "planning-memory.mdc"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nalwaysApply: false\n---\nmy own rule\n", "utf-8")
    report = run("cursor", empty_repo)
    assert mine.read_text("utf-8") == "---\nalwaysApply: false\n---\nmy own rule\n"
    assert any("not written by pmem" in note for note in report.notes)
    run("cursor", empty_repo, remove=True)
    assert mine.is_file()


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("claude-code", ".claude.json"),
        ("cursor", ".cursor/mcp.json"),
        ("codex", ".codex/config.toml"),
        ("gemini", ".gemini/settings.json"),
    ],
)
def test_global_writes_the_user_file(empty_repo: Path, name: str, path: str) -> None:
    run(name, empty_repo, user=True)
    text = (home() / path).read_text("utf-8")
    config = tomllib.loads(text) if path.endswith(".toml") else json.loads(text)
    stdio(config.get("mcpServers", config.get("mcp_servers", {}))["planning-memory"])
    assert not (empty_repo / path).exists()


def test_vscode_global_writes_the_profile_mcp_json(empty_repo: Path) -> None:
    run("vscode", empty_repo, user=True)
    config = json.loads((vscode_user() / "mcp.json").read_text("utf-8"))
    stdio(config["servers"]["planning-memory"], typed=True)


def test_windsurf_without_global_says_where_its_servers_live(empty_repo: Path) -> None:
    report = run("windsurf", empty_repo)
    assert any("--global" in n and "mcp_config.json" in n for n in report.notes)
    assert not (home() / ".codeium").exists()


def test_an_unknown_agent_is_a_usage_error(empty_repo: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(empty_repo), "install", "emacs"])
    assert result.exit_code == 2 and "emacs" in result.output
