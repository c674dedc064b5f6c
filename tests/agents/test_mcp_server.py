"""The MCP server through the SDK's real client over stdio: ``pmem mcp`` runs as a subprocess
in a temporary repository; every tool, bad arguments, a missing memory tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from planning_memory.memory import Memory

TOOLS = {
    "memory_save",
    "memory_search",
    "memory_stats",
    "memory_get",
    "memory_context",
    "memory_timeline",
    "memory_pin",
    "memory_forget",
    "session_start",
    "session_log",
    "session_error",
    "session_end",
    "entity_file",
    "entity_function",
    "entity_area",
}


def pmem_command() -> list[str]:
    script = Path(sys.executable).parent / "pmem"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "planning_memory.cli.run"]  # pragma: no cover


def params(cwd: Path, *extra: str) -> StdioServerParameters:
    command, *args = pmem_command()
    return StdioServerParameters(
        command=command, args=[*args, *extra, "mcp"], cwd=str(cwd), env=dict(os.environ)
    )


class Session:
    """A connected client with helpers that read a tool result's one text block."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def raw(self, name: str, arguments: dict[str, Any], /) -> CallToolResult:
        return await self.client.call_tool(name, arguments)

    async def text(self, name: str, /, **arguments: Any) -> str:
        result = await self.raw(name, arguments)
        body = "".join(getattr(c, "text", "") for c in result.content)
        assert not result.is_error, f"{name} failed: {body}"
        return body

    async def json(self, name: str, /, **arguments: Any) -> Any:
        return json.loads(await self.text(name, **arguments))

    async def error(self, name: str, /, **arguments: Any) -> str:
        result = await self.raw(name, arguments)
        body = "".join(getattr(c, "text", "") for c in result.content)
        if os.environ.get("PMEM_SHOW_ERRORS"):
            print(f"{name}: {body}")
        assert result.is_error, f"{name} should have failed: {body}"
        assert "\n" not in body.strip(), body
        return body


def run_client(
    server: StdioServerParameters, scenario: Callable[[Session], Awaitable[None]]
) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server, read_timeout_seconds=30) as client:
                await scenario(Session(client))

    anyio.run(main)


@pytest.fixture
def repo(example_repo: Path) -> Path:
    (example_repo / "src" / "lib").mkdir(parents=True)
    return example_repo


