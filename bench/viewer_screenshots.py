"""Screenshots of each page of the viewer (docs/viewer/*.png), taken by the headless Chromium
the browser tests use, on the demo memory (``make demo``'s: the example memory of
.planning.example/ with the scanned fixture app).

    .venv/bin/python bench/viewer_screenshots.py [--out docs/viewer]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "viewer"))
from viewer_support import (
    isolated_env,
    make_demo,
    new_browser,
    start_viewer,
    stop_viewer,
    wait_for,
)

SESSION = "ses_01HMKP5GC0QR5G41H5MY08Y01C"
PAGES = (
    ("overview", ""),
    ("records", "records?type=mistake"),
    ("record", "record?id=mis_01HMKQA4809F3T24XBDJ2GW80P"),
    ("sessions", "sessions"),
    ("session", f"session?id={SESSION}"),
    ("context", "context?task=add+password+reset+to+the+login+form&budget=700"),
    ("code", "code"),
    ("code-folder", "code/folder?dir=src/components/Auth"),
    ("code-file", "code/file?path=src/components/Auth/LoginForm.tsx"),
    ("code-function", "code/name?q=validateCredentials"),
)
PROGRESS_SHOWN = "return document.querySelector('#content [data-job]') !== null"
SETTLE_S = 120  # the long work a page starts (the first search builds the index) ends first
WIDTH, MAX_HEIGHT = 1280, 2400


def record_a_session_start(root: Path) -> None:
    """What the SessionStart hook keeps of a context it injected (so the history shows one)."""
    from planning_memory import Memory

    mem = Memory.open(root)
    task = "Implementar login"
    pack = mem.context(task, budget=600)
    mem.sessions.record_injection(SESSION, "SessionStart", task, pack.as_dict())


def hold_the_index(root: Path) -> sqlite3.Connection:
    """A fresh search index that another connection holds locked (until it rolls back)."""
    index = root / ".planning" / "memory" / "contextual" / "index.sqlite3"
    for old in index.parent.glob("index.sqlite3*"):
        old.unlink()
    holder = sqlite3.connect(index, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def settle(browser: object) -> None:
    """Wait until the page shows no progress line (its script swaps the result in)."""
    script = "return document.querySelector('#content [data-job]') === null"
    wait_for(lambda: browser.execute_script(script), SETTLE_S)  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "viewer")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pm-viewer-shots-") as tmp:
        env = isolated_env(Path(tmp) / "home")
        os.environ.update(env)  # this process writes too: never to the real home
        root = make_demo(Path(tmp) / "demo", env)
        record_a_session_start(root)
        holder = hold_the_index(root)
        viewer = start_viewer(root, env)
        browser = new_browser(Path(tmp) / "profile")
        try:
            # a first search while the index is busy (another process writes it): its progress
            browser.set_window_size(WIDTH, 420)
            browser.get(viewer.url + "records?q=bcrypt+compare")
            wait_for(lambda: browser.execute_script(PROGRESS_SHOWN), SETTLE_S)
            time.sleep(2.2)  # the line counts the seconds: show a few
            browser.save_screenshot(str(args.out / "progress.png"))
            print(f"wrote {(args.out / 'progress.png').relative_to(REPO)}")
            holder.execute("ROLLBACK")
            for name, path in PAGES:
                browser.set_window_size(WIDTH, 900)
                browser.get(viewer.url + path)
                settle(browser)
                height = browser.execute_script("return document.documentElement.scrollHeight")
                browser.set_window_size(WIDTH, min(MAX_HEIGHT, int(height) + 20))
                target = args.out / f"{name}.png"
                browser.save_screenshot(str(target))
                print(f"wrote {target.relative_to(REPO)}")
        finally:
            holder.close()
            browser.quit()
            stop_viewer(viewer)


if __name__ == "__main__":
    main()
