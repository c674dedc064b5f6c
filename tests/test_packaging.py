"""The wheel works on its own: built, installed into a fresh venv, it validates the example.

Third-party packages come from the development venv through a ``.pth`` file (installing them
would need the network), but the source tree is never importable from the fresh venv: the
``planning_memory`` that runs, and the schemas it loads, are the wheel's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / ".planning.example"


def repo_schemas() -> list[str]:
    return sorted(p.name for p in (REPO / "schemas").glob("*.schema.json"))


def run(*cmd: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = run(
        sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, cwd=REPO
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (found,) = out.glob("planning_memory-*.whl")
    return found


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    done = run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=venv.parent)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    done = run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
        "--no-compile", wheel, cwd=venv.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site = Path(
        run(
            python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=venv
        ).stdout.strip()
    )
    dev_site = sysconfig.get_path("purelib")  # click, jsonschema, ... (not the source tree)
    (site / "zz_dev_dependencies.pth").write_text(dev_site + "\n")
    return venv


def test_the_wheel_ships_the_schemas_and_templates(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema_name in repo_schemas():
        assert f"planning_memory/schemas/{schema_name}" in names
    assert any(n.startswith("planning_memory/templates/") for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "pmem = planning_memory.cli:main" in text
    assert "planning-memory = planning_memory.cli:main" in text


def test_the_installed_wheel_validates_the_example_from_outside_the_repo(
    fresh_venv: Path, tmp_path: Path
) -> None:
    work = tmp_path / "elsewhere"
    shutil.copytree(EXAMPLE, work / "example")
    python = fresh_venv / "bin" / "python"

    probe = run(
        python,
        "-c",
        "import planning_memory, planning_memory.core.schema as s, click; "
        "print(planning_memory.__file__); print(s.schema_dir()); print(click.__file__)",
        cwd=work,
    )
    assert probe.returncode == 0, probe.stderr
    package_file, schema_dir, click_file = probe.stdout.splitlines()
    assert Path(package_file).is_relative_to(fresh_venv), package_file
    assert not Path(package_file).is_relative_to(REPO)
    assert Path(schema_dir) == Path(package_file).parent / "schemas"
    assert sorted(p.name for p in Path(schema_dir).glob("*.schema.json")) == repo_schemas()
    assert Path(click_file).exists()

    done = run(fresh_venv / "bin" / "pmem", "validate", work / "example", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("files checked, 0 problems")

    broken = work / "example" / "memory" / "long-term" / "patterns" / "pat_broken.json"
    broken.write_text('{"id": "pat_broken", "type": "pattern"}\n')
    done = run(fresh_venv / "bin" / "planning-memory", "validate", work / "example", cwd=work)
    assert done.returncode == 1
    assert "pat_broken.json: $: 'title' is a required property" in done.stdout


def test_the_installed_wheel_runs_init_and_show(fresh_venv: Path, tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    assert run(fresh_venv / "bin" / "pmem", "init", cwd=repo).returncode == 0
    done = run(fresh_venv / "bin" / "pmem", "show", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert '"records": 0' in done.stdout
