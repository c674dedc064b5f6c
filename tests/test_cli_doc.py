"""docs/cli.md is generated from --help and must be current."""

from __future__ import annotations

from pathlib import Path

from planning_memory.cli.doc import reference

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


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
