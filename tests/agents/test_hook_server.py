"""The hook server: real ``pmem hook claude-code`` processes, a real server process, real
sockets. Its answers are the ones the hook gives in its own process; a dead, stale or busy
server never costs an answer."""

from __future__ import annotations

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
    wait_for(lambda: os.path.exists(hook_client.socket_path()))
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
    wait_for(lambda: len(server_pids(run_dir)) == 1 and os.path.exists(hook_client.socket_path()))
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
    wait_for(lambda: len(server_pids(run_dir)) == 1 and os.path.exists(hook_client.socket_path()))
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
    wait_for(lambda: Path(where).exists() and len(server_pids(run_dir)) == 1)
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


# -- served commands: `pmem save`, `pmem search`, ... run by a worker of the server ----------


CLIENT = "import sys; from planning_memory.cli import main; sys.argv[0] = 'pmem'; main()"


def client(*args: str, before: str = "") -> list[str]:
    """``pmem ARGS`` under ``-X importtime``: its stderr says whether this process imported
    click (the command ran here) or not (a worker of the server ran it)."""
    return [sys.executable, "-X", "importtime", "-c", before + CLIENT, *args]


def pmem(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        client(*args),
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **env},
        timeout=60,
    )


def ran_here(done: subprocess.CompletedProcess[str]) -> bool:
    return bool(re.search(r"\| +click$", done.stderr, re.M))


def own_stderr(done: subprocess.CompletedProcess[str]) -> str:
    return "".join(line for line in done.stderr.splitlines(True) if "import time:" not in line)


def masked(text: str, repo: Path) -> str:
    """What differs between two repositories: their paths and project ids (a hash of the
    path), record ids and times."""
    return re.sub(r"\brepo-[0-9a-f]{8}\b", "PROJECT", normal(text.replace(str(repo), "REPO")))


def start_server() -> int:
    proc = subprocess.Popen([sys.executable, "-m", SERVER], start_new_session=True)
    wait_for(hook_client.ping)
    return proc.pid


COMMANDS: list[tuple[str, ...]] = [
    ("save", "Always use pnpm, never npm", "-t", "pattern", "--description", "lockfile"),
    ("search", "pnpm", "--json"),
    ("show",),
    ("patterns",),
    ("save",),  # a usage error: exit 2, the usage on stderr
    ("search", "pnpm", "--limit", "nope"),
    ("-C", "no/such/folder", "show"),  # a user error: one line, exit 3
    ("validate",),
    ("save", "--help"),
]


def test_a_served_command_prints_and_exits_as_in_its_own_process(
    tmp_path: Path, run_dir: Path
) -> None:
    ours, other = tmp_path / "a" / "repo", tmp_path / "b" / "repo"  # one project name
    for repo in (ours, other):
        Memory.init(repo)
    start_server()
    for args in COMMANDS:
        here = pmem(*args, cwd=ours, PMEM_SERVER="0")
        served = pmem(*args, cwd=other)
        assert ran_here(here) and not ran_here(served), args
        assert served.returncode == here.returncode, (args, served.stderr)
        assert masked(served.stdout, other) == masked(here.stdout, ours), args
        assert masked(own_stderr(served), other) == masked(own_stderr(here), ours), args
    assert [r["title"] for r in Memory(other).records()] == ["Always use pnpm, never npm"]


def test_a_served_command_that_finds_no_server_runs_here_and_starts_one(
    empty_repo: Path, run_dir: Path
) -> None:
    first = pmem("save", "Run ruff before committing", "-t", "pattern", cwd=empty_repo)
    assert first.returncode == 0 and ran_here(first)
    wait_for(lambda: len(server_pids(run_dir)) == 1 and os.path.exists(hook_client.socket_path()))
    wait_for(hook_client.ping)
    again = pmem("search", "ruff", cwd=empty_repo)
    assert again.returncode == 0 and not ran_here(again)
    assert "Run ruff before committing" in again.stdout


