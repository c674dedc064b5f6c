"""The ``pmem`` command line; this package is the only place that imports click.

Each command module registers its commands on the group in ``base`` when it is imported; the
group imports a command's module when that command is used (``base.COMMANDS``).
"""

from __future__ import annotations

from planning_memory.cli.base import EXIT_CODES, cli, main

__all__ = ["EXIT_CODES", "cli", "main"]
