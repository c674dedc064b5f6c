"""The hook server: real ``pmem hook claude-code`` processes, a real server process, real
sockets. Its answers are the ones the hook gives in its own process; a dead, stale or busy
server never costs an answer."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from planning_memory.agents import hook_client
from planning_memory.agents.claude_code import answer
from planning_memory.memory import Memory

PMEM = Path(sys.executable).parent / "pmem"
SERVER = "planning_memory.agents.hook_server"


def server_pids(run_dir: Path) -> list[int]:
    """Hook servers whose runtime folder is ``run_dir`` (read from /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if SERVER.encode() in cmdline and f"XDG_RUNTIME_DIR={run_dir}".encode() in environ:
            found.append(int(proc.name))
    return found


def wait_for(check: Any, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def run_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short runtime folder (socket paths are limited to 107 bytes) and the server on."""
    where = Path(tempfile.mkdtemp(prefix="pmr-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(where))
    monkeypatch.setenv("PMEM_SERVER", "1")
    monkeypatch.setenv("PMEM_BACKGROUND", "1")
    monkeypatch.setenv("PMEM_SERVER_IDLE", "120")
    yield where
    hook_client.stop()
    for pid in server_pids(where):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(where, ignore_errors=True)


def hook(event: str, data: dict[str, Any], cwd: Path, **env: str) -> str:
    done = subprocess.run(
        [PMEM, "hook", "claude-code", event],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **env},
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def payload(repo: Path, **more: Any) -> dict[str, Any]:
    return {"session_id": "c0ffee00-0000-4000-8000-000000000001", "cwd": str(repo), **more}


EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("SessionStart", {"source": "startup", "hook_event_name": "SessionStart"}),
    ("UserPromptSubmit", {"prompt": "Always use pnpm, never npm. Add lodash please."}),
    ("PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": "src/app.py"}}),
    ("UserPromptSubmit", {"prompt": "what did we say about npm?"}),
    ("Stop", {"stop_hook_active": False}),
    ("SessionStart", {"source": "compact", "hook_event_name": "SessionStart"}),
    ("SessionEnd", {"reason": "exit"}),
]


def normal(text: str) -> str:
    """An answer with what differs between two runs (ids, times) masked."""
    text = re.sub(r"\b(ses|pat|mis|lrn|msg|dec)_[0-9A-Za-z]{10,}", r"\1_ID", text)
    return re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?(\.\d+)?Z?", "TIME", text)


def test_the_server_answers_as_the_hook_does_in_its_own_process(
    empty_repo: Path, tmp_path: Path, run_dir: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(empty_repo, other, symlinks=True)
    for repo in (empty_repo, other):
        (repo / "src").mkdir()
        (repo / "src/app.py").write_text("x = 1\n", "utf-8")
    subprocess.Popen([sys.executable, "-m", SERVER], start_new_session=True)
    wait_for(hook_client.ping)  # listening, and done warming up
    here, served = [], []
    for event, extra in EVENTS:
        here.append(answer(event, json.dumps(payload(empty_repo, **extra)).encode()).stdout)
        got = hook_client.forward(event, json.dumps(payload(other, **extra)).encode())
        assert got is not None and got[1] == b""
        served.append(got[0].decode())
    assert [normal(s) for s in served] == [normal(h) for h in here]
    assert "pnpm" in served[1] and "pnpm" in served[5]
    ours, theirs = Memory(empty_repo), Memory(other)
    assert [r["title"] for r in theirs.records()] == [r["title"] for r in ours.records()]
    assert [s.status for s in theirs.sessions.list()] == ["ended"]


def test_a_hook_starts_the_server_and_the_next_hooks_use_it(
    empty_repo: Path, run_dir: Path
) -> None:
    start = hook("SessionStart", payload(empty_repo, source="startup"), empty_repo)
    assert "Temporal context" in start  # answered in its own process, then started a server
    wait_for(lambda: len(server_pids(run_dir)) == 1 and hook_client.ping())
    [pid] = server_pids(run_dir)
    said = hook(
        "UserPromptSubmit", payload(empty_repo, prompt="never commit .env files"), empty_repo
    )
    assert "planning-memory: created" in said
    paths = [f"src/f{n}.py" for n in range(8)]
    edit = [payload(empty_repo, tool_name="Write", tool_input={"file_path": p}) for p in paths]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda d: hook("PostToolUse", d, empty_repo), edit))
    assert server_pids(run_dir) == [pid]  # one server answered them all
    [session] = Memory(empty_repo).sessions.list(channel="claude-code")
    recorded = {f["path"] for f in Memory(empty_repo).sessions.get(session.id)["files_accessed"]}
    assert recorded == set(paths)


def test_a_killed_server_costs_no_answer_and_is_replaced(empty_repo: Path, run_dir: Path) -> None:
    hook("SessionStart", payload(empty_repo, source="startup"), empty_repo)
    wait_for(lambda: len(server_pids(run_dir)) == 1 and hook_client.ping())
    [first] = server_pids(run_dir)
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: first not in server_pids(run_dir))
    assert os.path.exists(hook_client.socket_path())  # left behind by the killed server
    said = hook("UserPromptSubmit", payload(empty_repo, prompt="always use pnpm"), empty_repo)
    assert "planning-memory: created" in said
    wait_for(lambda: len(server_pids(run_dir)) == 1)
    assert server_pids(run_dir) != [first]
    wait_for(
        lambda: hook_client.forward("Stop", json.dumps(payload(empty_repo)).encode()) is not None
    )


def test_a_server_whose_code_changed_steps_aside(
    empty_repo: Path, tmp_path: Path, run_dir: Path
) -> None:
    """An upgrade (here: an edit to a copy of the package) while a server runs: the next hook
    is answered by the new code in its own process, and the old server exits."""
    copy = tmp_path / "site"
    shutil.copytree(
        Path(hook_client.__file__).parents[1],
        copy / "planning_memory",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for data in ("schemas", "templates"):  # as the wheel holds them
        shutil.copytree(
            Path(hook_client.__file__).parents[2] / data, copy / "planning_memory" / data
        )
    env = {"PYTHONPATH": str(copy)}
    code = "import sys; from planning_memory.cli import main; sys.argv[0] = 'pmem'; main()"
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "from planning_memory.agents import hook_client as h; print(h.socket_path())",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    assert Path(where).name != Path(hook_client.socket_path()).name  # the copy has its own

    def run(event: str, **extra: Any) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code, "hook", "claude-code", event],
            input=json.dumps(payload(empty_repo, **extra)),
            capture_output=True,
            text=True,
            cwd=empty_repo,
            env={**os.environ, **env},
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout

    run("SessionStart", source="startup")
    ping = "from planning_memory.agents import hook_client as h; raise SystemExit(not h.ping())"

    def pinged() -> bool:
        env_ = {**os.environ, **env}
        done = subprocess.run([sys.executable, "-c", ping], env=env_, cwd=tmp_path, timeout=60)
        return done.returncode == 0

    wait_for(lambda: Path(where).exists() and len(server_pids(run_dir)) == 1 and pinged())
    [old] = server_pids(run_dir)
    handler = copy / "planning_memory/agents/claude_code.py"
    text = handler.read_text("utf-8").replace(
        "note = f\"planning-memory: {done['action']}",
        "note = f\"planning-memory (new): {done['action']}",
    )
    assert "(new)" in text
    handler.write_text(text, "utf-8")
    os.utime(handler, (time.time() + 5, time.time() + 5))
    assert "planning-memory (new): created" in run("UserPromptSubmit", prompt="always use pnpm")
    wait_for(lambda: old not in server_pids(run_dir))


@pytest.mark.slow
def test_hooks_fired_together_never_queue_behind_a_locked_one(
    empty_repo: Path, run_dir: Path
) -> None:
    """The memory's lock is held (a long scan): ten hooks at once each give up on the lock
    within the hook's installed timeout (15 s), one answered by the server, the others by
    their own process rather than queued behind it."""
    server = start_server()
    prompts = [payload(empty_repo, prompt=f"check the retry of job {n}") for n in range(10)]

    def fire(data: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PMEM, "hook", "claude-code", "UserPromptSubmit"],
            input=json.dumps(data),
            capture_output=True,
            text=True,
            cwd=empty_repo,
            timeout=15,  # Claude Code's timeout for this hook: TimeoutExpired fails the test
        )

    with Memory(empty_repo).store.lock(), ThreadPoolExecutor(10) as pool:
        done = list(pool.map(fire, prompts))
    assert all(d.returncode == 0 and "locked" in d.stderr for d in done), [d.stderr for d in done]
    assert server_pids(run_dir) == [server]  # none of them started a second server


def open_files(pid: int) -> list[str]:
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            found.append(os.readlink(fd))
    return found


def test_the_server_keeps_no_file_of_a_deleted_repository_open(
    empty_repo: Path, tmp_path: Path, run_dir: Path
) -> None:
    gone = tmp_path / "gone"
    shutil.copytree(empty_repo, gone, symlinks=True)
    server = start_server()
    for prompt in ("Always use pnpm, never npm", "what did we say about npm?"):
        hook("UserPromptSubmit", payload(gone, prompt=prompt), gone)
    shutil.rmtree(gone)
    hook("UserPromptSubmit", payload(empty_repo, prompt="never commit .env files"), empty_repo)
    assert [f for f in open_files(server) if str(gone) in f] == []


# -- trust: the runtime folder, the socket, the server's user, what is sent -----------------
def start_server() -> int:
    proc = subprocess.Popen([sys.executable, "-m", SERVER], start_new_session=True)
    wait_for(hook_client.ping)
    return proc.pid


def sig_ignored(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^SigIgn:\s+([0-9a-f]+)$", status, re.M).group(1), 16)  # type: ignore[union-attr]


def test_a_server_started_from_nohup_takes_the_default_signals(
    empty_repo: Path, run_dir: Path
) -> None:
    """A hook run with SIGINT and SIGHUP ignored (``nohup ... &``) starts the server: the
    server does not ignore them."""
    ignoring = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "signal.signal(signal.SIGHUP, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"
    )
    done = subprocess.run(
        [sys.executable, "-c", ignoring, str(PMEM), "hook", "claude-code", "SessionStart"],
        input=json.dumps(payload(empty_repo, source="startup")),
        capture_output=True,
        text=True,
        cwd=empty_repo,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    wait_for(lambda: len(server_pids(run_dir)) == 1)
    [pid] = server_pids(run_dir)
    wait_for(hook_client.ping)
    ignored = sig_ignored(pid)
    assert not ignored & (1 << (signal.SIGINT - 1)) and not ignored & (1 << (signal.SIGHUP - 1))


UMASK_077 = "import os, sys; os.umask(0o077); os.execv(sys.argv[1], sys.argv[1:])"


def test_a_served_hook_writes_with_the_clients_umask(empty_repo: Path, run_dir: Path) -> None:
    start_server()
    before = set((empty_repo / ".planning").rglob("*"))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; os.umask(0o077); os.execv(sys.argv[1], sys.argv[1:])",
            str(PMEM),
            "hook",
            "claude-code",
            "UserPromptSubmit",
        ],
        input=json.dumps(payload(empty_repo, prompt="Always use pnpm, never npm")),
        capture_output=True,
        text=True,
        cwd=empty_repo,
        timeout=60,
    )
    assert "planning-memory: created" in done.stdout, done.stderr
    written = [p for p in set((empty_repo / ".planning").rglob("*")) - before if p.is_file()]
    assert any("long-term" in str(p) for p in written) and any(
        "short-term" in str(p) for p in written
    )
    assert all(p.stat().st_mode & 0o077 == 0 for p in written), [
        (str(p), oct(p.stat().st_mode)) for p in written if p.stat().st_mode & 0o077
    ]


def test_the_request_carries_no_secret_of_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-canary")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_canary")
    monkeypatch.setenv("TZ", "Europe/Madrid")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/work/x")
    raw = hook_client.request("Stop", b"{}")
    assert b"canary" not in raw
    got = hook_client.parse_request(raw)
    assert got is not None and got.event == "Stop" and got.data == b"{}"
    assert got.env["TZ"] == "Europe/Madrid" and got.env["CLAUDE_PROJECT_DIR"] == "/work/x"
    assert "PATH" in got.env and "ANTHROPIC_API_KEY" not in got.env


class Listener:
    """A socket at the client's path, listened on by a process of ``uid`` (root drops to it
    after binding): counts what it receives."""

    CODE = """
import os, socket, sys
path, uid = sys.argv[1], int(sys.argv[2])
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chown(path, *(2 * [int(sys.argv[3])]))
os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
server.listen(8)  # SO_PEERCRED: the credentials at listen()
print("ready", flush=True)
got = 0
server.settimeout(20)
try:
    while True:
        conn, _ = server.accept()
        conn.settimeout(2)
        try:
            while chunk := conn.recv(65536):
                got += len(chunk)
        except OSError:
            pass
        conn.close()
        print(got, flush=True)
except OSError:
    pass
"""

    def __init__(self, path: str, uid: int, owner: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.CODE, path, str(uid), str(owner)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def received(self) -> int:
        self.proc.kill()
        out, _ = self.proc.communicate(timeout=10)
        return max([0, *(int(n) for n in out.split())])


NOBODY = 65534
root_only = pytest.mark.skipif(os.getuid() != 0, reason="another user's process needs root")


def hostile_cases(run_dir: Path) -> list[tuple[str, Path, int, int, int]]:
    """(what, folder, folder owner and mode, socket owner / listening user)."""
    return [
        ("a folder others may enter", run_dir / "open", 0, 0o777, 0),
        ("another user's folder", run_dir / "theirs", NOBODY, 0o700, NOBODY),
        ("a server of another user in our own folder", run_dir / "ours", 0, 0o700, NOBODY),
    ]


@root_only
@pytest.mark.parametrize("case", range(3))
def test_a_hostile_runtime_folder_or_socket_receives_no_byte(
    case: int, empty_repo: Path, run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    what, folder, owner, mode, listener_uid = hostile_cases(run_dir)[case]
    folder.mkdir()
    os.chmod(folder, mode)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    # the name the client gives its socket, in the folder it was pointed at
    path = str(folder / Path(hook_client.socket_path()).name)
    listener = Listener(path, listener_uid, owner)
    os.chown(folder, owner, owner)
    try:
        said = hook(
            "UserPromptSubmit",
            payload(empty_repo, prompt="Always use pnpm, never npm"),
            empty_repo,
            ANTHROPIC_API_KEY="sk-ant-api03-canary",
            PMEM_BACKGROUND="0",  # no server of ours is started either
        )
    finally:
        got = listener.received()
    assert "planning-memory: created" in said  # answered in its own process
    assert got == 0, what


def test_a_link_for_the_runtime_folder_is_never_used(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    assert hook_client.private(str(real))
    assert not hook_client.private(str(tmp_path / "link"))
    real.chmod(0o750)
    assert not hook_client.private(str(real))


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_socket_another_user_owns_is_never_used(empty_repo: Path, run_dir: Path) -> None:
    """``sudo`` may keep another user's runtime folder: the hook then runs here, as the user
    who asked, never in that user's server."""
    start_server()
    path = hook_client.socket_path()
    os.chown(path, NOBODY, NOBODY)
    try:
        assert hook_client.forward("Stop", b"{}") is None
    finally:
        os.chown(path, 0, 0)
    assert hook_client.forward("Stop", b"{}") is not None
