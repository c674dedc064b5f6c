"""Personal scope everywhere the project scope is: ``--scope personal`` records (kept in the
personal store, with its own index there) are found by search and by the context packer,
pinned ones always, with their scope shown."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from planning_memory.memory import Memory
from planning_memory.search import Filters, index_path


@pytest.fixture
def mem(empty_repo: Path) -> Memory:
    memory = Memory(empty_repo)
    memory.save(
        "Prefer short commit titles",
        "preference",
        learned="at most 50 characters",
        scope="personal",
        pinned=True,
    )
    memory.save(
        "Retry webhooks with backoff", "decision", learned="exponential backoff", scope="personal"
    )
    memory.save("Webhook handlers are idempotent", "pattern", description="dedupe by event id")
    return memory


def test_search_finds_personal_records_with_their_scope(mem: Memory) -> None:
    hits = mem.search("webhooks backoff")
    by_title = {h.title: h for h in hits}
    assert by_title["Retry webhooks with backoff"].scope == "personal"
    assert by_title["Retry webhooks with backoff"].match != "pinned"
    assert "Prefer short commit titles" not in by_title  # pinned, but not what was asked
    pinned = {h.title: h for h in mem.search("commit titles")}["Prefer short commit titles"]
    assert pinned.scope == "personal" and pinned.pinned
    assert {h.scope for h in mem.search("webhooks", scope="project")} == {"project"}
    assert {h.scope for h in mem.search("webhooks", scope="personal")} == {"personal"}


def test_scores_are_normalised_over_both_stores(mem: Memory) -> None:
    ranked = [h for h in mem.search("webhook") if h.match != "pinned"]
    assert max(h.score for h in ranked) == 1.0
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)


def test_the_personal_store_has_its_own_index(mem: Memory) -> None:
    mem.search("webhooks")
    personal = mem.personal().layout
    assert index_path(personal).is_file()
    assert str(index_path(personal)).startswith(os.environ["XDG_STATE_HOME"])
    with mem.index() as index:  # the project's index holds no personal record
        assert all(
            r.doc.scope == "project" for r in index.where("1", [], Filters(("record",)), 100)
        )


def test_context_includes_personal_records_pinned_and_matching(mem: Memory) -> None:
    text = mem.context("make the webhook retry safer").text
    assert "Prefer short commit titles" in text and "Retry webhooks with backoff" in text
    pinned = next(line for line in text.splitlines() if "short commit titles" in line)
    assert ", personal]" in pinned and "pinned: always included" in pinned
    data = json.loads(mem.context("webhook retry", fmt="json").text)["memory_context"]
    scopes = {
        i["id"]: i.get("scope") for items in data.values() if isinstance(items, list) for i in items
    }
    assert "personal" in scopes.values()
    xml = mem.context("webhook retry", fmt="xml").text
    assert 'scope="personal"' in xml


def test_without_a_personal_store_nothing_changes(empty_repo: Path) -> None:
    memory = Memory(empty_repo)
    memory.save("Webhook handlers are idempotent", "pattern", description="dedupe by event id")
    assert [h.scope for h in memory.search("webhook")] == ["project"]
    assert not memory.personal().layout.memory.exists()
