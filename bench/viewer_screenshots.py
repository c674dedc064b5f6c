"""Screenshots of each page of the viewer (docs/viewer/*.png), taken by the headless Chromium
the browser tests use, on the demo memory (``make demo``'s: the example memory of
.planning.example/ with the scanned fixture app).

    .venv/bin/python bench/viewer_screenshots.py [--out docs/viewer]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "viewer"))
from viewer_support import isolated_env, make_demo, new_browser, start_viewer, stop_viewer

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
    ("code-function", "code/name?q=validateCredentials"),
)
WIDTH, MAX_HEIGHT = 1280, 2400


def record_a_session_start(root: Path) -> None:
    """What the SessionStart hook keeps of a context it injected (so the history shows one)."""
    from planning_memory import Memory

    mem = Memory.open(root)
    task = "Implementar login"
    pack = mem.context(task, budget=600)
    mem.sessions.record_injection(SESSION, "SessionStart", task, pack.as_dict())


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
        viewer = start_viewer(root, env)
        browser = new_browser(Path(tmp) / "profile")
        try:
            for name, path in PAGES:
                browser.set_window_size(WIDTH, 900)
                browser.get(viewer.url + path)
                height = browser.execute_script("return document.documentElement.scrollHeight")
                browser.set_window_size(WIDTH, min(MAX_HEIGHT, int(height) + 20))
                target = args.out / f"{name}.png"
                browser.save_screenshot(str(target))
                print(f"wrote {target.relative_to(REPO)}")
        finally:
            browser.quit()
            stop_viewer(viewer)


if __name__ == "__main__":
    main()
