"""The viewer's fixtures (module-scoped: one demo repository, viewer and browser per module);
the helpers live in ``viewer_support``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from viewer_support import Viewer, isolated_env, make_demo, new_browser, start_viewer, stop_viewer


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("viewer")
    env = isolated_env(base / "home")
    return make_demo(base / "demo", env), env


@pytest.fixture(scope="module")
def viewer(demo: tuple[Path, dict[str, str]]) -> Iterator[Viewer]:
    running = start_viewer(*demo)
    try:
        yield running
    finally:
        stop_viewer(running)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = new_browser(tmp_path_factory.mktemp("chromium"))
    try:
        yield driver
    finally:
        driver.quit()
