"""The MCP server started outside any project (as clients that start servers in ``/`` or the
home folder do) finds the project in the client's workspace ``roots``; without one, the error
names where it looked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ListRootsResult, Root

from planning_memory.memory import Memory

from .test_mcp_server import pmem_command


def server_in(cwd: Path) -> StdioServerParameters:
    command, *args = pmem_command()
    return StdioServerParameters(
        command=command, args=[*args, "mcp"], cwd=str(cwd), env=dict(os.environ)
    )


def call(
    cwd: Path, roots: list[Path] | None, tool: str, mode: str = "auto", **arguments: Any
) -> tuple[bool, str]:
    """``tool``'s (is_error, text) from a server started in ``cwd``, the client offering
    ``roots`` (None: no roots capability at all). ``mode="legacy"``: the 2025 protocol, where
    the server sends ``roots/list`` itself; ``"auto"``: the newest, where the tool call
    answers ``input_required`` and the client retries it with its roots."""
    found: list[tuple[bool, str]] = []

    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=p.as_uri(), name=p.name) for p in roots or []])

    async def main() -> None:
        with anyio.fail_after(60):
            callback = list_roots if roots is not None else None
            async with Client(
                server_in(cwd), read_timeout_seconds=30, list_roots_callback=callback, mode=mode
            ) as client:
                result = await client.call_tool(tool, arguments)
                text = "".join(getattr(c, "text", "") for c in result.content)
                found.append((bool(result.is_error), text))

    anyio.run(main)
    return found[0]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_first_root_with_a_memory_tree_is_used(tmp_path: Path, mode: str) -> None:
    outside = tmp_path / "home"
    plain = tmp_path / "plain project"
    project = tmp_path / "my project"
    for folder in (outside, plain, project):
        folder.mkdir()
    Memory.init(project)
    is_error, text = call(
        outside, [plain, project], "memory_save", mode, title="Roots work", type="decision"
    )
    assert not is_error, text
    [record] = Memory.open(project).records()
    assert record["title"] == "Roots work"


def test_a_root_inside_the_project_finds_it(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    Memory.init(tmp_path / "repo")
    (tmp_path / "repo" / "src").mkdir()
    is_error, text = call(outside, [tmp_path / "repo" / "src"], "memory_context")
    assert not is_error, text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_no_project_in_the_roots_names_what_was_looked_at(tmp_path: Path, mode: str) -> None:
    outside = tmp_path / "cwd"
    plain = tmp_path / "not a project"
    outside.mkdir()
    plain.mkdir()
    is_error, text = call(outside, [plain], "memory_context", mode)
    assert is_error
    assert str(outside) in text  # the working directory
    assert plain.as_uri() in text  # the roots
    assert "pmem init" in text and "\n" not in text.strip()


def test_a_client_without_roots_is_told_so(tmp_path: Path) -> None:
    is_error, text = call(tmp_path, None, "memory_context")
    assert is_error
    assert str(tmp_path) in text and "offers no workspace roots" in text


def test_the_working_directory_wins_over_the_roots(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    Memory.init(here)
    Memory.init(there)
    is_error, text = call(here, [there], "memory_save", title="Saved here", type="decision")
    assert not is_error, text
    assert [r["title"] for r in Memory.open(here).records()] == ["Saved here"]
    assert Memory.open(there).records() == []
