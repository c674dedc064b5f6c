"""The Markdown sync workflow on real files: render, check, import hand edits, conflicts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planning_memory.core import stamps
from planning_memory.errors import InputError
from planning_memory.memory import Memory


def _tree(repo: Path) -> dict[str, bytes]:
    """Every file of the repository but the lock and the catalog of the record files (derived:
    any look at the records may bring it up to date, and SQLite writes its shared memory on a
    read)."""
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".lock" not in p.name and not p.name.startswith("longterm.sqlite3")
    }


@pytest.fixture
def mem(example_repo: Path) -> Memory:
    """The example tree rendered, and its stats settled: old enough for the render cache to
    trust them (a copy's files are new), so a run with nothing new writes nothing."""
    mem = Memory(example_repo)
    assert not mem.render().conflicts
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)
    mem.refresh_views()
    return mem


def test_render_then_check_is_clean_and_rerender_writes_nothing(mem: Memory) -> None:
    assert mem.render_check() == []
    before = _tree(mem.layout.repo_root)
    report = mem.render()
    assert report.rendered == []
    assert _tree(mem.layout.repo_root) == before


def test_a_write_through_memory_renders_the_views_itself(mem: Memory) -> None:
    out = mem.learn_pattern("Feature folders", "Group UI code by feature, not by type")
    assert out.record["id"] in mem.layout.patterns_md.read_text()
    assert mem.render_check() == [] and mem.view_conflicts == []


def test_json_changed_on_disk_makes_views_stale_and_sync_renders(mem: Memory) -> None:
    """A record written by someone else (an editor, `git pull`) leaves the views stale."""
    path = next(mem.layout.long_term.glob("patterns/*.json"))
    record = json.loads(path.read_text("utf-8"))
    record["description"] = "Group UI code by feature, not by type"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", "utf-8")
    stale = {s.name: s.state for s in mem.render_check()}
    assert stale["patterns.md"] == "stale"
    report = mem.sync()
    assert ".planning/patterns.md" in report.rendered
    assert "Group UI code by feature" in mem.layout.patterns_md.read_text()
    assert mem.render_check() == []


def test_a_hand_edited_view_is_left_alone_by_a_write_and_reported(mem: Memory) -> None:
    path = mem.layout.patterns_md
    edited = path.read_text().replace("Siempre usar try-catch", "Usar siempre try-catch")
    path.write_text(edited)
    mem.learn_pattern("Feature folders", "Group UI code by feature, not by type")
    assert path.read_text() == edited
    assert mem.view_conflicts == [path]


def test_hand_edits_update_create_and_soft_delete(mem: Memory) -> None:
    path = mem.layout.patterns_md
    text = path.read_text()
    first_id = re.findall(r"<!-- id: (pat_\w+) -->", text)[0]
    before = mem.get(first_id)["revision_count"]
    last_id = re.findall(r"<!-- id: (pat_\w+) -->", text)[-1]
    text = text.replace(
        "Siempre usar try-catch con tipos específicos",
        "Siempre usar try-catch con tipos de error específicos",
    )
    items = text.split("\n## ")
    text = "\n## ".join(i for i in items if last_id not in i)
    text += "\n## Feature folders\n\nGroup UI code by feature.\n\n- **Tags:** architecture\n"
    path.write_text(text, newline="\r\n")  # CRLF, as a Windows editor would save it
    report = mem.sync()
    assert report.imported["patterns.md"] == 3
    assert mem.get(first_id)["description"].endswith("tipos de error específicos")
    assert mem.get(first_id)["revision_count"] == before + 1
    assert mem.get(last_id)["deleted_at"] is not None
    created = [r for r in mem.records("pattern") if r["name"] == "Feature folders"]
    assert len(created) == 1 and created[0]["source"] == "human"
    assert mem.render_check() == []


