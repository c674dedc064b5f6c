"""Agent entry points: Claude Code's hooks, the MCP server and the installers.

``claude_code`` answers ``pmem hook claude-code EVENT``; ``mcp_server`` is ``pmem mcp``;
``install`` writes an agent's configuration. Each reaches the memory only through ``Memory``.
"""
