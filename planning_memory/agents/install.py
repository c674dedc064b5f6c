"""``pmem install AGENT`` / ``pmem uninstall AGENT``: plan an agent's files, show or apply.

Every file is read and checked before any is written, so a malformed file gives one clear
error and nothing is written. Merging keeps everything else in each file; running it twice
changes nothing the second time; ``dry_run`` gives the unified diff and writes nothing;
uninstalling takes back exactly what installing added, byte for byte: the ledger
(``installers.ledger``) keeps which files, keys and folders an install made, so only those go
(a file that held nothing else, an object or folder left empty). Files are written through
``memory.write_outside`` (atomically, the mode kept) and removed through
``memory.remove_outside``; the AGENTS.md block is switched through the memory's config
(``render.targets``) so the views keep it current.
"""

from __future__ import annotations

import difflib
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.agents.installers import AGENTS, installer
from planning_memory.agents.installers.claude_code import HOOK_EVENTS as HOOK_EVENTS
from planning_memory.agents.installers.claude_code import merge_settings as merge_settings
from planning_memory.agents.installers.ledger import Ledger, Made
from planning_memory.agents.installers.parts import Edit, Plan, Where, command_words
from planning_memory.errors import InputError
from planning_memory.memory import Memory, remove_outside, write_outside


@dataclass
class Report:
    """What installing or uninstalling an agent did (or, with ``dry_run``, would do)."""

    agent: str
    action: str  # "install" or "uninstall"
    files: list[dict[str, Any]] = field(default_factory=list)  # path, change
    notes: list[str] = field(default_factory=list)
    diff: str = ""
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return any(f["change"] != "unchanged" for f in self.files)

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "action": self.action,
            "dry_run": self.dry_run,
            "changed": self.changed,
            "files": self.files,
            "notes": self.notes,
            "diff": self.diff,
        }


def where(
    root: Path | None, *, command: str = "pmem", user: bool = False, ledger: Ledger | None = None
) -> Where:
    made = ledger.made() if ledger is not None else {}
    return Where(root, Path.home(), command_words(command), user, made)


def known(name: str) -> str:
    if name not in AGENTS:
        raise InputError(
            f"unknown agent {name!r}", hint=f"one of: {', '.join(AGENTS)} (docs/agents.md)"
        )
    return name


def _label(path: Path, root: Path | None) -> str:
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    if path.is_relative_to(Path.home()):
        return "~/" + path.relative_to(Path.home()).as_posix()
    return str(path)


