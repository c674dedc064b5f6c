"""The facade offers seed 000's MemoryManager operations, and they work end to end."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from planning_memory.errors import InputError, NotFoundError
from planning_memory.memory import Memory

SEED_OPERATIONS = (
    "record_decision",
    "record_file_access",
    "get_session_context",
    "learn_pattern",
    "learn_from_mistake",
    "get_relevant_patterns",
    "get_mistakes_to_avoid",
    "update_file_entity",
    "get_file_info",
    "get_relationships",
    "map_codebase",
    "search_context",
    "index_content",
    "reindex_codebase",
    "get_full_context",
    "save_to_checkpoint",
    "restore_from_checkpoint",
    "prepare_agent_context",
    "process_agent_result",
)
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "repos" / "nextauth-app"


def test_every_seed_operation_is_a_documented_method() -> None:
    for name in SEED_OPERATIONS:
        method = getattr(Memory, name)
        assert callable(method) and method.__doc__, name


def test_relevant_patterns_and_mistakes(example_repo: Path) -> None:
    mem = Memory(example_repo)
    assert mem.get_relevant_patterns("form validation zod")[0]["name"] == "Form Validation with zod"
    assert [m["severity"] for m in mem.get_mistakes_to_avoid(["typescript"])] == ["high"]
    ordered = mem.get_relevant_patterns()
    assert ordered[0]["pinned"] and all(
        not r["pinned"] for r in ordered[1:] if not r["established"]
    )


def test_agent_round_trip(example_repo: Path) -> None:
    shutil.copytree(FIXTURE, example_repo, dirs_exist_ok=True)
    mem = Memory(example_repo)
    mem.map_codebase()
    prompt = mem.prepare_agent_context("executor", "add a remember-me checkbox to LoginForm")
    assert "LoginForm" in prompt and "add a remember-me checkbox" in prompt
    done = mem.process_agent_result(
        "executor",
        {
            "filesModified": [
                {
                    "path": "src/components/Auth/LoginForm.tsx",
                    "purpose": "Login form with remember-me",
                }
            ],
            "decisions": [
                {
                    "question": "Where to keep the flag?",
                    "answer": "cookie",
                    "reasoning": "survives reloads",
                    "isPattern": True,
                    "patternName": "Persist UI flags in cookies",
                }
            ],
            "errorsFixed": [
                {
                    "original": "Stored the session token in localStorage",
                    "fix": "Use an httpOnly cookie",
                    "severity": "high",
                }
            ],
        },
    )
    assert done == {"files": 1, "decisions": 1, "patterns": 1, "mistakes": 1}
    info = mem.get_file_info("src/components/Auth/LoginForm.tsx")
    assert info is not None and "executor" in info["modified_by"]
    assert any(r["name"] == "Persist UI flags in cookies" for r in mem.records("pattern"))
    context = mem.get_session_context()
    assert context["files_accessed"][-1]["path"] == "src/components/Auth/LoginForm.tsx"
    checkpoint = mem.save_to_checkpoint()
    assert mem.restore_from_checkpoint(checkpoint)["id"] == checkpoint["sessionId"]


def test_an_anchored_memory_is_marked_for_review_when_its_code_changes(
    example_repo: Path,
) -> None:
    shutil.copytree(FIXTURE, example_repo, dirs_exist_ok=True)
    mem = Memory(example_repo)
    mem.scan()
    target = "src/lib/http/fetch-json.ts"
    saved = mem.save_observation(
        "fetchJson aborts after its timeout", "architecture", anchors=[f"{target}::fetchJson"]
    ).record
    assert saved["anchors"][0]["hash"], "the anchor carries the code's current hash"
    mem.scan()
    assert mem.get(saved["id"])["needs_review"] is False
    source = example_repo / target
    source.write_text(source.read_text().replace("5000", "8000"))
    mem.scan(paths=[target])
    assert mem.get(saved["id"])["needs_review"] is True


def test_search_context_index_content_and_get_full_context(example_repo: Path) -> None:
    """Seed 000's ``searchContext``, ``indexContent`` and ``getFullContext``, end to end."""
    mem = Memory(example_repo)
    note_id = mem.index_content(
        "The payments webhook retries three times with exponential backoff",
        {"title": "Payments webhook retries", "tags": ["payments"], "path": "src/pay/hook.ts"},
    )
    note = mem.get(note_id)
    assert note["type"] == "discovery" and note["tags"] == ["payments"]
    assert note["body"]["where"] == "src/pay/hook.ts"
    hits = mem.search_context("webhook backoff retries", limit=3)
    assert hits and hits[0].ref_id == note_id
    full = mem.get_full_context("retry the payments webhook")
    found = [item for items in full.values() if isinstance(items, list) for item in items]
    assert any(note_id in str(item) for item in found), full.keys()


def test_find_answers_for_every_kind_of_id(example_repo: Path) -> None:
    mem = Memory(example_repo)
    record = mem.records("pattern")[0]
    assert mem.find(record["id"]) == record
    decision = mem.record_decision("Which queue?", "SQS", "managed")
    message = mem.log("let us use SQS for the webhook queue").message
    sid = mem.sessions.current_id(start=False)
    assert mem.find(decision["id"])["session_id"] == sid
    assert mem.find(message["id"])["content"].startswith("let us use SQS")
    assert mem.find(sid)["decisions"] == 1
    personal = mem.save("Prefer short commit subjects", "preference", scope="personal").record
    assert mem.find(personal["id"])["title"] == "Prefer short commit subjects"
    with pytest.raises(NotFoundError):
        mem.find("pat_01ARZ3NDEKTSV4RRFFQ69G5FAV")


