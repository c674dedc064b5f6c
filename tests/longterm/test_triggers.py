"""Tests of planning_memory.longterm.triggers: the trigger table, non-triggers, MEMORIZE markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.longterm.triggers import (
    KINDS,
    Trigger,
    detect,
    detect_all,
    extract_memorize_markers,
)

# utterance, kind, language, subject, preferred, avoided
Row = tuple[str, str, str, str, str | None, str | None]

TRIGGERS: list[Row] = [
    # --- patterns, English
    ("Always use pnpm for installs.", "pattern", "en", "use pnpm for installs", "pnpm", None),
    (
        "always do a dry run before deploying",
        "pattern",
        "en",
        "do a dry run before deploying",
        None,
        None,
    ),
    (
        "In this project we use Vitest, not Jest.",
        "pattern",
        "en",
        "use Vitest, not Jest",
        "Vitest",
        "Jest",
    ),
    (
        "We prefer composition over inheritance.",
        "pattern",
        "en",
        "composition over inheritance",
        "composition",
        "inheritance",
    ),
    (
        "The convention is kebab-case for file names.",
        "pattern",
        "en",
        "kebab-case for file names",
        None,
        None,
    ),
    (
        "Please always run the tests before pushing",
        "pattern",
        "en",
        "run the tests before pushing",
        None,
        None,
    ),
    (
        "OK, and always add type hints to public functions.",
        "pattern",
        "en",
        "add type hints to public functions",
        None,
        None,
    ),
    (
        "You should always validate input on the server.",
        "pattern",
        "en",
        "validate input on the server",
        None,
        None,
    ),
    ("We always use UTC in the database.", "pattern", "en", "use UTC in the database", "UTC", None),
    (
        "Our convention is snake_case for Python modules",
        "pattern",
        "en",
        "snake_case for Python modules",
        None,
        None,
    ),
    (
        "always use `const` instead of `let`",
        "pattern",
        "en",
        "use `const` instead of `let`",
        "const",
        "let",
    ),
    (
        "The convention is to use named exports",
        "pattern",
        "en",
        "use named exports",
        "named exports",
        None,
    ),
    ("Better this way.", "praise", "en", "", None, None),  # names nothing: approval
    (
        "- Always wrap database writes in a transaction",
        "pattern",
        "en",
        "wrap database writes in a transaction",
        None,
        None,
    ),
    # --- mistakes, English
    ("Never use var.", "mistake", "en", "use var", None, "var"),
    (
        "never do git push --force on main",
        "mistake",
        "en",
        "do git push --force on main",
        None,
        None,
    ),
    (
        "Don't use default exports in components.",
        "mistake",
        "en",
        "use default exports in components",
        None,
        "default exports",
    ),
    ("Do not use any in TypeScript", "mistake", "en", "use any in TypeScript", None, "any"),
    ("Avoid nested ternaries.", "mistake", "en", "nested ternaries", None, "nested ternaries"),
    (
        "That's wrong, the id must be a string.",
        "mistake",
        "en",
        "the id must be a string",
        None,
        None,
    ),
    (
        "No, do it like this: map over the list and return early.",
        "mistake",
        "en",
        "map over the list and return early",
        None,
        None,
    ),
    ("That is wrong.", "mistake", "en", "", None, None),
    ("Never commit the .env file", "mistake", "en", "commit the .env file", None, None),
    ("You must never log tokens", "mistake", "en", "log tokens", None, None),
    ("Please don't mutate props", "mistake", "en", "mutate props", None, None),
    (
        "never use var, use let or const instead",
        "mistake",
        "en",
        "use var, use let or const instead",
        "let or const",
        "var",
    ),
    (
        "Avoid using console.log in production code",
        "mistake",
        "en",
        "using console.log in production code",
        None,
        "console.log",
    ),
    ("No, never use var; use const.", "mistake", "en", "use var; use const", "const", "var"),
    ("Perfect, but never use var in new code", "mistake", "en", "use var in new code", None, "var"),
    ("We never hardcode URLs", "mistake", "en", "hardcode URLs", None, None),
    # --- preferences, English
    ("I prefer tabs over spaces.", "preference", "en", "tabs over spaces", "tabs", "spaces"),
    ("I prefer small commits", "preference", "en", "small commits", "small commits", None),
    (
        "I like the early-return style better",
        "preference",
        "en",
        "the early-return style better",
        "early-return style",
        None,
    ),
    ("Use pnpm instead of npm", "preference", "en", "Use pnpm instead of npm", "pnpm", "npm"),
    (
        "prefer `pathlib` over `os.path`",
        "preference",
        "en",
        "`pathlib` over `os.path`",
        "pathlib",
        "os.path",
    ),
    (
        "I'd prefer shorter function names",
        "preference",
        "en",
        "shorter function names",
        "shorter function names",
        None,
    ),
    (
        "I like Tailwind more than CSS modules",
        "preference",
        "en",
        "Tailwind more than CSS modules",
        "Tailwind",
        "CSS modules",
    ),
    (
        "Personally I prefer guard clauses.",
        "preference",
        "en",
        "guard clauses",
        "guard clauses",
        None,
    ),
    (
        "Use fetch rather than axios for new code",
        "preference",
        "en",
        "Use fetch rather than axios for new code",
        "fetch",
        "axios",
    ),
    # --- praise, English
    ("Great!", "praise", "en", "", None, None),
    ("Perfect, thanks.", "praise", "en", "thanks", None, None),
    ("Well done.", "praise", "en", "", None, None),
    ("Exactly.", "praise", "en", "", None, None),
    ("Nice work on the parser!", "praise", "en", "on the parser", None, None),
    ("That's it!", "praise", "en", "", None, None),
    ("Great job, that works.", "praise", "en", "that works", None, None),
    ("ok perfect", "praise", "en", "", None, None),
    # --- Spanish (seed 000)
    ("Siempre usa pnpm.", "pattern", "es", "usa pnpm", "pnpm", None),
    (
        "siempre haz tests antes de hacer merge",
        "pattern",
        "es",
        "haz tests antes de hacer merge",
        None,
        None,
    ),
    (
        "Siempre prefiero funciones puras",
        "pattern",
        "es",
        "prefiero funciones puras",
        "funciones puras",
        None,
    ),
    (
        "En este proyecto usamos Tailwind para los estilos.",
        "pattern",
        "es",
        "usamos Tailwind para los estilos",
        "Tailwind",
        None,
    ),
    (
        "En este proyecto preferimos async/await",
        "pattern",
        "es",
        "preferimos async/await",
        "async/await",
        None,
    ),
    (
        "La convención es usar snake_case en Python.",
        "pattern",
        "es",
        "usar snake_case en Python",
        "snake_case",
        None,
    ),
    ("Mejor así.", "praise", "es", "", None, None),  # names nothing: approval
    ("Mejor así, con el early return.", "pattern", "es", "con el early return", None, None),
    ("No, hazlo con un map.", "mistake", "es", "con un map", None, None),
    (
        "Así no, usa el helper de fechas.",
        "mistake",
        "es",
        "usa el helper de fechas",
        "helper de fechas",
        None,
    ),
    ("Eso está mal, el id es un string.", "mistake", "es", "el id es un string", None, None),
    ("Nunca uses var.", "mistake", "es", "uses var", None, "var"),
    ("nunca hagas push directo a main", "mistake", "es", "hagas push directo a main", None, None),
    ("Evita los any en TypeScript.", "mistake", "es", "los any en TypeScript", None, "any"),
    ("No uses any.", "mistake", "es", "uses any", None, "any"),
    (
        "Evitad los efectos secundarios en los reducers",
        "mistake",
        "es",
        "los efectos secundarios en los reducers",
        None,
        "efectos secundarios",
    ),
    (
        "Prefiero tabs en vez de espacios.",
        "preference",
        "es",
        "tabs en vez de espacios",
        "tabs",
        "espacios",
    ),
    (
        "Me gusta más la versión con reduce.",
        "preference",
        "es",
        "la versión con reduce",
        "versión con reduce",
        None,
    ),
    (
        "Usa fetch en vez de axios.",
        "preference",
        "es",
        "Usa fetch en vez de axios",
        "fetch",
        "axios",
    ),
    (
        "Yo prefiero los tests con pytest",
        "preference",
        "es",
        "los tests con pytest",
        "tests con pytest",
        None,
    ),
    ("Me gusta más así", "preference", "es", "así", "así", None),
    ("¡Perfecto!", "praise", "es", "", None, None),
    ("Excelente trabajo.", "praise", "es", "", None, None),
    ("Muy bien, sigue así.", "praise", "es", "sigue así", None, None),
    ("Vale, perfecto, gracias", "praise", "es", "gracias", None, None),
    # --- the first kind in the seed's order wins
    ("Great. Always use pnpm from now on.", "pattern", "en", "use pnpm from now on", "pnpm", None),
    (
        "Use yarn instead of npm, and always pin versions",
        "pattern",
        "en",
        "pin versions",
        None,
        None,
    ),
]

NOT_TRIGGERS = [
    "I always forget where this is.",
    "It always fails on CI.",
    "Should we always use pnpm?",
    "¿Siempre usamos pnpm?",
    "To avoid the race, I added a lock.",
    "This avoids a copy.",
    "The inevitable happened.",
    "Para evitar errores, añadí un test.",
    "const great = computeScore();",
    "```js\n// always use strict mode\nconst x = 1;\n```",
    "Call `avoid()` to skip it",
    "The perfect hash function is overkill here.",
    "Exactly one item must be selected.",
    "Why is that wrong?",
    "The never type in TypeScript is useful.",
    "I don't think that's wrong.",
    "Run the migration and tell me what you see.",
    "if (!perfect) { avoid(); }",
    "Esto evita que falle el build.",
    "I used pnpm instead of npm yesterday.",
    "The greatest common divisor is 6.",
    "Well, done is better than perfect.",
    "We never got a reply from the API.",
    "¿Qué prefieres, tabs o espacios?",
    "That's it for today.",
    "Avoidance of side effects is a design goal.",
    "git commit -m 'never use var'",
    "El build siempre usa la caché.",
    "Do you prefer tabs?",
    "# never use this directly\nx = helper()",
    "",
]

# Written after the table above passed, to check the rules on fresh wording (kind only).
FRESH: list[tuple[str, str | None]] = [
    ("always prefer early returns", "pattern"),
    ("From now on, always write the changelog entry with the PR.", "pattern"),
    ("we always squash merge PRs", "pattern"),
    ("in this repo we use black with line length 100", "pattern"),
    ("The convention here is one class per file", "pattern"),
    ("nope, that's wrong: the endpoint is /v2/users", "mistake"),
    ("Don't hardcode the port, read it from PORT", "mistake"),
    ("please never call the API from a component directly", "mistake"),
    ("avoid global state.", "mistake"),
    ("Do not put business logic in views", "mistake"),
    ("I'd rather prefer a dict here", "preference"),
    ("I really prefer f-strings over format()", "preference"),
    ("use httpx instead of requests", "preference"),
    ("Prefer pathlib to os.path", "preference"),
    ("Thanks! Perfect.", "praise"),
    ("Perfect!! exactly what I needed", "praise"),
    ("great work", "praise"),
    ("Siempre escribe los tests primero.", "pattern"),
    ("En este equipo usamos conventional commits", "pattern"),
    ("No, así no. Usa un diccionario.", "mistake"),
    ("Esto está mal", "mistake"),
    ("Nunca pongas secretos en el código", "mistake"),
    ("Evita las dependencias circulares", "mistake"),
    ("Prefiero que uses async/await", "preference"),
    ("Utiliza dayjs en lugar de moment", "preference"),
    ("Muy bien!", "praise"),
    ("Genial, gracias", "praise"),
    ("it always returns None when the list is empty", None),
    ("we always had problems with this module", None),
    ("The tests never finish on my machine", None),
    ("I avoided the issue by pinning the version", None),
    ("Great, now the build fails with a different error?", None),
    ("Can you use pnpm instead of npm?", None),
    ("what's wrong with this code", None),
    ("The function avoids allocations", None),
    ("She prefers tea", None),
    ("print('always use pnpm')", None),
    ("nunca me había pasado esto", None),
    ("¿Está mal esto?", None),
    ("La convención de nombres no está clara", None),
    ("This is a great library", None),
    ("I use vim, not emacs, but whatever works for you", None),
]


@pytest.mark.parametrize("row", TRIGGERS, ids=[r[0][:40] for r in TRIGGERS])
def test_trigger_table(row: Row) -> None:
    utterance, kind, language, subject, preferred, avoided = row
    found = detect(utterance)
    assert found is not None, utterance
    assert (found.kind, found.language, found.subject) == (kind, language, subject)
    assert (found.preferred, found.avoided) == (preferred, avoided)
    assert found.phrase and found.phrase.lower() in utterance.lower()


@pytest.mark.parametrize("utterance", NOT_TRIGGERS)
def test_not_a_trigger(utterance: str) -> None:
    assert detect(utterance) is None


@pytest.mark.parametrize(("utterance", "kind"), FRESH)
def test_fresh_wording(utterance: str, kind: str | None) -> None:
    found = detect(utterance)
    assert (found.kind if found else None) == kind


def test_table_sizes() -> None:
    assert len(TRIGGERS) >= 60
    assert len(NOT_TRIGGERS) >= 20
    assert {row[1] for row in TRIGGERS} == set(KINDS)
    assert sum(1 for row in TRIGGERS if row[2] == "es") >= 20


def test_trigger_is_frozen() -> None:
    found = detect("Always use pnpm")
    assert isinstance(found, Trigger)
    with pytest.raises(AttributeError):
        found.kind = "mistake"  # type: ignore[misc]


def test_code_fence_is_masked_but_speech_around_it_counts() -> None:
    text = "Look:\n```\nnever use eval\n```\nAlways use ast.literal_eval instead."
    found = detect(text)
    assert found is not None
    assert found.kind == "pattern"
    assert found.subject == "use ast.literal_eval instead"


def test_seed_phrases_in_any_case() -> None:
    for text in ("SIEMPRE USA PNPM", "siempre usa pnpm", "Siempre Usa pnpm"):
        found = detect(text)
        assert found is not None and found.kind == "pattern"


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_detect_never_raises(text: str) -> None:
    found = detect(text)
    assert found is None or found.kind in KINDS


# --- MEMORIZE markers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("Done. [MEMORIZE: forms use react-hook-form]", ["forms use react-hook-form"]),
        ("[MEMORIZAR: el cliente usa Stripe]", ["el cliente usa Stripe"]),
        ("[memorize:lower case works]", ["lower case works"]),
        ("a [MEMORIZE: one] b [Memorizar: dos] c", ["one", "dos"]),
        ("[MEMORIZE: the API returns [1, 2] arrays]", ["the API returns [1, 2] arrays"]),
        ("[MEMORIZE: nested [a [b] c] ok] tail", ["nested [a [b] c] ok"]),
        ("[MEMORIZE: key is [REDACTED:secret]]", ["key is [REDACTED:secret]"]),
        ("[MEMORIZE: same] and [MEMORIZE: same]", ["same"]),
        ("[MEMORIZE:   spread\n  over lines ]", ["spread over lines"]),
        ("[MEMORIZE: left open\nnext line", ["left open"]),
        ("[MEMORIZE: open\n\nlater [x] text]", ["open"]),
        ("[MEMORIZE: a] [MEMORIZE: b", ["a", "b"]),
        ("[MEMORIZE: ]", []),
        ("[MEMORIZED: not a marker] [REMEMBER: nor this]", []),
        ("no markers here", []),
    ],
)
def test_extract_memorize_markers(text: str, facts: list[str]) -> None:
    assert extract_memorize_markers(text) == facts


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_memorize_never_raises(text: str) -> None:
    assert isinstance(extract_memorize_markers(text), list)


# --- regressions: the rule sentence, missed phrasings, what is not speech ----------------------


def test_a_rule_inside_a_task_prompt_is_its_own_sentence() -> None:
    found = detect("Add lodash as a dependency. Always use pnpm, never npm.")
    assert found is not None and found.kind == "pattern"
    assert found.rule == "Always use pnpm, never npm."
    assert (found.subject, found.preferred, found.avoided) == ("use pnpm, never npm", "pnpm", "npm")
    spanish = detect("Añade lodash como dependencia. Siempre usa pnpm, nunca npm")
    assert spanish is not None and spanish.rule == "Siempre usa pnpm, nunca npm"


@pytest.mark.parametrize(
    ("utterance", "rule"),
    [
        ("Fix the login test. Also, never use sleep() in tests.", "never use sleep() in tests."),
        ("Perfect, but never use var in new code", "never use var in new code"),
        (
            "Refactor it and always run the tests before pushing",
            "always run the tests before pushing",
        ),
        (
            "Can you add a migration? In this project we use Alembic.",
            "In this project we use Alembic.",
        ),
        (
            "Write the docs.\nDon't hardcode the key, read it from env",
            "Don't hardcode the key, read it from env",
        ),
        ("Great!", "Great!"),
    ],
)
def test_the_rule_is_the_clause_that_holds_the_trigger(utterance: str, rule: str) -> None:
    found = detect(utterance)
    assert found is not None and found.rule == rule


@pytest.mark.parametrize(
    ("utterance", "subject", "rule"),
    [
        (
            "When writing tests, always use vitest instead of jest",
            "When writing tests, use vitest instead of jest",
            "When writing tests, always use vitest instead of jest",
        ),
        (
            "For migrations always use prisma migrate, never db push",
            "For migrations, use prisma migrate, never db push",
            "For migrations always use prisma migrate, never db push",
        ),
        (
            "Add lodash. In the API layer, never return raw database rows.",
            "In the API layer, return raw database rows",
            "In the API layer, never return raw database rows.",
        ),
        (
            "Cuando hagas commits, siempre usa conventional commits",
            "Cuando hagas commits, usa conventional commits",
            "Cuando hagas commits, siempre usa conventional commits",
        ),
        ("For now, always use npm ci", "use npm ci", "always use npm ci"),
    ],
)
def test_a_scope_before_the_rule_stays_with_it(utterance: str, subject: str, rule: str) -> None:
    """ "When writing tests, always use vitest": the rule holds only when writing tests."""
    found = detect(utterance)
    assert found is not None and (found.subject, found.rule) == (subject, rule)


MISSED: list[Row] = [
    ("use vitest, not jest", "preference", "en", "use vitest, not jest", "vitest", "jest"),
    ("usa vitest, no jest", "preference", "es", "usa vitest, no jest", "vitest", "jest"),
    ("from now on use pnpm", "pattern", "en", "use pnpm", "pnpm", None),
    (
        "From now on, run the type checker before you push.",
        "pattern",
        "en",
        "run the type checker before you push",
        None,
        None,
    ),
    ("de ahora en adelante usa pnpm", "pattern", "es", "usa pnpm", "pnpm", None),
    (
        "A partir de ahora, escribe los commits en inglés",
        "pattern",
        "es",
        "escribe los commits en inglés",
        None,
        None,
    ),
    ("stop using console.log", "mistake", "en", "using console.log", None, "console.log"),
    ("deja de usar console.log", "mistake", "es", "usar console.log", None, "console.log"),
    (
        "Remember: the API base URL comes from env",
        "pattern",
        "en",
        "the API base URL comes from env",
        None,
        None,
    ),
    (
        "Recuerda: la URL base de la API viene de env",
        "pattern",
        "es",
        "la URL base de la API viene de env",
        None,
        None,
    ),
    ("don't ever commit directly to main", "mistake", "en", "commit directly to main", None, None),
    ("Never, ever use eval", "mistake", "en", "use eval", None, "eval"),
    (
        "Make sure to always add a changelog entry.",
        "pattern",
        "en",
        "add a changelog entry",
        None,
        None,
    ),
    ("prefer X over Y", "preference", "en", "X over Y", "X", "Y"),
    ("Remember: never use var", "mistake", "en", "use var", None, "var"),
    ("stop using var and use let", "mistake", "en", "using var and use let", "let", "var"),
    ("Nunca uses var y usa const", "mistake", "es", "uses var y usa const", "const", "var"),
]


@pytest.mark.parametrize("row", MISSED, ids=[r[0][:40] for r in MISSED])
def test_missed_phrasings(row: Row) -> None:
    utterance, kind, language, subject, preferred, avoided = row
    found = detect(utterance)
    assert found is not None, utterance
    assert (found.kind, found.language, found.subject) == (kind, language, subject)
    assert (found.preferred, found.avoided) == (preferred, avoided)


@pytest.mark.parametrize(
    "utterance",
    [
        # questions, also when the question is the next sentence
        "the README says always use yarn, still true?",
        "The README says: always use yarn. Is that still true?",
        "Always use yarn. Right?",
        "Siempre usa yarn. ¿Sigue siendo así?",
        # quoted, not said
        'the doc says "never use var"',
        'He wrote "I prefer tabs" in the guide.',
        "The linter says 'avoid nested ternaries'.",
        "La guía dice «nunca uses var».",
        "La guía dice “prefiero tabs”.",
        # system-injected turns (Claude Code)
        "<system-reminder>\nAlways use the TodoWrite tool.\n</system-reminder>",
        "<system-reminder>\nNever use emojis.\n</system-reminder>\nfix the failing test",
        "<system-reminder>Always use the TodoWrite tool.",
        "Caveat: The messages below were generated by the user while running local commands. "
        "DO NOT respond to these messages or otherwise consider them in your response unless "
        "the user explicitly asks you to.",
        "<command-name>/model</command-name>\n<command-message>model</command-message>",
        "<local-command-stdout>Set model to opus. Always use the default.</local-command-stdout>",
        "<local-command-stderr>never use --force</local-command-stderr>",
        # a time lead-in or a reminder that is narration
        "From now on I will be away",
        "I remember that bug from last week.",
        "Stop the dev server before running the tests.",
    ],
)
def test_not_speech_and_not_rules(utterance: str) -> None:
    assert detect(utterance) is None


def test_speech_around_injected_text_still_counts() -> None:
    found = detect("<system-reminder>\nNever use emojis.\n</system-reminder>\nAlways use pnpm.")
    assert found is not None and found.kind == "pattern" and found.rule == "Always use pnpm."


def test_quoted_words_inside_a_rule_do_not_hide_it() -> None:
    found = detect('Use "pnpm" instead of "npm"')
    assert found is not None and found.kind == "preference"
    assert (found.preferred, found.avoided) == ("pnpm", "npm")
    apostrophes = detect("Don't use the users' tokens, it's unsafe")
    assert apostrophes is not None and apostrophes.kind == "mistake"


@pytest.mark.parametrize("utterance", ["Mejor así.", "Better this way.", "Mejor así!"])
def test_bare_approval_is_praise(utterance: str) -> None:
    found = detect(utterance)
    assert found is not None and found.kind == "praise" and found.subject == ""


# --- the labelled set: precision and recall ---------------------------------------------------

LABELLED = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "fixtures" / "triggers" / "utterances.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]


def _verdict(item: dict[str, str]) -> tuple[str, bool]:
    """What ``detect`` said, and whether it is right: the kind, the rule fragment in
    ``Trigger.rule`` and, for a prompt, none of the task (``absent``) in it."""
    found = detect(item["text"])
    kind = found.kind if found else "none"
    rule = found.rule.lower() if found else ""
    absent = item.get("absent", "").lower()
    right = kind == item["kind"] and item["rule"].lower() in rule
    return kind, right and not (absent and absent in rule)


def test_labelled_set_shape() -> None:
    kinds = {item["kind"] for item in LABELLED}
    assert len(LABELLED) >= 80 and kinds == {*KINDS, "none"}
    assert sum(1 for item in LABELLED if item["kind"] == "none") >= 25
    assert sum(1 for item in LABELLED if item["lang"] == "es") >= 30
    assert {item["split"] for item in LABELLED} == {"tune", "holdout"}


def _precision_recall(items: list[dict[str, str]]) -> tuple[float, float, list[str]]:
    true_pos = false_pos = false_neg = 0
    failures: list[str] = []
    for item in items:
        kind, right = _verdict(item)
        true_pos += kind != "none" and right
        false_pos += kind != "none" and not right
        false_neg += item["kind"] != "none" and not right
        if not right:
            failures.append(f"{item['kind']} -> {kind}: {item['text'][:70]!r}")
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    return precision, true_pos / (true_pos + false_neg), failures


def test_labelled_precision_and_recall() -> None:
    precision, recall, failures = _precision_recall(LABELLED)
    print(f"\ntriggers: {len(LABELLED)} utterances P={precision:.3f} R={recall:.3f}")
    for split in ("tune", "holdout"):
        part = [item for item in LABELLED if item["split"] == split]
        p, r, _ = _precision_recall(part)
        print(f"  {split}: {len(part)} utterances P={p:.3f} R={r:.3f}")
    print("\n".join(failures))
    assert precision >= 0.95 and recall >= 0.95, "\n".join(failures)


# --- every rule of an utterance (detect_all) ---------------------------------------------------


@pytest.mark.parametrize(
    ("utterance", "rules"),
    [
        (
            "Always use pnpm. Never commit .env files.",
            [("pattern", "Always use pnpm."), ("mistake", "Never commit .env files.")],
        ),
        (
            "prefiero funciones flecha en los componentes. Y nunca uses console.log en producción",
            [
                ("preference", "prefiero funciones flecha en los componentes."),
                ("mistake", "nunca uses console.log en producción"),
            ],
        ),
        (
            "Always use pnpm and never commit .env files",
            [("pattern", "Always use pnpm"), ("mistake", "never commit .env files")],
        ),
        (
            "Always squash merge PRs; don't push to main",
            [("pattern", "Always squash merge PRs"), ("mistake", "don't push to main")],
        ),
        (
            "siempre usa pnpm y nunca uses yarn",
            [("pattern", "siempre usa pnpm"), ("mistake", "nunca uses yarn")],
        ),
        (
            "Use zod instead of yup, but never use any",
            [("preference", "Use zod instead of yup"), ("mistake", "never use any")],
        ),
        # one rule: what follows "and" / "y" is no rule on its own
        ("Always use pnpm, never npm", [("pattern", "Always use pnpm, never npm")]),
        ("Always use pnpm and not npm", [("pattern", "Always use pnpm and not npm")]),
        (
            "Never use var and use const instead",
            [("mistake", "Never use var and use const instead")],
        ),
        ("Nunca uses var, usa const.", [("mistake", "Nunca uses var, usa const.")]),
        # a task joined to a rule: the rule alone
        ("Fix the bug and always run the tests", [("pattern", "always run the tests")]),
        ("Always use pnpm. Let's build the login page", [("pattern", "Always use pnpm.")]),
        ("Always use pnpm. Always use pnpm!", [("pattern", "Always use pnpm.")]),  # said twice
        ("Perfecto, gracias", [("praise", "Perfecto, gracias")]),  # praise when no rule
    ],
)
def test_detect_all_finds_every_rule(utterance: str, rules: list[tuple[str, str]]) -> None:
    assert [(t.kind, t.rule) for t in detect_all(utterance)] == rules


@pytest.mark.parametrize(
    "utterance",
    [
        *NOT_TRIGGERS,
        "I always forget the flags. It never works on the first try. We avoided the race.",
        "El build compila y siempre usa la caché. Nunca me había pasado esto.",
        "Fix the login form and run the tests. Then push the branch and open a PR.",
        "We use Postgres and we never had a problem with it. It always starts fast.",
    ],
)
def test_detect_all_leaves_prose_alone(utterance: str) -> None:
    assert detect_all(utterance) == []


@pytest.mark.parametrize(
    ("utterance", "bare"),
    [
        ("No, así no", True),
        ("no, that's wrong", True),
        ("Eso está mal.", True),
        ("Evita.", True),
        ("nope, that's wrong: the endpoint is /v2/users", False),
        ("No, así no: usa const", False),
        ("Never use var", False),
        ("Perfect!", False),  # praise names nothing and is still praise
    ],
)
def test_a_trigger_that_names_nothing_is_bare(utterance: str, bare: bool) -> None:
    [found] = detect_all(utterance)
    assert found.bare is bare


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_detect_all_never_raises_and_agrees_with_detect(text: str) -> None:
    found = detect_all(text)
    assert (detect(text) is None) == (found == [])
