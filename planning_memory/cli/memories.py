"""``pmem memory``: the saved memories themselves, newest first, and any memory by id
(seed 003's ``/memory`` and ``/memory show <id>``)."""

from __future__ import annotations

import json
from typing import Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.cli.longterm import RECORD_TYPES


@cli.group()
def memory() -> None:
    """List the saved memories (every type, both scopes) or show one by id.

    \b
    Examples:
      pmem memory list
      pmem memory list --type decision --type bugfix -n 50
      pmem memory show pat_01HMKP5GC0QR5G41H5MY08Y01C
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
    found = ctx.memory().find(item_id)
    lines = []
    for key, value in found.items():
        if value in (None, "", [], {}):
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"{key}: {shown}")
    emit(found, as_json, "\n".join(lines))
