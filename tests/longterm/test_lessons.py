"""Learning from utterances: triggers, autoLearn, confirmBeforeLearn and the review queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planning_memory.cli import cli
from planning_memory.memory import Memory


def _configure(repo: Path, **long_term: object) -> None:
    path = repo / ".planning" / "memory-config.json"
    cfg = json.loads(path.read_text())
    cfg["memory"]["longTerm"].update(long_term)
    path.write_text(json.dumps(cfg))


def _long_term_files(repo: Path) -> list[Path]:
    """The records (``preferences.json``, which a taught setting updates, is not one)."""
    found = (repo / ".planning" / "memory" / "long-term").rglob("*.json")
    return sorted(p for p in found if p.name != "preferences.json")


@pytest.mark.parametrize(
    ("utterance", "record_type"),
    [
        ("always use pnpm for installs", "pattern"),
        ("in this project we use Vitest for unit tests", "pattern"),
        ("never use var in new code", "mistake"),
        ("use zod instead of yup", "preference"),
        ("siempre usa async/await", "pattern"),
        ("nunca uses any en TypeScript", "mistake"),
        ("prefiero comillas simples", "preference"),
    ],
)
def test_trigger_saves_the_right_kind(empty_repo: Path, utterance: str, record_type: str) -> None:
    lesson = Memory(empty_repo).learn_utterance(utterance)
    assert lesson.outcome is not None and lesson.outcome.action == "created"
    assert lesson.outcome.record["type"] == record_type
    assert len(_long_term_files(empty_repo)) == 1


def test_no_trigger_saves_nothing(empty_repo: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(empty_repo), "learn", "I always forget this"])
    assert result.exit_code == 0
    assert "No learning trigger found; nothing saved." in result.output
    assert _long_term_files(empty_repo) == []


def test_auto_learn_off_only_suggests(empty_repo: Path) -> None:
    _configure(empty_repo, autoLearn=False)
    lesson = Memory(empty_repo).learn_utterance("always use pnpm for installs")
    assert lesson.outcome is not None and lesson.outcome.action == "suggested"
    assert _long_term_files(empty_repo) == []


def test_confirm_before_learn_queues_for_review(empty_repo: Path) -> None:
    _configure(empty_repo, confirmBeforeLearn=True)
    mem = Memory(empty_repo)
    first = mem.learn_utterance("always use pnpm for installs").outcome
    task = "Fix the flaky login test in src/auth/session.ts. Never use var in new code"
    second = mem.learn_utterance(task).outcome
    assert first is not None and second is not None
    assert (first.action, second.action) == ("queued", "queued")
    assert _long_term_files(empty_repo) == []
    runner = CliRunner()
    listed = runner.invoke(cli, ["-C", str(empty_repo), "review", "--json"])
    assert [i["record"]["id"] for i in json.loads(listed.output)] == [
        first.record["id"],
        second.record["id"],
    ]
    # the queue keeps the rule as said, not the task around it
    assert json.loads(listed.output)[1]["utterance"] == "Never use var in new code"
    runner.invoke(
        cli,
        [
            "-C",
            str(empty_repo),
            "review",
            "--accept",
            first.record["id"],
            "--reject",
            second.record["id"],
        ],
    )
    assert [r["id"] for r in mem.records()] == [first.record["id"]]
    assert mem.longterm.review_queue() == []


def test_praise_without_patterns_says_so(empty_repo: Path) -> None:
    lesson = Memory(empty_repo).learn_utterance("perfect, thanks")
    assert lesson.trigger is not None and lesson.trigger.kind == "praise"
    assert lesson.outcome is None


@pytest.mark.parametrize(
    "utterance",
    [
        "From now on always use pnpm instead of npm",
        "Going forward always run the linter before committing",
        "de ahora en adelante siempre usa pnpm",
    ],
)
def test_lead_in_phrases_do_not_hide_a_trigger(empty_repo: Path, utterance: str) -> None:
    lesson = Memory(empty_repo).learn_utterance(utterance)
    assert lesson.trigger is not None and lesson.trigger.kind == "pattern"


def test_a_lead_in_alone_is_no_trigger(empty_repo: Path) -> None:
    assert Memory(empty_repo).learn_utterance("From now on I will be away").trigger is None


# --- regressions -------------------------------------------------------------------------------


def test_a_rule_in_a_prompt_learns_the_rule_and_its_restatement_reinforces_it(
    empty_repo: Path,
) -> None:
    mem = Memory(empty_repo)
    first = mem.learn_utterance("Add lodash as a dependency. Always use pnpm, never npm.").outcome
    assert first is not None and first.action == "created"
    record = first.record
    assert "lodash" not in json.dumps(record)
    assert record["title"] == "Use pnpm, never npm"
    assert record["description"] == "Always use pnpm, never npm."
    again = mem.learn_utterance("Siempre usa pnpm, nunca npm").outcome
    assert again is not None and again.action == "reinforced"
    assert again.record["id"] == record["id"] and again.record["usage_count"] == 2
    assert len(_long_term_files(empty_repo)) == 1


def test_a_different_code_word_is_a_different_mistake(empty_repo: Path) -> None:
    mem = Memory(empty_repo)
    first = mem.learn_utterance("nunca uses any").outcome
    other = mem.learn_utterance("nunca uses this").outcome
    assert other is not None and other.action == "created"
    again = mem.learn_utterance("No uses any, por favor.").outcome
    assert first is not None and again is not None and again.action == "reinforced"
    assert again.record["id"] == first.record["id"] and again.record["occurrences"] == 2


@pytest.mark.parametrize("utterance", ["Mejor así.", "Better this way."])
def test_bare_approval_with_nothing_to_reinforce_is_no_error(
    empty_repo: Path, utterance: str
) -> None:
    result = CliRunner().invoke(cli, ["-C", str(empty_repo), "learn", utterance])
    assert result.exit_code == 0, result.output
    assert "nothing to reinforce yet" in result.output
    assert _long_term_files(empty_repo) == []


def test_bare_approval_reinforces_the_latest_pattern(empty_repo: Path) -> None:
    mem = Memory(empty_repo)
    mem.learn_utterance("always use pnpm for installs")
    outcome = mem.learn_utterance("Mejor así.").outcome
    assert outcome is not None and outcome.action == "reinforced"


@pytest.mark.parametrize(
    ("utterance", "title", "correction"),
    [
        ("No uses any.", "No uses any.", "No uses any"),
        ("Nunca uses var, usa const.", "Nunca uses var, usa const.", "Usa const, no var"),
        ("Evita los any en TypeScript.", "Evita los any en TypeScript.", "No uses any"),
        ("Never use var, use const.", "Never use var, use const.", "Use const, not var"),
        ("Don't use default exports.", "Don't use default exports.", "Do not use default exports"),
    ],
)
def test_a_mistake_is_stored_in_the_language_it_was_said(
    empty_repo: Path, utterance: str, title: str, correction: str
) -> None:
    outcome = Memory(empty_repo).learn_utterance(utterance).outcome
    assert outcome is not None
    assert (outcome.record["title"], outcome.record["correction"]) == (title, correction)


def test_a_spanish_preference_is_stored_in_spanish(empty_repo: Path) -> None:
    outcome = Memory(empty_repo).learn_utterance("Prefiero zod en vez de yup").outcome
    assert outcome is not None
    assert outcome.record["learned"] == "Usa zod en vez de yup"
    assert outcome.record["original"] == "Prefiero zod en vez de yup"


def test_a_system_reminder_learns_nothing(empty_repo: Path) -> None:
    text = "<system-reminder>\nAlways use the TodoWrite tool.\n</system-reminder>"
    assert Memory(empty_repo).learn_utterance(text).trigger is None
    assert _long_term_files(empty_repo) == []


@pytest.mark.parametrize(
    ("utterance", "types"),
    [
        ("Always use pnpm. Never commit .env files.", ["pattern", "mistake"]),
        (
            "prefiero funciones flecha en los componentes. Y nunca uses console.log en producción",
            ["preference", "mistake"],
        ),
        ("Always use pnpm and never commit .env files", ["pattern", "mistake"]),
    ],
)
def test_every_rule_of_an_utterance_is_learned(
    empty_repo: Path, utterance: str, types: list[str]
) -> None:
    lesson = Memory(empty_repo).learn_utterance(utterance)
    outcomes = [each.outcome for each in lesson.each()]
    assert [o.action if o else None for o in outcomes] == ["created"] * len(types)
    assert [o.record["type"] for o in outcomes if o] == types
    assert len(_long_term_files(empty_repo)) == len(types)
    assert [a["outcome"]["type"] for a in lesson.summary()["also"]] == types[1:]


def test_pmem_learn_says_what_each_rule_did(empty_repo: Path) -> None:
    said = "Always use pnpm. Never commit .env files."
    result = CliRunner().invoke(cli, ["-C", str(empty_repo), "learn", said])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if not line.startswith(" ")]  # notes
    assert len(lines) == 2
    assert lines[0].startswith("pattern ('Always use') -> created: pat_")
    assert lines[1].startswith("mistake ('Never commit') -> created: mis_")


@pytest.mark.parametrize("correction", ["No, así no", "no, that's wrong"])
def test_a_correction_that_names_nothing_counts_no_mistake(
    empty_repo: Path, correction: str
) -> None:
    mem = Memory(empty_repo)
    planted = mem.learn_utterance("No uses no-verify.").outcome  # 50% like "No, así no"
    assert planted is not None
    for _ in range(3):
        lesson = mem.learn_utterance(correction)
        assert lesson.trigger is not None and lesson.trigger.bare
        assert lesson.outcome is None
    [kept] = mem.records("mistake")
    assert (kept["id"], kept["occurrences"], kept["severity"]) == (
        planted.record["id"],
        1,
        "medium",
    )
    result = CliRunner().invoke(cli, ["-C", str(empty_repo), "learn", correction])
    assert "a correction that names nothing; nothing saved" in result.output
