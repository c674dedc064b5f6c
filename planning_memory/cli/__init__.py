"""The ``pmem`` command line; this package is the only place that imports click.

Each command module registers its commands on the group in ``base`` when it is imported; the
group imports a command's module when that command is used (``base.COMMANDS``). An agent hook
(``pmem hook claude-code EVENT``, run many times a minute) skips click altogether and is
answered by the hook server when one runs; every other command runs in its own process.
"""

from __future__ import annotations

import os
import sys

# as _agents: the submodule cli.agents, once imported, takes the name "agents" in this package
from planning_memory import agents as _agents
from planning_memory.core.exports import exports

TYPE_CHECKING = False  # without importing typing (a hook starts fast)
if TYPE_CHECKING:
    from planning_memory.cli.base import EXIT_CODES as EXIT_CODES
    from planning_memory.cli.base import cli as cli

    __all__ = ["EXIT_CODES", "cli", "main"]
else:
    __getattr__, __dir__, _names = exports(__name__, {"EXIT_CODES": "base", "cli": "base"})
    __all__ = [*_names, "main"]


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``pmem hook claude-code EVENT`` goes straight to the hook, and ``pmem mcp``
    straight to the MCP server's early ``initialize`` answer (a client gives a new server a
    few seconds); everything else through the click group, which translates errors once."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[:2] == ["hook", "claude-code"] and not args[2].startswith("-"):
        sys.exit(_agents.hook_process(args[2]))
    root = _mcp_root(args)
    if root is not None:
        try:
            sys.exit(_agents.serve_mcp(root or None))
        except KeyboardInterrupt:
            sys.exit(130)
    from planning_memory.cli.base import main as run_cli  # click and the command group

    run_cli(argv)


def _mcp_root(args: list[str]) -> str | None:
    """For ``pmem mcp`` or ``pmem -C DIR mcp`` (``--root DIR``) with the MCP SDK installed,
    the root ("" for none); None for anything else, which the click group handles (its
    errors, its help, the message that the SDK is missing)."""
    if args == ["mcp"]:
        root = ""
    elif len(args) == 3 and args[0] in ("-C", "--root") and args[2] == "mcp" and args[1]:
        root = args[1]
        if not os.path.isdir(root):
            return None
    else:
        return None
    from importlib.util import find_spec

    return root if find_spec("mcp") is not None else None