def test_served_saves_at_once_each_keep_their_record(empty_repo: Path, run_dir: Path) -> None:
    """Eight clients at once: eight workers, eight records, eight distinct ids (a forked
    worker draws its own randomness)."""
    start_server()
    titles = [f"Service {n} talks to queue q{n}x only" for n in range(8)]

    def save(title: str) -> subprocess.CompletedProcess[str]:
        return pmem("save", title, "-t", "learning", "--json", cwd=empty_repo)

    with ThreadPoolExecutor(8) as pool:
        done = list(pool.map(save, titles))
    assert all(d.returncode == 0 and not ran_here(d) for d in done), [d.stderr for d in done]
    ids = {json.loads(d.stdout)["id"] for d in done}
    assert len(ids) == 8
    assert sorted(r["title"] for r in Memory(empty_repo).records()) == sorted(titles)


def children(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                status = (proc / "status").read_text()
            except OSError:
                continue
            if re.search(rf"^PPid:\s+{pid}$", status, re.M):
                found.append(int(proc.name))
    return found


def stopped_save(repo: Path, server: int, stop: Any) -> subprocess.CompletedProcess[str]:
    """A served save waiting for the memory's lock (held here), ``stop(client, worker)``
    called on it, and what the client then gave."""
    with Memory(repo).store.lock():
        proc = subprocess.Popen(
            client("save", "Never force-push main", "-t", "pattern"),
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(children(server)) == 1, 30)
        time.sleep(0.5)  # the client has the worker's id and relays signals
        stop(proc, children(server)[0])
        out, err = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_reaches_the_worker_and_nothing_is_written(empty_repo: Path, run_dir: Path) -> None:
    """The client relays SIGINT: a save waiting for the memory's lock stops with exit 130,
    as it would in its own process, and the server lives on."""
    server = start_server()
    done = stopped_save(empty_repo, server, lambda proc, _worker: proc.send_signal(signal.SIGINT))
    assert done.returncode == 130 and not ran_here(done), done.stderr
    assert Memory(empty_repo).records() == []
    assert server_pids(run_dir) == [server]


def test_a_served_command_writes_with_the_clients_umask(empty_repo: Path, run_dir: Path) -> None:
    start_server()
    done = subprocess.run(
        client(
            "save",
            "Pin the node version",
            "-t",
            "pattern",
            "--json",
            before="import os; os.umask(0o027); ",
        ),
        capture_output=True,
        text=True,
        cwd=empty_repo,
        timeout=60,
    )
    assert done.returncode == 0 and not ran_here(done), done.stderr
    [path] = (empty_repo / ".planning").rglob(f"{json.loads(done.stdout)['id']}.json")
    assert path.stat().st_mode & 0o777 == 0o640


def test_the_command_a_client_asks_for(run_dir: Path) -> None:
    from planning_memory.cli import SERVED, command_name

    assert command_name(["-C", "repo", "save", "x"]) == "save"
    assert command_name(["--root=repo", "search", "x"]) == "search"
    assert command_name(["-Crepo", "show"]) == "show"
    assert command_name(["--help"]) is None
    assert command_name(["-C", "repo"]) is None
    assert {"watch", "ui", "mcp", "hook", "scan", "init"}.isdisjoint(SERVED)


def test_the_docs_name_the_served_commands() -> None:
    from planning_memory.cli import SERVED

    text = (Path(__file__).parents[2] / "docs" / "agents.md").read_text("utf-8")
    listed = text.split("- A served command (", 1)[1].split(")", 1)[0]
    assert set(re.findall(r"`([a-z-]+)`", listed)) == SERVED


def test_a_worker_killed_mid_command_is_one_line_and_exit_70(
    empty_repo: Path, run_dir: Path
) -> None:
    server = start_server()
    done = stopped_save(empty_repo, server, lambda _proc, worker: os.kill(worker, signal.SIGKILL))
    assert done.returncode == 70 and not ran_here(done)
    assert own_stderr(done).count("\n") == 1
    assert "worker stopped without an exit status" in done.stderr
    assert Memory(empty_repo).records() == []
    assert server_pids(run_dir) == [server]


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_socket_another_user_owns_is_never_used(empty_repo: Path, run_dir: Path) -> None:
    """``sudo`` may keep another user's runtime folder: the command then runs here, as the
    user who asked, never in that user's server."""
    start_server()
    path = hook_client.socket_path()
    os.chown(path, 65534, 65534)
    try:
        done = pmem("save", "Keep secrets out of logs", "-t", "pattern", cwd=empty_repo)
        assert done.returncode == 0 and ran_here(done), done.stderr
        assert hook_client.forward("Stop", b"{}") is None
    finally:
        os.chown(path, 0, 0)
    assert not ran_here(pmem("show", cwd=empty_repo))
