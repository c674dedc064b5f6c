"""What git remembers of the memory: a record file's log and the memory's commits per day.

Read-only ``git log`` subprocesses with a time limit; outside a git work tree (or without
git) every answer is empty.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 5
MAX_COMMITS = 200


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str  # ISO 8601
    author: str
    subject: str


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def file_log(repo: Path, path: Path, limit: int = 50) -> list[Commit]:
    """The commits that touched ``path`` (following renames), newest first."""
    out = _git(
        repo, "log", "--follow", f"-n{limit}", "--format=%H%x1f%aI%x1f%an%x1f%s", "--", str(path)
    )
    commits = []
    for line in out.splitlines():
        bits = line.split("\x1f")
        if len(bits) == 4:
            commits.append(Commit(bits[0], bits[1], bits[2], bits[3]))
    return commits


def commits_per_day(repo: Path, path: Path) -> dict[str, int]:
    """How many commits touched ``path`` on each day (``YYYY-MM-DD``), oldest first."""
    out = _git(repo, "log", f"-n{MAX_COMMITS * 10}", "--format=%cs", "--", str(path))
    return dict(sorted(Counter(out.split()).items()))
