"""Agent entry points: Claude Code's hooks, the MCP server and the installers.

``run_hook`` answers ``pmem hook claude-code EVENT``; ``serve_mcp`` is ``pmem mcp``;
``install_claude_code`` writes an agent's configuration. Each reaches the memory only through
``Memory``, and each loads on first use (the MCP SDK only for ``serve_mcp``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.agents.claude_code import MAX_STDIN as MAX_HOOK_INPUT
    from planning_memory.agents.claude_code import main as hook_main
    from planning_memory.agents.claude_code import run as run_hook
    from planning_memory.agents.install import install_claude_code as install_claude_code
    from planning_memory.agents.mcp_server import run as serve_mcp

    __all__ = ["MAX_HOOK_INPUT", "hook_main", "install_claude_code", "run_hook", "serve_mcp"]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "MAX_HOOK_INPUT": "claude_code:MAX_STDIN",
            "hook_main": "claude_code:main",
            "install_claude_code": "install",
            "run_hook": "claude_code:run",
            "serve_mcp": "mcp_server:run",
        },
    )
