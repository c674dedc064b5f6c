"""The memories relevant to one prompt (``context/prompt.py``, ``Memory.recall``): taught rules
the prompt touches, through related words too, and its best matches; small; no index built."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from planning_memory.context.prompt import RECALL_BUDGET, RECALL_ITEMS
from planning_memory.memory import Memory
from planning_memory.search import index_path, related_words
from planning_memory.search.chunks import estimate_tokens

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def mem(empty_repo: Path) -> Memory:
    memory = Memory(empty_repo, clock=lambda: NOW)
    memory.learn_utterance("Always use pnpm, never npm", source="session:ses_01TAUGHT")
    memory.learn_utterance("Never commit .env files", source="session:ses_01TAUGHT")
    memory.save(
        "Retry payment webhooks with backoff",
        "decision",
        learned="Stripe webhooks retry with exponential backoff, at most 5 times",
        tags=["payments"],
    )
    memory.save("Add tests for every new endpoint", "pattern", description="add tests")
    for n in range(20):
        memory.save(f"Unrelated note {n}", "learning", learned=f"something else entirely {n}")
    return memory


def ids(text: str) -> list[str]:
    return [line.rsplit("[", 1)[1].split("]")[0] for line in text.splitlines()[1:]]


def test_a_taught_rule_comes_back_for_a_prompt_that_does_not_name_it(mem: Memory) -> None:
    pnpm = next(r["id"] for r in mem.records("pattern") if "pnpm" in r["title"])
    for indexed in (False, True):
        if indexed:
            mem.reindex()
        found = mem.recall("add lodash as a dependency")
        assert ids(found.text) == [pnpm], found.text
        assert "(why: taught; dependency → npm, pnpm)" in found.text
    env = next(r["id"] for r in mem.records("mistake"))
    assert ids(mem.recall("commit these changes").text) == [env]


def test_best_matches_need_more_than_a_generic_word(mem: Memory) -> None:
    mem.reindex()
    found = mem.recall("the payment webhooks fail: add a retry")
    assert [i.data.get("source") for i in found.items] == ["decision"]
    assert "matches payment, webhooks, retry" in found.text
    assert mem.recall("add a button").text == ""  # "add" alone makes nothing relevant
    assert mem.recall("what time is it").text == ""


def test_it_stays_small(mem: Memory) -> None:
    for n in range(12):
        mem.learn_utterance(f"Always run pnpm install before test suite {n}")
    found = mem.recall("install the dependencies and run the test suite")
    assert len(found.items) <= RECALL_ITEMS
    assert estimate_tokens(found.text) <= RECALL_BUDGET
    assert len(found.text.splitlines()) <= RECALL_ITEMS + 1


def test_no_index_is_built_for_a_prompt(mem: Memory) -> None:
    assert not index_path(mem.layout).exists()
    assert "pnpm" in mem.recall("add lodash as a dependency").text
    assert not index_path(mem.layout).exists()


def test_the_first_prompt_recalls_records_before_any_index(mem: Memory) -> None:
    """A fresh clone: no index yet, and the records the prompt names come back all the same
    (read from the files, by the words they share), with the taught rules; none built."""
    found = mem.recall("the payment webhooks fail: how many retries do we allow?")
    assert not index_path(mem.layout).exists()
    lines = found.text.splitlines()
    assert any("Retry payment webhooks with backoff" in line for line in lines)
    assert any("matches payment, webhooks" in item.reason for item in found.items)
    assert not any("Unrelated note" in line for line in lines)
    assert mem.recall("¿qué gestor de paquetes usamos?").text.count("pnpm") >= 1


def test_what_the_prompt_just_taught_is_left_out(mem: Memory) -> None:
    pnpm = next(r["id"] for r in mem.records("pattern") if "pnpm" in r["title"])
    assert mem.recall("install a package with pnpm", exclude=[pnpm]).text == ""


def test_related_words_widen_by_group() -> None:
    widened = related_words(["dependency", "lodash"])
    assert widened["pnpm"] == "dependency" and widened["npm"] == "dependency"
    assert "lodash" not in widened and related_words(["secrets"])["env"] == "secrets"


def test_a_spanish_prompt_recalls_an_english_memory_index_or_not(mem: Memory) -> None:
    """Words count in either language (search.translations): "salida" is "output"."""
    mem.save(
        "Echo instead of print",
        "pattern",
        description="Commands send their output through click.echo, never print().",
    )
    echo = next(r["id"] for r in mem.records("pattern") if r["title"] == "Echo instead of print")
    prompt = "¿cómo escriben la salida los comandos?"
    assert ids(mem.recall(prompt).text) == [echo]  # no index: the records word by word
    mem.reindex()
    found = mem.recall(prompt)
    assert ids(found.text) == [echo] and "matches salida, comandos" in found.text
    assert mem.recall("¿qué hora es?").text == ""  # "hora" is "time": nothing shares it
