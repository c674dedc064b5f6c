"""The seeds' object arguments to the Python API: seed 000's ``learnPattern({name, ...})``,
``learnFromMistake``, ``recordDecision``, ``updateFileEntity``, ``searchContext`` and seed
003's observation given to ``Memory.save`` are taken as the seeds write them; anything else
is one ``InputError`` line, and nothing is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planning_memory.errors import InputError
from planning_memory.memory import Memory


@pytest.fixture
def mem(empty_repo: Path) -> Memory:
    (empty_repo / "src").mkdir()
    (empty_repo / "src" / "api.ts").write_text("export const f = () => 1;\n", "utf-8")
    return Memory(empty_repo)


def test_seed000_objects_are_taken_as_the_seed_writes_them(mem: Memory) -> None:
    pattern = mem.learn_pattern(
        {
            "name": "Arrow functions in handlers",
            "description": "Handlers are arrow functions",
            "example": "export const get = () => {}",
            "context": ["handlers"],
        }
    ).record
    assert (pattern["type"], pattern["title"], pattern["example"]) == (
        "pattern",
        "Arrow functions in handlers",
        "export const get = () => {}",
    )
    assert "handlers" in pattern["tags"]
    mistake = mem.learn_from_mistake(
        {"description": "console.log left in production", "correction": "use the logger"}
        | {"severity": "high", "context": ["logging"]}
    ).record
    assert (mistake["severity"], mistake["correction"]) == ("high", "use the logger")
    decision = mem.record_decision(
        {
            "question": "Which database?",
            "answer": "Postgres",
            "reasoning": "reservations survive restarts",
            "alternatives": ["Redis"],
        }
    )
    assert (decision["decision"], decision["alternatives"]) == ("Postgres", ["Redis"])
    mem.scan()
    entity = mem.update_file_entity("src/api.ts", {"modifiedBy": ["coder"], "purpose": "The API"})
    assert (entity["purpose"], entity["modified_by"]) == ("The API", ["coder"])
    hits = mem.search_context("arrow functions handlers", {"limit": 1, "threshold": 0.5})
    assert [h.ref_id for h in hits] == [pattern["id"]]


def test_seed003_observation_object_to_save(mem: Memory) -> None:
    saved = mem.save(
        {
            "title": "Receipts are emailed after the return",
            "type": "decision",
            "what": "The receipt email goes out when the bike is back",
            "why": "the final price is known only then",
            "topic_key": "billing/receipt-email",
        }
    ).record
    assert (saved["type"], saved["topic_key"]) == ("decision", "billing/receipt-email")
    assert saved["body"]["why"] == "the final price is known only then"


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda m: m.save({"title": "x", "kind": "pattern"}), "save: unknown key 'kind'"),
        (lambda m: m.save({"what": "no title"}), "save: the object needs its 'title'"),
        (lambda m: m.save(["a list"]), "save: title must be text or an object of title, type"),
        (lambda m: m.save("x", {"type": "pattern"}), "save: the type must be text, got dict"),
        (lambda m: m.save({"title": 3}), "save: title must be text, got int"),
        (lambda m: m.learn_pattern(["a"]), "learn_pattern: name must be text or an object of"),
        (lambda m: m.learn_pattern({"nombre": "x"}), "learn_pattern: unknown key 'nombre'"),
        (lambda m: m.learn_pattern({"name": 1}), "learn_pattern: name must be text or an"),
        (lambda m: m.learn_from_mistake({"correction": "x"}), "needs its 'description'"),
        (lambda m: m.learn_from_mistake(42), "description must be text or an object"),
        (lambda m: m.record_decision({"question": "q", "why": "?"}), "unknown key 'why'"),
        (lambda m: m.record_decision("q", {"answer": "a"}), "decision must be text, got dict"),
        (lambda m: m.search_context("x", {"top": 3}), "search_context: unknown key 'top'"),
        (lambda m: m.update_file_entity("src/api.ts", {"owner": "me"}), "unknown key 'owner'"),
    ],
)
def test_anything_else_is_one_input_error_and_nothing_is_written(
    mem: Memory, call: Any, said: str
) -> None:
    before = sorted(p.name for p in mem.layout.long_term.rglob("*.json"))
    with pytest.raises(InputError) as raised:
        call(mem)
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert sorted(p.name for p in mem.layout.long_term.rglob("*.json")) == before
