"""A checkout this user may only read (another user's, a read-only mount, a CI cache): every
reading command answers as it does on a writable copy and writes nothing; every writing
command fails with one line naming what it cannot write, and changes nothing.

Real processes on real files. The read-only tree has its write bits off (``chmod -R a-w``);
a test run as root, who ignores file modes, runs each command in a child whose capabilities
to override them (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``) are dropped from its bounding
set before it starts ``pmem``, so the kernel refuses its writes as it would another user's.
Where neither is possible the tests are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planning_memory import readonly
from planning_memory.paths import writable

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / ".planning.example"
APP = REPO / "tests" / "fixtures" / "repos" / "nextauth-app"
PMEM = Path(sys.executable).parent / "pmem"
RECORD = "pat_01HKPZ6RR0HDVCD9G9QN8PNEM7"  # a pattern of .planning.example
PROMPT = "add password reset to the login form"

# drop the capabilities that let root ignore file modes (from the bounding set: gone once the
# command is exec'd), then run the command; 77: they could not be dropped
_LAUNCH = """
import ctypes, os, sys
if os.geteuid() == 0:
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            sys.exit(77)
os.execv(sys.argv[1], sys.argv[1:])
"""


def slow(*args: str) -> Any:
    """A case the slow suite runs (the fast one runs a few of each kind)."""
    return pytest.param(list(args), marks=pytest.mark.slow, id=" ".join(args))


READING = [
    ["show"],
    slow("show", "--json"),
    slow("search", "fetch error handling"),
    ["search", "--json", "zod"],
    ["context", PROMPT, "--budget", "700"],
    slow("timeline", RECORD),
    ["render", "--check"],
    slow("validate"),
    slow("doctor"),
    slow("patterns"),
    slow("mistakes"),
    slow("prefs"),
    slow("entity", "file", "src/components/LoginForm.tsx"),
    slow("session", "list"),
]
WRITING = [
    ["save", "Use pnpm", "-t", "pattern"],
    slow("learn", "always use pnpm, never npm"),
    slow("render"),
    slow("sync"),
    ["reindex"],
    slow("reindex", "--finish"),
    slow("forget", RECORD),
    slow("pin", RECORD),
    slow("prefs", "set", "tooling.package_manager", "pnpm"),
    slow("scan"),
    slow("session", "start", "--goal", "x"),
    slow("watch", "start"),
]
HOOKS = {
    "SessionStart": {"session_id": "5e551011-0000-4000-8000-000000000001", "source": "startup"},
    "UserPromptSubmit": {"session_id": "5e551011-0000-4000-8000-000000000001", "prompt": PROMPT},
}


def run(tree: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``pmem args`` in ``tree``, in a child that file modes bind (root's override dropped)."""
    return subprocess.run(
        [sys.executable, "-c", _LAUNCH, str(PMEM), *args],
        cwd=tree,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def snapshot(tree: Path) -> dict[str, tuple[int, bytes]]:
    """Every folder and file under ``tree``: its mode and bytes (a folder's: none)."""
    found = {}
    for folder, dirs, files in os.walk(tree):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            data = b"" if path.is_dir() else path.read_bytes()
            found[str(path.relative_to(tree))] = (path.lstat().st_mode, data)
    return found


def set_writable(tree: Path, on: bool) -> None:
    """``chmod -R u+w`` (``on``) or ``chmod -R a-w`` of ``tree``."""
    for folder, dirs, files in os.walk(tree):
        for path in [Path(folder, name) for name in [*dirs, *files]]:
            if not path.is_symlink():
                _chmod(path, on)
    _chmod(tree, on)


def _chmod(path: Path, on: bool) -> None:
    mode = path.lstat().st_mode
    os.chmod(path, (mode | 0o200) if on else (mode & ~0o222))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's repository: the example memory, the app's code mapped, the views rendered
    and the search index built (what a checkout that was used holds)."""
    repo = tmp_path_factory.mktemp("built") / "repo"
    home = tmp_path_factory.mktemp("home")  # module-scoped: before the per-test home
    env = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / "state")}
    env |= {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    shutil.copytree(APP, repo)
    shutil.copytree(EXAMPLE, repo / ".planning")
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True, env=env)
    for args in (["render"], ["scan"], ["search", "login"]):
        subprocess.run([str(PMEM), *args], cwd=repo, check=True, capture_output=True, env=env)
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "app"], check=True, env=env)
    return repo


def copies(built: Path, where: Path, *, fresh: bool, sessions: bool = True) -> tuple[Path, Path]:
    """A writable copy of ``built`` and a read-only one at the same depth and name. ``fresh``:
    as a new clone has them, without the derived folder and the lock (gitignored);
    ``sessions=False``: without the sessions (short-term memory, gitignored too)."""
    made = []
    for kind in ("writable", "read-only"):
        repo = where / kind / "repo"
        shutil.copytree(built, repo, symlinks=True)
        if fresh:
            shutil.rmtree(repo / ".planning" / "memory" / "contextual")
            (repo / ".planning" / ".lock").unlink(missing_ok=True)
        if not sessions:
            shutil.rmtree(repo / ".planning" / "memory" / "short-term")
        made.append(repo)
    set_writable(made[1], False)
    probe = run(made[1], "--version")
    if probe.returncode == 77:
        set_writable(made[1], True)
        pytest.skip("cannot drop root's CAP_DAC_OVERRIDE here, so no tree is read-only to it")
    if writable(made[1] / ".planning") and os.geteuid() != 0:
        set_writable(made[1], True)
        pytest.skip(
            "file modes do not stop this user's writes here (a read-only tree cannot be made)"
        )
    return made[0], made[1]


@pytest.fixture(params=["used", "fresh clone"])
def sessionless(
    request: pytest.FixtureRequest, built: Path, tmp_path: Path
) -> Iterator[tuple[Path, Path]]:
    """``trees`` without sessions: a hook on the writable copy would otherwise end the open
    session it finds and answer from what that changed."""
    rw, ro = copies(built, tmp_path, fresh=request.param == "fresh clone", sessions=False)
    yield rw, ro
    set_writable(ro, True)


@pytest.fixture(params=["used", "fresh clone"])
def trees(
    request: pytest.FixtureRequest, built: Path, tmp_path: Path
) -> Iterator[tuple[Path, Path]]:
    rw, ro = copies(built, tmp_path, fresh=request.param == "fresh clone")
    yield rw, ro
    set_writable(ro, True)


def same(text: str, tree: Path) -> str:
    """``text`` without what differs between two runs a moment apart: the tree's path, the
    clock."""
    text = text.replace(str(tree), "<repo>")
    text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?", "<time>", text)
    return re.sub(r"\d+(\.\d+)? (ms|s)\b", "<elapsed>", text)


@pytest.mark.parametrize("args", READING, ids=" ".join)
def test_a_reading_command_answers_as_on_a_writable_copy_and_writes_nothing(
    trees: tuple[Path, Path], args: list[str]
) -> None:
    rw, ro = trees
    before = snapshot(ro)
    got, want = run(ro, *args), run(rw, *args)
    assert (got.returncode, same(got.stdout, ro)) == (want.returncode, same(want.stdout, rw))
    assert got.stderr == want.stderr
    assert snapshot(ro) == before


@pytest.mark.parametrize(
    "event", ["SessionStart", pytest.param("UserPromptSubmit", marks=pytest.mark.slow)]
)
def test_a_hook_that_answers_answers_as_on_a_writable_copy(
    sessionless: tuple[Path, Path], event: str
) -> None:
    rw, ro = sessionless
    before = snapshot(ro)
    answers = []
    for repo in (ro, rw):
        payload = json.dumps({**HOOKS[event], "cwd": str(repo), "hook_event_name": event})
        done = run(repo, "hook", "claude-code", event, stdin=payload)
        assert (done.returncode, done.stderr) == (0, "")
        answers.append(same(done.stdout, repo))
    assert answers[0] == answers[1]
    assert "Memory" in answers[0] or "memories" in answers[0]
    assert snapshot(ro) == before


@pytest.mark.slow
def test_the_other_hooks_keep_nothing_and_say_nothing(trees: tuple[Path, Path]) -> None:
    _, ro = trees
    before = snapshot(ro)
    read = {"tool_name": "Read", "tool_input": {"file_path": str(ro / "package.json")}}
    for event in ("PostToolUse", "Stop", "PreCompact", "SessionEnd"):
        payload = json.dumps({**HOOKS["SessionStart"], **read, "cwd": str(ro)})
        done = run(ro, "hook", "claude-code", event, stdin=payload)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert snapshot(ro) == before


@pytest.mark.parametrize("args", WRITING, ids=" ".join)
def test_a_writing_command_says_why_in_one_line_and_changes_nothing(
    trees: tuple[Path, Path], args: list[str]
) -> None:
    _, ro = trees
    before = snapshot(ro)
    done = run(ro, *args)
    assert done.returncode == 74, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert re.fullmatch(
        r"pmem: error: \.planning(/memory/contextual(/index\.sqlite3)?)?: cannot write: read-only "
        r"\(reading commands work here; run this one as the tree's owner or in a writable "
        r"clone\)",
        line,
    ), line
    assert snapshot(ro) == before


def test_init_where_the_repository_may_only_be_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    set_writable(repo, False)
    try:
        if run(repo, "--version").returncode == 77:
            pytest.skip("cannot drop root's CAP_DAC_OVERRIDE here")
        done = run(repo, "init")
        assert done.returncode == 74
        assert done.stderr.startswith("pmem: error: .planning: cannot write: read-only (")
        assert list(repo.iterdir()) == []
    finally:
        set_writable(repo, True)


def test_a_database_another_user_left_is_read_in_memory_and_never_written(
    built: Path, tmp_path: Path
) -> None:
    """A writable tree whose derived databases this user may not write (a `sudo pmem` left
    them): reading commands answer from copies in memory, a save still works, a rebuild of
    the index is refused; the files are never touched."""
    rw, left = tmp_path / "writable" / "repo", tmp_path / "left" / "repo"
    for repo in (rw, left):
        shutil.copytree(built, repo, symlinks=True)
    databases = sorted((left / ".planning" / "memory" / "contextual").glob("*.sqlite3*"))
    assert {p.name for p in databases} >= {"index.sqlite3", "longterm.sqlite3"}
    for path in databases:
        _chmod(path, False)
    kept = {path: path.read_bytes() for path in databases}
    if run(left, "--version").returncode == 77:
        pytest.skip("cannot drop root's CAP_DAC_OVERRIDE here")
    for args in (["show"], ["search", "--json", "zod"]):
        got, want = run(left, *args), run(rw, *args)
        assert (got.returncode, same(got.stdout, left)) == (want.returncode, same(want.stdout, rw))
        assert got.stderr == want.stderr == ""
    done = run(left, "reindex")
    assert (done.returncode, done.stderr) == (
        74,
        "pmem: error: .planning/memory/contextual/index.sqlite3: cannot write: read-only "
        "(reading commands work here; run this one as the tree's owner or in a writable clone)\n",
    )
    assert run(left, "save", "Use pnpm", "-t", "pattern").returncode == 0
    assert "Use pnpm" in run(left, "patterns").stdout
    assert {path: path.read_bytes() for path in databases} == kept


# -- the helpers, in this process ----------------------------------------------------------------
def test_writable_asks_the_nearest_folder_that_exists(tmp_path: Path) -> None:
    (tmp_path / "open").mkdir()
    (tmp_path / "shut").mkdir()
    set_writable(tmp_path / "shut", False)
    paths = [tmp_path / "open" / "not" / "yet", tmp_path / "shut", tmp_path / "shut" / "a" / "b"]
    code = "import sys; from planning_memory.paths import writable; "
    code += "print([writable(p) for p in sys.argv[1:]])"
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LAUNCH, sys.executable, "-c", code, *map(str, paths)],
            capture_output=True,
            text=True,
        )
        if done.returncode == 77:
            pytest.skip("cannot drop root's CAP_DAC_OVERRIDE here")
        assert done.stdout.strip() == "[True, False, False]", done.stderr
    finally:
        set_writable(tmp_path / "shut", True)


def test_an_in_memory_stand_in_copies_the_file_and_keeps_it_for_the_process(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    with sqlite3.connect(path) as disk:
        disk.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        disk.execute("INSERT INTO meta VALUES ('k', 'v')")
    disk.close()
    conn = readonly.connect(path, in_memory=True)
    assert conn.execute("SELECT value FROM meta").fetchall() == [("v",)]
    conn.execute("INSERT INTO meta VALUES ('k2', 'v2')")
    readonly.close(conn)  # kept: the next handle sees what this one changed
    again = readonly.connect(path, in_memory=True)
    assert again is conn and again.execute("SELECT count(*) FROM meta").fetchone() == (2,)
    with sqlite3.connect(path) as disk:  # the file itself never changed
        assert disk.execute("SELECT count(*) FROM meta").fetchone() == (1,)
    disk.close()
    readonly.discard(path, in_memory=True)
    assert path.is_file()
    empty = readonly.connect(path, in_memory=True)
    assert empty.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)


def test_a_file_that_is_no_database_gives_an_empty_stand_in(tmp_path: Path) -> None:
    path = tmp_path / "longterm.sqlite3"
    path.write_bytes(b"not a database" * 100)
    conn = readonly.connect(path, in_memory=True)
    assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
