"""The base of a three-way import, rebuilt from the render cache: ``base.Since`` gives back the
items of the last render whatever changed since, and an import against it, across processes
and checks, keeps the records added since the edit and takes the edit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.core import stamps
from planning_memory.memory import Memory
from planning_memory.views import cache
from planning_memory.views.base import Since
from planning_memory.views.workflow import base_path


@pytest.fixture
def mem(example_repo: Path) -> Memory:
    """The example tree rendered, and its stats settled (old enough to be trusted)."""
    mem = Memory(example_repo)
    assert not mem.render().conflicts
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)
    mem.refresh_views()
    return mem


DIGESTS = st.sampled_from([f"d{n}" for n in range(8)])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.just("write"), st.just("reload"), st.sets(DIGESTS)), max_size=25))
def test_the_items_since_are_those_of_the_last_write(steps: list[object]) -> None:
    """Each step is the set of digests the kept items move to (what a record gives a view
    depends on its digest only), a write of the view, or a reload of what is kept from its
    JSON."""
    kept: dict[str, list[object]] = {}
    since, written = Since(), None
    for number, step in enumerate(steps):
        if step == "write":
            since.written(f"header {number}")
            written = dict(kept)
        elif step == "reload":
            since = Since.of(since.as_json())
        else:
            assert isinstance(step, set)
            went = {d: kept[d] for d in kept.keys() - step}
            came = step - kept.keys()
            since.moved(went, came)
            for digest in went:
                del kept[digest]
            kept.update({d: [f"key {d}", f"text {d}"] for d in came})
        assert since.items(kept) == written


def _edit_then_change(mem: Memory, fresh: bool) -> str:
    """Edit a description in patterns.md, then save patterns and check the views, with a new
    process's render cache at each step when ``fresh``; the id of the pattern saved first."""
    path = mem.layout.patterns_md
    path.write_text(path.read_text().replace("Siempre usar try-catch", "Usar siempre try-catch"))
    saved = []
    for title in ("Feature folders", "Thin controllers"):
        if fresh:
            cache._KEPT.clear()
        saved.append(mem.save(title, "pattern", description=f"{title} always").record["id"])
        assert {s.name for s in mem.render_check()} >= {"patterns.md"}
    if fresh:
        cache._KEPT.clear()
    return str(saved[0])


def test_an_edit_imported_against_the_rebuilt_base_keeps_what_was_saved_since(
    mem: Memory,
) -> None:
    for fresh in (False, True):
        first = _edit_then_change(mem, fresh)
        report = mem.sync(prefer="md")
        assert report.imported["patterns.md"] == 1  # the edit, not a deletion of the two saved
        text = mem.layout.patterns_md.read_text()
        assert "Usar siempre try-catch" in text and "Thin controllers" in text
        assert mem.get(first).get("deleted_at") is None
        assert not base_path(mem.layout, "patterns.md").exists()  # no copy of the render
        assert mem.render_check() == []
        mem.layout.patterns_md.write_text(text.replace("Usar siempre", "Siempre usar"))
        assert mem.sync().imported["patterns.md"] == 1