def unified_diff(edits: list[Edit], root: Path | None) -> str:
    out: list[str] = []
    for e in edits:
        label = _label(e.path, root)
        out += difflib.unified_diff(
            (e.before or "").splitlines(keepends=True),
            (e.after or "").splitlines(keepends=True),
            fromfile=_side("a", label) if e.before is not None else "/dev/null",
            tofile=_side("b", label) if e.after is not None else "/dev/null",
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def _side(side: str, label: str) -> str:
    return label if label.startswith(("~", "/")) else f"{side}/{label}"


def _change(e: Edit) -> str:
    return "created" if e.before is None else "removed" if e.after is None else "updated"


def _apply(plan: Plan, root: Path | None, report: Report, ledger: Ledger, *, remove: bool) -> None:
    memory = Memory(root) if root is not None and (root / ".planning").is_dir() else None
    targets = dict(plan.targets)
    if remove:
        _switch(memory, targets, report, ledger)
    for e in plan.edits:
        if e.after is not None:
            folders = _missing(e.path.parent)
            write_outside(e.path, e.after.encode("utf-8"))
            if not remove:
                ledger.note(e.path, _made(e, folders))
    for e in sorted((e for e in plan.edits if e.after is None), key=lambda e: _last(ledger, e)):
        remove_outside(e.path, _base(e.path, root, ledger.get(e.path)))
    for e in plan.edits if remove else []:
        ledger.forget(e.path)
    if not remove:
        _switch(memory, targets, report, ledger)
    ledger.save()


def _last(ledger: Ledger, e: Edit) -> float:
    """Removal order: a file that made a folder after the files inside it (the deepest
    folder first), so that the folder is empty when its own file goes."""
    made = ledger.get(e.path)
    return -len(Path(made.folders[0]).parts) if made and made.folders else -math.inf


def _made(e: Edit, folders: list[Path]) -> Made:
    blank = e.before if e.before is not None and not e.before.strip() else None
    return Made(e.before is None, e.keys, tuple(map(str, folders)), blank)


def _missing(folder: Path) -> list[Path]:
    """The folders that writing into ``folder`` makes, the outermost first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


def _base(path: Path, root: Path | None, made: Made | None) -> Path | None:
    """The folder below which the folders that removing ``path`` empties go: those the
    install made for it (the ledger), else, with no entry, the repository's or the home
    folder (an agent's own folder such as ``.cursor/`` goes when it is left empty)."""
    if made is not None:
        return Path(made.folders[0]).parent if made.folders else path.parent
    for base in (root, Path.home()):
        if base is not None and path.is_relative_to(base):
            return base
    return None


def _switch(
    memory: Memory | None, targets: dict[str, bool], report: Report, ledger: Ledger
) -> None:
    """Turn each render target on or off; report the file the views rewrote (and note in the
    ledger whether they created it)."""
    for name, on in targets.items():
        if memory is None:
            if on:
                report.notes.append(
                    f"no .planning/ memory tree: {name} gets its block after `pmem init` "
                    "and this command again"
                )
            continue
        path = memory.layout.repo_root / name
        before = path.read_text("utf-8") if path.is_file() else None
        if not memory.set_render_target(name, on):
            continue
        report.notes.append(f"render.targets for {name} turned {'on' if on else 'off'}")
        if path.is_file() and path.read_text("utf-8") != before:
            report.files.append({"path": str(path), "change": "updated" if before else "created"})
            blank = before if before is not None and not before.strip() else None
            ledger.note(path, Made(before is None, blank=blank))


def run(
    name: str,
    root: Path | None,
    *,
    command: str = "pmem",
    user: bool = False,
    dry_run: bool = False,
    remove: bool = False,
) -> Report:
    """Install (or with ``remove`` uninstall) agent ``name``'s files for ``root``."""
    ledger = Ledger.load()
    spot = where(root, command=command, user=user, ledger=ledger)
    plan = installer(known(name)).plan(spot, remove=remove)
    report = Report(name, "uninstall" if remove else "install", dry_run=dry_run)
    report.files = [{"path": str(e.path), "change": _change(e)} for e in plan.edits]
    report.notes = list(plan.notes)
    report.diff = unified_diff(plan.edits, root)
    if dry_run:
        for target, on in plan.targets.items():
            report.notes.append(f"would turn render.targets for {target} {'on' if on else 'off'}")
    else:
        _apply(plan, root, report, ledger, remove=remove)
    if not remove:
        report.notes += _warnings(spot, root)
    return report


def _warnings(spot: Where, root: Path | None) -> list[str]:
    notes = []
    if root is not None and not (root / ".planning").is_dir():
        notes.append("no .planning/ memory tree yet: run `pmem init` before using them")
    if shutil.which(spot.words[0]) is None:
        notes.append(
            f"`{spot.words[0]}` is not on PATH: the agent will not find it (use --command)"
        )
    return notes


# -- Claude Code, as before the other agents ---------------------------------------------------
@dataclass
class InstallReport:
    """What ``install_claude_code`` did: the two files and whether each changed."""

    settings: str
    mcp: str
    settings_changed: bool
    mcp_changed: bool
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "mcp": self.mcp,
            "settings_changed": self.settings_changed,
            "mcp_changed": self.mcp_changed,
            "notes": self.notes,
        }


def install_claude_code(repo_root: Path | str, *, command: str = "pmem") -> InstallReport:
    """Write (merge) ``.claude/settings.json`` hooks and ``.mcp.json`` in ``repo_root``."""
    root = Path(repo_root)
    done = run("claude-code", root, command=command)
    changed = {Path(f["path"]) for f in done.files}
    settings, mcp = root / ".claude" / "settings.json", root / ".mcp.json"
    return InstallReport(str(settings), str(mcp), settings in changed, mcp in changed, done.notes)
