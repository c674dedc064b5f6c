"""What an installer writes, as parts that each plan their file's new text.

What an installer writes, as parts: an MCP server in a JSON or TOML file, a managed block in
a shared Markdown file, a whole rules file of ours, Aider's ``read:`` list, the AGENTS.md block
the views render. Each part plans its file's new text for install and for uninstall, and says
what of it is in place for ``pmem doctor``; none writes anything itself. Uninstalling reads
what the install made (``Where.made``, from the ledger) to take back only that.
"""

from __future__ import annotations

import abc
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planning_memory.agents.installers import edits, jsonedit, reads
from planning_memory.agents.installers.ledger import Made
from planning_memory.errors import InputError


@dataclass(frozen=True)
class Where:
    """Where an installer works: the repository (None outside one), the user's home, how the
    agent runs pmem (its words), whether the user-level files are wanted (``--global``), and
    what earlier installs made in each file (the ledger's entries)."""

    root: Path | None
    home: Path
    words: tuple[str, ...] = ("pmem",)
    user: bool = False
    made: Mapping[Path, Made] = field(default_factory=dict)

    def project(self, rel: str) -> Path | None:
        return self.root / rel if self.root is not None else None

    def kept(self, path: Path) -> Callable[[str], bool]:
        """Whether a key of ``path`` left empty stays: the user had it before the install
        (with no ledger entry for the file, nothing is known to be theirs)."""
        made = self.made.get(path)
        return lambda key: made is not None and not made.added(key)


@dataclass
class Edit:
    """One file's text before and after (None: the file is absent / removed), and the JSON
    keys the change adds (for the ledger)."""

    path: Path
    before: str | None
    after: str | None
    keys: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass
class Plan:
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    targets: dict[str, bool] = field(default_factory=dict)  # render target -> on / off

    def add(self, other: Plan) -> None:
        self.edits += other.edits
        self.notes += other.notes
        self.targets.update(other.targets)


@dataclass(frozen=True)
class Server:
    """An MCP server entry as a config file says to start it (for ``pmem doctor``)."""

    path: Path
    command: str
    args: list[str]
    env: dict[str, str]
    cwd: Path | None  # None: the agent's own (its workspace or wherever it starts)


Hook = tuple[Path, str, str, int]  # the file, the event, the command, its timeout (seconds)


class Part(abc.ABC):
    """One thing an installer puts in place. ``kind`` says which (``server``, ``rules``,
    ``hooks``, ``target``); ``servers``, ``hooks`` and ``current`` say how it is in place now,
    for ``pmem doctor``. Each kind says how it installs, uninstalls and which files it
    touches."""

    kind = ""

    @abc.abstractmethod
    def install(self, where: Where) -> Plan: ...

    @abc.abstractmethod
    def uninstall(self, where: Where) -> Plan: ...

    @abc.abstractmethod
    def files(self, where: Where) -> list[Path]: ...

    def servers(self, where: Where) -> list[Server]:
        return []

    def hooks(self, where: Where) -> list[Hook]:
        return []

    def missing_hooks(self, where: Where) -> list[tuple[Path, str]]:
        """A hooks part: each hook it installs that is not in place (the file, the event)."""
        return []

    def current(self, where: Where) -> bool | None:
        """A rules part: whether its text is this version's (None: it is not there)."""
        return None


def read(path: Path) -> str | None:
    """The file's text as it is (its line endings kept), None when there is none."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InputError(
            "not UTF-8 text", path=str(path), hint="fix or move the file; nothing was written"
        ) from None


def edit(path: Path, after: str | None) -> Edit:
    before = read(path)
    return Edit(path, before, None if after == "" else after)


def undo(where: Where, path: Path, after: str, *, empty: bool) -> Edit:
    """Uninstall's edit of ``path``: its text ``after``; when nothing else is left in it
    (``empty``), the file goes if the install created it (or no install is on record), else
    it gets back the text it had."""
    made = where.made.get(path)
    if empty and (made is None or made.file):
        return Edit(path, read(path), None)
    if empty and made is not None and made.blank is not None:
        after = made.blank
    return Edit(path, read(path), after)


def command_words(command: str) -> tuple[str, ...]:
    """How to run pmem: an existing file's path as one word even with spaces in it, else the
    words of a shell command line (``uv run pmem``)."""
    text = command.strip()
    if not text:
        raise InputError("the command may not be empty", hint="e.g. --command pmem")
    if Path(os.path.expanduser(text)).is_file():
        return (text,)
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise InputError(f"--command {text!r}: {exc}", hint="quote it as a shell would") from None
    return words or ("pmem",)


def server_entry(words: tuple[str, ...], extra: dict[str, Any]) -> dict[str, Any]:
    """Our server entry: ``extra``'s fields first (``type``), command and args, then ``env``."""
    head = {k: v for k, v in extra.items() if k != "env"}
    tail = {"env": extra["env"]} if "env" in extra else {}
    return {**head, "command": words[0], "args": [*words[1:], "mcp"], **tail}