def test_every_tool_through_the_real_client(repo: Path) -> None:
    async def scenario(s: Session) -> None:
        listed = await s.client.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        for tool in listed.tools:
            assert tool.description and len(tool.description) > 60, tool.name
            assert tool.input_schema["type"] == "object"
            assert tool.annotations is not None
            reads = tool.name.startswith(
                ("memory_search", "memory_stats", "memory_get", "memory_c", "entity")
            )
            assert tool.annotations.read_only_hint is (reads or tool.name == "memory_timeline")

        saved = await s.json(
            "memory_save",
            title="Retry flaky webhooks with exponential backoff",
            type="decision",
            what="Stripe webhooks time out under load",
            why="lost payments",
            where="src/lib/http/webhooks.ts",
            learned="wrap handlers in retryWithBackoff",
            tags=["payments"],
            topic_key="payments/webhook-retries",
        )
        assert saved["action"] == "created" and saved["id"].startswith("lrn_")
        again = await s.json(
            "memory_save",
            title="Retry webhooks with backoff, at most 5 times",
            type="decision",
            topic_key="payments/webhook-retries",
        )
        assert again["action"] == "upserted" and again["id"] == saved["id"]
        mistake = await s.json(
            "memory_save",
            title="Never log raw webhook payloads",
            type="mistake",
            correction="log the event id only",
            severity="high",
        )
        assert mistake["id"].startswith("mis_")

        found = await s.json("memory_search", query="webhooks backoff")
        ids = [r["id"] for r in found["results"]]
        assert saved["id"] in ids
        row = found["results"][ids.index(saved["id"])]
        assert set(row) >= {"id", "type", "title", "score", "snippet"}
        assert "body" not in row
        none = await s.json("memory_search", query="webhooks zzzunknownword", match="all")
        assert saved["id"] not in [r["id"] for r in none["results"]]  # AND only
        either = await s.json("memory_search", query="webhooks zzzunknownword", match="any")
        assert saved["id"] in [r["id"] for r in either["results"]]
        only = await s.json("memory_search", query="webhook", types=["mistake"])
        assert [r["id"] for r in only["results"] if not r.get("pinned")] == [mistake["id"]]

        record = await s.json("memory_get", id=saved["id"])
        assert record["topic_key"] == "payments/webhook-retries"
        assert record["revision_count"] == 2 and record["source"] == "mcp"

        context = await s.text("memory_context", task="retry the payment webhooks", budget=600)
        assert saved["id"] in context and len(context) <= 600 * 4
        as_json = json.loads(await s.text("memory_context", task="webhooks", format="json"))
        assert isinstance(as_json, dict)

        pinned = await s.json("memory_pin", id=mistake["id"])
        assert pinned["action"] == "pinned"
        unpinned = await s.json("memory_pin", id=mistake["id"], pinned=False)
        assert unpinned["action"] == "unpinned"

        started = await s.json("session_start", goal="Fix webhook retries")
        logged = await s.json(
            "session_log",
            content="Done. [MEMORIZE: webhook retries live in src/lib/http]",
            role="assistant",
        )
        assert logged["session_id"] == started["id"] and logged["memorized"] == 1
        second = await s.json("session_log", content="thanks", role="user")
        message = await s.json("memory_get", id=logged["id"])
        assert message["session_id"] == started["id"] and "MEMORIZE" in message["content"]
        timeline = (await s.json("memory_timeline", id=second["id"], before=3))["timeline"]
        # the session's timeline: the message, the fact it memorized (a learning), the next one
        assert [e["id"] for e in timeline][-3:-2] + [e["id"] for e in timeline][-1:] == [
            logged["id"],
            second["id"],
        ]
        assert timeline[-2]["kind"] == "learning" and "webhook retries" in timeline[-2]["text"]
        assert timeline[-1]["anchor"] is True
        record_line = (await s.json("memory_timeline", id=saved["id"]))["timeline"]
        assert any(e.get("anchor") and e["id"] == saved["id"] for e in record_line)
        failed = "npm test failed: fixture webhook.json not found"
        kept = await s.json("session_error", error=failed, file="src/lib/http.ts")
        assert kept["session_id"] == started["id"] and kept["resolution"] is None
        assert kept["file"] == "src/lib/http.ts" and kept["id"].startswith("err_")
        again = await s.json("session_error", error=failed, file="src/lib/http.ts")
        assert again["id"] == kept["id"]  # the same error still open is kept once
        fixed = await s.json("session_error", resolution="added the webhook fixture")
        assert fixed["id"] == kept["id"] and fixed["resolution"] == "added the webhook fixture"
        assert "no open error" in await s.error("session_error", resolution="again")
        assert "give error" in await s.error("session_error")
        assert "give error" in await s.error("session_error", error="x", error_id=kept["id"])
        done = await s.json("session_error", error="a flaky port", resolution="used port 0")
        assert done["resolved_at"] == done["at"]
        overview = await s.json("memory_get", id=started["id"])
        assert overview["goal"] == "Fix webhook retries" and overview["messages"] == 2
        assert overview["errors"] == 2
        ended = await s.json("session_end")
        assert ended["status"] == "ended" and ended["goal"] == "Fix webhook retries"

        file_info = await s.json("entity_file", path="src/lib/auth/hash.ts")
        assert file_info["path"] == "src/lib/auth/hash.ts"
        assert (
            "src/lib/auth/hash.ts::hashPassword" in json.dumps(file_info) or file_info["functions"]
        )
        function = await s.json("entity_function", name="hashPassword")
        assert function["definitions"][0]["file"] == "src/lib/auth/hash.ts"
        area = await s.json("entity_area", name="authentication")
        assert area["kind"] == "area" and "src/lib/auth" in area["paths"]

        personal = await s.json("memory_save", title="I like short commit titles", scope="personal")
        assert (await s.json("memory_get", id=personal["id"]))["scope"] == "personal"
        assert (await s.json("memory_pin", id=personal["id"]))["action"] == "pinned"

        forgot = await s.json("memory_forget", id=mistake["id"])
        assert forgot["action"] == "deleted"
        gone = await s.json("memory_search", query="raw webhook payloads")
        assert mistake["id"] not in [r["id"] for r in gone["results"]]
        await s.json("memory_forget", id=mistake["id"], hard=True)
        await s.error("memory_get", id=mistake["id"])

    # the server runs in a subfolder: it finds the repository's memory
    run_client(params(repo / "src" / "lib"), scenario)
    mem = Memory(repo)
    assert any(r["title"].startswith("Retry webhooks") for r in mem.records("decision"))
    assert [r["title"] for r in mem.personal().records()] == ["I like short commit titles"]
    assert not (repo / "src" / "lib" / ".planning").exists()


