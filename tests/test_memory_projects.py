"""Seed 003's projects over the personal store: each personal record carries the project it was
saved from; a search shows every project's, this project's and those of none first, and names
the project of the others (``all_projects``: of every hit, none first).

Through the API, the CLI (its own process) and the MCP server (the SDK's real client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from planning_memory.core import Layout
from planning_memory.gitops import project_id
from planning_memory.memory import Memory
from planning_memory.validate import validate_tree


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    Memory.init(path)
    return path


def _pmem(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "planning_memory", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _no_project_record(mem: Memory, title: str) -> str:
    """A personal record as saved before records carried a project (the field absent)."""
    personal = mem.personal()
    record = personal.save(title, "learning").record
    path = personal.layout.record_path("learning", record["id"])
    data = json.loads(path.read_text("utf-8"))
    del data["project"]
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", "utf-8")
    return str(record["id"])


def _record_findings() -> list[Any]:
    """The personal store's problems, its records' (the store keeps no config file)."""
    return [f for f in validate_tree(Layout.personal()).findings if "long-term" in f.path]


def _three_projects(tmp_path: Path) -> tuple[Memory, Memory, dict[str, str]]:
    shop, blog = Memory(_repo(tmp_path / "shop")), Memory(_repo(tmp_path / "blog"))
    ids = {
        "shop": shop.save("Release checklist: bump the version", scope="personal").record["id"],
        "blog": blog.save("Release checklist: rebuild the feed", scope="personal").record["id"],
        "none": _no_project_record(shop, "Release checklist: tell the team"),
        "repo": shop.save("Release checklist: tag the commit").record["id"],
    }
    return shop, blog, ids


def test_seed003_personal_records_carry_the_project_they_were_saved_from(tmp_path: Path) -> None:
    shop, blog, ids = _three_projects(tmp_path)
    assert shop.project_id == project_id(tmp_path / "shop")
    assert shop.project_id.startswith("shop-") and blog.project_id.startswith("blog-")
    personal = shop.personal()
    assert personal.get(ids["shop"])["project"] == shop.project_id
    assert personal.get(ids["blog"])["project"] == blog.project_id
    assert "project" not in personal.get(ids["none"])  # older records stay valid without it
    assert "project" not in shop.get(ids["repo"])  # project records are the repository's
    assert _record_findings() == []
    # opened from a subfolder, the same project
    deep = tmp_path / "shop" / "src" / "lib"
    deep.mkdir(parents=True)
    assert Memory(deep, personal=True).project_id == shop.project_id


def test_seed003_a_bad_project_field_is_refused_by_the_schema(tmp_path: Path) -> None:
    shop, _blog, ids = _three_projects(tmp_path)
    path = shop.personal().layout.record_path("learning", ids["shop"])
    data = json.loads(path.read_text("utf-8"))
    data["project"] = "shop/../x-nothex!"
    path.write_text(json.dumps(data), "utf-8")
    findings = _record_findings()
    assert findings and "project" in str(findings[0].json_path)


def test_seed003_memory_search_shows_every_projects_personal_records_this_ones_first(
    tmp_path: Path,
) -> None:
    shop, blog, ids = _three_projects(tmp_path)
    found = [h.ref_id for h in shop.search("release checklist", limit=20)]
    assert set(found) == set(ids.values())
    assert found.index(ids["blog"]) > max(found.index(ids["shop"]), found.index(ids["none"]))
    found = [h.ref_id for h in blog.search("release checklist", limit=20)]
    assert set(found) == {ids["blog"], ids["none"], ids["shop"]}
    assert found.index(ids["shop"]) > max(found.index(ids["blog"]), found.index(ids["none"]))
    # the context block a task gets holds them too, this project's first
    block = shop.context("release checklist", budget=4000).text
    assert block.index("bump the version") < block.index("rebuild the feed")


def test_seed003_memory_search_all_projects_names_each_hits_project(tmp_path: Path) -> None:
    shop, blog, ids = _three_projects(tmp_path)
    hits = shop.search("release checklist", limit=20, all_projects=True)
    named = shop.contextual.projects_named(hits, every=True)
    by_id = {h.ref_id: named[h.key] for h in hits}
    assert by_id == {
        ids["shop"]: shop.project_id,
        ids["blog"]: blog.project_id,
        ids["none"]: "",
        ids["repo"]: shop.project_id,
    }
    hits = shop.search("release checklist", limit=20)
    assert shop.contextual.projects_named(hits) == {
        f"record:{ids['none']}": "",
        f"record:{ids['blog']}": blog.project_id,
    }


def test_seed003_pmem_search_all_projects_and_pmem_show_name_the_project(tmp_path: Path) -> None:
    shop, blog, ids = _three_projects(tmp_path)
    root = tmp_path / "shop"
    rows = json.loads(_pmem(root, "search", "release checklist", "--all-projects", "--json"))
    assert {r["id"]: r["project"] for r in rows} == {
        ids["shop"]: shop.project_id,
        ids["blog"]: blog.project_id,
        ids["none"]: "",
        ids["repo"]: shop.project_id,
    }
    text = _pmem(root / ".planning", "search", "release checklist", "--scope", "personal")
    assert "bump the version" in text and f"rebuild the feed  [{blog.project_id}]" in text
    assert "[no project]" in text
    shown = _pmem(root, "show")
    assert f"project      {shop.project_id}" in shown
    assert json.loads(_pmem(root, "show", "--json"))["project"] == shop.project_id
    # a personal save from the command line, in a subfolder, carries the repository's project
    (root / "docs").mkdir()
    saved = _pmem(root / "docs", "save", "Release notes go in CHANGES", "--scope", "personal")
    new_id = saved.split(":", 1)[1].split()[0]
    assert shop.personal().get(new_id)["project"] == shop.project_id


def test_seed003_mcp_memory_search_all_projects(tmp_path: Path) -> None:
    shop, blog, ids = _three_projects(tmp_path)
    script = Path(sys.executable).parent / "pmem"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "planning_memory"]
    server = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "mcp"],
        cwd=str(tmp_path / "shop"),
        env=dict(os.environ),
    )
    answers: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server, read_timeout_seconds=30) as client:
                for name, args in (
                    ("mine", {"query": "release checklist", "limit": 20}),
                    ("all", {"query": "release checklist", "limit": 20, "all_projects": True}),
                    ("save", {"title": "Sign the tag", "scope": "personal"}),
                ):
                    tool = "memory_save" if name == "save" else "memory_search"
                    result = await client.call_tool(tool, args)
                    assert not result.is_error
                    answers[name] = json.loads("".join(c.text for c in result.content))

    anyio.run(main)
    assert answers["mine"]["project"] == shop.project_id
    mine = {r["id"]: r.get("project", "-") for r in answers["mine"]["results"]}
    assert mine == {
        ids["shop"]: "-",
        ids["none"]: None,
        ids["repo"]: "-",
        ids["blog"]: blog.project_id,
    }
    every = {r["id"]: r["project"] for r in answers["all"]["results"]}
    assert every == {
        ids["shop"]: shop.project_id,
        ids["blog"]: blog.project_id,
        ids["none"]: None,
        ids["repo"]: shop.project_id,
    }
    assert answers["save"]["project"] == shop.project_id


def test_seed003_a_topic_upserts_within_its_project_and_scope(tmp_path: Path) -> None:
    """Seed 003: "the same topic_key in the same project and scope updates the row"; in the
    personal store a topic saved from one project leaves another project's alone."""
    shop, blog = Memory(_repo(tmp_path / "shop")), Memory(_repo(tmp_path / "blog"))
    first = shop.save("Deploy with the blue-green script", scope="personal", topic_key="ops/deploy")
    again = shop.save("Deploy with the canary script", scope="personal", topic_key="ops/deploy")
    assert again.action == "upserted" and again.record["id"] == first.record["id"]
    other = blog.save("Deploy with rsync", scope="personal", topic_key="ops/deploy")
    assert other.action == "created" and other.record["id"] != first.record["id"]
    personal = shop.personal()
    assert personal.get(first.record["id"])["title"] == "Deploy with the canary script"
    assert personal.get(other.record["id"])["project"] == blog.project_id


def test_seed003_an_exact_duplicate_is_one_per_project_in_the_personal_store(
    tmp_path: Path,
) -> None:
    shop, blog = Memory(_repo(tmp_path / "shop")), Memory(_repo(tmp_path / "blog"))
    first = shop.save("Run the linters before a push", scope="personal")
    assert shop.save("Run the linters before a push", scope="personal").action == "duplicate"
    other = blog.save("Run the linters before a push", scope="personal")
    assert other.action == "created" and other.record["project"] == blog.project_id
    assert other.record["id"] != first.record["id"]
