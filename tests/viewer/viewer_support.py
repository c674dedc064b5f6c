"""Helpers of the viewer's tests: a scanned demo repository, the viewer as a real process, a
real headless Chromium (Debian's ``chromium`` and ``chromium-driver`` with Selenium).

Without Chromium the browser tests skip with the reason; with ``PMEM_BROWSER_TESTS=required``
(set by ``.ci/run``) they fail instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "tests" / "fixtures" / "repos" / "nextauth-app"
# where Debian puts them; PMEM_CHROMIUM / PMEM_CHROMEDRIVER name others
CHROMIUM = (os.environ.get("PMEM_CHROMIUM", "/usr/bin/chromium"), "/usr/bin/chromium-browser")
CHROMEDRIVER = os.environ.get("PMEM_CHROMEDRIVER", "/usr/bin/chromedriver")
START_TIMEOUT_S = 30


def isolated_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
    )
    return env


def pmem(root: Path, env: dict[str, str], *args: str) -> str:
    """Run ``pmem`` as its own process in ``root``; its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "planning_memory", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def make_demo(root: Path, env: dict[str, str]) -> Path:
    """The demo of ``make demo``: the fixture app, the example memory, one commit, a scan."""
    shutil.copytree(APP, root)
    shutil.copytree(REPO / ".planning.example", root / ".planning")
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "demo app")):
        subprocess.run(["git", "-C", str(root), *args], env=env, check=True)
    pmem(root, env, "scan")
    return root


@dataclass
class Viewer:
    """A running ``pmem ui`` process and the URL it printed."""

    process: subprocess.Popen[str]
    url: str
    root: Path
    env: dict[str, str]

    @property
    def port(self) -> int:
        return int(self.url.rstrip("/").rsplit(":", 1)[1])


def start_viewer(root: Path, env: dict[str, str]) -> Viewer:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planning_memory",
            "-C",
            str(root),
            "ui",
            "--no-browser",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # "pmem ui: serving .planning at http://127.0.0.1:PORT/"
    if "http://" not in line:
        process.kill()
        raise AssertionError(f"the viewer did not start: {line!r} {process.stderr.read()!r}")
    return Viewer(process, line.split(" at ", 1)[1].strip(), root, env)


def stop_viewer(viewer: Viewer) -> None:
    """Stop it the way a terminal would (SIGTERM) and check it exits cleanly."""
    viewer.process.terminate()
    code = viewer.process.wait(timeout=10)
    assert code == 0, viewer.process.stderr.read() if viewer.process.stderr else code


def chromium_binary() -> str | None:
    return next((p for p in CHROMIUM if Path(p).exists()), None)


def new_browser(profile: Path, *extra: str) -> Any:
    """A headless Chromium driven by Selenium, or a skip (a failure in CI) saying why not."""
    required = os.environ.get("PMEM_BROWSER_TESTS") == "required"
    missing = []
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("the selenium package (pip install -e '.[test]')")
    binary = chromium_binary()
    if binary is None:
        missing.append("chromium (apt-get install chromium)")
    if not Path(CHROMEDRIVER).exists():
        missing.append("chromedriver (apt-get install chromium-driver)")
    if missing:
        reason = "browser tests need " + ", ".join(missing)
        if required:
            pytest.fail(reason + " (PMEM_BROWSER_TESTS=required)")
        pytest.skip(reason)
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
        *extra,
    ):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def wait_for(check: Any, timeout: float = 10.0, every: float = 0.1) -> Any:
    """``check()`` once it returns something true, or an AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {check}")
        time.sleep(every)