def test_bad_arguments_are_one_line_tool_errors(repo: Path) -> None:
    async def scenario(s: Session) -> None:
        assert "memory_search" in await s.error("memory_search")  # query missing
        limit = await s.error("memory_search", query="auth", limit=1000)
        assert "limit" in limit
        assert "limt" in await s.error("memory_search", query="auth", limt=3)
        assert "match" in await s.error("memory_search", query="auth", match="some")
        assert "type" in await s.error("memory_save", title="x", type="opinion")
        assert "title" in await s.error("memory_save", title="")
        assert "budget" in await s.error("memory_context", task="x", budget=5)
        topic = await s.error("memory_save", title="x", topic_key="Not A Key")
        assert "topic" in topic.lower()
        assert "no record" in await s.error("memory_get", id="pat_01NOTHERE")
        assert "invalid" in (await s.error("memory_get", id="../../etc/passwd")).lower()
        await s.error("memory_pin", id="lrn_01NOTHERE")
        await s.error("memory_timeline", id="msg_01NOTHERE")
        await s.error("entity_file", path="../outside.py")
        await s.error("entity_file", path="src/never/scanned.py")
        await s.error("entity_function", name="noSuchFunction")
        await s.error("entity_area", name="no-such-area")
        await s.error("session_end", session_id="ses_01NOTHERE")
        await s.error("session_log", content="x", role="robot")
        await s.error("no_such_tool")
        # still alive after all that
        assert (await s.json("memory_search", query="password"))["results"]

    run_client(params(repo), scenario)


