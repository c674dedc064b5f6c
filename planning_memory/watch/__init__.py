"""The watch daemon: keeps a repository's memory current while its files change.

The part's API. ``start``, ``stop``, ``status`` and ``is_running`` control the background
daemon of a repository (``process``: light, no watchdog); ``run_foreground`` runs one in this
process and ``Daemon`` is the loop itself (``daemon``: imported on first use, as it brings in
watchdog). All take the repository's ``Memory``.

    events     which changes count, and when a batch is ready (the only watchdog user)
    plan       what a batch sets off (pure)
    reactions  the registry of reactions, each one call on the ``Memory`` facade
    daemon     the loop, and the entry point of the daemon's process
    child      the scan child, both ends (a full reconcile runs in a child process)
    process    runtime files, pid, lock, start / stop / status, log rotation
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planning_memory.watch.process import Runtime, is_running, start, status, stop

if TYPE_CHECKING:
    from planning_memory.watch.daemon import Daemon, run_foreground

__all__ = ["Daemon", "Runtime", "is_running", "run_foreground", "start", "status", "stop"]


def __getattr__(name: str) -> Any:
    """``Daemon`` and ``run_foreground``, imported when first asked for (PEP 562)."""
    if name not in ("Daemon", "run_foreground"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from planning_memory.watch import daemon

    return getattr(daemon, name)
