"""``pmem ui``: the read-only memory viewer in the browser."""

from __future__ import annotations

import errno
import signal
import sys
import webbrowser
from typing import Any

import click

from planning_memory.cli.base import Context, cli, emit, json_option, pass_ctx
from planning_memory.errors import InputError


@cli.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (another one exposes your memory to that network).",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: any free port; the URL printed says which).",
)
@click.option("--no-browser", is_flag=True, help="Do not open a browser; only print the URL.")
@click.option("--log", "log_requests", is_flag=True, help="Log each request on stderr.")
@json_option
@pass_ctx
def ui(
    ctx: Context, host: str, port: int, no_browser: bool, log_requests: bool, as_json: bool
) -> None:
    """Browse this repository's memory in a local web page (read-only; Ctrl-C stops it).

    Pages: an overview (counts, growth, what needs review), the long-term records (filters,
    search, each record's fields and git history), the sessions (summaries, window,
    timeline), what the agent sees for a task (the exact context block, item by item) and the
    code map (areas, files, functions, components and how they depend on each other). The
    page updates itself when the memory changes on disk.

    Only requests addressed to the viewer's own host and port are answered.

    \b
    Examples:
      pmem ui                          open the viewer in your browser
      pmem ui --no-browser --port 0    print the URL of a free port, open nothing
      pmem ui --no-browser --json      the URL and port as JSON (for scripts)
      pmem -C ../other-repo ui --port 9000
    """
    import planning_memory.viewer as viewer

    mem = ctx.memory()

    def ready(server: Any) -> None:
        where = mem.store.rel(mem.layout.planning)
        info = {"url": server.url, "host": host, "port": server.port, "memory": where}
        emit(info, as_json, f"pmem ui: serving {where} at {server.url}\npress Ctrl-C to stop")
        sys.stdout.flush()
        if not no_browser:
            webbrowser.open(server.url)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        viewer.serve(mem, host=host, port=port, ready=ready, quiet=not log_requests)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise InputError(
            f"port {port} on {host} is in use", hint="pick another with --port (0: any free one)"
        ) from exc