def test_a_missing_memory_tree_is_a_tool_error_until_init(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    async def scenario(s: Session) -> None:
        message = await s.error("memory_search", query="anything")
        assert "pmem init" in message
        assert "pmem init" in await s.error("memory_save", title="x")
        Memory.init(repo)  # the project is looked up at each call
        saved = await s.json("memory_save", title="Memory now exists")
        assert saved["action"] == "created"

    run_client(params(repo), scenario)
    assert shutil.which("git")


def test_search_widens_by_default_and_the_limits_are_in_the_schemas(repo: Path) -> None:
    mem = Memory(repo)
    for title, learned in (
        ("JWT sessions, not database sessions", "stateless JWT sessions for the edge runtime"),
        ("Session strategy: rotate refresh tokens", "rotate the refresh token on every use"),
    ):
        mem.save(title, "decision", learned=learned, topic_key=None)

    async def scenario(s: Session) -> None:
        question = "what did we decide about the session strategy"
        strict = await s.json("memory_search", query=question, match="all")
        assert [r for r in strict["results"] if not r.get("pinned")] == []
        found = await s.json("memory_search", query=question)
        titles = [r["title"] for r in found["results"] if not r.get("pinned")]
        assert "Session strategy: rotate refresh tokens" in titles and len(titles) >= 2

        tools = {t.name: t.input_schema for t in (await s.client.list_tools()).tools}
        search = tools["memory_search"]["properties"]
        assert search["match"]["default"] == "auto"
        assert search["limit"]["maximum"] == 50 and search["limit"]["minimum"] == 1
        assert search["query"]["maxLength"] == 2000
        assert search["tags"]["maxItems"] == 20 and search["tags"]["items"]["maxLength"] == 100
        context = tools["memory_context"]["properties"]
        assert (
            context["budget"]["anyOf"][0]["minimum"],
            context["budget"]["anyOf"][0]["maximum"],
        ) == (
            100,
            20000,
        )
        assert context["files"]["maxItems"] == 50 and context["tags"]["maxItems"] == 20
        assert context["session_id"]["anyOf"][0]["pattern"].startswith("^ses_")
        assert "session_id" in await s.error("memory_context", session_id="../../etc/passwd")
        assert "tags" in await s.error("memory_search", query="x", tags=["t"] * 21)

    run_client(params(repo), scenario)


def test_context_without_a_task_has_what_always_matters(repo: Path) -> None:
    mem = Memory(repo)
    taught = mem.learn_utterance("Always use pnpm, never npm").outcome
    assert taught is not None
    mem.channel = "mcp"
    sid = mem.sessions.start(goal="Retry failed payment webhooks")["id"]
    mem.log("next we should add a test for the retry limit", session_id=sid)
    mem.sessions.end(sid)

    async def scenario(s: Session) -> None:
        text = await s.text("memory_context")
        for needle in (
            f"[{taught.record['id']}] (why: taught: always included)",  # taught rule
            "(why: pinned: always included)",  # the example's pinned memories
            "## Last session",
            "Goal: Retry failed payment webhooks",
            "## Preferences",
            "code style: indentation: 2",
            "## Temporal context",
        ):
            assert needle in text, needle

    run_client(params(repo), scenario)


def test_session_tools_join_the_session_the_claude_code_hooks_keep(
    repo: Path, tmp_path: Path
) -> None:
    """With Claude Code's hooks keeping a live session, the model's session tools act on it
    (no separate ``mcp`` session nothing would end); session_end logs what the transcript
    holds first. The example tree's stale, unmapped claude-code session is never joined."""
    claude_id = "9f1c2a4e-5b6d-4c3e-8a1f-0d2e3c4b5a61"
    transcript = tmp_path / f"{claude_id}.jsonl"
    base = {"session_id": claude_id, "transcript_path": str(transcript), "cwd": str(repo)}

    def hook(event: str, **fields: Any) -> None:
        done = subprocess.run(
            [*pmem_command(), "hook", "claude-code", event],
            input=json.dumps({**base, "hook_event_name": event, **fields}),
            capture_output=True,
            text=True,
            cwd=repo,
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr

    hook("SessionStart", source="startup")
    hook("UserPromptSubmit", prompt="Fix the webhook retries")
    [hooked] = Memory(repo).sessions.list(channel="claude-code", status="active")

    async def scenario(s: Session) -> None:
        started = await s.json("session_start", goal="Fix webhook retries")
        assert started["id"] == hooked.id and started["joined"] is True
        assert started["channel"] == "claude-code" and started["goal"] == "Fix webhook retries"
        logged = await s.json(
            "session_log", content="[MEMORIZE: retries live in src/lib/http]", role="assistant"
        )
        assert logged["session_id"] == hooked.id and logged["memorized"] == 1
        reply = {
            "type": "assistant",
            "timestamp": datetime.now(UTC).isoformat(),
            "message": {"role": "assistant", "content": "Retries now back off. Next: tests."},
        }
        transcript.write_text(json.dumps(reply) + "\n", "utf-8")
        ended = await s.json("session_end")
        assert ended["id"] == hooked.id and ended["status"] == "ended"
        assert ended["goal"] == "Fix webhook retries" and "Next: tests." in ended["next_steps"]
        alone = await s.json("session_start", goal="something else")  # no live hook session
        assert alone["channel"] == "mcp" and alone["joined"] is False

    run_client(params(repo), scenario)
    mem = Memory(repo)
    ended = mem.sessions.get(hooked.id)
    assert [m["role"] for m in ended["messages"]] == ["user", "assistant", "assistant"]
    hook("Stop", stop_hook_active=False)  # the rest of the reply: no session is started for it
    assert [i.id for i in mem.sessions.list(channel="claude-code", status="active")] == []


def test_a_lone_surrogate_is_cleaned_and_answered(repo: Path) -> None:
    """A cut emoji (``\\ud83d`` with no low half) in a client's request: the SDK's parser
    refuses it, so the line is cleaned first; the request is answered and the text kept."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    call = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_save",'
    call += '"arguments":{"title":"cut \\ud83d emoji kept","type":"learning"}}}'
    server = subprocess.Popen(
        [*pmem_command(), "mcp"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    for line in [*map(json.dumps, lines), call]:
        server.stdin.write(line.encode() + b"\n")
    server.stdin.flush()
    answers = [json.loads(server.stdout.readline()) for _ in range(2)]
    server.stdin.close()
    server.wait(timeout=30)
    assert answers[1]["id"] == 2 and answers[1]["result"]["isError"] is False
    saved = [r for r in Memory(repo).records() if "emoji kept" in r["title"]]
    assert [r["title"] for r in saved] == ["cut \ufffd emoji kept"]
