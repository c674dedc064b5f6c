"""``pmem doctor``: for each installed agent, is its setup working? One line per check.

Per agent: its config files parse and hold our entry (``config``); the server's command
resolves (``pmem``); the server starts as its config says, answers ``initialize`` within the
time an agent waits (``SLOW_START``) and a tool call through the MCP SDK's client (``mcp``);
every hook the install writes is there, and each runs as the agent runs it (``sh -c``, from a
folder outside any project with an empty payload, so it changes nothing) and exits 0 within
its timeout (``hooks``); its rules block is this version's (``rules``). For the repository:
the memory tree opens, the search index is built, the views are current. Each failing line
says the fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from planning_memory.agents.installers import AGENTS, installer
from planning_memory.agents.installers.agent import Agent
from planning_memory.agents.installers.parts import Server, Where
from planning_memory.errors import PlanningMemoryError
from planning_memory.memory import Memory


@dataclass(frozen=True)
class Check:
    subject: str  # an agent's name, or "memory"
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        tail = f" -> {self.fix}" if self.fix and not self.ok else ""
        return f"{'ok  ' if self.ok else 'FAIL'} {self.subject} {self.name}: {self.detail}{tail}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "check": self.name,
            "ok": self.ok,
            "detail": self.detail,
            "fix": self.fix,
        }


# seconds an agent waits for a new server to answer ``initialize`` (Gemini CLI's probe: 5 s)
SLOW_START = 5.0


class Answer(NamedTuple):
    """How a server answered the probe."""

    ok: bool
    started: float  # seconds until it answered ``initialize``
    seconds: float  # until it answered the tool call
    detail: str  # the tool's first line, or what went wrong


Prober = Callable[[Server, Path | None], Answer]


def _probe(server: Server, root: Path | None) -> Answer:
    from planning_memory.agents import mcp_check  # the MCP SDK, only when a check needs it

    done = mcp_check.probe(server.command, server.args, server.env, server.cwd, root)
    return Answer(done.ok, done.started, done.seconds, done.detail)


def diagnose(
    root: Path | None, names: Iterable[str] = (), *, probe: Prober | None = None
) -> list[Check]:
    """Every check for the agents ``names`` (default: each one installed) and the memory."""
    where = Where(root, Path.home())
    wanted = list(names) or [n for n in AGENTS if _installed(installer(n), where)]
    checks: list[Check] = []
    if not wanted:
        checks.append(Check("agents", "installed", False, "none", "pmem install <agent>"))
    for name in wanted:
        checks += agent_checks(installer(name), where, probe or _probe)
    return checks + memory_checks(root)


def _installed(found: Agent, where: Where) -> bool:
    try:
        return found.installed(where)
    except PlanningMemoryError:
        return True  # a file of its is broken: its checks say so


def agent_checks(found: Agent, where: Where, probe: Prober) -> list[Check]:
    fix = f"pmem install {found.name}"
    try:
        servers, hooks, rules = found.servers(where), found.hooks(where), found.rules(where)
    except PlanningMemoryError as exc:
        return [Check(found.name, "config", False, exc.one_line(), f"fix the file, then {fix}")]
    files = sorted({str(p) for p in found.files(where) if p.is_file()})
    checks = [Check(found.name, "config", True, ", ".join(files) or "no files")]
    if not servers and found.serves:
        checks.append(Check(found.name, "mcp", False, "no planning-memory server entry", fix))
    for server in servers:
        checks += server_checks(found.name, server, where.root, probe)
    missing = found.missing_hooks(where)
    if hooks or missing:
        checks.append(hook_check(found.name, hooks, missing))
    for path, current in rules:
        if current is False:
            checks.append(Check(found.name, "rules", False, f"{path} is not this version's", fix))
        elif current:
            checks.append(Check(found.name, "rules", True, str(path)))
    return checks


def resolves(server: Server) -> str | None:
    """Where the server's command resolves with the PATH it will be given, or None."""
    path = server.env.get("PATH", os.environ.get("PATH", ""))
    command = server.command
    if os.sep in command and server.cwd is not None:
        command = str(server.cwd / command)
    return shutil.which(command, path=path)


