"""Git commands: git install, merge-driver (hidden), resolve, secrets scan."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from pathlib import Path

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.errors import InputError
from planning_memory.memory import Memory


@cli.group("git")
def git_group() -> None:
    """Share memory through git: ignores, a merge driver and a pre-commit hook.

    \b
    Example:
      pmem git install
    """


@git_group.command("install")
@click.option(
    "--hook/--no-hook",
    default=True,
    show_default=True,
    help="Install the pre-commit hook (validate, render --check, secret scan).",
)
@json_option
@pass_ctx
def git_install(ctx: Context, hook: bool, as_json: bool) -> None:
    """Set up this repository so memory travels well through git.

    Adds .gitignore entries (search index, sessions, personal data, lock and temp files),
    .gitattributes lines that send memory JSON to the record-level merge driver, registers the
    driver in .git/config and installs a pre-commit hook. An existing pre-commit hook is kept
    and run first. Running it again changes nothing.

    \b
    Example:
      pmem git install && git add .gitignore .gitattributes && git commit -m "Memory in git"
    """
    report = Memory.git.install(ctx.root or Path.cwd(), hook=hook)
    lines = [f"changed: {p}" for p in report.changed] or ["already set up: nothing changed"]
    lines.append(f"pre-commit hook: {report.hook}")
    lines += [f"note: {n}" for n in report.notes]
    emit(asdict(report), as_json, "\n".join(lines))


@cli.command("merge-driver", hidden=True)
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("ours", type=click.Path(path_type=Path))
@click.argument("theirs", type=click.Path(path_type=Path))
@click.argument("path", required=False, default="")
def merge_driver(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """Git merge driver: merge BASE, OURS and THEIRS into OURS (exit 1 on a real conflict)."""
    sys.exit(Memory.git.merge_driver(base, ours, theirs, path))


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing: name each memory file a merge left unfinished; exit 1 if any.",
)
@json_option
@pass_ctx
def resolve(ctx: Context, paths: tuple[Path, ...], check: bool, as_json: bool) -> None:
    """Repair memory files that a merge without the record-level merge driver left behind.

    Without the driver (a web merge, a clone without `pmem git install`) git leaves conflict
    markers; when the driver cannot start (`pmem` not on PATH) git leaves the file unmerged
    holding one side, so that side's counters win silently. With no PATHS, every such file
    under .planning/: unmerged, with markers, or, during a merge, staged as one side where
    the merge of both differs. The sides come from git (the index, MERGE_HEAD or the merge
    commit) when it still has them, else from the markers; the result is what the merge
    driver gives, `git add`ed during a merge. Unmerged views are rendered again from the
    merged records. A real conflict stays marked; exits 1.

    --check writes nothing and exits 1 if any file is unfinished (the pre-commit hook runs
    it while a merge is committed; `pmem validate` says the same).

    \b
    Examples:
      git merge feature; pmem resolve && git commit
      pmem resolve --check
    """
    if check:
        here = Path(ctx.root or Path.cwd()).resolve()
        left = [(os.path.relpath(i.path, here), i) for i in Memory.git.unfinished(here)]
        rows = [{"path": rel, "reason": item.reason} for rel, item in left]
        text = "\n".join(f"{rel}: {item.message}" for rel, item in left)
        emit(rows, as_json, text or "no unfinished memory files")
        if left:
            sys.exit(1)
        return
    targets = [p.resolve() for p in paths]
    for target in targets:
        _check_in_memory(ctx, target)
    done = Memory.git.resolve(targets or None, cwd=ctx.root)
    lines = [
        f"{r.status}: {r.path}"
        + (f" ({r.source})" if r.source else "")
        + (", staged" if r.staged else "")
        + "".join(f"\n  conflict at {c}" for c in r.conflicts)
        + (f"\n  {r.message}" if r.message else "")
        for r in done
    ] or ["no conflicted memory files"]
    emit([asdict(r) for r in done], as_json, "\n".join(lines))
    if any(r.status in ("conflict", "error") for r in done):
        sys.exit(1)


def _check_in_memory(ctx: Context, path: Path) -> None:
    """``resolve`` repairs memory files only: a path outside ``.planning/`` is an error."""
    root = Memory.locate(ctx.root)
    planning = (root / ".planning").resolve() if root is not None else None
    if planning is None or not path.is_relative_to(planning):
        raise InputError(
            "not a file of this repository's memory tree (.planning/)",
            path=str(path),
            hint="give files under .planning/, or no path for every conflicted one",
        )


@cli.group()
def secrets() -> None:
    """Find secrets before they reach git.

    \b
    Example:
      pmem secrets scan --staged
    """


@secrets.command("scan")
@click.option("--staged", is_flag=True, help="Scan the staged content of memory files.")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@json_option
@pass_ctx
def secrets_scan(ctx: Context, staged: bool, paths: tuple[Path, ...], as_json: bool) -> None:
    """Report secrets and unredacted <private> blocks in PATHS (files or folders; default
    .planning/, CLAUDE.md and AGENTS.md) or, with --staged, in the staged content of those
    files. Never prints the secret itself; exits 1 if any is found.

    \b
    Examples:
      pmem secrets scan --staged
      pmem secrets scan .planning
    """
    given = [p.resolve() for p in paths] or None
    hits = Memory.git.scan_secrets(given, staged=staged, cwd=ctx.root)
    lines = [h.line() for h in hits] + [f"{len(hits)} secrets found"]
    emit([asdict(h) for h in hits], as_json, "\n".join(lines))
    if hits:
        sys.exit(1)
