"""The ``pmem`` command line; this package is the only place that imports click.

Each command module registers its commands on the group in ``base`` when it is imported; the
group imports a command's module when that command is used (``base.COMMANDS``). An agent hook
(``pmem hook claude-code EVENT``, run many times a minute) skips click altogether and is
answered by the pmem server when one runs; so is each command in ``SERVED`` (the short ones an
agent or a person runs often), in a worker that already has click and the package imported
and that reads and writes this process's own standard streams.
"""

from __future__ import annotations

import sys

from planning_memory import agents
from planning_memory.agents import hook_client
from planning_memory.core.exports import exports

TYPE_CHECKING = False  # without importing typing (a hook starts fast)
if TYPE_CHECKING:
    from planning_memory.cli.base import EXIT_CODES as EXIT_CODES
    from planning_memory.cli.base import cli as cli
    from planning_memory.cli.base import main as run_in_process

    __all__ = ["EXIT_CODES", "SERVED", "cli", "command_name", "main", "run_in_process"]
else:
    __getattr__, __dir__, _names = exports(
        __name__, {"EXIT_CODES": "base", "cli": "base", "run_in_process": "base:main"}
    )
    __all__ = [*_names, "SERVED", "command_name", "main"]


# commands a server's worker runs: short-lived, no daemon, no prompt, no server of their own
SERVED = frozenset(
    {
        *("context", "entity", "forget", "learn", "learning", "memory", "mistakes"),
        *("patterns", "pin", "prefs", "render", "review", "save", "search", "session"),
        *("show", "stats", "sync", "timeline", "validate"),
    }
)


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``pmem hook claude-code EVENT`` goes straight to the hook; a served
    command to the pmem server when one runs (else here, starting one for the next);
    everything else through the click group, which translates errors once."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[:2] == ["hook", "claude-code"] and not args[2].startswith("-"):
        sys.exit(agents.hook_process(args[2]))
    served = command_name(args) in SERVED and hook_client.enabled()
    if served and (code := hook_client.run_command(args)) is not None:
        sys.exit(code)
    from planning_memory.cli.base import main as run_cli  # click and the command group

    try:
        run_cli(argv)
    finally:
        if served:
            hook_client.spawn()


def command_name(args: list[str]) -> str | None:
    """The command ``args`` run, past the group's own ``-C DIR`` / ``--root DIR``; None for
    another group option (``--help``, ``--version``) or none at all."""
    at = 0
    while at < len(args):
        arg = args[at]
        if arg in ("-C", "--root"):
            at += 2
        elif arg.startswith("--root=") or (arg.startswith("-C") and len(arg) > 2):
            at += 1
        else:
            return None if arg.startswith("-") else arg
    return None
