"""Seed 000's ``recentQueries``: the latest searches made through ``pmem search``,
``Memory.search`` and MCP ``memory_search``, redacted, bounded and safe with concurrent
writers (real processes, the MCP SDK's own client); shown by ``pmem show``, the API, MCP
``memory_stats`` and ``pmem export --seed-format``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner
from clocks import Clock
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from planning_memory.cli import cli
from planning_memory.memory import Memory
from planning_memory.search import recent

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
START = datetime(2024, 1, 20, 15, 45, tzinfo=UTC)


def set_keep(root: Path, keep: int) -> None:
    path = root / ".planning" / "memory-config.json"
    config = json.loads(path.read_text())
    config["memory"].setdefault("contextual", {})["recentQueries"] = keep
    path.write_text(json.dumps(config))


def make_repo(root: Path) -> Memory:
    mem = Memory.init(root, clock=Clock(START, tick=timedelta(minutes=1)))
    mem.save("Authentication flow uses NextAuth", "pattern", description="auth session flow")
    mem.save("Retry fetch on timeout", "mistake", description="fetch timeout without retry")
    (root / "docs").mkdir()
    (root / "docs" / "auth.md").write_text("# Authentication flow\n\nSessions live in a cookie.\n")
    return mem


def log_files(root: Path) -> list[Path]:
    folder = root / ".planning" / "memory" / "contextual"
    return sorted(folder.glob(recent.LOG + "*"))


def test_seed000_recent_queries_keep_the_latest_searches_newest_first(tmp_path: Path) -> None:
    mem = make_repo(tmp_path)
    hits = mem.search("authentication flow")
    mem.search("fetch timeout")
    mem.search("nothing matches zzzqqq")
    mem.get_relevant_patterns("authentication")  # the library's own look-ups are not kept
    found = Memory(tmp_path).contextual.recent_queries()
    assert [q["query"] for q in found] == [
        "nothing matches zzzqqq",
        "fetch timeout",
        "authentication flow",
    ]
    first = found[-1]
    assert first["results"] == list(dict.fromkeys(h.ref_id or h.path or h.key for h in hits))
    assert any(r.startswith("pat_") for r in first["results"]) and "docs/auth.md" in str(first)
    assert found[0]["results"] == []
    assert first["at"] < found[0]["at"] and first["at"].startswith("2024-01-20T15:")
    assert set(first) == {"query", "results", "at"}


def test_seed000_recent_queries_are_redacted_bounded_and_can_be_off(tmp_path: Path) -> None:
    mem = make_repo(tmp_path)
    mem.search(f"where is {SECRET} used <private>my note</private>")
    stored = b"".join(p.read_bytes() for p in log_files(tmp_path))
    assert SECRET.encode() not in stored and b"my note" not in stored
    assert (
        mem.contextual.recent_queries()[0]["query"]
        == "where is [REDACTED:github_token] used [REDACTED]"
    )
    mem.search("x" * 5000)
    assert len(mem.contextual.recent_queries()[0]["query"]) == recent.MAX_QUERY
    set_keep(tmp_path, 3)
    mem = Memory(tmp_path)
    for i in range(400):
        mem.search(f"query number {i} " + "padding " * 60)
    assert [q["query"].split()[2] for q in mem.contextual.recent_queries()] == ["399", "398", "397"]
    total = sum(p.stat().st_size for p in log_files(tmp_path))
    assert total <= 2 * 3 * recent.MAX_LINE + 2 * recent.MAX_LINE  # rotated, never growing
    set_keep(tmp_path, 0)
    for path in log_files(tmp_path):
        path.unlink()
    mem = Memory(tmp_path)
    mem.search("authentication")
    assert mem.contextual.recent_queries() == [] and log_files(tmp_path) == []


WRITER = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime
    from pathlib import Path
    from planning_memory.core import Layout
    from planning_memory.search import recent
    from planning_memory.store import Store
    layout = Layout.for_repo(Path(sys.argv[1]))
    store = Store(layout)
    for i in range(int(sys.argv[3])):
        query = f"writer {sys.argv[2]} query {i} " + "words " * 40
        recent.remember(layout, store, query, [f"src/{i}.py"], datetime.now(UTC), 4)
    """
)


def test_seed000_recent_queries_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    Memory.init(tmp_path)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(n), "600"])
        for n in range(4)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    files = log_files(tmp_path)
    assert len(files) == 2  # it rotated
    lines = [line for p in files for line in p.read_text().splitlines()]
    assert lines and all(json.loads(line)["query"].startswith("writer ") for line in lines)
    assert sum(p.stat().st_size for p in files) <= 2 * 4 * recent.MAX_LINE + 8 * recent.MAX_LINE
    newest = recent.recent(Memory(tmp_path).layout, Memory(tmp_path).store, 4)
    assert len(newest) == 4


def pmem_server(root: Path) -> StdioServerParameters:
    script = Path(sys.executable).parent / "pmem"
    command, args = (
        (str(script), ["mcp"])
        if script.exists()
        else (sys.executable, ["-m", "planning_memory.cli.run", "mcp"])
    )
    return StdioServerParameters(command=command, args=args, cwd=str(root), env=dict(os.environ))


def test_seed000_recent_queries_from_cli_and_mcp_shown_everywhere(tmp_path: Path) -> None:
    make_repo(tmp_path)
    runner = CliRunner()
    done = runner.invoke(cli, ["-C", str(tmp_path), "search", "authentication flow"])
    assert done.exit_code == 0, done.output
    stats: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(pmem_server(tmp_path), read_timeout_seconds=30) as client:
                found = await client.call_tool("memory_search", {"query": "fetch timeout"})
                assert not found.is_error
                result = await client.call_tool("memory_stats", {})
                assert not result.is_error
                stats.update(json.loads("".join(getattr(c, "text", "") for c in result.content)))

    anyio.run(main)
    queries = stats["contextual"]["recent_queries"]
    assert [q["query"] for q in queries] == ["fetch timeout", "authentication flow"]
    assert any(r.startswith("mis_") for r in queries[0]["results"])
    shown = runner.invoke(cli, ["-C", str(tmp_path), "show"])
    assert "recent       2 searches, newest first" in shown.output
    assert "'fetch timeout' -> mis_" in shown.output
    export = runner.invoke(cli, ["-C", str(tmp_path), "export", "--seed-format"])
    document = json.loads(export.output)
    assert [q["query"] for q in document["contextualMemory"]["recentQueries"]] == [
        "fetch timeout",
        "authentication flow",
    ]
    assert set(document["contextualMemory"]["recentQueries"][0]) == {"query", "results", "at"}


def test_seed000_recent_queries_never_follow_a_symlink_out_and_never_fail_a_search(
    tmp_path: Path,
) -> None:
    mem = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    log = tmp_path / "repo" / ".planning" / "memory" / "contextual" / recent.LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    log.symlink_to(outside)
    assert mem.search("authentication flow")  # the search answers all the same
    assert outside.read_text() == "keep me\n"
    assert not recent.remember(mem.layout, mem.store, "q", [], START, 20)
