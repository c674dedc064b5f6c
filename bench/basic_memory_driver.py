"""Drive Basic Memory for bench_scale.py; runs under Basic Memory's own venv (Python 3.12).

Reads one JSON job on stdin and prints one JSON answer:

    {"home": DIR, "project": DIR, "notes": [{"id", "title", "text"}],   # written as files
     "writes": [{"title", "text"}], "queries": [str], "k": 5}

- ``notes`` are written as Markdown files into ``project`` (frontmatter ``permalink:
  memories/<id>``), then ``basic-memory project add`` + ``project index`` index them: the
  indexing time is reported.
- ``writes`` go through the MCP server (``basic-memory mcp``, stdio, the ``mcp`` client of
  Basic Memory's own venv) as ``write_note`` calls, each timed.
- ``queries`` go through ``search_notes`` (page size ``k``); the permalinks found are
  returned in order.

HOME is set to ``home`` so nothing outside the bench folder is touched.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def write_files(project: Path, notes: list[dict[str, str]]) -> None:
    folder = project / "memories"
    folder.mkdir(parents=True, exist_ok=True)
    for note in notes:
        title = note["title"].replace('"', "'")
        body = (
            f'---\ntitle: "{title}"\ntype: note\npermalink: memories/{note["id"]}\n---\n\n'
            f"# {title}\n\n{note['text']}\n"
        )
        (folder / f"{note['id']}.md").write_text(body, encoding="utf-8")


def bm(*args: str) -> float:
    exe = str(Path(sys.executable).parent / "basic-memory")
    start = time.perf_counter()
    subprocess.run([exe, *args], check=True, capture_output=True, timeout=7200)
    return time.perf_counter() - start


def _text(result: object) -> str:
    parts = getattr(result, "content", []) or []
    return "".join(getattr(p, "text", "") for p in parts)


async def through_mcp(job: dict[str, object]) -> dict[str, object]:
    exe = str(Path(sys.executable).parent / "basic-memory")
    server = StdioServerParameters(command=exe, args=["mcp"], env=dict(os.environ))
    writes: list[float] = []
    found: list[list[str]] = []
    search_s: list[float] = []
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for item in job.get("writes", []):  # type: ignore[union-attr]
            start = time.perf_counter()
            await session.call_tool(
                "write_note",
                {"title": item["title"], "content": item["text"], "directory": "saved"},
            )
            writes.append(time.perf_counter() - start)
        for query in job.get("queries", []):  # type: ignore[union-attr]
            start = time.perf_counter()
            result = await session.call_tool(
                "search_notes",
                {"query": query, "page_size": job.get("k", 5), "output_format": "json"},
            )
            search_s.append(time.perf_counter() - start)
            text = _text(result)
            try:
                rows = json.loads(text).get("results", [])
            except (ValueError, AttributeError):
                rows = []
            found.append([str(r.get("permalink", "")) for r in rows])
    return {"write_s": writes, "search_s": search_s, "found": found}


def main() -> None:
    job = json.loads(sys.stdin.read())
    home, project = Path(job["home"]), Path(job["project"])
    os.environ["HOME"] = str(home)
    home.mkdir(parents=True, exist_ok=True)
    answer: dict[str, object] = {}
    notes = job.get("notes", [])
    if notes is not None:
        write_files(project, notes)
        answer["add_s"] = bm("project", "add", "bench", str(project), "--default")
        answer["index_s"] = bm("project", "index", "bench")
    answer.update(asyncio.run(through_mcp(job)))
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
