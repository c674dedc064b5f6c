"""Secrets fuzz: every planted secret kind through every write path into ``.planning/``, none of
it on disk.

The samples are the two corpora of ``tests/fixtures/secrets`` (synthetic, correctly shaped,
random) and ``<private>`` canaries. Each write path gets a fresh repository and every sample:
records through ``pmem save`` and the learning API, trigger phrases, session messages (with
``[MEMORIZE: ...]``), decisions and steps, the MCP tools called in process, the Claude Code
hooks as real processes (a prompt, a transcript read by ``Stop``), a hand edit of a rendered
view imported back, the ``.orig`` copy kept when a hand edit loses to ``--prefer json``,
preferences, an import, and source files (docstrings, string constants, comments) mapped by
``pmem scan`` and indexed by ``pmem reindex`` and served by ``pmem context``. Then every file
under ``.planning/`` is read as bytes (the SQLite index and its WAL included) and searched for
every secret. The figures are printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from planning_memory.cli import cli
from planning_memory.memory import Memory

FIXTURES = Path(__file__).parent / "fixtures" / "secrets"
BIN = Path(sys.executable).parent
CLAUDE_ID = "0d9b1c2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
CANARIES = [
    (
        "private_canary",
        f"CANARY-{i:02d}-never-on-disk",
        f"note <private>CANARY-{i:02d}-never-on-disk</private> ok",
    )
    for i in range(3)
]


def _samples() -> list[tuple[str, str, str]]:
    found = []
    for name in ("kinds.txt", "secrets.txt"):
        for line in (FIXTURES / name).read_text("utf-8").splitlines():
            if line and not line.startswith("#"):
                kind, secret, sentence = line.split("\t")
                found.append(
                    (kind, secret, json.loads(sentence) if sentence[0] == '"' else sentence)
                )
    return found + CANARIES


SAMPLES = _samples()
KINDS = sorted({kind for kind, _, _ in SAMPLES})


def _root(mem: Memory) -> Path:
    return mem.layout.planning.parent


def _on_disk(repo: Path) -> list[str]:
    """``kind: file`` for each sample whose secret is somewhere under ``.planning/``."""
    blobs = [(p, p.read_bytes()) for p in (repo / ".planning").rglob("*") if p.is_file()]
    return [
        f"{kind}: {path.relative_to(repo)}"
        for kind, secret, _ in SAMPLES
        for path, data in blobs
        if secret.encode() in data
    ]


def _run(repo: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [str(BIN / "pmem"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=repo,
        env=dict(os.environ),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# -- the write paths ----------------------------------------------------------------------------
def cli_save(mem: Memory) -> None:
    runner = CliRunner()
    for i, (_kind, _secret, sentence) in enumerate(SAMPLES):
        args = ["-C", str(_root(mem)), "save", f"Note {i}", "--what", sentence, "-t", "discovery"]
        out = runner.invoke(cli, args)
        assert out.exit_code == 0, out.output


def learn_api(mem: Memory) -> None:
    for i, (_kind, _secret, sentence) in enumerate(SAMPLES):
        mem.learn_pattern(f"Pattern {i}", sentence, example=sentence)
        mem.learn_from_mistake(f"Mistake {i}: {sentence}", correction=sentence)


def trigger_phrases(mem: Memory) -> None:
    for _kind, _secret, sentence in SAMPLES:
        mem.learn_utterance(f"always use {sentence}")


def session_messages(mem: Memory) -> None:
    for _kind, _secret, sentence in SAMPLES:
        mem.log(sentence, role="user")
        mem.log(f"[MEMORIZE: {sentence}]", role="assistant")


def decisions_and_steps(mem: Memory) -> None:
    for i, (_kind, _secret, sentence) in enumerate(SAMPLES):
        mem.record_decision(f"Q{i}", sentence, reasoning=sentence)
        mem.sessions.add_step(None, sentence, sentence)


def mcp_tools(mem: Memory) -> None:
    from planning_memory.agents.mcp_tools import MemoryTools

    tools = MemoryTools(_root(mem))
    tools.session_start(goal=SAMPLES[0][2])
    for i, (_kind, _secret, sentence) in enumerate(SAMPLES):
        tools.memory_save(title=f"MCP {i}", what=sentence, why=sentence, learned=sentence)
        tools.session_log(content=sentence, role="assistant")
    tools.session_end()


def hooks(mem: Memory) -> None:
    transcript = _root(mem) / "transcript.jsonl"
    lines = []
    for i, (_kind, _secret, sentence) in enumerate(SAMPLES):
        role = "user" if i % 2 else "assistant"
        content = sentence if role == "user" else [{"type": "text", "text": sentence}]
        lines.append(
            {
                "type": role,
                "message": {"role": role, "content": content},
                "uuid": str(uuid.UUID(int=i + 1)),
                "parentUuid": str(uuid.UUID(int=i)) if i else None,
                "timestamp": f"2026-01-20T10:{i // 60:02d}:{i % 60:02d}.000Z",
                "sessionId": CLAUDE_ID,
                "cwd": str(_root(mem)),
            }
        )
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    base = {"session_id": CLAUDE_ID, "transcript_path": str(transcript), "cwd": str(_root(mem))}
    for start in range(0, len(SAMPLES), 40):
        prompt = "\n".join(s for _, _, s in SAMPLES[start : start + 40])
        payload = {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        _run(_root(mem), "hook", "claude-code", "user-prompt-submit", stdin=json.dumps(payload))
    _run(
        _root(mem),
        "hook",
        "claude-code",
        "stop",
        stdin=json.dumps({**base, "hook_event_name": "Stop"}),
    )


def view_hand_edit(mem: Memory) -> None:
    mem.learn_pattern("Seed pattern", "so the view has a body")
    mem.refresh_views()
    md = mem.layout.patterns_md
    added = "".join(f"\n## Hand {i}\n\n{s}\n" for i, (_, _, s) in enumerate(SAMPLES))
    md.write_text(md.read_text("utf-8") + added, "utf-8")
    assert not mem.sync().conflicts


def orig_copy(mem: Memory) -> None:
    mem.learn_pattern("Seed pattern", "so the view has a body")
    mem.render()
    md = mem.layout.patterns_md
    added = "".join(f"\n{s}\n" for _, _, s in SAMPLES)
    md.write_text(md.read_text("utf-8") + added, "utf-8")
    mem.learn_pattern("Another pattern", "changes the JSON side too")
    mem.sync(prefer="json")
    assert list(mem.layout.planning.rglob("*.orig")), "the hand edit was kept as .orig"


def preferences(mem: Memory) -> None:
    for i, (_kind, _secret, sentence) in enumerate(SAMPLES):
        mem.set_preferences({f"code_style.note_{i}": sentence})


def import_document(mem: Memory) -> None:
    doc = {
        "longTerm": {
            "patterns": [
                {"id": f"pat_{i:03d}", "name": f"P{i}", "description": s, "example": s}
                for i, (_, _, s) in enumerate(SAMPLES)
            ]
        }
    }
    source = _root(mem).parent / f"{_root(mem).name}-import.json"
    source.write_text(json.dumps(doc), "utf-8")
    out = CliRunner().invoke(cli, ["-C", str(_root(mem)), "import", str(source)])
    assert out.exit_code == 0, out.output


def source_code(mem: Memory) -> None:
    """Secrets in docstrings, string constants and comments of source files: the code map,
    the search index and what ``pmem context`` / ``pmem search`` print."""
    src = _root(mem) / "src"
    src.mkdir()
    for i, (_kind, _secret, sentence) in enumerate(SAMPLES):
        quoted = json.dumps(sentence)
        (src / f"mod{i}.py").write_text(
            f'"""Module {i}: {sentence}"""\n\nVALUE = {quoted}\n# {sentence}\n\n\n'
            f'def handler_{i}():\n    """Handle {i}. {sentence}"""\n    return VALUE\n',
            "utf-8",
        )
        (src / f"notes{i}.md").write_text(f"# Notes {i}\n\n{sentence}\n", "utf-8")
    mem.scan(full=True)
    mem.reindex(code=True)
    shown = _run(_root(mem), "context", "handler module notes value") + "".join(
        _run(_root(mem), "search", f"handler_{i}") for i in range(0, len(SAMPLES), 7)
    )
    leaked = [kind for kind, secret, _ in SAMPLES if secret in shown]
    assert leaked == [], f"printed raw: {leaked}"
    assert "REDACTED" in shown


PATHS: dict[str, Callable[[Memory], None]] = {
    "save (CLI)": cli_save,
    "learn (API)": learn_api,
    "trigger phrases": trigger_phrases,
    "session messages": session_messages,
    "decisions, steps": decisions_and_steps,
    "MCP tools": mcp_tools,
    "hooks (prompt, transcript)": hooks,
    "view hand edit": view_hand_edit,
    ".orig copy": orig_copy,
    "preferences": preferences,
    "import": import_document,
    "source: code map, index, context": source_code,
}


# The kinds that used to reach disk raw on every path.
ADDED_KINDS = (
    "new_relic_user_key", "sentry_dsn", "braintree", "okta_ssws", "notion_integration",
    "supabase", "netrc",
)  # fmt: skip


def test_corpus_covers_enough_kinds() -> None:
    assert len(KINDS) >= 79 + len(ADDED_KINDS), KINDS
    assert set(ADDED_KINDS) <= set(KINDS)
    print(f"\nsecrets fuzz: {len(SAMPLES)} samples of {len(KINDS)} kinds x {len(PATHS)} paths")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PATHS))
def test_no_planted_secret_reaches_disk(name: str, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    mem = Memory.init(tmp_path)
    PATHS[name](Memory(tmp_path))
    blobs = [p.read_bytes() for p in (tmp_path / ".planning").rglob("*") if p.is_file()]
    markers = sum(data.count(b"[REDACTED") for data in blobs)
    leaks = _on_disk(tmp_path)
    print(
        f"\n  {name:<34} {len(SAMPLES)} planted, {len(blobs)} files,"
        f" {markers} redaction markers, {len(leaks)} on disk"
    )
    assert markers >= len(SAMPLES) // 2, "the samples were stored (redacted)"
    assert mem.layout.planning.is_dir()
    assert leaks == [], "\n".join(leaks)
