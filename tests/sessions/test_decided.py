"""The decisions a conversation states (planning_memory.sessions.decided)."""

from __future__ import annotations

from typing import Any

from planning_memory.sessions.decided import STATED, Stated, stated


def said(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content}


def test_decisions_in_english_and_spanish_with_the_question_they_answer() -> None:
    messages = [
        said("user", "Let's build the login page for the recipe app"),
        said("assistant", "We'll use JWT instead of DB sessions, because the API is stateless."),
        said("user", "¿Qué base de datos usamos?"),
        said("assistant", "Decidimos usar Postgres con Prisma. [MEMORIZE: recetas en Postgres]"),
        said("user", "Vamos a usar Tailwind para los estilos."),
    ]
    assert stated(messages) == [
        Stated(
            "Let's build the login page for the recipe app",
            "We'll use JWT instead of DB sessions, because the API is stateless.",
            "the API is stateless",
            ("DB sessions",),
        ),
        Stated("¿Qué base de datos usamos?", "Decidimos usar Postgres con Prisma."),
        Stated(STATED, "Vamos a usar Tailwind para los estilos."),
    ]


def test_a_decision_with_its_reason_and_what_it_was_chosen_against() -> None:
    messages = [
        said("user", "How do we charge overdue loans?"),
        said(
            "assistant", "We'll charge fines per day instead of per week. Because librarians asked."
        ),
        said("user", "Cobramos por hora en vez de por día, ya que es más justo."),
        said("assistant", "We'll use Redis as the cache."),
    ]
    assert stated(messages) == [
        Stated(
            "How do we charge overdue loans?",
            "We'll charge fines per day instead of per week.",
            "librarians asked",
            ("per week",),
        ),
        Stated(
            STATED,
            "Cobramos por hora en vez de por día, ya que es más justo.",
            "es más justo",
            ("por día",),
        ),
        Stated(
            "Cobramos por hora en vez de por día, ya que es más justo.",
            "We'll use Redis as the cache.",
        ),
    ]


def test_a_decision_answers_the_task_of_the_prompt_not_its_rules() -> None:
    messages = [
        said("user", "Always use pnpm. Let's add overdue fines to the loans API"),
        said("assistant", "We'll charge fines per day instead of per week."),
    ]
    [found] = stated(messages)
    assert found.question == "Let's add overdue fines to the loans API"


def test_questions_acknowledgements_and_other_talk_are_no_decisions() -> None:
    messages = [
        said("user", "Did we decide to use Redis? Let's use the cache later, maybe."),
        said("assistant", "Entendido, usaremos pnpm. Understood, we'll use pnpm."),
        said("assistant", "The tests pass now."),
        said("tool", "we decided to use X"),
    ]
    assert [s.decision for s in stated(messages)] == ["Let's use the cache later, maybe."]


def test_only_the_messages_from_start_each_decision_once() -> None:
    messages = [
        said("assistant", "We decided to use zod for validation."),
        said("user", "Should the forms use it too?"),
        said("assistant", "Yes: we decided to use zod for validation. We'll use it in forms."),
    ]
    assert stated(messages, start=2) == [
        Stated("Should the forms use it too?", "Yes: we decided to use zod for validation."),
        Stated("Should the forms use it too?", "We'll use it in forms."),
    ]
