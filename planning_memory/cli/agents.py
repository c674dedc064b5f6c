"""Agent commands: ``pmem mcp``, ``pmem hook claude-code EVENT``, ``pmem install AGENT``,
``pmem uninstall AGENT``, ``pmem doctor``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import click

from planning_memory import agents
from planning_memory.agents import AGENT_NAMES as AGENTS
from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.errors import ConfigError, NotInitializedError
from planning_memory.memory import Memory


@cli.command(name="mcp")
@pass_ctx
def mcp_command(ctx: Context) -> None:
    """Run the MCP server over stdio (for Claude Code, Cursor, ... ; see docs/agents.md).

    Needs the `mcp` extra: pip install 'planning-memory[mcp]'.

    Tools: memory_save, memory_search, memory_stats, memory_get, memory_context,
    memory_timeline, memory_pin, memory_forget, session_start, session_log, session_error,
    session_end, entity_file, entity_function, entity_area. The memory is the
    repository's containing the working directory (or -C DIR), looked up at each call.

    \b
    Example (.mcp.json):
      {"mcpServers": {"planning-memory": {"command": "pmem", "args": ["mcp"]}}}
    """
    if importlib.util.find_spec("mcp") is None:
        raise ConfigError(
            "the MCP server needs the `mcp` package, which the default install leaves out",
            hint="pip install 'planning-memory[mcp]'",
        )
    agents.serve_mcp(ctx.root)


@cli.group()
def hook() -> None:
    """Agent hooks: read the hook's JSON on stdin, never block the agent (exit 0).

    `pmem install claude-code` writes the settings that call them.

    \b
    Example:
      pmem hook claude-code SessionStart < payload.json
    """


@hook.command(name="claude-code")
@click.argument("event")
@pass_ctx
def claude_code_hook(ctx: Context, event: str) -> None:
    """Handle a Claude Code hook EVENT: SessionStart, UserPromptSubmit, PostToolUse,
    PostToolUseFailure, Stop, PreCompact or SessionEnd (or session-start, ...).

    SessionStart prints the memory context as additionalContext (and closes sessions that
    never ended); UserPromptSubmit logs the prompt, learns from trigger phrases and returns
    the memories relevant to it; PostToolUse records file reads and edits;
    PostToolUseFailure keeps a failed tool call in the session's errors; Stop reads the
    new part of the transcript (Claude's replies, tool calls, [MEMORIZE: ...] facts);
    PreCompact and SessionEnd read it too and write summaries. Errors are one line on
    stderr, exit code 0.

    \b
    Example:
      echo '{"session_id": "abc", "cwd": "'$PWD'", "source": "startup"}' \\
        | pmem hook claude-code SessionStart
    """
    sys.exit(agents.hook_main(event, ctx.root))


def _root(ctx: Context, user: bool) -> Path | None:
    root = ctx.root or Memory.locate()
    if root is None and not user:
        raise NotInitializedError(
            "not inside a git repository or memory tree",
            hint="run it in the repository root, or pass -C DIR (or --global)",
        )
    return root


def _report(report: Any, as_json: bool) -> None:
    if as_json:
        emit(report.as_dict(), True)
        return
    if report.dry_run:
        click.echo(report.diff or f"{report.agent}: nothing to change", nl=not report.diff)
    else:
        for f in report.files:
            click.echo(f"{f['change'].capitalize()} {f['path']}")
        if not report.files:
            click.echo(f"{report.agent}: nothing to change")
    for note in report.notes:
        click.echo(f"note: {note}", err=True)


agent_argument = click.argument("agent", type=click.Choice(list(AGENTS)), metavar="AGENT")
global_option = click.option(
    "--global",
    "user",
    is_flag=True,
    help="The user-level MCP config (and Claude Code's user hooks) instead of the project's.",
)
dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Print the unified diff of what would change; write nothing."
)


@cli.command()
@agent_argument
@click.option(
    "--command",
    "command",
    default="pmem",
    show_default=True,
    help="How the agent runs pmem: a path (spaces are fine) or a command line ('uv run pmem').",
)
@global_option
@dry_run_option
@json_option
@pass_ctx
def install(
    ctx: Context, agent: str, command: str, user: bool, dry_run: bool, as_json: bool
) -> None:
    """Connect AGENT to this repository's memory: its MCP server, its rules file with the
    memory block, its hooks (Claude Code, whose CLAUDE.md gets `@.planning/CLAUDE.md`). AGENT
    is one of claude-code, cursor, vscode, codex, gemini, windsurf, cline, aider;
    docs/agents.md says what goes where.

    Merges with what is there, in each file's own layout (other servers, hooks, settings,
    text and comments are kept); running it again changes nothing; a malformed file is an
    error and nothing is written. Committed hook commands stay silent on a machine without
    pmem.

    \b
    Examples:
      pmem install claude-code && git add .claude/settings.json .mcp.json CLAUDE.md
      pmem install cursor --dry-run          show the diff, write nothing
      pmem install windsurf --global         ~/.codeium/windsurf/mcp_config.json
      pmem install codex --command "/opt/my tools/pmem"
    """
    root = _root(ctx, user)
    _report(agents.install_agent(agent, root, command=command, user=user, dry_run=dry_run), as_json)


@cli.command()
@agent_argument
@global_option
@dry_run_option
@json_option
@pass_ctx
def uninstall(ctx: Context, agent: str, user: bool, dry_run: bool, as_json: bool) -> None:
    """Take AGENT's part back out: exactly what `pmem install AGENT` added, byte for byte (a
    file, key or folder the install made goes once it holds nothing else; what was there
    before stays, even empty).

    \b
    Examples:
      pmem uninstall cursor
      pmem uninstall codex --global --dry-run
    """
    root = _root(ctx, user)
    _report(agents.install_agent(agent, root, user=user, dry_run=dry_run, remove=True), as_json)


@cli.command()
@click.argument("agent", nargs=-1, type=click.Choice(list(AGENTS)), metavar="[AGENT]...")
@json_option
@pass_ctx
def doctor(ctx: Context, agent: tuple[str, ...], as_json: bool) -> None:
    """Check each installed agent (or each AGENT): its config is present and valid, `pmem`
    resolves from it, the MCP server starts as it says within 5 s (an agent gives up on a
    slower one) and answers a tool call, every hook is there and runs within its timeout, its
    rules are this version's; then the memory: the tree opens, the index is built, the views
    are current. One line per check, with the fix; exit code 1 when one fails.

    \b
    Examples:
      pmem doctor
      pmem doctor cursor --json
    """
    root = ctx.root or Memory.locate()
    checks = agents.diagnose(root, agent)
    emit([c.as_dict() for c in checks], as_json, "\n".join(c.line() for c in checks))
    if not all(c.ok for c in checks):
        sys.exit(1)