def test_the_package_face_loads_memory_on_first_use() -> None:
    """``import planning_memory`` loads none of its parts; ``Memory`` and the errors are there
    when asked for; ``python -m planning_memory`` is the CLI."""
    code = (
        "import sys, planning_memory as p\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('planning_memory.'))\n"
        "assert loaded == ['planning_memory.core', 'planning_memory.core.exports'], loaded\n"
        "from planning_memory import Memory, NotFoundError, PlanningMemoryError\n"
        "assert Memory.__module__ == 'planning_memory.memory'\n"
        "assert issubclass(NotFoundError, PlanningMemoryError)\n"
        "assert 'sqlite3' not in sys.modules and 'tree_sitter' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cli = subprocess.run(
        [sys.executable, "-m", "planning_memory", "--version"], capture_output=True, text=True
    )
    assert cli.returncode == 0 and cli.stdout.startswith("pmem, version")


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ({"decisions": [{"answer": "cookie"}]}, "$.decisions[0]: 'question' is required"),
        ({"filesModified": [{"purpose": "x"}]}, "$.filesModified[0]: 'path' is required"),
        ({"errorsFixed": [{"fix": "y"}]}, "$.errorsFixed[0]: 'original' is required"),
        ({"decisions": "use zod"}, "$.decisions: expected a list of objects"),
    ],
)
def test_a_bad_agent_result_is_one_clear_error_and_records_nothing(
    empty_repo: Path, result: dict[str, Any], problem: str
) -> None:
    mem = Memory(empty_repo)
    ok = {"filesModified": [{"path": "src/a.ts"}], "decisions": [{"question": "q", "answer": "a"}]}
    before = sorted(p for p in (empty_repo / ".planning").rglob("*") if p.is_file())
    with pytest.raises(InputError) as caught:
        mem.process_agent_result("executor", {**ok, **result})
    assert problem in str(caught.value)
    assert sorted(p for p in (empty_repo / ".planning").rglob("*") if p.is_file()) == before


def test_a_memorize_fact_marked_again_days_later_is_not_stored_twice(empty_repo: Path) -> None:
    """Seed 002 never keeps an exact duplicate: the same ``[MEMORIZE: ...]`` fact 20 minutes
    or 2 days later is the learning it already has (its duplicate count goes up)."""
    now = [datetime(2026, 3, 1, 10, 0, tzinfo=UTC)]
    mem = Memory(empty_repo, clock=lambda: now[0])
    said = "Done. [MEMORIZE: the staging database is reset every Sunday]"
    for later in (timedelta(0), timedelta(minutes=20), timedelta(days=2)):
        now[0] = datetime(2026, 3, 1, 10, 0, tzinfo=UTC) + later
        mem.log(said, role="assistant")
    [learned] = [r for r in Memory(empty_repo).records() if "staging" in r["title"]]
    assert learned["duplicate_count"] == 2
    saved = Memory(empty_repo, clock=lambda: now[0] + timedelta(days=1))
    saved.save("Staging resets on Sunday", "learning")
    saved.save("Staging resets on Sunday", "learning", source="cli")
    assert (
        len([r for r in Memory(empty_repo).records() if r["title"] == "Staging resets on Sunday"])
        == 1
    )


def test_the_agent_prompt_from_the_command_line(example_repo: Path) -> None:
    """Seed 000's prepareAgentContext is `pmem context --format agent` too."""
    pmem = Path(sys.executable).parent / "pmem"
    task = "add a forgot password flow"
    done = subprocess.run(
        [pmem, "-C", example_repo, "context", task, "--format", "agent", "--agent", "executor"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    expected = Memory(example_repo).prepare_agent_context("executor", task)
    assert done.stdout.endswith(f"## Task\n{task}\n")
    assert done.stdout.split("\n")[0] == expected.split("\n")[0]


def test_save_of_an_unknown_type_is_one_clear_error_naming_the_types(empty_repo: Path) -> None:
    mem = Memory(empty_repo)
    with pytest.raises(InputError) as caught:
        mem.save("Wrap fetch in try/catch", "patern", what="fetch without handling")
    line = caught.value.one_line()
    assert line.startswith("unknown record type 'patern'; did you mean 'pattern'?")
    assert "one of: pattern, mistake, bugfix, decision" in line
    with pytest.raises(InputError):
        mem.for_scope("personal").save("x", "nonsense")
    assert mem.records() == []


def test_a_tree_named_by_a_relative_path_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Memory.init(Path("."))`` and a save through it: the writable check climbs a relative
    path to the working folder (it once climbed to "" and took the tree for read-only)."""
    monkeypatch.chdir(tmp_path)
    mem = Memory.init(Path("."))
    mem.save("Use pnpm for installs", "pattern", description="never npm")
    found = Memory(Path(".")).get_relevant_patterns("pnpm installs")
    assert [p["description"] for p in found] == ["never npm"]
