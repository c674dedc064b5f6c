"""Seed 003's project id: ``<name>-<hash8>`` of the real path of the git root or the folder."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from planning_memory.core import PROJECT_ID_RE, project_folder, project_id


def _git_init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_seed003_project_id_is_name_hash8(tmp_path: Path) -> None:
    repo = _git_init(tmp_path / "shop-api")
    real = os.path.realpath(repo)
    expected = f"shop-api-{hashlib.sha256(real.encode()).hexdigest()[:8]}"
    assert project_id(repo) == expected
    assert PROJECT_ID_RE.match(expected)


def test_seed003_project_id_of_a_subfolder_is_the_git_roots(tmp_path: Path) -> None:
    repo = _git_init(tmp_path / "shop-api")
    deep = repo / "src" / "lib"
    deep.mkdir(parents=True)
    assert project_folder(deep) == repo.resolve()
    assert project_id(project_folder(deep)) == project_id(repo)


def test_seed003_project_id_of_a_folder_outside_git_is_the_folders(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project_folder(plain) == plain
    assert project_id(plain).startswith("notes-")


def test_seed003_project_id_follows_symlinks_and_tells_clones_apart(tmp_path: Path) -> None:
    repo = _git_init(tmp_path / "a" / "app")
    other = _git_init(tmp_path / "b" / "app")
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert project_id(link) == project_id(repo)  # the real path
    assert project_id(other) != project_id(repo)  # same name, another checkout
    assert project_id(other).split("-")[0] == "app"


def test_odd_folder_names_stay_valid_ids(tmp_path: Path) -> None:
    odd = tmp_path / ("año\tviejo " + "x" * 300)[:200]
    odd.mkdir()
    made = project_id(odd)
    assert PROJECT_ID_RE.match(made), made
    assert "\t" not in made and len(made) <= 109
