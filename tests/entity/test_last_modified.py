"""Seed 000's ``lastModified`` on file entities: the file's mtime or its newest annotation,
shown by ``pmem entity file``, the API, MCP ``entity_file`` and ``pmem export --seed-format``,
and never written into the committed shards (real files, real git, the MCP SDK's client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from planning_memory.cli import cli
from planning_memory.memory import Memory

SEED_TIME = datetime(2024, 1, 20, 15, 30, tzinfo=UTC)  # the seed's example lastModified
LATER = datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC)
PATH = "src/lib/auth/validators.py"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return done.stdout.decode()


def make_repo(root: Path) -> Memory:
    git(root, "init", "-q", "-b", "main")
    source = root / PATH
    source.parent.mkdir(parents=True)
    source.write_text(
        '"""Validators."""\n\n\ndef validate_credentials(email, password):\n    return email\n'
    )
    os.utime(source, (SEED_TIME.timestamp(), SEED_TIME.timestamp()))
    mem = Memory.init(root)
    mem.scan()
    return mem


def shards(root: Path) -> dict[str, bytes]:
    folder = root / ".planning" / "memory" / "entity"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.json"))}


def cli_json(root: Path, *args: str) -> object:
    result = CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_seed000_file_entity_has_last_modified(tmp_path: Path) -> None:
    mem = make_repo(tmp_path)
    info = mem.get_file_info(PATH)
    assert info is not None and info["last_modified"] == "2024-01-20T15:30:00Z"
    shown = cli_json(tmp_path, "entity", "file", PATH, "--json")
    assert isinstance(shown, dict) and shown["last_modified"] == "2024-01-20T15:30:00Z"
    browsed = mem.code.folder("src/lib/auth")["files"]
    assert [f["last_modified"] for f in browsed] == ["2024-01-20T15:30:00Z"]
    export = cli_json(tmp_path, "export", "--seed-format")
    assert isinstance(export, dict)
    assert export["entityMemory"]["files"][PATH]["lastModified"] == "2024-01-20T15:30:00Z"
    assert "last_modified" not in json.dumps(export["entityMemory"])  # camelCase throughout


def test_seed000_update_file_entity_sets_last_modified(tmp_path: Path) -> None:
    make_repo(tmp_path)
    before = shards(tmp_path)
    mem = Memory(tmp_path, clock=lambda: LATER)
    updated = mem.update_file_entity(PATH, modified_by=["elsabro-executor"], notes=["zod"])
    assert updated["last_modified"] == "2030-05-06T07:08:09Z"
    assert updated["modified_by"] == ["elsabro-executor"]
    info = Memory(tmp_path).get_file_info(PATH)
    assert info is not None and info["last_modified"] == "2030-05-06T07:08:09Z"
    after = shards(tmp_path)
    assert after != before  # the annotations are in the shard ...
    assert not any(b"2030" in data or b"last_modified" in data for data in after.values())
    stamps = tmp_path / ".planning" / "memory" / "contextual" / "annotated-at.json"
    assert json.loads(stamps.read_text()) == {PATH: "2030-05-06T07:08:09Z"}  # ... the time not
    # a later edit of the file wins over the older annotation
    later = datetime(2031, 1, 1, tzinfo=UTC).timestamp()
    os.utime(tmp_path / PATH, (later, later))
    info = Memory(tmp_path).get_file_info(PATH)
    assert info is not None and info["last_modified"] == "2031-01-01T00:00:00Z"


def test_seed000_last_modified_follows_git_checkout_and_never_churns_the_shards(
    tmp_path: Path,
) -> None:
    mem = make_repo(tmp_path)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "init")
    on_main = shards(tmp_path)
    git(tmp_path, "checkout", "-q", "-b", "feature")
    (tmp_path / PATH).write_text('"""Validators, changed."""\n')
    git(tmp_path, "commit", "-q", "-am", "change")
    started = datetime.now(UTC).replace(microsecond=0)
    git(tmp_path, "checkout", "-q", "main")  # git rewrites the file: its mtime is now
    mem.scan()
    info = mem.get_file_info(PATH)
    assert info is not None and info["last_modified"] >= started.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert shards(tmp_path) == on_main  # same content, same shards: no per-clone time in git
    assert git(tmp_path, "status", "--porcelain", "--", ".planning") == ""


def test_seed000_mcp_entity_file_shows_last_modified(tmp_path: Path) -> None:
    make_repo(tmp_path)
    script = Path(sys.executable).parent / "pmem"
    command, args = (
        (str(script), ["mcp"])
        if script.exists()
        else (sys.executable, ["-m", "planning_memory.cli.run", "mcp"])
    )
    server = StdioServerParameters(
        command=command, args=args, cwd=str(tmp_path), env=dict(os.environ)
    )
    found: dict[str, object] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server, read_timeout_seconds=30) as client:
                result = await client.call_tool("entity_file", {"path": PATH})
                assert not result.is_error
                found.update(json.loads("".join(getattr(c, "text", "") for c in result.content)))

    anyio.run(main)
    assert found["last_modified"] == "2024-01-20T15:30:00Z"