def test_both_sides_changed_is_a_conflict_that_writes_nothing(mem: Memory) -> None:
    path = mem.layout.patterns_md
    path.write_text(path.read_text().replace("Siempre usar try-catch", "Usar siempre try-catch"))
    mem.learn_pattern("Feature folders", "Group UI code by feature, not by type")
    before = _tree(mem.layout.repo_root)
    report = mem.sync()
    assert [c.name for c in report.conflicts] == ["patterns.md"]
    assert _tree(mem.layout.repo_root) == before
    diff = report.conflicts[0].diff(".planning/patterns.md")
    assert "-Siempre usar try-catch" in diff and "+Usar siempre try-catch" in diff


def test_prefer_md_imports_and_prefer_json_keeps_a_copy(mem: Memory, example_repo: Path) -> None:
    path = mem.layout.patterns_md
    path.write_text(path.read_text().replace("Siempre usar try-catch", "Usar siempre try-catch"))
    mem.learn_pattern("Feature folders", "Group UI code by feature, not by type")
    report = mem.sync(prefer="md")
    assert report.imported["patterns.md"] == 1
    assert "Usar siempre try-catch" in path.read_text()
    assert "Feature folders" in path.read_text()
    path.write_text(path.read_text().replace("Usar siempre", "Siempre"))
    mem.learn_pattern("Thin controllers", "Controllers only translate HTTP to service calls")
    report = mem.sync(prefer="json")
    assert (mem.layout.planning / "patterns.md.orig").is_file()
    assert "Usar siempre try-catch" in path.read_text()


def test_broken_edit_is_refused_whole(mem: Memory) -> None:
    path = mem.layout.mistakes_md
    text = path.read_text()
    broken = re.sub(r"\*\*Severity:\*\* \w+", "**Severity:** apocalyptic", text, count=1)
    assert broken != text
    path.write_text(broken)
    before = _tree(mem.layout.repo_root)
    with pytest.raises(InputError):
        mem.sync()
    assert _tree(mem.layout.repo_root) == before


def test_secret_in_a_hand_edit_never_reaches_json(mem: Memory) -> None:
    path = mem.layout.patterns_md
    secret = "sk-ant-api03-" + "A1b2C3d4E5f6" * 6
    path.write_text(path.read_text() + f"\n## Calling Claude\n\nUse key {secret} for tests.\n")
    mem.sync()
    for file in mem.layout.planning.rglob("*"):
        if file.is_file():
            assert secret not in file.read_text(errors="replace"), file


def test_managed_block_keeps_outside_text(example_repo: Path) -> None:
    outside = "# My project\r\n\r\nHand-written rules stay.\r\n"
    (example_repo / "AGENTS.md").write_bytes(outside.encode())
    cfg_path = example_repo / ".planning" / "memory-config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["memory"]["render"]["targets"] = {"claudeMd": False, "agentsMd": True}
    cfg_path.write_text(json.dumps(cfg))
    mem = Memory(example_repo)
    mem.render()
    data = (example_repo / "AGENTS.md").read_bytes()
    assert data.startswith(outside.encode())
    assert b"<!-- planning-memory:start -->" in data
    assert not (example_repo / "CLAUDE.md").exists()  # not configured: never created
    mem.learn_pattern("Feature folders", "Group UI code by feature, not by type")
    mem.render()
    assert (example_repo / "AGENTS.md").read_bytes().startswith(outside.encode())


def test_example_tree_views_are_current(example_repo: Path) -> None:
    stale = [(s.name, s.state) for s in Memory(example_repo).render_check()]
    assert stale in ([], [("CLAUDE.md", "missing")]), (
        "the .planning.example views are stale: re-render them (see docs/design.md)"
    )


def test_cli_render_check_exits_1_and_names_files(example_repo: Path) -> None:
    (example_repo / ".planning" / "mistakes.md").unlink()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "planning_memory.cli.run",
            "-C",
            str(example_repo),
            "render",
            "--check",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert ".planning/mistakes.md: not rendered yet" in run.stdout
