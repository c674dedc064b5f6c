"""The foundation commands end to end: init, validate, show, export, import.

Happy paths run in-process through click's ``CliRunner``; error paths run the real ``pmem``
console script, so that the one-line error and the exit code are what a user sees.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from planning_memory.cli import cli
from planning_memory.core import codec
from planning_memory.memory import Memory

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / ".planning.example"
PMEM = str(Path(sys.executable).parent / "pmem")
Completed = subprocess.CompletedProcess[str]

# The seed's long-term example, verbatim (../shared/seeds/000_*.txt, "Long-term Memory").
SEED_LONG_TERM: dict[str, Any] = {
    "longTerm": {
        "patterns": [
            {
                "id": "pat_001",
                "name": "Error Handling Pattern",
                "description": "Siempre usar try-catch con tipos específicos",
                "example": "try { ... } catch (error) { if (error instanceof AuthError) ... }",
                "context": ["typescript", "error-handling"],
                "createdAt": "2024-01-15T10:00:00Z",
                "usageCount": 12,
            }
        ],
        "mistakes": [
            {
                "id": "mis_001",
                "description": "No usar 'any' en TypeScript",
                "correction": "Definir tipos específicos o usar 'unknown'",
                "severity": "high",
                "occurrences": 3,
                "lastOccurrence": "2024-01-18T14:30:00Z",
            }
        ],
        "preferences": {
            "codeStyle": {
                "semicolons": False,
                "quotes": "single",
                "indentation": 2,
                "maxLineLength": 100,
            },
            "architecture": {
                "preferredPatterns": ["repository", "service-layer"],
                "avoidPatterns": ["singleton-abuse", "god-objects"],
            },
            "testing": {"framework": "vitest", "coverage": 80, "style": "describe-it"},
        },
        "learnings": [
            {
                "id": "learn_001",
                "trigger": "User correction",
                "original": "Usé fetch sin error handling",
                "learned": "Siempre envolver fetch en try-catch con timeout",
                "confidence": 0.95,
                "applications": 8,
            }
        ],
    }
}

# The seed's single-file shape: .planning/memory/long-term/patterns.json as an array.
SEED_PATTERNS_ARRAY: list[dict[str, Any]] = [
    SEED_LONG_TERM["longTerm"]["patterns"][0],
    {
        "id": "pat_002",
        "name": "Repository Pattern",
        "description": "Acceder a la base de datos solo a través de repositorios",
        "example": "export const userRepository = { findByEmail }",
        "context": ["architecture", "prisma"],
        "createdAt": "2024-01-16T09:00:00Z",
        "usageCount": 3,
    },
]


def invoke(*args: str | os.PathLike[str]) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def pmem(*args: str | os.PathLike[str], cwd: Path | None = None) -> Completed:
    return subprocess.run(
        [PMEM, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under ``root`` with its bytes (None for folders) and mtime in ns."""
    found: dict[str, tuple[bytes | None, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        found[str(path.relative_to(root))] = (
            path.read_bytes() if path.is_file() else None,
            st.st_mtime_ns,
        )
    return found


def example_files(kind: str) -> list[Path]:
    return sorted((EXAMPLE / "memory" / "long-term" / kind).glob("*.json"))


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    root = tmp_path / "fresh"
    root.mkdir()
    assert invoke("init", root).exit_code == 0
    return root


# -- init ------------------------------------------------------------------------------------


def test_init_creates_the_tree_and_its_gitignore(tmp_path: Path) -> None:
    result = invoke("init", tmp_path)
    assert result.exit_code == 0, result.output
    planning = tmp_path / ".planning"
    assert f"Created {planning}" in result.output
    for sub in (
        "memory/long-term/patterns",
        "memory/long-term/mistakes",
        "memory/long-term/learnings",
        "memory/short-term",
        "memory/entity",
        "memory/contextual",
    ):
        assert (planning / sub).is_dir(), sub
    config = codec.loads((planning / "memory-config.json").read_bytes())
    assert config["version"] == 1
    assert set(config["memory"]) >= {"shortTerm", "longTerm", "entity", "contextual"}
    ignored = (planning / ".gitignore").read_text().splitlines()
    assert "/memory/contextual/" in ignored
    assert "/memory/short-term/" in ignored
    assert "/memory/long-term/" not in ignored
    again = invoke("validate", tmp_path)
    assert again.exit_code == 0, again.output
    assert "0 problems" in again.output


def test_init_json_names_the_created_folder(tmp_path: Path) -> None:
    result = invoke("init", tmp_path, "--json")
    assert json.loads(result.output) == {"created": str(tmp_path / ".planning")}


def test_init_refuses_to_clobber_and_changes_nothing(tmp_path: Path) -> None:
    assert pmem("init", tmp_path).returncode == 0
    record = tmp_path / ".planning/memory/long-term/patterns/pat_001.json"
    record.write_text("{}\n")
    before = snapshot(tmp_path)
    result = pmem("init", cwd=tmp_path)
    assert result.returncode == 3
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pmem: error: .planning: a memory tree already exists")
    assert snapshot(tmp_path) == before


def test_init_refuses_a_half_tree_too(tmp_path: Path) -> None:
    (tmp_path / ".planning" / "memory").mkdir(parents=True)
    before = snapshot(tmp_path)
    result = pmem("init", tmp_path)
    assert result.returncode == 3
    assert len(result.stderr.splitlines()) == 1
    assert snapshot(tmp_path) == before


# -- validate --------------------------------------------------------------------------------


def test_validate_the_example_tree_exits_0() -> None:
    result = invoke("validate", EXAMPLE)
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("files checked, 0 problems")
    checked = int(result.output.split()[-5])
    assert checked == len(list(EXAMPLE.rglob("*.json")))


def test_validate_a_repository_and_a_single_file(example_repo: Path) -> None:
    assert invoke("validate", example_repo).exit_code == 0
    one = example_files("patterns")[0].relative_to(EXAMPLE)
    result = invoke("validate", example_repo / ".planning" / one)
    assert result.exit_code == 0, result.output
    assert "1 files checked, 0 problems" in result.output


def test_validate_a_single_file_named_relative_to_its_own_folder(example_repo: Path) -> None:
    folder = example_repo / ".planning/memory/long-term/mistakes"
    name = sorted(folder.glob("*.json"))[0].name
    result = pmem("validate", name, cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "1 files checked, 0 problems"
    (folder / "mis_stray.json").write_bytes((folder / name).read_bytes())
    result = pmem("validate", "mis_stray.json", cwd=folder)
    assert result.returncode == 1
    assert "mis_stray.json: $.id: id" in result.stdout


def test_validate_reports_every_problem_as_file_json_path_message(example_repo: Path) -> None:
    lt = example_repo / ".planning/memory/long-term"
    mistake = sorted((lt / "mistakes").glob("*.json"))[0]
    value = codec.loads(mistake.read_bytes())
    value["severity"] = "extreme"
    mistake.write_bytes(codec.dump_bytes(value))
    pattern = sorted((lt / "patterns").glob("*.json"))[0]
    value = codec.loads(pattern.read_bytes())
    del value["usage_count"]
    value["colour"] = "blue"
    pattern.write_bytes(codec.dump_bytes(value))
    learning = sorted((lt / "learnings").glob("*.json"))[0]
    learning.write_bytes(b'{\n  "id": "x",\n  "type": \n}\n')
    stray = lt / "patterns" / "pat_stray.json"
    stray.write_bytes(pattern.read_bytes())

    def rel(path: Path) -> str:
        return str(path.relative_to(example_repo))

    result = pmem("validate", cwd=example_repo)
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"{rel(mistake)}: $.severity: 'extreme' is not one of" in result.stdout
    assert f"{rel(learning)}:4:1: invalid JSON: Expecting value" in lines
    assert any(
        line.startswith(f"{rel(pattern)}: $: ") and "'usage_count' is a required" in line
        for line in lines
    ), lines
    assert any(line.startswith(f"{rel(pattern)}: $: ") and "colour" in line for line in lines)
    assert f"{rel(stray)}: $.id: id {value['id']!r} does not match the file name" in lines
    problems = [line for line in lines if not line.endswith("problems")]
    assert lines[-1].endswith(f"files checked, {len(problems)} problems")
    assert all(line.startswith(".planning/") for line in problems), problems


def test_validate_json_lists_problems(example_repo: Path) -> None:
    target = sorted((example_repo / ".planning/memory/long-term/mistakes").glob("*.json"))[0]
    value = codec.loads(target.read_bytes())
    value["occurrences"] = 0
    target.write_bytes(codec.dump_bytes(value))
    result = CliRunner().invoke(cli, ["validate", str(example_repo), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["ok"] is False
    assert data["problems"] == [
        {
            "path": str(target.relative_to(example_repo)),
            "json_path": "$.occurrences",
            "message": "0 is less than the minimum of 1",
        }
    ]


def test_validate_finds_a_missing_config(example_repo: Path) -> None:
    (example_repo / ".planning/memory-config.json").unlink()
    result = pmem("validate", example_repo)
    assert result.returncode == 1
    assert ".planning/memory-config.json: missing memory-config.json" in result.stdout


# -- show ------------------------------------------------------------------------------------


def test_show_counts_what_is_in_the_example(example_repo: Path) -> None:
    result = invoke("-C", example_repo, "show", "--json")
    assert result.exit_code == 0, result.output
    counts = json.loads(result.output)
    lt = counts["long_term"]
    expected = sum(len(example_files(k)) for k in ("patterns", "mistakes", "learnings"))
    assert lt["records"] + lt["deleted"] == expected
    assert lt["by_type"]["pattern"] == len(example_files("patterns"))
    assert lt["by_type"]["mistake"] == len(example_files("mistakes"))
    assert counts["short_term"]["sessions"] == len(
        list((EXAMPLE / "memory/short-term").glob("session-*.json"))
    )
    assert lt["preferences"] >= 3
    text = invoke("-C", example_repo, "show")
    assert text.exit_code == 0
    assert f"long-term    {lt['records']} records" in text.output
    assert "short-term" in text.output and "entity" in text.output


def test_show_finds_the_tree_from_a_subfolder(example_repo: Path) -> None:
    sub = example_repo / "src" / "deep"
    sub.mkdir(parents=True)
    result = pmem("show", "--json", cwd=sub)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["root"] == str(example_repo / ".planning")


def test_show_without_a_tree_is_one_line_exit_3(tmp_path: Path) -> None:
    result = pmem("show", cwd=tmp_path)
    assert result.returncode == 3
    assert len(result.stderr.splitlines()) == 1
    assert "no .planning/ memory tree" in result.stderr


# -- export / import -------------------------------------------------------------------------


def test_export_then_import_into_a_fresh_tree_round_trips(
    example_repo: Path, fresh: Path, tmp_path: Path
) -> None:
    out = tmp_path / "export.json"
    result = invoke("-C", example_repo, "export", "-o", out)
    assert result.exit_code == 0, result.output
    doc = codec.loads(out.read_bytes())
    assert set(doc) >= {"shortTerm", "longTerm", "entityMemory", "contextualMemory"}

    result = invoke("-C", fresh, "import", out, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    source, target = Memory(example_repo), Memory(fresh)
    all_records = source.records(deleted=True)
    assert summary["created"] == len(all_records)
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(target.records(deleted=True), key=key) == sorted(all_records, key=key)
    assert target.preferences() == source.preferences()
    assert [target.sessions.get(i.id) for i in target.sessions.list()] == [
        source.sessions.get(i.id) for i in source.sessions.list()
    ]
    assert invoke("validate", fresh).exit_code == 0

    again = json.loads(invoke("-C", fresh, "import", out, "--json").output)
    assert (again["created"], again["updated"]) == (0, 0)
    assert again["unchanged"] == len(all_records)


def test_a_seed_format_export_with_sessions_imports_back(
    example_repo: Path, fresh: Path, tmp_path: Path
) -> None:
    """Seed 000's export shape (camelCase: ``startedAt``) holds the sessions; importing it
    gives back the same sessions, records and preferences."""
    out = tmp_path / "seed.json"
    assert invoke("-C", example_repo, "export", "--seed-format", "-o", out).exit_code == 0
    assert "startedAt" in out.read_text("utf-8")
    result = invoke("-C", fresh, "import", out, "--json")
    assert result.exit_code == 0, result.output
    notes = json.loads(result.output)["notes"]
    assert len(notes) == 1 and "entityMemory is not imported" in notes[0]  # said, not dropped
    source, target = Memory(example_repo), Memory(fresh)
    assert [target.sessions.get(i.id) for i in target.sessions.list()] == [
        source.sessions.get(i.id) for i in source.sessions.list()
    ]
    assert len(target.records(deleted=True)) == len(source.records(deleted=True))
    assert invoke("validate", fresh).exit_code == 0


def test_export_to_stdout_is_canonical_json(example_repo: Path) -> None:
    result = invoke("-C", example_repo, "export")
    assert result.exit_code == 0
    assert codec.dumps(codec.loads(result.output)) == result.output


def test_import_dry_run_writes_nothing(example_repo: Path, fresh: Path, tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    invoke("-C", example_repo, "export", "-o", out)
    before = snapshot(fresh)
    result = invoke("-C", fresh, "import", out, "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["applied"] is False
    assert summary["created"] > 0
    assert snapshot(fresh) == before
    text = invoke("-C", fresh, "import", out, "--dry-run")
    assert text.output.startswith("Would import:")
    assert snapshot(fresh) == before


def test_import_the_seeds_long_term_shape(fresh: Path, tmp_path: Path) -> None:
    src = tmp_path / "seed-long-term.json"
    src.write_text(json.dumps(SEED_LONG_TERM, ensure_ascii=False, indent=2))
    result = invoke("-C", fresh, "import", src, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["created"] == 3
    assert summary["preferences"] == ["architecture", "code_style", "testing"]

    mem = Memory(fresh)
    pat = mem.get("pat_001")
    assert pat["type"] == "pattern"
    assert pat["name"] == "Error Handling Pattern"
    assert pat["usage_count"] == 12 and pat["established"] is True
    assert pat["tags"] == ["error-handling", "typescript"]
    assert pat["created_at"] == "2024-01-15T10:00:00Z"
    mis = mem.get("mis_001")
    assert (mis["type"], mis["severity"], mis["occurrences"]) == ("mistake", "high", 3)
    assert mis["last_occurrence"] == "2024-01-18T14:30:00Z"
    learn = mem.get("learn_001")
    assert learn["type"] == "learning"
    assert (learn["confidence"], learn["applications"]) == (0.95, 8)
    lt = fresh / ".planning/memory/long-term"
    assert (lt / "patterns/pat_001.json").is_file()
    assert (lt / "mistakes/mis_001.json").is_file()
    assert (lt / "learnings/learn_001.json").is_file()
    prefs = mem.preferences()
    assert prefs["code_style"]["max_line_length"] == 100
    assert prefs["architecture"]["preferred_patterns"] == ["repository", "service-layer"]
    assert invoke("validate", fresh).exit_code == 0

    files_before = sorted(p.name for p in lt.rglob("*.json"))
    again = json.loads(invoke("-C", fresh, "import", src, "--json").output)
    assert again["created"] == 0
    assert sorted(p.name for p in lt.rglob("*.json")) == files_before


def test_import_a_bare_patterns_array_merges_by_id(fresh: Path, tmp_path: Path) -> None:
    first = tmp_path / "one" / "patterns.json"
    first.parent.mkdir()
    first.write_text(json.dumps(SEED_PATTERNS_ARRAY[:1]))
    assert json.loads(invoke("-C", fresh, "import", first, "--json").output)["created"] == 1

    both = tmp_path / "two" / "patterns.json"
    both.parent.mkdir()
    both.write_text(json.dumps(SEED_PATTERNS_ARRAY))
    summary = json.loads(invoke("-C", fresh, "import", both, "--json").output)
    assert summary["created"] == 1
    assert summary["updated"] + summary["unchanged"] == 1
    patterns = Memory(fresh).records("pattern")
    assert sorted(p["id"] for p in patterns) == ["pat_001", "pat_002"]
    assert all(p["type"] == "pattern" for p in patterns)

    again = json.loads(invoke("-C", fresh, "import", both, "--json").output)
    assert again["created"] == 0
    assert len(Memory(fresh).records("pattern")) == 2
    assert invoke("validate", fresh).exit_code == 0


def test_import_a_bare_mistakes_array_is_typed_by_its_file_name(
    fresh: Path, tmp_path: Path
) -> None:
    src = tmp_path / "mistakes.json"
    src.write_text(json.dumps(SEED_LONG_TERM["longTerm"]["mistakes"]))
    assert invoke("-C", fresh, "import", src).exit_code == 0
    assert Memory(fresh).get("mis_001")["type"] == "mistake"


def test_import_of_a_bad_item_writes_nothing_and_names_file_and_place(
    fresh: Path, tmp_path: Path
) -> None:
    doc = json.loads(json.dumps(SEED_LONG_TERM))
    doc["longTerm"]["mistakes"][0]["severity"] = "extreme"
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(doc))
    before = snapshot(fresh)
    result = pmem("-C", fresh, "import", src)
    assert result.returncode == 4
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"pmem: error: {src}: ")
    assert "$.severity: 'extreme' is not one of" in lines[0]
    assert snapshot(fresh) == before


def test_export_of_an_uninitialised_folder_is_exit_3(tmp_path: Path) -> None:
    result = pmem("export", cwd=tmp_path)
    assert result.returncode == 3
    assert len(result.stderr.splitlines()) == 1


def test_help_and_version() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for name in ("init", "validate", "show", "export", "import"):
        assert f"  {name} " in result.output
    assert "Exit codes:" in result.output
    assert invoke("--version").output.startswith("pmem, version ")


def test_a_mistyped_command_gets_a_suggestion(tmp_path: Path) -> None:
    """Commands are imported when used, so the suggestion must look at every one of them,
    not only those loaded (the hidden old names are not suggested)."""
    done = pmem("serach", "fetch", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.rstrip().endswith("Error: No such command 'serach'. Did you mean 'search'?")
    assert "Did you mean 'learn'?" in pmem("learnin", cwd=tmp_path).stderr
    assert "Did you mean 'list'?" in pmem("session", "lst", cwd=tmp_path).stderr


def test_the_long_console_script_name_works_too(tmp_path: Path) -> None:
    long_name = shutil.which("planning-memory", path=str(Path(sys.executable).parent))
    assert long_name is not None
    result = subprocess.run(
        [long_name, "validate", str(EXAMPLE)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_every_entry_point_opens_the_main_worktrees_memory_from_a_linked_worktree(
    tmp_path: Path,
) -> None:
    """One rule for every entry point: from a linked worktree without its own ``.planning/``,
    `pmem show` reads the same memory the hooks and the MCP server write to."""
    main, linked = tmp_path / "main", tmp_path / "linked"
    main.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=main, check=True, capture_output=True)

    git("init", "-q")
    (main / "README.md").write_text("x\n", "utf-8")
    git("add", "README.md")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
    assert pmem("init", cwd=main).returncode == 0
    assert pmem("learn", "always use pnpm, never npm", cwd=main).returncode == 0
    git("worktree", "add", "-q", str(linked))
    (linked / "src").mkdir()

    shown = pmem("show", "--json", cwd=linked / "src")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["root"] == str(main.resolve() / ".planning")
    found = pmem("patterns", "--json", cwd=linked)
    assert found.returncode == 0, found.stderr
    assert "pnpm" in found.stdout


def test_init_honours_the_root_option(tmp_path: Path) -> None:
    """`pmem -C DIR init` creates DIR/.planning, not one in the working directory."""
    target, elsewhere = tmp_path / "target", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    done = pmem("-C", target, "init", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert (target / ".planning" / "memory-config.json").is_file()
    assert not (elsewhere / ".planning").exists()


def test_the_entry_point_reaches_the_hooks_after_the_agents_commands_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pmem hook claude-code EVENT`` goes straight to the hook client, also in a process
    that ran an agents command before (loading the submodule ``cli.agents`` binds the name
    ``agents`` in the ``cli`` package: the entry point must not call through that name)."""
    import importlib

    import planning_memory.cli as entry
    from planning_memory import agents

    importlib.import_module("planning_memory.cli.agents")
    called: list[str] = []
    monkeypatch.setattr(agents, "hook_process", lambda event: called.append(event) or 0)
    with pytest.raises(SystemExit) as done:
        entry.main(["hook", "claude-code", "SessionStart"])
    assert done.value.code == 0 and called == ["SessionStart"]
