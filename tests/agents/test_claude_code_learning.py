"""What the Claude Code hooks learn and keep, through the real command (``pmem hook claude-code
EVENT``) with Claude Code's payloads and transcript: every rule of a prompt, nothing from a
bare correction, the session's goal from the task (never from "vale, sigue"), and the
decisions of the messages a compaction folds away."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from claude_sessions import ClaudeCode

from planning_memory.memory import Memory

IDS = (
    "1a2b3c4d-0001-4e5f-8a9b-0c1d2e3f4a01",
    "1a2b3c4d-0002-4e5f-8a9b-0c1d2e3f4a02",
    "1a2b3c4d-0003-4e5f-8a9b-0c1d2e3f4a03",
)


def claude(repo: Path, n: int) -> ClaudeCode:
    return ClaudeCode(repo, Path(os.environ["HOME"]), IDS[n])


def session_of(repo: Path, who: ClaudeCode) -> dict[str, Any]:
    mem = Memory(repo)
    [info] = [i for i in mem.sessions.list() if i.name == f"claude-code {who.session_id}"]
    return mem.sessions.get(info.id)


def test_every_rule_of_a_prompt_is_learned_in_english_and_spanish(empty_repo: Path) -> None:
    one = claude(empty_repo, 0)
    one.start()
    said = one.prompt("Always use pnpm. Never commit .env files.")
    assert said is not None
    notes = said["hookSpecificOutput"]["additionalContext"].splitlines()
    learned = [n.split()[2] for n in notes if n.startswith("planning-memory: created ")]
    assert learned == ["pattern", "mistake"]
    one.prompt(
        "prefiero funciones flecha en los componentes. Y nunca uses console.log en producción"
    )
    one.prompt("Let's get the recipe list rendering. I always forget the sort order.")
    mem = Memory(empty_repo)
    titles = {r["type"]: r["title"] for r in mem.records() if r["type"] != "mistake"}
    assert titles == {"pattern": "Use pnpm", "preference": "Funciones flecha en los componentes"}
    assert sorted(r["title"] for r in mem.records("mistake")) == [
        "Never commit .env files.",
        "Nunca uses console.log en producción",
    ]


def test_bare_corrections_never_count_a_mistake(empty_repo: Path) -> None:
    one = claude(empty_repo, 0)
    one.start()
    one.prompt("No uses no-verify.")
    one.say("De acuerdo, sin --no-verify.")
    one.stop()
    [planted] = Memory(empty_repo).records("mistake")
    for correction in ("No, así no", "no, that's wrong", "No, así no"):
        one.prompt(correction)
        one.say("Sorry, let me redo it.")
        one.stop()
    [kept] = Memory(empty_repo).records("mistake")
    assert kept == planted  # not one more occurrence, no severity raised
    user = [m["content"] for m in session_of(empty_repo, one)["messages"] if m["role"] == "user"]
    assert user[-3:] == ["No, así no", "no, that's wrong", "No, así no"]  # logged, nothing more


def test_the_goal_is_the_task_of_the_first_prompt_and_the_next_session_searches_it(
    empty_repo: Path,
) -> None:
    one = claude(empty_repo, 0)
    one.start()
    one.prompt("Always use pnpm. Let's build the login page")
    one.say("Entendido, usaré pnpm. I'll start with the form component.")
    one.stop()
    one.prompt("Vale, sigue con el paso 2")
    one.say("The form posts to /api/login and shows the error under the password field.")
    one.stop()
    assert session_of(empty_repo, one)["goal"] == "Let's build the login page"
    one.end()
    ended = session_of(empty_repo, one)["end_summary"]
    assert ended["goal"] == "Let's build the login page"
    assert not any(d.startswith(("Entendido", "Vale")) for d in ended["discoveries"])

    two = claude(empty_repo, 1)
    two.start()
    [injected] = session_of(empty_repo, two)["injected"]
    assert injected["task"].startswith("Let's build the login page")
    assert "sigue" not in injected["task"]


@pytest.mark.slow
def test_compaction_keeps_the_decisions_of_the_messages_it_folds(empty_repo: Path) -> None:
    one = claude(empty_repo, 0)
    one.start()
    one.prompt("Should the auth keep sessions in the database or in tokens?")
    one.say("We'll use JWT instead of DB sessions, because the API runs on the edge.")
    one.stop()
    one.prompt("¿Y la base de datos de recetas?")
    one.say("Decidimos usar Postgres con Prisma para las recetas.")
    one.stop()
    after = one.compact()
    decisions = session_of(empty_repo, one)["decisions"]
    assert [(d["question"], d["decision"]) for d in decisions] == [
        (
            "Should the auth keep sessions in the database or in tokens?",
            "We'll use JWT instead of DB sessions, because the API runs on the edge.",
        ),
        ("¿Y la base de datos de recetas?", "Decidimos usar Postgres con Prisma para las recetas."),
    ]
    assert "decided: We'll use JWT instead of DB sessions" in after
    assert "decided: Decidimos usar Postgres con Prisma" in after
    one.prompt("Add the logout button")
    one.say("Added the logout button.")
    one.stop()
    one.compact()  # a second compaction records nothing twice
    assert len(session_of(empty_repo, one)["decisions"]) == 2
    one.end()

    told = claude(empty_repo, 1).start()
    assert "JWT instead of DB sessions" in told and "Postgres con Prisma" in told


def test_a_start_after_compaction_keeps_the_decisions_without_pre_compact(
    empty_repo: Path,
) -> None:
    one = claude(empty_repo, 0)
    one.start()
    one.prompt("Which queue do we use for the emails?")
    one.say("We decided to use BullMQ on the existing Redis.")
    after = one.start("compact")  # no Stop and no PreCompact came before it
    assert "decided: We decided to use BullMQ on the existing Redis." in after
