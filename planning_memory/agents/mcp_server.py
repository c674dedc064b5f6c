"""The MCP server (``pmem mcp``, stdio): the SDK's server around the memory tools.

Seed 003's memory tools plus session and entity look-ups (``mcp_tools``); only the modules
named ``mcp*`` import ``mcp``.

Tools: ``memory_save``, ``memory_search``, ``memory_stats``, ``memory_get``, ``memory_context``,
``memory_timeline``, ``memory_pin``, ``memory_forget``, ``session_start``, ``session_log``,
``session_end``, ``entity_file``, ``entity_function``, ``entity_area``.

Each call opens the memory of the project the server runs in (``pmem -C DIR mcp``, else the
working directory at that call; subfolders and linked worktrees find the same memory, else
the first of the client's workspace ``roots`` that holds one: for clients that start servers
in ``/`` or the home folder), so a ``pmem init`` made after the server started is picked up.
Results are compact JSON (or the context text itself). Every user error -- a
``PlanningMemoryError``, an argument that fails the input schema, an unknown argument -- comes
back as a tool error (``isError``) with one line; the server keeps running.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO, cast
from urllib.parse import urlparse
from urllib.request import url2pathname

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolResult,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    ToolAnnotations,
)
from pydantic import ValidationError

from planning_memory import __version__
from planning_memory.agents import claude_code
from planning_memory.agents.mcp_tools import MemoryTools
from planning_memory.memory import Memory

SERVER_NAME = "planning-memory"
ROOTS_TIMEOUT = 5  # seconds the client has to answer roots/list
ROOTS_REQUEST = "roots"  # the key of the roots request in an InputRequiredResult

INSTRUCTIONS = """\
Project memory kept in this repository (.planning/), shared with the team through git.
Protocol: before a task call memory_context; look things up with memory_search, then
memory_get for the full record. Save what the next session should know with memory_save:
decisions, bugfixes, discoveries, conventions (pattern), mistakes to avoid (mistake),
configuration and preferences. Use a topic_key to update one evolving memory instead of
adding near-duplicates. Never save secrets; text inside <private>...</private> is redacted."""


def validation_line(exc: ValidationError) -> str:
    """A pydantic validation error as one line: ``limit: Input should be ...; query: ...``."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "invalid arguments: " + "; ".join(parts)


# -- the server ------------------------------------------------------------------------------------
async def client_roots(context: Any) -> list[str] | InputRequiredResult | None:
    """The ``file:`` URIs of the client's workspace roots; None when the client offers no
    roots (or does not answer within ``ROOTS_TIMEOUT`` seconds). On a connection that cannot
    carry a request from the server (the 2026-07-28 protocol), the first round answers an
    ``InputRequiredResult`` asking for them and the client's retry carries them."""
    try:
        session = context.request_context.session
        capabilities = session.client_capabilities
        responses = context.input_responses
    except (AttributeError, LookupError, ValueError):
        return None
    answer = (responses or {}).get(ROOTS_REQUEST)
    if isinstance(answer, ListRootsResult):
        return [str(root.uri) for root in answer.roots]
    if capabilities is None or capabilities.roots is None or responses:
        return None
    if not session.can_send_request:
        return InputRequiredResult(input_requests={ROOTS_REQUEST: ListRootsRequest()})
    try:
        with warnings.catch_warnings(), anyio.fail_after(ROOTS_TIMEOUT):
            warnings.simplefilter("ignore")  # roots are deprecated in the newest protocol
            listed = await session.list_roots()
    except Exception:  # an error answer, a timeout, a closed connection: no roots
        return None
    return [str(root.uri) for root in listed.roots]


