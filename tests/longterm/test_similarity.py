"""Tests of planning_memory.longterm.similarity: normalisation, the score, the labelled corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.longterm.similarity import SIMILARITY_THRESHOLD, best_match, similarity, tokens

PAIRS = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "similarity_pairs.json").read_text(encoding="utf-8")
)


def _precision_recall(pairs: list[dict[str, object]], threshold: float) -> tuple[float, float]:
    scored = [(similarity(str(p["a"]), str(p["b"])) >= threshold, bool(p["same"])) for p in pairs]
    true_pos = sum(1 for said, same in scored if said and same)
    false_pos = sum(1 for said, same in scored if said and not same)
    false_neg = sum(1 for said, same in scored if not said and same)
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    return precision, true_pos / (true_pos + false_neg)


# --- tokens ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("errorHandling", ["error", "handling"]),
        ("snake_case_name", ["snak", "cas", "nam"]),
        ("kebab-case", ["kebab", "cas"]),
        ("TypeScript and JavaScript", ["typescript", "javascript"]),
        ("Validación de formularios", ["validation", "form"]),
        ("the files and the lines", ["fil", "lin"]),
        ("queries, boxes, classes, status", ["query", "box", "class", "status"]),
        ("errores y funciones", ["error", "function"]),
        ("Always use pnpm", ["pnpm"]),
        ("Siempre usa pnpm en lugar de npm", ["pnpm", "npm"]),
        ("Never use var; don't use any; evita eval", ["not", "var", "not", "any", "not", "eval"]),
        ("env vars in the db config", ["environment", "variabl", "databas", "configuration"]),
        ("prefer const over let", ["const", "let"]),
        ("", []),
        ("the and of", []),
    ],
)
def test_tokens(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


# --- the score -------------------------------------------------------------------------------


def test_identical_and_disjoint() -> None:
    assert similarity("Use pnpm for installs", "use PNPM for installs") == 1.0
    assert similarity("Use pnpm", "Validate forms on blur") == 0.0
    assert similarity("", "") == 0.0
    assert similarity("the and of", "Use pnpm") == 0.0


def test_spanish_and_english_meet() -> None:
    assert similarity("Siempre usa comillas simples", "Always use single quotes") == 1.0


def test_typos_score_above_threshold() -> None:
    assert similarity("Always use parametrized queries", "Allways use parameterized querys") > 0.5


@settings(max_examples=200)
@given(st.text(max_size=80), st.text(max_size=80))
def test_score_is_bounded_and_symmetric(a: str, b: str) -> None:
    score = similarity(a, b)
    assert 0.0 <= score <= 1.0
    assert score == similarity(b, a)


@settings(max_examples=200)
@given(st.text(max_size=80))
def test_a_text_is_like_itself(text: str) -> None:
    assert similarity(text, text) == (1.0 if tokens(text) else 0.0)


# --- best_match ------------------------------------------------------------------------------


CANDIDATES = [
    ("pat_a", "Always use zod for validation"),
    ("pat_b", "Use try/catch blocks with specific error classes"),
    ("pat_c", "Prefer named exports"),
]


def test_best_match_finds_the_twin() -> None:
    found = best_match("Always use try-catch with specific error types", CANDIDATES)
    assert found is not None
    assert found[0] == "pat_b"
    assert found[1] >= SIMILARITY_THRESHOLD


def test_best_match_none_below_threshold() -> None:
    assert best_match("Run the linter before every commit", CANDIDATES) is None
    assert best_match("anything", []) is None


def test_best_match_threshold_and_ties() -> None:
    twins = [("first", "use pnpm"), ("second", "Use pnpm")]
    assert best_match("pnpm", twins, threshold=0.9) == ("first", 1.0)
    assert best_match("pnpm please", [("x", "yarn")], threshold=0.0) == ("x", 0.0)


def test_best_match_accepts_a_generator() -> None:
    found = best_match("named exports", ((i, t) for i, t in CANDIDATES), threshold=0.5)
    assert found is not None and found[0] == "pat_c"


# --- the labelled corpus ---------------------------------------------------------------------


def test_corpus_shape() -> None:
    assert len(PAIRS) >= 60
    assert sum(1 for p in PAIRS if p["same"]) >= 25
    assert sum(1 for p in PAIRS if not p["same"]) >= 35
    assert {p["split"] for p in PAIRS} == {"tune", "holdout"}


def test_precision_and_recall_at_the_threshold() -> None:
    precision, recall = _precision_recall(PAIRS, SIMILARITY_THRESHOLD)
    print(f"\nsimilarity at {SIMILARITY_THRESHOLD}: {len(PAIRS)} pairs", end=" ")
    print(f"P={precision:.3f} R={recall:.3f}")
    for split in ("tune", "holdout"):
        part = [p for p in PAIRS if p["split"] == split]
        p, r = _precision_recall(part, SIMILARITY_THRESHOLD)
        print(f"  {split}: {len(part)} pairs P={p:.3f} R={r:.3f}")
    assert precision >= 0.9
    assert recall >= 0.8


# --- code words ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nunca uses any", ["not", "any"]),
        ("nunca uses this", ["not", "this"]),
        ("never use var, use let", ["not", "var", "let"]),
        ("Is there any way to do this?", ["way"]),
    ],
)
def test_code_words_are_not_stop_words(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_different_code_words_are_different_rules() -> None:
    assert similarity("nunca uses any", "nunca uses this") < SIMILARITY_THRESHOLD
    assert similarity("never use var", "never use let") < SIMILARITY_THRESHOLD
    assert similarity("Always use pnpm", "Always use yarn") < SIMILARITY_THRESHOLD


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Always use pnpm, never npm.", "Siempre usa pnpm, nunca npm"),
        ("Always use pnpm for installing packages, never npm", "Siempre usa pnpm, nunca npm"),
        ("We use pnpm, not npm, to install packages", "Use pnpm instead of npm"),
        ("never use `any` in TypeScript code", "No uses any en TypeScript"),
    ],
)
def test_shared_code_words_dominate(a: str, b: str) -> None:
    assert similarity(a, b) >= SIMILARITY_THRESHOLD


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Always use pnpm for installs", "Run pnpm audit before every release"),
        ("Use zod for form validation", "Export the zod schemas from schemas.ts"),
        ("Never call fetch in components", "Wrap fetch calls with the retry helper"),
        ("Do not use console.log in production", "Use console.error for errors"),
        ("Always use TypeScript strict mode", "Never use any in TypeScript"),
        ("Use pytest fixtures for the database", "Run pytest with -x on CI"),
        ("Use React.memo for list items", "Do not use React context for server state"),
        ("Keep the API base URL in env", "Version the API under /v2"),
    ],
)
def test_one_shared_code_word_is_not_the_same_rule(a: str, b: str) -> None:
    assert similarity(a, b) < SIMILARITY_THRESHOLD
