"""What a session is about (planning_memory.sessions.goal): the task a prompt states, without
the rules it teaches, acknowledgements or go-ons."""

from __future__ import annotations

import pytest

from planning_memory.sessions.goal import task_of
from planning_memory.sessions.summary_base import acknowledgement


@pytest.mark.parametrize(
    ("prompt", "task"),
    [
        ("Always use pnpm. Let's build the login page", "Let's build the login page"),
        ("Siempre usa pnpm. Construye la página de login", "Construye la página de login"),
        ("Fix the login test. Also, never use sleep() in tests.", "Fix the login test."),
        ("Refactor it and always run the tests before pushing", "Refactor it"),
        (
            "When writing tests, always use vitest. Add tests for the cart.",
            "Add tests for the cart.",
        ),
        ("Perfecto, gracias. Ahora añade el logout.", "Ahora añade el logout."),
        (
            "Should sessions live in JWTs or in the database?",
            "Should sessions live in JWTs or in the database?",
        ),
        ("Always use pnpm\n\nBuild the login page with a form", "Build the login page with a form"),
    ],
)
def test_the_task_of_a_prompt_leaves_its_rules_out(prompt: str, task: str) -> None:
    assert task_of(prompt) == task


@pytest.mark.parametrize(
    "prompt",
    [
        "Always use pnpm.",
        "Always use pnpm. Never commit .env files.",
        "prefiero funciones flecha en los componentes. Y nunca uses console.log en producción",
        "Vale, sigue con el paso 2",
        "ok continue",
        "sí",
        "perfecto",
        "Sí, hazlo",
        "Dale, sigue",
        "go ahead",
        "Next step please",
        "No, así no",
        "no, that's wrong",
        "Great!",
        "",
    ],
)
def test_rules_acknowledgements_and_go_ons_state_no_task(prompt: str) -> None:
    assert task_of(prompt) == ""


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("Entendido, usaré pnpm para todo.", True),
        ("Understood, I'll use pnpm from now on.", True),
        ("Understood.", True),
        ("Got it: never commit .env files.", True),
        ("Ok, I will do that now", True),
        ("Vale, sigue con el paso 2", True),
        ("Continúa con el siguiente paso", True),
        ("OK, the bug is in parse.py", False),
        ("Yes, the cache is stale after a deploy", False),
        ("Vale, usaremos Postgres", False),
        ("Go with Postgres", False),
        ("Next: add refresh-token rotation", False),
        ("continue with the refactor of the auth module", False),
        ("Great work on the form", False),
    ],
)
def test_an_acknowledgement_only_takes_note_or_goes_on(sentence: str, said: bool) -> None:
    assert acknowledgement(sentence) is said
