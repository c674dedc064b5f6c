"""Agent entry points: Claude Code's hooks, the MCP server, the installers and the doctor.

``run_hook`` answers ``pmem hook claude-code EVENT``; ``serve_mcp`` is ``pmem mcp``;
``install_agent`` writes (or takes back) an agent's configuration, ``AGENT_NAMES`` naming the
agents it knows; ``diagnose`` is ``pmem doctor``. Each reaches the memory only through
``Memory``, and each loads on first use (the MCP SDK only for ``serve_mcp`` and the doctor's
server check).
"""

from __future__ import annotations

from planning_memory.core.exports import exports

TYPE_CHECKING = False  # without importing typing (a hook starts fast)
if TYPE_CHECKING:
    from planning_memory.agents.claude_code import MAX_STDIN as MAX_HOOK_INPUT
    from planning_memory.agents.claude_code import main as hook_main
    from planning_memory.agents.claude_code import run as run_hook
    from planning_memory.agents.doctor import diagnose as diagnose
    from planning_memory.agents.hook_client import main as hook_process
    from planning_memory.agents.install import install_claude_code as install_claude_code
    from planning_memory.agents.install import run as install_agent
    from planning_memory.agents.installers import AGENTS as AGENT_NAMES
    from planning_memory.agents.mcp_start import run as serve_mcp

    __all__ = [
        "AGENT_NAMES",
        "MAX_HOOK_INPUT",
        "diagnose",
        "hook_main",
        "hook_process",
        "install_agent",
        "install_claude_code",
        "run_hook",
        "serve_mcp",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "AGENT_NAMES": "installers:AGENTS",
            "MAX_HOOK_INPUT": "claude_code:MAX_STDIN",
            "diagnose": "doctor",
            "hook_main": "claude_code:main",
            "hook_process": "hook_client:main",
            "install_agent": "install:run",
            "install_claude_code": "install",
            "run_hook": "claude_code:run",
            "serve_mcp": "mcp_start:run",
        },
    )
