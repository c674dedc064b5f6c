"""The ``pmem`` command line; this package is the only place that imports click.

Each command module registers its commands on the group in ``base`` when it is imported; the
group imports a command's module when that command is used (``base.COMMANDS``). An agent hook
(``pmem hook claude-code EVENT``, run many times a minute) skips click altogether and is
answered by the hook server when one runs; every other command runs in its own process.
"""

from __future__ import annotations

import sys

from planning_memory import agents
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
    """Entry point: ``pmem hook claude-code EVENT`` goes straight to the hook; everything
    else through the click group, which translates errors once."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[:2] == ["hook", "claude-code"] and not args[2].startswith("-"):
        sys.exit(agents.hook_process(args[2]))
    from planning_memory.cli.base import main as run_cli  # click and the command group

    run_cli(argv)
