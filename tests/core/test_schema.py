"""Tests for the JSON Schemas in schemas/ and the example tree in .planning.example/.

The schemas are loaded straight from the files with a ``referencing.Registry`` (so the relative
``$ref`` URIs between them resolve), independently of ``planning_memory.core.schema``.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

from planning_memory.core import codec, schema
from planning_memory.core.model import DEFAULT_CONFIG

REPO = Path(__file__).resolve().parents[2]
SCHEMA_DIR = REPO / "schemas"
EXAMPLE = REPO / ".planning.example"
LONG_TERM = EXAMPLE / "memory" / "long-term"
SHORT_TERM = EXAMPLE / "memory" / "short-term"
BASE_URI = "https://planning-memory.dev/schemas/"
SCHEMA_NAMES = ("common", "config", "learning", "mistake", "pattern", "preferences", "session")
ENTITY_SCHEMA_NAMES = ("entity-components", "entity-files", "entity-functions", "relationships")
LEARNING_TYPES = (
    "bugfix",
    "decision",
    "discovery",
    "architecture",
    "config",
    "preference",
    "learning",
)
FOLDER_SCHEMA = {"patterns": "pattern", "mistakes": "mistake", "learnings": "learning"}
ULID_ID = re.compile(r"^(pat|mis|lrn|ses|msg|dec)_[0-9A-HJKMNP-TV-Z]{26}$")
MISSING = object()


def load_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


@functools.cache
def schemas() -> dict[str, dict[str, Any]]:
    return {name: load_json(SCHEMA_DIR / f"{name}.schema.json") for name in SCHEMA_NAMES}


@functools.cache
def registry() -> Registry[Any]:
    pairs = [(s["$id"], Resource.from_contents(s)) for s in schemas().values()]
    return Registry().with_resources(pairs)


def validator(schema: dict[str, Any] | str) -> Draft202012Validator:
    body = schemas()[schema] if isinstance(schema, str) else schema
    return Draft202012Validator(body, registry=registry())


def common_def(name: str) -> dict[str, Any]:
    """A schema that checks an instance against one of common's $defs."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"{BASE_URI}common.schema.json#/$defs/{name}",
    }


def best_path(schema: dict[str, Any] | str, instance: Any) -> str | None:
    error = best_match(validator(schema).iter_errors(instance))
    return None if error is None else error.json_path


def errors_of(schema: dict[str, Any] | str, instance: Any) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in validator(schema).iter_errors(instance)]


def record_files(folder: str) -> list[Path]:
    return sorted((LONG_TERM / folder).glob("*.json"))


def session_files() -> list[Path]:
    return sorted(SHORT_TERM.glob("session-*.json"))


def example_files() -> list[tuple[str, Path]]:
    found = [("config", EXAMPLE / "memory-config.json")]
    found += [("preferences", LONG_TERM / "preferences.json")]
    for folder, name in FOLDER_SCHEMA.items():
        found += [(name, path) for path in record_files(folder)]
    found += [("session", path) for path in session_files()]
    return found


def rel(path: Path) -> str:
    return str(path.relative_to(EXAMPLE))


EXAMPLE_IDS = [rel(path) for _, path in example_files()]


