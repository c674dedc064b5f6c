"""``pmem learning``: what happens to a learning once it is saved (its ``applications``)."""

from __future__ import annotations

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx


@cli.group()
def learning() -> None:
    """Learnings in use: count an application of a learning.

    A learning delivered into an agent's context (the context block at session start, a
    prompt's recall, `pmem context --session`) counts as applied once per session by itself;
    `pmem learning applied` counts one more by hand.

    \b
    Example:
      pmem learning applied lrn_01HMKP5GC0QR5G41H5MY08Y01C
    """


@learning.command()
@click.argument("record_id")
@json_option
@pass_ctx
def applied(ctx: Context, record_id: str, as_json: bool) -> None:
    """Count one more application of a learning (its `applications`).

    \b
    Example:
      pmem learning applied lrn_01HMKP5GC0QR5G41H5MY08Y01C
    """
    done = ctx.memory().applied(record_id)
    data = {**done.summary(), "applications": done.record["applications"]}
    emit(data, as_json, f"{record_id} applied {done.record['applications']} time(s)")