def root_folder(uri: str) -> Path | None:
    """The folder a ``file:`` URI names (None for any other scheme)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(url2pathname(parsed.path))


def project_in(roots: Sequence[str]) -> Path | None:
    """The project of the first root that has (or is inside one that has) ``.planning/``."""
    for uri in roots:
        folder = root_folder(uri)
        found = Memory.locate(folder) if folder is not None and folder.is_dir() else None
        if found is not None and (found / ".planning").is_dir():
            return found
    return None


class Server(MCPServer[Any]):
    """``MCPServer`` whose argument errors are one line and whose unknown arguments are errors,
    and which finds the project in the client's roots when its working directory has none."""

    memory_tools: MemoryTools | None = None

    first: bytes = b""  # a line already read from stdin (``mcp_start``): read first
    answered: int | str | None = None  # the id of an ``initialize`` already answered

    async def run_stdio_async(self) -> None:
        """Serve over stdio, each incoming line cleaned (``clean_line``) before the SDK
        reads it; undecodable bytes become U+FFFD. The wire is the process's stdout; while
        serving, file descriptor 1 is stderr, so no stray print reaches the client."""
        text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        first = self.first.decode("utf-8", "replace")
        stdin = anyio.wrap_file(cast(TextIO, _CleanLines(text, first)))  # readline only
        sys.stdout.flush()
        wire = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
        os.dup2(2, 1)
        stdout = anyio.wrap_file(cast(TextIO, _Unanswered(wire, self.answered)))
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            low = self._lowlevel_server
            await low.run(read_stream, write_stream, low.create_initialization_options())

    async def find_project(self, context: Any) -> InputRequiredResult | None:
        """Look for the project in the client's roots when the working directory is in none
        (and no ``-C`` was given); an ``InputRequiredResult`` asks the client for them."""
        tools = self.memory_tools
        if tools is None or tools.root is not None:
            return None
        here = Memory.locate()
        if here is not None and (here / ".planning").is_dir():
            tools.from_roots, tools.looked = None, None
            return None
        roots = await client_roots(context)
        if isinstance(roots, InputRequiredResult):
            return roots
        tools.from_roots = project_in(roots) if roots else None
        if roots is None:
            tools.looked = "the client offers no workspace roots to look in"
        else:
            tools.looked = f"nor in the client's roots ({', '.join(roots) or 'none'})"
        return None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        asking = await self.find_project(context)
        if asking is not None:
            return asking
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            known = set(tool.parameters.get("properties", {}))
            unknown = sorted(set(arguments) - known)
            if unknown:
                raise ToolError(
                    f"{name}: unknown argument {', '.join(unknown)}; "
                    f"expected {', '.join(sorted(known))}"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a bug: the SDK logs it and answers "Error executing tool <name>"
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"{name}: {validation_line(exc.__cause__)}") from exc.__cause__
            text = str(exc).removeprefix(f"Error executing tool {name}: ")
            raise ToolError(f"{name}: {text}") from exc.__cause__


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
WRITERS = (
    "memory_save",
    "memory_pin",
    "session_start",
    "session_log",
    "session_error",
    "session_end",
)
ANNOTATIONS = {"memory_forget": DELETES, **dict.fromkeys(WRITERS, WRITES)}


def build_server(root: Path | None = None, tools: Sequence[Callable[..., str]] = ()) -> Server:
    """The server with every tool (or ``tools``); nothing runs until ``run``."""
    server = Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    if not tools:
        server.memory_tools = MemoryTools(root)
        tools = server.memory_tools.all()
    for tool in tools:
        server.add_tool(
            tool,
            description=inspect.cleandoc(tool.__doc__ or ""),
            annotations=ANNOTATIONS.get(tool.__name__, READ_ONLY),
            structured_output=False,
        )
    return server


class _CleanLines:
    """The client's stdin, line by line (``first`` before the rest), each JSON-RPC message
    with its lone surrogates (a cut emoji's ``\\ud83d``) replaced by U+FFFD: the SDK's parser
    refuses them, and the request would never be answered."""

    def __init__(self, inner: TextIO, first: str = "") -> None:
        self.inner, self.first = inner, first

    def readline(self, *args: Any) -> str:
        line, self.first = self.first or self.inner.readline(*args), ""
        return clean_line(line)

    def __iter__(self) -> _CleanLines:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def clean_line(line: str) -> str:
    """A JSON-RPC line as the SDK can read it (unchanged unless it has a lone surrogate)."""
    if "\\u" not in line:
        return line
    try:
        value = json.loads(line)
    except ValueError:
        return line  # the SDK answers a parse error
    clean = claude_code.without_lone_surrogates(value)
    return line if clean == value else json.dumps(clean, ensure_ascii=False) + "\n"


class _Unanswered:
    """The wire, without the SDK's answer to the request ``answered`` (``mcp_start`` gave
    it already); everything else as written."""

    def __init__(self, wire: TextIO, answered: int | str | None) -> None:
        self.wire, self.answered = wire, answered

    def write(self, text: str) -> int:
        if self.answered is not None and _answers(text, self.answered):
            self.answered = None  # once
            return len(text)
        return self.wire.write(text)

    def flush(self) -> None:
        self.wire.flush()


def _answers(line: str, ident: int | str) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("id") == ident and "method" not in message


def handshake_versions() -> tuple[str, ...]:
    """The protocol versions the SDK negotiates by ``initialize``."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    return tuple(HANDSHAKE_PROTOCOL_VERSIONS)


def run(root: Path | None = None, first: bytes = b"", answered: int | str | None = None) -> None:
    """Serve over stdio until the client closes the connection; ``first``, a line already
    read from stdin, is read first, and the SDK's answer to ``answered`` is dropped."""
    server = build_server(root)
    server.first, server.answered = first, answered
    server.run("stdio")
