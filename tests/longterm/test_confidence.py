"""A learning's confidence follows its evidence: how it was stated, and each time it was said
again; never the fixed 0.8 / 0.9 of every record alike."""

from __future__ import annotations

from pathlib import Path

from planning_memory.longterm import confidence
from planning_memory.memory import Memory


def learned(mem: Memory, said: str) -> dict:
    outcome = mem.learn_utterance(said).outcome
    assert outcome is not None, said
    return mem.get(outcome.record["id"])


def test_how_a_rule_was_stated_sets_its_confidence(tmp_path: Path) -> None:
    mem = Memory.init(tmp_path)
    stated = learned(mem, "I prefer tabs over spaces")
    spanish = learned(mem, "prefiero funciones flecha")
    guessed = learned(mem, "No, use pnpm instead of npm")
    saved = mem.get(mem.save("Webhooks retry 5 times", "decision").record["id"])
    mem.log("Done. [MEMORIZE: forms use react-hook-form]", role="assistant")
    marked = next(r for r in mem.records("learning") if r.get("trigger") == "[MEMORIZE]")
    assert stated["confidence"] == spanish["confidence"] == confidence.STATED
    assert guessed["confidence"] == confidence.GUESSED < saved["confidence"]
    assert saved["confidence"] == confidence.SAVED < stated["confidence"]
    assert marked["confidence"] == confidence.STATED
    given = mem.save("Deploys on Fridays", "learning", confidence=0.3).record
    assert mem.get(given["id"])["confidence"] == 0.3  # the caller's figure is kept


def test_saying_a_rule_again_raises_it_once_per_time(tmp_path: Path) -> None:
    mem = Memory.init(tmp_path)
    first = learned(mem, "No, use pnpm instead of npm")
    seen = [first["confidence"]]
    for _ in range(6):
        again = mem.learn_utterance("No, use pnpm instead of npm").outcome
        assert again is not None and again.action == "duplicate"
        assert again.record["id"] == first["id"]
        seen.append(mem.get(first["id"])["confidence"])
    assert seen == [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.95], seen
    assert len(mem.records()) == 1
