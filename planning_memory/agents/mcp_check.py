"""Start an MCP server as an agent's config says and call one tool (for ``pmem doctor``).

Start an MCP server the way an agent's config says and call one tool through the MCP SDK's
client (for ``pmem doctor``): the command, its arguments, its environment over ours, its
working directory (or the home folder when the config leaves it to the agent, the client then
offering the repository as its workspace root, as the agents do).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import ListRootsResult, Root
from pydantic import FileUrl

TOOL = "memory_context"  # read-only, answers from the files without building anything


@dataclass(frozen=True)
class Probe:
    ok: bool
    seconds: float  # until the tool call was answered (or the probe gave up)
    detail: str  # the tool's first line, or what went wrong
    started: float = 0.0  # until ``initialize`` was answered (agents give up after a few s)


def probe(
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: Path | None,
    root: Path | None,
    *,
    timeout: float = 60,
) -> Probe:
    """Start the server, call ``memory_context`` and say whether it answered without error."""
    params = StdioServerParameters(
        command=command,
        args=args,
        env={**os.environ, **env},
        cwd=str(cwd or Path.home()),
    )
    found: list[Probe] = []
    start = time.monotonic()

    async def list_roots(context: Any) -> ListRootsResult:
        folders = [root] if root is not None else []
        return ListRootsResult(roots=[Root(uri=FileUrl(f.as_uri()), name=f.name) for f in folders])

    async def main(errlog: Any) -> None:
        with anyio.fail_after(timeout):
            transport = stdio_client(params, errlog=errlog)
            async with Client(
                transport, read_timeout_seconds=timeout, list_roots_callback=list_roots
            ) as client:
                started = time.monotonic() - start  # the client is in once initialized
                result = await client.call_tool(TOOL, {})
                text = "".join(getattr(c, "text", "") for c in result.content).strip()
                line = text.splitlines()[0] if text else ""
                seconds = time.monotonic() - start
                found.append(Probe(not result.is_error, seconds, line, started))

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            anyio.run(main, errlog)
        except Exception as exc:  # it did not start, died, or did not answer in time
            errlog.seek(0)
            said = [line for line in errlog.read().splitlines() if line.strip()]
            reason = (
                said[-1]
                if said
                else f"{type(exc).__name__}: {exc}"
                if str(exc)
                else (type(exc).__name__)
            )
            seconds = time.monotonic() - start
            return Probe(False, seconds, reason[:300], seconds)
    return found[0]
