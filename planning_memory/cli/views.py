"""Markdown view commands: render and sync."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.memory import Memory

if TYPE_CHECKING:
    from planning_memory.views import SyncReport

STATE_TEXT = {
    "missing": "not rendered yet",
    "stale": "stale: the JSON changed since it was rendered",
    "edited": "edited by hand: run `pmem sync` to import the edits",
    "conflict": "changed both in JSON and by hand: run `pmem sync --prefer md|json`",
}


def _report_text(report: SyncReport) -> str:
    lines = [f"rendered {path}" for path in report.rendered]
    lines += [f"imported {n} change(s) from {name}" for name, n in report.imported.items() if n]
    lines += [f"warning: {w}" for w in report.warnings]
    return "\n".join(lines) or "Everything is current."


@cli.command()
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 naming each stale or hand-edited file (for CI).",
)
@click.option(
    "--stage",
    is_flag=True,
    help="`git add` the files it rendered (the pre-commit hook does this for a merge commit).",
)
@json_option
@pass_ctx
def render(ctx: Context, check: bool, stage: bool, as_json: bool) -> None:
    """Render patterns.md, mistakes.md and CLAUDE.md from the JSON records.

    Refuses to overwrite a file edited by hand (use `pmem sync`). With the config's
    render.targets, also the marked block of the repository's own CLAUDE.md / AGENTS.md.

    \b
    Examples:
      pmem render
      pmem render --check     # in CI or a pre-commit hook
      pmem render --stage     # after a merge: render from the merged records, git add
    """
    mem = ctx.memory()
    if check:
        stale = mem.render_check()
        rel = mem.store.rel
        emit(
            [{"path": rel(s.path), "state": s.state} for s in stale],
            as_json,
            "\n".join(f"{rel(s.path)}: {STATE_TEXT[s.state]}" for s in stale)
            or "All rendered files are current.",
        )
        if stale:
            sys.exit(1)
        return
    report = mem.render()
    if report.conflicts:
        raise report.conflict_error(mem.store.rel)
    if stage:
        root = mem.layout.repo_root
        Memory.git.stage([root / path for path in report.rendered], cwd=root)
    emit(report.as_dict(mem.store.rel), as_json, _report_text(report))


@cli.command(name="sync")
@click.option(
    "--prefer",
    type=click.Choice(["json", "md"]),
    default=None,
    help="Settle a conflict: md imports your edits, json re-renders (keeping your "
    "edited copy as .orig).",
)
@json_option
@pass_ctx
def sync_(ctx: Context, prefer: str | None, as_json: bool) -> None:
    """Bring JSON and Markdown together: JSON changed -> render; Markdown edited -> import.

    Hand edits of patterns.md / mistakes.md become record updates, new records
    (source: human) and soft deletes. When a file changed on both sides, both are shown and
    nothing is written (exit 6) unless --prefer settles it.

    \b
    Examples:
      pmem sync
      pmem sync --prefer md
    """
    mem = ctx.memory()
    report = mem.sync(prefer=prefer)
    if report.conflicts:
        for state in report.conflicts:
            click.echo(state.diff(mem.store.rel(state.path)), err=True)
        raise report.conflict_error(mem.store.rel)
    emit(report.as_dict(mem.store.rel), as_json, _report_text(report))
