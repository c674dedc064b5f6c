"""Seed 003's project id: ``<name>-<hash8>`` of the git root or the folder: of its first commit
(the same after a move or a clone), else of its real path."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from planning_memory.core import PROJECT_ID_RE, legacy_id, project_folder
from planning_memory.gitops import project_id, project_ids
from planning_memory.gitops.project import ROOT_CACHE, identity


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


# -- an identity that survives a move and a fresh clone -------------------------------------------
def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def _committed(path: Path, text: str = "first") -> Path:
    _git_init(path)
    (path / "README.md").write_text(text, "utf-8")
    _git(path, "add", "README.md")
    _git(path, "commit", "-q", "-m", text)
    return path


def test_the_id_of_a_repository_with_a_commit_survives_a_move_and_a_fresh_clone(
    tmp_path: Path,
) -> None:
    repo = _committed(tmp_path / "a" / "shop-api", "shop api")
    made = project_id(repo)
    assert made.startswith("shop-api-") and made != legacy_id(repo)
    moved = tmp_path / "elsewhere" / "shop-api"
    moved.parent.mkdir()
    repo.rename(moved)
    assert project_id(moved) == made  # mv: the same project
    clone = tmp_path / "again" / "shop-api"
    clone.parent.mkdir()
    _git(tmp_path, "clone", "-q", str(moved), str(clone))
    assert project_id(clone) == made  # a fresh clone: the same project
    assert project_id(_committed(tmp_path / "b" / "shop-api", "another")) != made
    assert project_ids(moved) == (made, legacy_id(moved))


def test_the_first_commit_is_read_from_git_once_then_from_the_git_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _committed(tmp_path / "shop")
    root = _git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    made = project_id(repo)
    assert (repo / ".git" / ROOT_CACHE).read_text("utf-8") == root + "\n"
    monkeypatch.setenv("PATH", "")  # no git to run: the kept commit answers
    assert project_id(repo) == made
    assert project_id(repo / "sub") != made  # a project in a subfolder is another one


def test_a_repository_with_no_commit_has_its_paths_id_until_the_first_commit(
    tmp_path: Path,
) -> None:
    repo = _git_init(tmp_path / "shop")
    before = project_id(repo)
    assert before == legacy_id(repo) and project_ids(repo) == (before,)
    assert not (repo / ".git" / ROOT_CACHE).exists()
    _committed(repo)
    assert project_ids(repo) == (project_id(repo), before)  # records saved before stay its own


def test_a_linked_worktree_and_a_shallow_clone(tmp_path: Path) -> None:
    repo = _committed(tmp_path / "shop")
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt" / "shop"), "-b", "other")
    assert project_id(tmp_path / "wt" / "shop") == project_id(repo)
    _git(repo, "remote", "add", "origin", "git@github.com:Owner/shop.git")
    shallow = tmp_path / "shallow" / "shop"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    _git(shallow, "remote", "set-url", "origin", "https://me@github.com/Owner/shop")
    assert identity(str(shallow.resolve())) == "remote github.com/Owner/shop "
    _committed(tmp_path / "other" / "shop")
    _git(tmp_path / "other" / "shop", "remote", "add", "origin", "git@github.com:Owner/shop.git")
    assert identity(str(tmp_path / "other" / "shop")).startswith("git ")  # history first


def test_a_hostile_kept_commit_is_never_read_as_one(tmp_path: Path) -> None:
    repo = _committed(tmp_path / "shop")
    made = project_id(repo)
    kept = repo / ".git" / ROOT_CACHE
    kept.unlink()
    os.mkfifo(kept)  # a FIFO: reading it would block
    assert project_id(repo) == made
    kept.write_text("not a commit\n", "utf-8")
    assert project_id(repo) == made


def test_a_history_too_long_to_walk_is_walked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _committed(tmp_path / "shop")
    monkeypatch.setattr("planning_memory.gitops.project.GIT_TIMEOUT_S", 1e-6)
    assert project_id(repo) == legacy_id(repo)  # no remote: the path's id, and it stays
    assert (repo / ".git" / ROOT_CACHE).read_text("utf-8") == "-\n"
    monkeypatch.setenv("PATH", "")
    assert project_id(repo) == legacy_id(repo)