def guarded(words: tuple[str, ...], *args: str) -> str:
    """A POSIX shell command running ``words args`` only when the program exists, and always
    exiting 0 (silent on a machine without pmem)."""
    program, run = shlex.quote(words[0]), shlex.join([*words, *args])
    return f"command -v {program} >/dev/null 2>&1 && {run} || true"


# -- the MCP server --------------------------------------------------------------------------------
@dataclass(frozen=True)
class JsonServers(Part):
    """Our server under ``key`` in a JSON file: the project's (``project``, relative to the
    repository; None when the agent has none) or the user's (``user(home)``)."""

    kind = "server"
    project: str | None
    user: Callable[[Path], Path]
    key: str = "mcpServers"
    extra: dict[str, Any] = field(default_factory=dict)

    def path(self, where: Where) -> Path | None:
        if where.user:
            return self.user(where.home)
        return where.project(self.project) if self.project else None

    def files(self, where: Where) -> list[Path]:
        found = [where.project(self.project)] if self.project else []
        return [p for p in [*found, self.user(where.home)] if p is not None]

    def install(self, where: Where) -> Plan:
        path = self.path(where)
        if path is None:
            return Plan(notes=[self.no_project_note()])
        text = read(path)
        config = edits.parse_json(text, path)
        merged, notes = edits.merge_server(config, self.key, self.entry(where), path)
        after = jsonedit.patch(text, merged) if merged != config or text is None else text
        return Plan([Edit(path, text, after, tuple(edits.added_keys(config, merged)))], notes)

    def entry(self, where: Where) -> dict[str, Any]:
        return server_entry(where.words, self.extra)

    def no_project_note(self) -> str:
        where = self.user(Path("~"))
        return f"it reads MCP servers only from {where}: run it again with --global"

    def uninstall(self, where: Where) -> Plan:
        path = self.path(where)
        text = read(path) if path is not None else None
        if path is None or text is None:
            return Plan()
        config = edits.parse_json(text, path)
        dropped = edits.drop_server(config, self.key, where.kept(path))
        if dropped == config:
            return Plan()
        return Plan([undo(where, path, jsonedit.patch(text, dropped), empty=not dropped)])

    def servers(self, where: Where) -> list[Server]:
        found = []
        for path in self.files(where):
            entry = edits.server_of(edits.parse_json(read(path), path), self.key)
            if entry is not None:
                found.append(to_server(path, entry, where, path != self.user(where.home)))
        return found


def to_server(path: Path, entry: dict[str, Any], where: Where, project: bool) -> Server:
    env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
    cwd = entry.get("cwd")
    folder = Path(str(cwd)) if cwd else (where.root if project else None)
    if folder is not None and not folder.is_absolute() and where.root is not None:
        folder = where.root / folder
    args = [str(a) for a in entry.get("args") or []]
    return Server(path, str(entry.get("command", "")), args, dict(env or {}), folder)


@dataclass(frozen=True)
class TomlServers(Part):
    """Our ``[mcp_servers.planning-memory]`` table in Codex's ``config.toml``."""

    kind = "server"
    project: str
    user: Callable[[Path], Path]
    section: str = "mcp_servers"

    def path(self, where: Where) -> Path | None:
        return self.user(where.home) if where.user else where.project(self.project)

    def files(self, where: Where) -> list[Path]:
        found = where.project(self.project)
        return [p for p in (found, self.user(where.home)) if p is not None]

    def install(self, where: Where) -> Plan:
        path = self.path(where)
        if path is None:
            return Plan(notes=["not inside a repository: nothing for the project"])
        entry = server_entry(where.words, {})
        text, notes = edits.merge_toml(read(path), self.section, entry, path)
        return Plan([edit(path, text)], notes)

    def uninstall(self, where: Where) -> Plan:
        path = self.path(where)
        text = read(path) if path is not None else None
        if path is None or text is None:
            return Plan()
        after = edits.drop_toml(text, self.section, path)
        return Plan([undo(where, path, after, empty=not after)] if after != text else [])

    def servers(self, where: Where) -> list[Server]:
        found = []
        for path in self.files(where):
            entry = edits.toml_server(read(path), self.section, path)
            if entry is not None:
                found.append(to_server(path, entry, where, path != self.user(where.home)))
        return found


