"""``pmem memory``: the saved memories newest first, any one by id, a learning applied.

Seed 003's ``/memory`` and ``/memory show <id>``; ``pmem memory applied`` counts a learning's
applications by hand.
"""

from __future__ import annotations

from typing import Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.cli.core import show_item
from planning_memory.cli.longterm import RECORD_TYPES


@cli.group()
def memory() -> None:
    """List the saved memories (every type, both scopes), show one by id, count a learning
    applied.

    \b
    Examples:
      pmem memory list
      pmem memory list --type decision --type bugfix -n 50
      pmem memory show pat_01HMKP5GC0QR5G41H5MY08Y01C
      pmem memory applied lrn_01HMKP5GC0QR5G41H5MY08Y01C
    """


@memory.command(name="list")
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(RECORD_TYPES),
    help="Only this type (repeatable).",
)
@click.option(
    "--scope",
    type=click.Choice(["project", "personal", "all"]),
    default="all",
    show_default=True,
    help="The project's memories, the personal ones (--scope personal when saved), or both.",
)
@click.option("-n", "--limit", default=20, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--deleted", is_flag=True, help="Include soft-deleted memories.")
@json_option
@pass_ctx
def list_(
    ctx: Context, types: tuple[str, ...], scope: str, limit: int, deleted: bool, as_json: bool
) -> None:
    """The most recently updated memories first: id, type, scope, when, title.

    \b
    Examples:
      pmem memory list
      pmem memory list --type decision --scope project -n 50 --json
    """
    mem = ctx.memory()
    found: list[dict[str, Any]] = []
    for where in ("project", "personal"):
        if scope in (where, "all"):
            found += [
                {**r, "scope": where} for r in mem.for_scope(where).records(*types, deleted=deleted)
            ]
    found.sort(key=lambda r: (str(r.get("updated_at") or ""), str(r["id"])), reverse=True)
    found = found[:limit]
    lines = [
        f"{r['id']}  {r['type']:<11} {r['scope']:<8} {str(r.get('updated_at'))[:16]}  "
        f"{r['title']}" + ("  (deleted)" if r.get("deleted_at") else "")
        for r in found
    ]
    emit(found, as_json, "\n".join(lines) or "No memories yet.")


@memory.command()
@click.argument("item_id")
@json_option
@pass_ctx
def show(ctx: Context, item_id: str, as_json: bool) -> None:
    """Any memory by id, every field: a record (pat_, mis_, lrn_), a session message (msg_)
    or decision (dec_) with its session, or a session in brief (ses_).

    \b
    Examples:
      pmem memory show pat_01HMKP5GC0QR5G41H5MY08Y01C
      pmem memory show msg_01HMKP5GC0QR5G41H5MY08Y01C --json
    """
    show_item(ctx, item_id, as_json)


@memory.command()
@click.argument("record_id")
@json_option
@pass_ctx
def applied(ctx: Context, record_id: str, as_json: bool) -> None:
    """Count one more application of a learning (its `applications`).

    A learning delivered into an agent's context (the context block at session start, a
    prompt's recall, `pmem context --session`) counts as applied once per session by itself;
    this counts one more by hand. (`pmem learning applied` is the same command, kept for
    scripts.)

    \b
    Example:
      pmem memory applied lrn_01HMKP5GC0QR5G41H5MY08Y01C
    """
    done = ctx.memory().applied(record_id)
    data = {**done.summary(), "applications": done.record["applications"]}
    emit(data, as_json, f"{record_id} applied {done.record['applications']} time(s)")
