"""``pmem install`` then ``pmem uninstall`` on files a user already has gives them back byte
for byte, for each agent: compact and indented JSON, JSONC comments, CRLF line endings, TOML
and YAML comments, an empty ``mcpServers`` the user had, an empty folder the user had, Aider's
own ``read:`` entry. Install must change every one of these files (else the test proves
nothing); uninstall must leave every file and folder as it was."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from planning_memory.agents.install import run

from .test_install_formats import folders, home, snapshot, vscode_user


def round_trip(
    repo: Path, name: str, seed: dict[Path, str], empty: list[Path], *, user: bool = True
) -> None:
    """Seed ``seed`` and the empty folders ``empty``; install (project, then with ``user``
    the user's files too), check each seeded file changed, uninstall, compare."""
    for path, text in seed.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    for folder in empty:
        folder.mkdir(parents=True, exist_ok=True)
    before, before_folders = snapshot(repo, home()), folders(repo, home())
    scopes = (False, True) if user else (False,)
    for scope in scopes:
        run(name, repo, user=scope)
    untouched = [str(p) for p in seed if p.read_bytes() == before[p]]
    assert untouched == [], "the install did not change these, so the test proves nothing"
    assert all(any(f.iterdir()) for f in empty), "the install wrote nothing in these folders"
    for scope in scopes:
        run(name, repo, user=scope, remove=True)
    after = snapshot(repo, home())
    for path, data in before.items():
        got = after.get(path, b"<removed>")
        assert got == data, (
            f"{path} not given back:\n"
            + "".join(
                difflib.unified_diff(
                    data.decode().splitlines(keepends=True), got.decode().splitlines(keepends=True)
                )
            )
            + f"\n{data!r}\n{got!r}"
        )
    assert sorted(set(after) - set(before)) == []
    assert folders(repo, home()) == before_folders


def test_claude_code(empty_repo: Path) -> None:
    settings = (
        '{\r\n  "$schema": "https://json.schemastore.org/claude-code-settings.json",\r\n'
        '  "permissions": {"allow": ["Bash(pnpm test:*)"], "deny": []},\r\n'
        '  "hooks": {\r\n    "Stop": []\r\n  },\r\n  "model": "opus"\r\n}\r\n'
    )
    round_trip(
        empty_repo,
        "claude-code",
        {
            empty_repo / ".claude" / "settings.json": settings,
            empty_repo / ".mcp.json": '{"mcpServers":{}}',
            empty_repo / "CLAUDE.md": "# Acme web\r\n\r\nRun `pnpm test` before a commit.\r\n",
            home() / ".claude.json": '{"numStartups":12,"theme":"dark","projects":{"/x":{}}}\n',
        },
        [home() / ".claude"],
    )


def test_cursor(empty_repo: Path) -> None:
    servers = (
        '{"mcpServers": {"github": {"command": "npx", '
        '"args": ["-y", "@modelcontextprotocol/server-github"]}}}\n'
    )
    round_trip(
        empty_repo,
        "cursor",
        {
            empty_repo / ".cursor" / "mcp.json": servers,
            home() / ".cursor" / "mcp.json": '{\n    "mcpServers": {}\n}\n',
        },
        [empty_repo / ".cursor" / "rules"],
    )


def test_vscode(empty_repo: Path) -> None:
    jsonc = (
        '{\n\t// the servers of this workspace\n\t"servers": {\n'
        '\t\t"github": {\n\t\t\t"type": "http",\n'
        '\t\t\t"url": "https://api.githubcopilot.com/mcp/"\n\t\t}\n\t},\n'
        '\t/* asked for at start */\n\t"inputs": []\n}\n'
    )
    round_trip(
        empty_repo,
        "vscode",
        {
            empty_repo / ".vscode" / "mcp.json": jsonc,
            vscode_user() / "mcp.json": '{\r\n\t"servers": {}\r\n}',
        },
        [empty_repo / ".github"],
    )


def test_codex(empty_repo: Path) -> None:
    config = (
        "# Codex in this repository\n"
        'model = "o4-mini"  # quick\n'
        'approval_policy = "on-request"\n\n'
        "[mcp_servers]\n\n"
        "[mcp_servers.github]\n"
        'command = "npx"  # node\n'
        'args = ["-y", "@modelcontextprotocol/server-github"]\n'
    )
    round_trip(
        empty_repo,
        "codex",
        {
            empty_repo / ".codex" / "config.toml": config,
            empty_repo / "AGENTS.md": "# Agents\n\nUse pnpm, never npm.\n",
            home() / ".codex" / "config.toml": '# mine\r\nmodel = "o3"\r\n\r\n[mcp_servers]\r\n',
        },
        [],
    )


def test_gemini(empty_repo: Path) -> None:
    settings = (
        "{\n  // Gemini CLI, this project\n"
        '  "theme": "GitHub",\n  "mcpServers": {},\n  "contextFileName": "GEMINI.md"\n}\n'
    )
    round_trip(
        empty_repo,
        "gemini",
        {
            empty_repo / ".gemini" / "settings.json": settings,
            empty_repo / "GEMINI.md": "# Gemini\r\n\r\nAnswer in English.\r\n",
        },
        [home() / ".gemini"],
    )


def test_windsurf(empty_repo: Path) -> None:
    round_trip(
        empty_repo,
        "windsurf",
        {home() / ".codeium" / "windsurf" / "mcp_config.json": '{"mcpServers":{}}'},
        [empty_repo / ".windsurf"],
    )


def test_cline(empty_repo: Path) -> None:
    settings = vscode_user() / "globalStorage/saoudrizwan.claude-dev/settings"
    round_trip(
        empty_repo,
        "cline",
        {settings / "cline_mcp_settings.json": '{\n  "mcpServers": {}\n}'},
        [empty_repo / ".clinerules"],
    )


@pytest.mark.parametrize(
    "config",
    [
        "# Aider\nmodel: sonnet  # the default\nread: CONVENTIONS.md\nauto-commits: false\n",
        "model: sonnet\r\nread: [NOTES.md, CONVENTIONS.md]  # mine\r\n",
        "read:\n  - NOTES.md  # the team's\n  - CONVENTIONS.md\nmodel: sonnet\n",
        "read:\n- NOTES.md\n",
        "model: sonnet\n",
    ],
)
def test_aider(empty_repo: Path, config: str) -> None:
    round_trip(
        empty_repo,
        "aider",
        {
            empty_repo / ".aider.conf.yml": config,
            empty_repo / "CONVENTIONS.md": "# Conventions\n\n- Type hints everywhere.\n",
        },
        [],
        user=False,
    )
