"""Personal memories are the user's across repositories (seed 003's personal scope): a rule
learned as personal in one repository reaches a session start, ``pmem context`` and
``pmem search`` in another; a repository keeps its project id, and so its personal records,
when its folder is moved or cloned again. Real git repositories, the installed ``pmem``
command and the Claude Code hook command in their own processes; the personal store under the
test's ``XDG_STATE_HOME``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from claude_sessions import ClaudeCode, pmem

from planning_memory.core import legacy_id
from planning_memory.memory import Memory

pytestmark = pytest.mark.slow  # a dozen real processes


def run(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [*pmem(), *args], cwd=cwd, capture_output=True, text=True, env=dict(os.environ), timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repository(path: Path, what: str, *, commit: bool = True) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "README.md").write_text(f"# {what}\n", "utf-8")
    if commit:
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", what)
    run(path, "init")
    return path


def personal_by_default(repo: Path) -> None:
    path = repo / ".planning/memory-config.json"
    config = json.loads(path.read_text("utf-8"))
    config["memory"]["agents"] = {"defaultScope": "personal"}
    path.write_text(json.dumps(config), "utf-8")


def test_a_personal_rule_learned_in_one_repository_reaches_another(tmp_path: Path) -> None:
    shop = repository(tmp_path / "shop", "shop")
    blog = repository(tmp_path / "blog", "blog")
    home = Path(os.environ["HOME"])
    personal_by_default(shop)
    one = ClaudeCode(shop, home, "5e550001-7a2b-4c3d-8e4f-5a6b7c8d9e01")
    one.start()
    one.prompt("prefiero funciones flecha en los handlers")
    one.say("Vale, funciones flecha.")
    one.stop()
    one.end()
    run(shop, "save", "Release notes go in CHANGES.md", "--scope", "personal")
    shop_id = json.loads(run(shop, "show", "--json"))["project"]

    told = ClaudeCode(blog, home, "5e550002-7a2b-4c3d-8e4f-5a6b7c8d9e02").start()
    rule = [line for line in told.splitlines() if "funciones flecha" in line]
    assert rule and "taught" in rule[0], told
    block = run(blog, "context", "write the feed handlers")
    assert "funciones flecha" in block
    found = run(blog, "search", "release notes")
    assert "Release notes go in CHANGES.md" in found and f"[{shop_id}]" in found  # whose it is
    rows = json.loads(run(blog, "search", "release notes", "--json"))
    assert [r["project"] for r in rows if "CHANGES" in r["title"]] == [shop_id]


def test_this_projects_personal_records_rank_before_another_projects(tmp_path: Path) -> None:
    shop = Memory(repository(tmp_path / "shop", "shop"))
    blog = Memory(repository(tmp_path / "blog", "blog"))
    mine = shop.save("Release checklist: bump the version", scope="personal").record["id"]
    theirs = blog.save("Release checklist: rebuild the feed", scope="personal").record["id"]
    assert [h.ref_id for h in shop.search("release checklist")] == [mine, theirs]
    assert [h.ref_id for h in blog.search("release checklist")] == [theirs, mine]
    block = shop.context("release checklist", budget=4000).text
    assert block.index("bump the version") < block.index("rebuild the feed")


def test_a_moved_and_a_cloned_repository_keep_their_id_and_personal_records(
    tmp_path: Path,
) -> None:
    first = repository(tmp_path / "a" / "shop", "shop")
    run(first, "save", "Deploys go out on Tuesdays", "--scope", "personal")
    made = json.loads(run(first, "show", "--json"))["project"]
    moved = tmp_path / "b" / "shop"
    moved.parent.mkdir()
    os.rename(first, moved)  # mv
    cloned = tmp_path / "c" / "shop"
    git(tmp_path, "clone", "-q", str(moved), str(cloned))  # .planning/ is not committed
    run(cloned, "init")
    for place in (moved, cloned):
        assert json.loads(run(place, "show", "--json"))["project"] == made
        rows = json.loads(run(place, "search", "deploys tuesdays", "--json"))
        assert [r.get("project") for r in rows] == [None]  # this project's: not named
        assert "Deploys go out on Tuesdays" in run(place, "context", "plan the deploy")


def test_records_saved_under_the_paths_id_stay_the_projects(tmp_path: Path) -> None:
    """Before its first commit a repository's id is its path's, as every id was before; the
    personal records saved then still count as its own (``core.project_ids``)."""
    repo = repository(tmp_path / "shop", "shop", commit=False)
    old = Memory(repo).save("Staging needs the VPN", scope="personal").record
    assert old["project"] == legacy_id(repo)
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "shop")
    other = Memory(repository(tmp_path / "blog", "blog"))
    theirs = other.save("Staging needs the VPN too", scope="personal").record["id"]
    mem = Memory(repo)
    assert mem.project_id != old["project"]
    hits = mem.search("staging vpn")
    assert [h.ref_id for h in hits] == [old["id"], theirs]
    assert mem.contextual.projects_named(hits) == {f"record:{theirs}": other.project_id}