# -- rules and instructions ------------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectFile(Part):
    """A part kept in one file of the project (``rel``: relative to the repository)."""

    rel: str

    def files(self, where: Where) -> list[Path]:
        path = where.project(self.rel)
        return [path] if path is not None else []


@dataclass(frozen=True)
class Block(ProjectFile):
    """Our managed block (between the planning-memory markers) in a shared Markdown file."""

    kind = "rules"
    text: str

    def install(self, where: Where) -> Plan:
        path = where.project(self.rel)
        if path is None:
            return Plan(notes=[f"not inside a repository: {self.rel} not written"])
        return Plan([edit(path, edits.set_block(read(path), self.text, path))])

    def uninstall(self, where: Where) -> Plan:
        path = where.project(self.rel)
        text = read(path) if path is not None else None
        if path is None or text is None:
            return Plan()
        after = edits.drop_block(text, path)
        return Plan([undo(where, path, after, empty=not after)] if after != text else [])

    def current(self, where: Where) -> bool | None:
        path = where.project(self.rel)
        block = edits.block_of(read(path), path) if path is not None else None
        return None if block is None else block.rstrip() == self.text.rstrip()


@dataclass(frozen=True)
class Owned(ProjectFile):
    """A rules file that is ours as a whole (it holds the managed block's markers)."""

    kind = "rules"
    text: str

    def install(self, where: Where) -> Plan:
        path = where.project(self.rel)
        if path is None:
            return Plan(notes=[f"not inside a repository: {self.rel} not written"])
        before = read(path)
        if before is not None and edits.START_MARKER not in before:
            return Plan(notes=[f"{path}: not written by pmem; left as it is"])
        return Plan([edit(path, self.text)])

    def uninstall(self, where: Where) -> Plan:
        path = where.project(self.rel)
        before = read(path) if path is not None else None
        if path is None or before is None or edits.START_MARKER not in before:
            return Plan()
        return Plan([edit(path, "")])

    def current(self, where: Where) -> bool | None:
        path = where.project(self.rel)
        before = read(path) if path is not None else None
        return None if before is None else before == self.text


@dataclass(frozen=True)
class Reads(ProjectFile):
    """Files Aider loads read-only, listed under ``read:`` in ``.aider.conf.yml``."""

    kind = "rules"
    names: tuple[str, ...]

    def install(self, where: Where) -> Plan:
        path = where.project(self.rel)
        if path is None:
            return Plan(notes=[f"not inside a repository: {self.rel} not written"])
        return Plan([edit(path, reads.set_reads(read(path), list(self.names), path))])

    def uninstall(self, where: Where) -> Plan:
        path = where.project(self.rel)
        text = read(path) if path is not None else None
        if path is None or text is None:
            return Plan()
        after = reads.drop_reads(text, list(self.names), path)
        return Plan([undo(where, path, after, empty=not after)] if after != text else [])

    def current(self, where: Where) -> bool | None:
        path = where.project(self.rel)
        listed = reads.reads_of(read(path), path) if path is not None else []
        return None if not set(self.names) & set(listed) else set(self.names) <= set(listed)


@dataclass(frozen=True)
class Target(Part):
    """The managed block of the repository's own AGENTS.md, rendered from the memory by the
    views (``render.targets``) and kept current by every write."""

    kind = "target"
    name: str = "AGENTS.md"

    def files(self, where: Where) -> list[Path]:
        path = where.project(self.name)
        return [path] if path is not None else []

    def install(self, where: Where) -> Plan:
        if where.root is None:
            return Plan(notes=[f"not inside a repository: {self.name} not written"])
        return Plan(targets={self.name: True})

    def uninstall(self, where: Where) -> Plan:
        path = where.project(self.name)
        plan = Plan(targets={self.name: False})
        text = read(path) if path is not None else None
        if path is not None and text is not None:
            after = edits.drop_block(text, path)
            plan.edits.append(undo(where, path, after, empty=not after))
        return plan


def platform_config(home: Path) -> Path:
    """The per-user application settings folder (VS Code keeps its ``User`` folder there)."""
    if sys.platform == "darwin":
        return home / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
