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
    return sorted((repo / ".planning" / "memory" / "long-term").rglob("*.json"))


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
    second = mem.learn_utterance("never use var in new code").outcome
    assert first is not None and second is not None
    assert (first.action, second.action) == ("queued", "queued")
    assert _long_term_files(empty_repo) == []
    runner = CliRunner()
    listed = runner.invoke(cli, ["-C", str(empty_repo), "review", "--json"])
    assert [i["record"]["id"] for i in json.loads(listed.output)] == [
        first.record["id"],
        second.record["id"],
    ]
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
    assert mem.review_queue() == []


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
