"""Test isolation: no test may write to the real $HOME or XDG folders, and hooks and commands
run in their own process (no pmem server) unless a test asks for one."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests' helpers: ``clocks``
EXAMPLE = REPO / ".planning.example"

# before any fixture: a module-scoped one that runs `pmem` must not start a server either
os.environ["PMEM_SERVER"] = "0"
os.environ["PMEM_BACKGROUND"] = "0"
os.environ["PMEM_EMBEDDINGS"] = "0"  # no vectors unless a test asks (tests/search/test_hybrid.py)

# CI (``.ci/run``: HYPOTHESIS_PROFILE=ci) runs the property tests on the same examples every
# time, so a run fails for the change it tests; elsewhere each run draws new ones, and a failing
# example is kept in .hypothesis/ and tried first next time
settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    for name, sub in (
        ("HOME", ""),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        monkeypatch.setenv(name, str(home / sub) if sub else str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home))
    monkeypatch.setenv("PMEM_SERVER", "0")  # tests/agents/test_hook_server.py turns it on
    monkeypatch.setenv("PMEM_BACKGROUND", "0")  # the tests of background work turn it on
    monkeypatch.setenv("PMEM_EMBEDDINGS", "0")  # embedding every record costs 20-50 ms each
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.invalid")
    yield


@pytest.fixture
def example_repo(tmp_path: Path) -> Path:
    """A repository folder whose .planning/ is a copy of .planning.example/."""
    shutil.copytree(EXAMPLE, tmp_path / ".planning")
    return tmp_path


@pytest.fixture
def empty_repo(tmp_path: Path) -> Path:
    """A folder with a fresh `pmem init` tree."""
    from planning_memory.memory import Memory

    Memory.init(tmp_path)
    return tmp_path


def pmem_env() -> dict[str, str]:
    return dict(os.environ)