def server_checks(name: str, server: Server, root: Path | None, probe: Prober) -> list[Check]:
    found = resolves(server)
    if found is None:
        detail = f"{server.command!r} (from {server.path}) is not found"
        return [Check(name, "pmem", False, detail, f"pmem install {name} --command /path/to/pmem")]
    checks = [Check(name, "pmem", True, found)]
    answer = probe(server, root)
    shown = " ".join([server.command, *server.args])
    timing = f"started in {answer.started:.1f} s, answered in {answer.seconds:.1f} s"
    if not answer.ok:
        fix = f"run `{shown}` in {server.cwd or '~'} to see why"
        checks.append(Check(name, "mcp", False, f"`{shown}`: {answer.detail}", fix))
    elif answer.started > SLOW_START:
        detail = f"`{shown}` {timing}: over the {SLOW_START:.0f} s an agent waits (Gemini CLI)"
        fix = "see what slows its start: the load, `python -X importtime -m planning_memory mcp`"
        checks.append(Check(name, "mcp", False, detail, fix))
    else:
        checks.append(Check(name, "mcp", True, f"`{shown}` {timing}"))
    return checks


def run_hook(command: str, timeout: int) -> tuple[int | None, float, str]:
    """Run a hook command as the agent does (``sh -c``, the payload on stdin) in an empty
    folder outside any project: its exit code (None on a timeout), the seconds taken and
    what it said on stderr."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        try:
            done = subprocess.run(
                ["sh", "-c", command],
                input=b"{}",
                capture_output=True,
                cwd=folder,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - start, ""
    said = done.stderr.decode("utf-8", "replace").strip()
    return done.returncode, time.monotonic() - start, said


def _missing(missing: Sequence[tuple[Path, str]]) -> list[str]:
    """``SessionStart, Stop missing from PATH``, one per file."""
    files: dict[Path, list[str]] = {}
    for path, event in missing:
        files.setdefault(path, []).append(event)
    return [f"{', '.join(events)} missing from {path}" for path, events in files.items()]


ANSWER = "pmem hook: "  # how pmem's hook starts its one stderr line (here: no memory tree)


def hook_check(
    name: str, hooks: list[tuple[Path, str, str, int]], missing: Sequence[tuple[Path, str]] = ()
) -> Check:
    """Every hook the install writes must be there (``missing``: those that are not); each
    must exit 0 within its timeout, and pmem must have answered (outside a project it says
    there is no memory tree; silence means the guard found no pmem)."""
    slowest, failed = 0.0, _missing(missing)
    for _, event, command, timeout in hooks:
        code, seconds, said = run_hook(command, timeout)
        slowest = max(slowest, seconds)
        if code is None:
            failed.append(f"{event} timed out after {timeout} s")
        elif code != 0 or (said and not said.startswith(ANSWER)):
            failed.append(f"{event}: exit {code}, {said.splitlines()[-1] if said else 'no output'}")
        elif not said:
            failed.append(f"{event}: pmem did not run (not found by the hook's command)")
    if failed:
        fix = f"pmem install {name}" + (" --command PATH" if len(failed) > bool(missing) else "")
        return Check(name, "hooks", False, "; ".join(failed), fix)
    low, high = min(h[3] for h in hooks), max(h[3] for h in hooks)
    detail = f"{len(hooks)} ran, the slowest in {slowest:.1f} s (timeouts {low}-{high} s)"
    return Check(name, "hooks", True, detail)


def memory_checks(root: Path | None) -> list[Check]:
    try:
        mem = Memory.open(root)
    except PlanningMemoryError as exc:
        return [Check("memory", "tree", False, exc.one_line(), "pmem init")]
    checks = [Check("memory", "tree", True, f"{mem.layout.planning} (project {mem.project_id})")]
    present = mem.counts()["contextual"]["index_present"]
    checks.append(
        Check("memory", "index", present, "built" if present else "not built", "pmem reindex")
    )
    stale = [f"{mem.store.rel(s.path)} ({s.state})" for s in mem.render_check()]
    detail = ", ".join(stale) if stale else "current"
    checks.append(Check("memory", "views", not stale, detail, "pmem sync"))
    notice = mem.contextual.embeddings()  # a notice, not a failure: BM25 still works
    checks.append(Check("memory", "search", True, notice or "hybrid: BM25 and vectors"))
    return checks