def changed(base: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """A deep copy of ``base`` with ``path`` set to ``value`` (removed if MISSING)."""
    doc = json.loads(json.dumps(base))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if value is MISSING:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


# ------------------------------------------------------------------ the schemas themselves


def test_schema_folder_holds_exactly_the_known_schemas() -> None:
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == sorted(
        f"{n}.schema.json" for n in (*SCHEMA_NAMES, *ENTITY_SCHEMA_NAMES)
    )


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_a_valid_2020_12_schema(name: str) -> None:
    schema = schemas()[name]
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"{BASE_URI}{name}.schema.json"
    assert schema["title"].strip()
    assert schema["description"].strip()


def refs_in(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for value in node.values() for r in refs_in(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs_in(value)]
    return []


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_ref_resolves(name: str) -> None:
    schema = schemas()[name]
    resolver = registry().resolver(base_uri=schema["$id"])
    refs = refs_in(schema)
    for ref in refs:
        resolver.lookup(ref)  # raises referencing.exceptions.Unresolvable
    assert refs or name == "config"


@pytest.mark.parametrize("name", ("pattern", "mistake", "learning", "session", "config"))
def test_objects_are_closed(name: str) -> None:
    schema = schemas()[name]
    assert schema.get("additionalProperties") is False or (
        schema.get("unevaluatedProperties") is False
    )


def test_text_limit_is_50000_characters() -> None:
    text = common_def("text")
    assert best_path(text, "x" * 50_000) is None
    assert best_path(text, "x" * 50_001) == "$"


@pytest.mark.parametrize(
    "value",
    ["pat_001", "learn_001", "mis_01HMKP5GC0QR5G41H5MY08Y01C", "ses_abc123", "xy_Z"],
)
def test_id_accepts_ulid_and_import_ids(value: str) -> None:
    assert best_path(common_def("id"), value) is None


@pytest.mark.parametrize(
    "value",
    ["pat-001", "PAT_001", "p_001", "pattern99_1", "pat_", "pat_0/1", "pat_" + "a" * 65, 7],
)
def test_id_refuses_unsafe_file_names(value: Any) -> None:
    assert best_path(common_def("id"), value) == "$"


@pytest.mark.parametrize(
    "value", ["src/app/api/auth/[...nextauth]/route.ts", "middleware.ts", ".env.example"]
)
def test_relative_paths_are_accepted(value: str) -> None:
    assert best_path(common_def("rel_path"), value) is None


@pytest.mark.parametrize("value", ["/etc/passwd", "../secrets", "src/../../x", "a\\b", ""])
def test_escaping_paths_are_refused(value: str) -> None:
    assert best_path(common_def("rel_path"), value) == "$"


def test_unevaluated_properties_do_not_hide_a_core_error() -> None:
    """A bad core field is reported at its own path, not as an unknown property."""
    base = load_json(record_files("patterns")[0])
    errors = list(validator("pattern").iter_errors(changed(base, ("revision_count",), 0)))
    assert [e.json_path for e in errors] == ["$.revision_count"]


# ------------------------------------------------------------------ config defaults

EXPECTED_DEFAULTS = DEFAULT_CONFIG  # the code's defaults must be the schema's defaults


def defaults_of(node: dict[str, Any]) -> Any:
    """The object the ``default`` keywords of a schema describe (following local $refs)."""
    if "$ref" in node and node["$ref"].startswith("#/$defs/"):
        node = {**schemas()["config"]["$defs"][node["$ref"].rsplit("/", 1)[1]], **node}
    if "default" in node:
        return node["default"]
    found = {}
    for key, sub in node.get("properties", {}).items():
        value = defaults_of(sub)
        if value is not MISSING:
            found[key] = value
    return found if found else MISSING


def test_config_defaults_match_the_documented_defaults() -> None:
    assert defaults_of(schemas()["config"]) == EXPECTED_DEFAULTS


def test_config_defaults_are_a_valid_config() -> None:
    assert errors_of("config", EXPECTED_DEFAULTS) == []


def test_empty_config_is_valid() -> None:
    assert errors_of("config", {}) == []
    assert errors_of("config", {"memory": {}}) == []


def test_the_seed_config_is_valid() -> None:
    seed = {
        "memory": {
            "shortTerm": {"maxConversationLength": 50, "maxDecisions": 100, "persistOnPause": True},
            "longTerm": {
                "maxPatterns": 200,
                "maxMistakes": 100,
                "autoLearn": True,
                "confirmBeforeLearn": False,
                "decayEnabled": False,
            },
            "entity": {
                "autoScan": True,
                "scanInterval": "on-change",
                "includePatterns": ["src/**/*", "lib/**/*"],
                "excludePatterns": ["node_modules/**", "dist/**"],
            },
            "contextual": {
                "provider": "local",
                "embeddingModel": "text-embedding-3-small",
                "chunkSize": 500,
                "chunkOverlap": 50,
                "autoReindex": True,
            },
        }
    }
    assert errors_of("config", seed) == []


def test_every_scanner_setting_the_code_reads_is_valid() -> None:
    """What ``entity.settings.Settings`` reads from ``memory.entity`` (and docs/entity.md
    lists) passes the schema."""
    entity = {
        "includePatterns": ["src/**"],
        "excludePatterns": ["dist/**"],
        "maxFileBytes": 2_000_000,
        "coverageReports": ["coverage/lcov.info"],
        "scanWorkers": 4,
        "parallelThreshold": 0,
        "useGit": False,
    }
    assert errors_of("config", {"memory": {"entity": entity}}) == []
    assert errors_of("config", {"memory": {"entity": {"scanWorkers": 0}}}) == []


# ------------------------------------------------------------------ the example tree


@pytest.mark.parametrize(("name", "path"), example_files(), ids=EXAMPLE_IDS)
def test_example_file_validates(name: str, path: Path) -> None:
    assert errors_of(name, load_json(path)) == []


@pytest.mark.parametrize(("name", "path"), example_files(), ids=EXAMPLE_IDS)
def test_example_file_is_canonical_json(name: str, path: Path) -> None:
    text = path.read_text("utf-8")
    assert text == canonical(json.loads(text)), rel(path)


@pytest.mark.parametrize("folder", sorted(FOLDER_SCHEMA))
def test_example_records_are_named_by_their_ulid_id(folder: str) -> None:
    prefix = {"patterns": "pat", "mistakes": "mis", "learnings": "lrn"}[folder]
    for path in record_files(folder):
        record = load_json(path)
        assert path.name == f"{record['id']}.json"
        assert ULID_ID.match(record["id"]) and record["id"].startswith(prefix + "_")


def test_example_records_keep_arrays_sorted() -> None:
    for folder in FOLDER_SCHEMA:
        for path in record_files(folder):
            record = load_json(path)
            assert record["tags"] == sorted(set(record["tags"])), rel(path)
            keys = [(a["path"], a["symbol"] or "") for a in record["anchors"]]
            assert keys == sorted(keys), rel(path)


def by_title(folder: str) -> dict[str, dict[str, Any]]:
    records = [load_json(p) for p in record_files(folder)]
    return {r["title"]: r for r in records}


def test_example_has_the_seed_pattern_mistake_and_learning() -> None:
    patterns, mistakes = by_title("patterns"), by_title("mistakes")
    assert len(patterns) >= 4 and len(mistakes) >= 3
    seed_pattern = patterns["Error Handling Pattern"]
    assert seed_pattern["usage_count"] == 12 and seed_pattern["established"] is True
    assert seed_pattern["tags"] == ["error-handling", "typescript"]
    seed_mistake = mistakes["No usar 'any' en TypeScript"]
    assert (seed_mistake["severity"], seed_mistake["occurrences"]) == ("high", 3)
    assert seed_mistake["last_occurrence"] == "2024-01-18T14:30:00Z"
    learned = {r["learned"]: r for r in by_title("learnings").values()}
    seed_learning = learned["Siempre envolver fetch en try-catch con timeout"]
    assert (seed_learning["confidence"], seed_learning["applications"]) == (0.95, 8)


def test_example_learnings_cover_the_main_types() -> None:
    types = {r["type"] for r in by_title("learnings").values()}
    assert {"decision", "architecture", "learning", "bugfix"} <= types
    assert types <= set(LEARNING_TYPES)


def test_example_patterns_are_established_from_five_uses() -> None:
    for pattern in by_title("patterns").values():
        assert pattern["established"] is (pattern["usage_count"] >= 5)


def test_example_preferences_hold_the_seed_sections() -> None:
    prefs = load_json(LONG_TERM / "preferences.json")
    assert prefs["code_style"]["quotes"] == "single"
    assert prefs["architecture"]["preferred_patterns"] == ["repository", "service-layer"]
    assert prefs["testing"] == {"framework": "vitest", "coverage": 80, "style": "describe-it"}


def test_example_session_is_consistent() -> None:
    [path] = session_files()
    session = load_json(path)
    assert path.name == f"session-{session['id']}.json"
    ids = [m["id"] for m in session["messages"]] + [d["id"] for d in session["decisions"]]
    assert all(ULID_ID.match(i) for i in [session["id"], *ids])
    assert len(set(ids)) == len(ids)
    stamps = [m["at"] for m in session["messages"]]
    assert stamps == sorted(stamps) and stamps[0] == session["started_at"]
    summary = session["rolling_summary"]
    message_ids = [m["id"] for m in session["messages"]]
    assert message_ids.index(summary["last_summarized_msg_id"]) + 1 == summary["message_count"]
    decision = session["decisions"][0]
    assert decision["decision"] == "NextAuth.js"
    assert decision["alternatives"] == ["Auth0", "Clerk", "Custom JWT"]


# ------------------------------------------------------------------ invalid instances


def first_example(name: str) -> Any:
    return load_json(next(path for schema, path in example_files() if schema == name))


LONG = "x" * 50_001
BAD_STAMP = "2024-01-20T15:00:00+00:00"
SELF, PARENT = "self", "parent"

# schema -> (label, dotted path to change, new value or MISSING, where the best error is:
# SELF = at the changed path, PARENT = at the object holding it)
INVALID: dict[str, list[tuple[str, str, Any, str]]] = {
    "pattern": [
        ("wrong type", "usage_count", "12", SELF),
        ("missing field", "example", MISSING, PARENT),
        ("unknown field", "usageCount", 12, PARENT),
        ("bad const", "type", "mistake", SELF),
        ("below minimum", "usage_count", 0, SELF),
        ("too long text", "example", LONG, SELF),
        ("bad id", "id", "pat-001", SELF),
        ("bad timestamp", "created_at", BAD_STAMP, SELF),
        ("empty title", "title", "", SELF),
        ("long title", "title", "t" * 201, SELF),
        ("body part missing", "body.why", MISSING, PARENT),
        ("body too long", "body.what", LONG, SELF),
        ("duplicate tags", "tags", ["a", "a"], SELF),
        ("unknown anchor field", "anchors.0.line", 3, PARENT),
        ("absolute anchor", "anchors.0.path", "/src/x.ts", SELF),
    ],
    "mistake": [
        ("wrong type", "occurrences", "3", SELF),
        ("missing field", "correction", MISSING, PARENT),
        ("unknown field", "context", ["typescript"], PARENT),
        ("bad enum", "severity", "urgent", SELF),
        ("bad const", "type", "pattern", SELF),
        ("too long text", "description", LONG, SELF),
        ("bad timestamp", "last_occurrence", "2024-01-18", SELF),
        ("bad scope", "scope", "global", SELF),
        ("bad topic key", "topic_key", "TypeScript/No Any", SELF),
    ],
    "learning": [
        ("wrong type", "confidence", "0.95", SELF),
        ("missing field", "learned", MISSING, PARENT),
        ("unknown field", "createdAt", "2024-01-15T10:00:00Z", PARENT),
        ("bad enum", "type", "pattern", SELF),
        ("above maximum", "confidence", 1.5, SELF),
        ("negative count", "applications", -1, SELF),
        ("too long text", "trigger", LONG, SELF),
        ("bad source", "source", "robot", SELF),
        ("bad deleted_at", "deleted_at", "yesterday", SELF),
        ("pinned not bool", "pinned", 1, SELF),
    ],
    "preferences": [
        ("wrong type", "code_style", "single quotes", SELF),
        ("missing field", "updated_at", MISSING, PARENT),
        ("camelCase section", "codeStyle", {}, PARENT),
        ("camelCase key", "code_style.maxLineLength", 100, PARENT),
        ("nested object", "testing.coverage", {"min": 80}, SELF),
        ("too long text", "testing.style", LONG, SELF),
        ("non-string item", "architecture.preferred_patterns.0", 3, SELF),
    ],
    "session": [
        ("wrong type", "messages", {}, SELF),
        ("missing field", "rolling_summary", MISSING, PARENT),
        ("unknown field", "sessionId", "ses_abc123", PARENT),
        ("bad enum", "status", "done", SELF),
        ("bad session id", "id", "msg_01HMKP5GC0QR5G41H5MY08Y01C", SELF),
        ("bad message id", "messages.0.id", "msg-1", SELF),
        ("bad role", "messages.0.role", "human", SELF),
        ("too long text", "messages.1.content", LONG, SELF),
        ("decision id", "decisions.0.id", "ses_1", SELF),
        ("decision extra", "decisions.0.answer", "x", PARENT),
        ("file action", "files_accessed.0.action", "opened", SELF),
        ("file path", "files_accessed.0.path", "../x", SELF),
        ("long step result", "steps.0.result", "r" * 201, SELF),
        ("context key", "current_context.activeTask", "x", PARENT),
        ("summary id", "rolling_summary.last_summarized_msg_id", "dec_1", SELF),
        ("end summary", "end_summary", {"goal": "auth"}, SELF),
        ("end summary type", "end_summary", "auth", SELF),
        ("checkpoint type", "checkpoint", [], SELF),
        ("bad timestamp", "started_at", BAD_STAMP, SELF),
    ],
    "config": [
        ("wrong type", "memory.contextual.chunkSize", "500", SELF),
        ("unknown key (typo)", "memory.shortTerm.maxConversationLenght", 50, PARENT),
        ("unknown section", "memory.vector", {}, PARENT),
        ("bad enum", "memory.contextual.provider", "pinecone", SELF),
        ("bad version", "version", 2, SELF),
        ("window too small", "memory.shortTerm.contextWindow", 0, SELF),
        ("window too big", "memory.shortTerm.contextWindow", 1001, SELF),
        ("threshold", "memory.longTerm.similarityThreshold", 1.5, SELF),
        ("zero timeout", "memory.shortTerm.summarizer.timeoutSeconds", 0, SELF),
        ("budget", "memory.contextual.injectBudgetTokens", 99, SELF),
        ("chunk size", "memory.contextual.chunkSize", 10_001, SELF),
        ("glob type", "memory.entity.excludePatterns.0", 5, SELF),
        ("languages null", "memory.entity.languages", None, SELF),
        ("negative workers", "memory.entity.scanWorkers", -1, SELF),
        ("workers as text", "memory.entity.scanWorkers", "4", SELF),
        ("threshold as float", "memory.entity.parallelThreshold", 1.5, SELF),
        ("coverage reports as text", "memory.entity.coverageReports", "lcov.info", SELF),
        ("unknown target", "memory.render.targets.cursorRules", True, PARENT),
    ],
}
INVALID_CASES = [(name, *case) for name, cases in INVALID.items() for case in cases]


def keys_of(dotted: str) -> tuple[str | int, ...]:
    return tuple(int(part) if part.isdigit() else part for part in dotted.split("."))


def json_path(keys: tuple[str | int, ...]) -> str:
    return "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys)


@pytest.mark.parametrize(
    ("name", "label", "dotted", "value", "where"),
    INVALID_CASES,
    ids=[f"{case[0]}-{case[1]}" for case in INVALID_CASES],
)
def test_invalid_instance_fails_at_its_path(
    name: str, label: str, dotted: str, value: Any, where: str
) -> None:
    keys = keys_of(dotted)
    instance = changed(first_example(name), keys, value)
    expected = json_path(keys if where == SELF else keys[:-1])
    assert best_path(name, instance) == expected


def test_each_schema_has_at_least_four_invalid_cases() -> None:
    assert {name: len(cases) >= 4 for name, cases in INVALID.items()} == {
        name: True for name in SCHEMA_NAMES if name != "common"
    }


@pytest.mark.parametrize("name", ("pattern", "mistake", "learning", "preferences", "session"))
def test_top_level_must_be_an_object(name: str) -> None:
    assert best_path(name, ["not", "an", "object"]) == "$"


INVALID_COMMON: list[tuple[str, Any, str]] = [
    ("timestamp", "2024-01-20 15:00:00", "$"),
    ("timestamp", "2024-01-20T15:00:00.123Z", "$"),
    ("nullable_timestamp", "", "$"),
    ("id", "pat 001", "$"),
    ("text", 12, "$"),
    ("text", LONG, "$"),
    ("body", {"what": "", "why": "", "where": ""}, "$"),
    ("body", {"what": LONG, "why": "", "where": "", "learned": ""}, "$.what"),
    ("anchor", {"path": "a.ts", "symbol": None}, "$"),
    ("anchor", {"path": "a.ts", "symbol": None, "hash": None, "line": 1}, "$"),
    ("anchor", {"path": "a.ts", "symbol": "", "hash": None}, "$.symbol"),
    ("tags", ["auth", "auth"], "$"),
    ("tags", ["auth", ""], "$[1]"),
    ("topic_key", "auth", "$"),
    ("source", "agent:", "$"),
    ("record_type", "note", "$"),
]


@pytest.mark.parametrize(("definition", "value", "where"), INVALID_COMMON)
def test_invalid_common_value_fails(definition: str, value: Any, where: str) -> None:
    assert best_path(common_def(definition), value) == where


@pytest.mark.parametrize(
    ("definition", "value"),
    [
        ("timestamp", "2024-01-20T15:00:00Z"),
        ("nullable_timestamp", None),
        ("topic_key", "auth/library-choice"),
        ("topic_key", None),
        ("source", "session:ses_01HMKP5GC0QR5G41H5MY08Y01C"),
        ("source", "agent:claude-code"),
        ("anchor", {"path": "middleware.ts", "symbol": None, "hash": None}),
    ],
)
def test_valid_common_value_passes(definition: str, value: Any) -> None:
    assert best_path(common_def(definition), value) is None


def test_too_many_tags_is_one_clear_error_and_a_long_array_is_still_checked_item_by_item() -> None:
    """10,000 tags: the error says how many and the most allowed (without validating each);
    an array over ``schema.WALKED`` items whose only error lies past them is still refused."""
    record = codec.loads(next((LONG_TERM / "patterns").glob("*.json")).read_bytes())
    record["tags"] = [f"t{i:05}" for i in range(10_000)]
    assert [(p.json_path, p.message) for p in schema.problems("pattern", record)] == [
        ("$.tags", "10,000 items; at most 100 are allowed")
    ]
    session = codec.loads(next(SHORT_TERM.glob("session-*.json")).read_bytes())
    message = session["messages"][0]
    session["messages"] = [{**message, "id": f"msg_{i:026}"} for i in range(1500)]
    assert schema.problems("session", session) == []
    session["messages"][1200]["role"] = 5
    assert [p.json_path for p in schema.problems("session", session)] == ["$.messages[1200].role"]
