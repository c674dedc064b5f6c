"""``pmem scan``'s printout: counts, and the files with errors, on a cold and a warm scan; a
path that is nowhere is an error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from planning_memory.cli import cli


def invoke(*args: str | os.PathLike[str]) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_a_warm_rescan_prints_the_files_that_still_have_errors(tmp_path: Path) -> None:
    assert invoke("init", tmp_path).exit_code == 0
    (tmp_path / "ok.py").write_text("def fine():\n    return 1\n")
    (tmp_path / "broken.py").write_text("def bad(:\n    return 1\n")
    line = "\n  broken.py: syntax errors (partial results)"
    cold = invoke("-C", tmp_path, "scan")
    assert "2 parsed" in cold.output and "1 with errors" in cold.output and line in cold.output
    warm = invoke("-C", tmp_path, "scan")
    assert "0 parsed" in warm.output and "1 with errors" in warm.output and line in warm.output


def test_more_than_twenty_files_with_errors_are_summed_up(tmp_path: Path) -> None:
    assert invoke("init", tmp_path).exit_code == 0
    for i in range(23):
        (tmp_path / f"broken{i:02d}.py").write_text("def bad(:\n    return 1\n")
    output = invoke("-C", tmp_path, "scan").output
    assert "23 with errors" in output and output.count(": syntax errors") == 20
    assert output.rstrip().endswith("... and 3 more")


def test_a_path_in_neither_the_repository_nor_the_map_is_an_error(tmp_path: Path) -> None:
    assert invoke("init", tmp_path).exit_code == 0
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "gone.py").write_text("def f():\n    return 1\n")
    assert "1 parsed" in invoke("-C", tmp_path, "scan").output
    pmem = Path(sys.executable).parent / "pmem"
    done = subprocess.run(
        [pmem, "-C", tmp_path, "scan", "no/such/dir"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 5 and done.stdout == ""
    assert done.stderr == (
        "pmem: error: no/such/dir: no such file or folder in the repository or the code map "
        "(PATHS are relative to the repository's root)\n"
    )
    (tmp_path / "src" / "gone.py").unlink()  # deleted, but the map still has it: removed
    removed = invoke("-C", tmp_path, "scan", "src/gone.py")
    assert removed.exit_code == 0 and "1 removed" in removed.output
