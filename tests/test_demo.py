"""``make demo`` runs end to end and leaves nothing running behind it (no hook server, no
background work still going once it has had time to finish)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the whole demo: a scan, a search, an export and an import

ROOT = Path(__file__).resolve().parent.parent
GRACE = 30.0  # seconds background work may take to finish after the demo returns


def marked(mark: str) -> list[str]:
    """The live processes whose environment holds ``mark`` (those the demo started)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            env = (proc / "environ").read_bytes()
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = next(
                (s for s in (proc / "status").read_text().splitlines() if s.startswith("State:")),
                "",
            )
        except OSError:
            continue
        if mark.encode() in env and "zombie" not in state:
            found.append(f"{proc.name}: {args.strip()}")
    return found


def test_make_demo_leaves_nothing_running(tmp_path: Path) -> None:
    copy = tmp_path / "checkout"
    (copy / "tests" / "fixtures" / "repos").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / ".planning.example", copy / ".planning.example")
    app = ROOT / "tests" / "fixtures" / "repos" / "nextauth-app"
    shutil.copytree(app, copy / "tests" / "fixtures" / "repos" / "nextauth-app")
    (copy / ".venv").symlink_to(Path(sys.executable).parent.parent)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    mark = f"PMEM_DEMO_TEST={uuid.uuid4().hex}"
    name, value = mark.split("=")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), name: value}
    for off in ("PMEM_SERVER", "PMEM_BACKGROUND"):  # as a user runs it: the suite turns
        env.pop(off, None)  # the hook server and background work off
    done = subprocess.run(
        ["make", "-o", ".venv/.installed", "demo"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "== pmem import into a fresh tree" in done.stdout
    deadline = time.monotonic() + GRACE
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = marked(mark)
    for line in left:  # the test leaves nothing running either
        with contextlib.suppress(OSError):
            os.kill(int(line.split(":")[0]), signal.SIGTERM)
    assert left == [], "the demo left these running"
    assert not any(p.suffix == ".sock" for p in runtime.rglob("*")), list(runtime.rglob("*"))
