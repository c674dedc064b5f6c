"""Agent commands: ``pmem mcp``, ``pmem hook claude-code EVENT``, ``pmem install claude-code``."""

from __future__ import annotations

import importlib.util
import sys

import click

from planning_memory import agents
from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.errors import ConfigError, NotInitializedError
from planning_memory.memory import Memory


@cli.command(name="mcp")
@pass_ctx
def mcp_command(ctx: Context) -> None:
    """Run the MCP server over stdio (for Claude Code, Cursor, ... ; see docs/agents.md).

    Needs the `mcp` extra: pip install 'planning-memory[mcp]'.

    Tools: memory_save, memory_search, memory_get, memory_context, memory_timeline,
    memory_pin, memory_forget, session_start, session_log, session_end, entity_file,
    entity_function, entity_area. The memory is the repository's containing the working
    directory (or -C DIR), looked up at each call.

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
    """Handle a Claude Code hook EVENT: SessionStart, UserPromptSubmit, PostToolUse, Stop,
    PreCompact or SessionEnd (or session-start, ...).

    SessionStart prints the memory context as additionalContext (and closes sessions that
    never ended); UserPromptSubmit logs the prompt, learns from trigger phrases and returns
    the memories relevant to it; PostToolUse records file reads and edits; Stop reads the
    new part of the transcript (Claude's replies, tool calls, [MEMORIZE: ...] facts);
    PreCompact and SessionEnd read it too and write summaries. Errors are one line on
    stderr, exit code 0.

    \b
    Example:
      echo '{"session_id": "abc", "cwd": "'$PWD'", "source": "startup"}' \\
        | pmem hook claude-code SessionStart
    """
    sys.exit(agents.hook_main(event, ctx.root))


@cli.group()
def install() -> None:
    """Connect an agent to this repository's memory.

    \b
    Example:
      pmem install claude-code
    """


@install.command(name="claude-code")
@click.option(
    "--command",
    "command",
    default="pmem",
    show_default=True,
    help="How Claude Code runs pmem (e.g. 'uv run pmem').",
)
@json_option
@pass_ctx
def install_claude_code(ctx: Context, command: str, as_json: bool) -> None:
    """Write the hooks into .claude/settings.json and the MCP server into .mcp.json.

    Merges with what is there: other hooks, servers and settings are kept; running it again
    changes nothing; a malformed file is an error and nothing is written.

    \b
    Example:
      pmem install claude-code && git add .claude/settings.json .mcp.json
    """
    root = ctx.root or Memory.locate()
    if root is None:
        raise NotInitializedError(
            "not inside a git repository or memory tree",
            hint="run it in the repository root, or pass -C DIR",
        )
    report = agents.install_claude_code(root, command=command)
    lines = [
        f"{'Updated' if changed else 'Unchanged'} {path}"
        for path, changed in (
            (report.settings, report.settings_changed),
            (report.mcp, report.mcp_changed),
        )
    ]
    emit(report.as_dict(), as_json, "\n".join([*lines, *(f"note: {n}" for n in report.notes)]))
