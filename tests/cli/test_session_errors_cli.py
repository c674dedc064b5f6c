"""``pmem session error`` and ``pmem session resolve``: seed 000's errors list from the CLI,
shown by ``pmem session show``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from planning_memory.cli import cli


def invoke(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)


def test_seed000_short_term_errors_list_from_the_cli(empty_repo: Path) -> None:
    (empty_repo / "src").mkdir()
    (empty_repo / "src" / "app.py").write_text("x = 1\n", "utf-8")
    done = invoke(empty_repo, "session", "error", "pytest: ImportError", "--tool", "pytest")
    assert done.exit_code == 0, done.output
    assert done.output.startswith("Recorded error err_") and done.output.endswith(" (open)\n")
    fixed = invoke(
        empty_repo, "session", "error", "ruff E501", "--file", "src/app.py",
        "--resolved", "wrapped it", "--json",
    )  # fmt: skip
    data = json.loads(fixed.output)
    assert (data["file"], data["resolution"]) == ("src/app.py", "wrapped it")
    resolved = invoke(empty_repo, "session", "resolve", "added __init__.py", "--json")
    assert json.loads(resolved.output)["error"] == "pytest: ImportError"
    shown = invoke(empty_repo, "session", "show").output
    assert "errors:" in shown
    assert "pytest: ImportError -> resolved: added __init__.py" in shown
    assert "ruff E501 [src/app.py] -> resolved: wrapped it" in shown
    listed = json.loads(invoke(empty_repo, "session", "show", "--json").output)["errors"]
    assert [e["error"] for e in listed] == ["pytest: ImportError", "ruff E501"]


def test_seed000_resolve_without_an_open_error_is_one_line(empty_repo: Path) -> None:
    invoke(empty_repo, "session", "start")
    pmem = Path(sys.executable).parent / "pmem"
    done = subprocess.run(
        [pmem, "-C", empty_repo, "session", "resolve", "nothing"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "has no open error" in done.stderr
