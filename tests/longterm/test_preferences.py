"""preferences.json: what taught rules state lands in its sections; `pmem prefs` sets it by
hand (seed 000: "Usuario dice 'siempre usa X'" -> guardar preferencia)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core.schema import check
from planning_memory.longterm.preferences import stated
from planning_memory.longterm.triggers import detect
from planning_memory.memory import Memory


@pytest.mark.parametrize(
    ("utterance", "settings"),
    [
        ("prefiero comillas simples", {"code_style.quotes": "single"}),
        ("Use double quotes, not single quotes", {"code_style.quotes": "double"}),
        ("never use semicolons", {"code_style.semicolons": False}),
        ("siempre usa punto y coma", {"code_style.semicolons": True}),
        ("Always indent with 4 spaces", {"code_style.indentation": 4}),
        ("prefiero tabs para indentar", {"code_style.indentation": "tabs"}),
        ("Always keep lines under 120 characters", {"code_style.max_line_length": 120}),
        ("use vitest instead of jest", {"testing.framework": "vitest"}),
        ("nunca uses jest", {}),  # what is forbidden never becomes the choice
        ("Always keep test coverage above 90%", {"testing.coverage": 90}),
        ("Always write describe/it blocks", {"testing.style": "describe-it"}),
        ("Always use pnpm, never npm", {"tooling.package_manager": "pnpm"}),
        ("Avoid singletons", {"architecture.avoid_patterns": ["singleton-abuse"]}),
        (
            "Prefer the repository pattern over active record",
            {"architecture.preferred_patterns": ["repository"]},
        ),
        ("In this repository we use zod", {}),
        ("Always run the tests before pushing", {}),
    ],
)
def test_a_taught_rule_states_settings(utterance: str, settings: dict[str, Any]) -> None:
    found = detect(utterance)
    assert found is not None
    assert stated(found) == settings


def test_prefiero_updates_preferences_json_and_reaches_context(empty_repo: Path) -> None:
    mem = Memory(empty_repo)
    lesson = mem.learn_utterance("prefiero comillas simples")
    assert lesson.outcome is not None
    assert "preferences.json: code_style.quotes = single" in lesson.outcome.notes
    mem.learn_utterance("Always use pnpm, never npm")
    prefs = Memory(empty_repo).preferences()
    assert prefs["code_style"] == {"quotes": "single"}
    assert prefs["tooling"] == {"package_manager": "pnpm"}
    check("preferences", prefs)
    text = Memory(empty_repo).context("add a dependency").text
    assert "package_manager: pnpm" in text and "quotes: single" in text


def test_suggested_or_queued_lessons_leave_preferences_alone(empty_repo: Path) -> None:
    config_path = empty_repo / ".planning/memory-config.json"
    config = json.loads(config_path.read_text("utf-8"))
    config["memory"]["longTerm"]["confirmBeforeLearn"] = True
    config_path.write_text(json.dumps(config), "utf-8")
    Memory(empty_repo).learn_utterance("prefiero comillas simples")
    assert Memory(empty_repo).preferences() == {}


def test_pmem_prefs_set_unset_and_bad_keys(empty_repo: Path) -> None:
    pmem = [str(Path(sys.executable).parent / "pmem"), "-C", str(empty_repo), "prefs"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*pmem, *args], capture_output=True, text=True, timeout=60)

    assert run().stdout.strip() == "No preferences yet."
    assert run("set", "testing.coverage", "80").returncode == 0
    assert run("set", "architecture.avoid_patterns", '["god-objects"]').returncode == 0
    assert run("set", "architecture.avoid_patterns", '["singleton-abuse"]').returncode == 0
    assert run("set", "code_style.quotes", "single").returncode == 0
    shown = json.loads(run("--json").stdout)
    assert shown["testing"] == {"coverage": 80}
    assert shown["architecture"]["avoid_patterns"] == ["god-objects", "singleton-abuse"]
    assert shown["code_style"] == {"quotes": "single"}
    assert run("unset", "code_style.quotes").returncode == 0
    assert "code_style" not in json.loads(run("--json").stdout)
    before = (empty_repo / ".planning/memory/long-term/preferences.json").read_bytes()
    bad = run("set", "Bad-Key", "1")
    assert bad.returncode == 4 and bad.stderr.count("\n") == 1 and "snake_case" in bad.stderr
    assert (empty_repo / ".planning/memory/long-term/preferences.json").read_bytes() == before
