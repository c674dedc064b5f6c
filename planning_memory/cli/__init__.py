"""The ``pmem`` command line; this package is the only place that imports click.

Each command module registers its commands on the group in ``base``; importing them here
assembles the CLI.
"""

from __future__ import annotations

from planning_memory.cli import (  # noqa: F401  (each module registers its commands)
    agents,
    contextual,
    core,
    entity,
    git,
    longterm,
    session,
    views,
    watch,
)
from planning_memory.cli.base import EXIT_CODES, cli, main

__all__ = ["EXIT_CODES", "cli", "main"]
