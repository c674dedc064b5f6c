"""`pmem save` says when a save was merged into an existing record or archived one."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from planning_memory.cli import cli


def _pmem(root: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_a_merge_is_named_in_text_and_json(tmp_path: Path) -> None:
    _pmem(tmp_path, "init")
    first = json.loads(
        _pmem(
            tmp_path,
            "save",
            "Use pnpm",
            "-t",
            "pattern",
            "--description",
            "Always install packages with pnpm",
            "--json",
        ).output
    )
    assert first["merged"] is None
    text = _pmem(
        tmp_path,
        "save",
        "pnpm",
        "-t",
        "pattern",
        "--description",
        "Install the packages with pnpm",
    ).output
    assert text.startswith(f"reinforced: {first['id']} (pattern) Use pnpm")
    assert f"merged into {first['id']}: " in text
    assert "% similar (similarityThreshold 0.5), so no new pattern was saved" in text
    again = json.loads(
        _pmem(
            tmp_path,
            "save",
            "pnpm always",
            "-t",
            "pattern",
            "--description",
            "packages are installed with pnpm",
            "--json",
        ).output
    )
    assert again["merged"]["into"] == first["id"]
    assert 0.5 <= again["merged"]["similarity"] <= 1.0
    assert again["archived"] == []


def test_archiving_past_the_cap_is_named(tmp_path: Path) -> None:
    _pmem(tmp_path, "init")
    config = tmp_path / ".planning" / "memory-config.json"
    settings = json.loads(config.read_text())
    settings["memory"]["longTerm"]["maxMistakes"] = 1
    config.write_text(json.dumps(settings))
    first = json.loads(
        _pmem(tmp_path, "save", "Hardcoded the API URL", "-t", "mistake", "--json").output
    )
    second = _pmem(tmp_path, "save", "Forgot to close the database cursor", "-t", "mistake")
    assert f"archived {first['id']}: over the cap (maxPatterns / maxMistakes)" in second.output
    third = json.loads(
        _pmem(tmp_path, "save", "Committed the generated bundle", "-t", "mistake", "--json").output
    )
    assert len(third["archived"]) == 1 and third["merged"] is None
