"""docs/cli.md (from --help) and docs/modules.md (from module docstrings) must be current."""

from __future__ import annotations

from pathlib import Path

from planning_memory.cli.doc import reference
from planning_memory.cli.modmap import module_map
from planning_memory.cli.modmap import modules as modmap_modules

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_cli_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is stale: run `python -m planning_memory.cli.doc > docs/cli.md`"
    )


def test_every_command_has_an_example() -> None:
    text = reference()
    sections = text.split("\n## ")[1:]
    missing = [
        s.splitlines()[0]
        for s in sections
        if "Example" not in s and "hidden" not in s and len(s.splitlines()[0].split()) > 1
    ]
    assert not missing, f"commands without examples in --help: {missing}"


MODULES_DOC = DOC.parent / "modules.md"


def test_module_map_is_current() -> None:
    assert MODULES_DOC.read_text(encoding="utf-8") == module_map(), (
        "docs/modules.md is stale: run `python -m planning_memory.cli.modmap > docs/modules.md`"
    )


def test_module_map_lists_every_module_with_a_docstring() -> None:
    package = DOC.parent.parent / "planning_memory"
    on_disk = {
        p.relative_to(package.parent).as_posix()
        for p in package.rglob("*.py")
        if "__pycache__" not in p.parts
    }
    listed = [m.path for m in modmap_modules()]
    assert sorted(listed) == sorted(on_disk)
    missing = [m.path for m in modmap_modules() if not m.summary]
    assert not missing, f"modules without a docstring first line: {missing}"
