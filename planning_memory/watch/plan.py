"""What a batch of changed paths sets off: the ``Plan`` and the daemon's decisions.

Pure: values in, values out. It reads no file, no clock and no config file; the daemon asks
the file system (gitignore rules, its own writes, ``HEAD``, git's index lock) and passes the
answers in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_PATHS = 1000  # a batch with more source paths than this is reconciled in full
IN_PROCESS_MAX_FILES = 20_000  # larger repositories: every scan runs in a child process
HOLD_MAX_S = 10.0  # hold a batch while git works or a big burst goes on, at most this long

PLANNING = ".planning/"
LONG_TERM = PLANNING + "memory/long-term/"
# reaction -> the config switch that turns it off (``memory.<section>.<key>: false``)
SWITCHES = {"entity": ("entity", "autoScan"), "index": ("contextual", "autoReindex")}
UNITS = {"s": 1, "m": 60, "h": 3600}  # ``entity.scanInterval`` durations: 30s, 5m, 1h
INTERVAL = "scan interval"  # the reason a warm rescan gives its full reconcile


@dataclass
class Plan:
    """A batch sorted by what it sets off."""

    source: set[str] = field(default_factory=set)
    memory_json: set[str] = field(default_factory=set)
    markdown: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    queue: set[str] = field(default_factory=set)
    entity: set[str] = field(default_factory=set)
    full: list[str] = field(default_factory=list)
    gitignore: bool = False
    config: bool = False

    def groups(self) -> tuple[set[str], ...]:
        return (
            self.source,
            self.memory_json,
            self.markdown,
            self.sessions,
            self.queue,
            self.entity,
        )

    def __bool__(self) -> bool:
        return bool(self.full or self.config or any(self.groups()))

    def count(self) -> int:
        return sum(len(group) for group in self.groups())


def is_record(rel: str) -> bool:
    """True for a long-term record file (``.planning/memory/long-term/**.json``)."""
    return rel.startswith(LONG_TERM) and rel.endswith(".json")


def records(paths: Iterable[str]) -> set[str]:
    """The long-term record files among repository-relative ``paths``."""
    return {rel for rel in paths if is_record(rel)}


def sort_planning(plan: Plan, rel: str) -> None:
    """Put a path under ``.planning/`` in its group (or nowhere)."""
    sub = rel[len(PLANNING) :]
    if sub == "memory-config.json":
        plan.config = True
    elif is_record(rel):
        plan.memory_json.add(rel)
    elif sub.startswith("memory/short-term/queue/"):
        plan.queue.add(rel)
    elif sub.startswith("memory/short-term/"):
        plan.sessions.add(rel)
    elif sub.startswith("memory/entity/"):
        plan.entity.add(rel)
    elif "/" not in sub and sub.endswith(".md"):
        plan.markdown.add(rel)


def is_gitignore(rel: str) -> bool:
    return rel.rpartition("/")[2] == ".gitignore"


def maybe_source(rel: str) -> bool:
    """True for a path that is a source path unless gitignored (the daemon asks only these)."""
    return not rel.startswith(PLANNING) and not is_gitignore(rel)


def _under_any(folder: str, paths: Iterable[str]) -> bool:
    prefix = folder + "/"
    return any(p.startswith(prefix) for p in paths)


def make(
    paths: Iterable[str],
    deleted_dirs: Iterable[str] = (),
    full: Iterable[str] = (),
    *,
    ignored: frozenset[str] | set[str] = frozenset(),
    branch_switched: bool = False,
) -> Plan:
    """Sort a batch: ``paths`` changed (the daemon's own writes and ``.git/HEAD`` already
    taken out), folders deleted, reasons for a full reconcile; ``ignored`` names the paths the
    gitignore rules exclude; ``branch_switched`` that ``HEAD`` names another branch now.

    A branch switch, more than ``MAX_PATHS`` source paths, a ``.gitignore`` or a config
    change make the batch one full reconcile."""
    paths = set(paths)
    plan = Plan(full=list(full))
    if branch_switched:
        plan.full.append("branch switch")
    for rel in paths:
        if rel.startswith(PLANNING):
            sort_planning(plan, rel)
        elif is_gitignore(rel):
            plan.gitignore = True
        elif rel not in ignored:
            plan.source.add(rel)
    for rel in deleted_dirs:
        if rel.startswith(PLANNING):
            plan.memory_json.add(rel)
        elif rel not in ignored and not _under_any(rel, paths):
            plan.source.add(rel)  # moved out of the tree: the scan drops what was inside
    if len(plan.source) > MAX_PATHS:
        plan.full.append(f"{len(plan.source)} paths changed")
    if plan.gitignore or plan.config:
        plan.full.append(".gitignore changed" if plan.gitignore else "config changed")
    return plan


def hold(*, age: float, git_busy: bool, pending: int, idle_for: float, quiet: float) -> str | None:
    """Why a due batch should wait (bounded by ``HOLD_MAX_S`` from its first change): git
    holds its index lock while it rewrites the work tree; a burst of more than ``MAX_PATHS``
    changes that is still arriving will be one full reconcile anyway, so it may as well be
    complete."""
    if age >= HOLD_MAX_S:
        return None
    if git_busy:
        return "waiting for git"
    if pending > MAX_PATHS and idle_for < quiet:
        return "waiting for the burst to end"
    return None


def scan_in_child(paths: list[str] | None, files_seen: int) -> bool:
    """A full reconcile (``paths`` None), or any scan once the last reconcile listed more than
    ``IN_PROCESS_MAX_FILES`` files, runs in a child process: it holds whole-repository
    structures that the child gives back to the system when it ends."""
    return paths is None or files_seen > IN_PROCESS_MAX_FILES


def switched(names: Iterable[str], config: Mapping[str, Any]) -> dict[str, str]:
    """``available`` or ``disabled by config (<section>.<key>)`` for each reaction
    (``entity.scanInterval: manual`` turns the ``entity`` reaction off too)."""
    found: dict[str, str] = {}
    for name in names:
        section, key = SWITCHES.get(name, ("", ""))
        enabled = not section or config["memory"][section].get(key, True)
        found[name] = "available" if enabled else f"disabled by config ({section}.{key})"
    if found.get("entity") == "available" and scan_mode(config) == "manual":
        found["entity"] = "disabled by config (entity.scanInterval: manual)"
    return found


def scan_mode(config: Mapping[str, Any]) -> str:
    """``entity.scanInterval``: ``on-change`` (scan what the file events name), ``manual``
    (the daemon never scans: ``pmem scan`` only) or a duration (``30s``, ``5m``, ``1h``: on
    change, and a warm rescan that often)."""
    return str(config["memory"]["entity"].get("scanInterval", "on-change"))


def rescan_every(config: Mapping[str, Any]) -> float | None:
    """Seconds between warm rescans (``entity.scanInterval`` a duration, ``autoScan`` on),
    else None."""
    if not config["memory"]["entity"].get("autoScan", True):
        return None
    mode = scan_mode(config)
    count, unit = mode[:-1], mode[-1:]
    if unit not in UNITS or not count.isdigit() or int(count) < 1:
        return None  # on-change, manual (the config's schema allows nothing else)
    return float(int(count) * UNITS[unit])


def summary(plan: Plan, *, at: str, seconds: float, waited: float) -> dict[str, Any]:
    """The ``last_batch`` entry of the status file."""
    return {
        "at": at,
        "paths": plan.count(),
        "source": len(plan.source),
        "full": "; ".join(plan.full) or None,
        "seconds": seconds,
        "waited": round(waited, 3),
    }
