"""No secret and no <private> text reaches disk through any entry path: the CLI, the Python
API, import, sessions, hand edits of the Markdown views, MCP-style saves and the hooks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planning_memory.cli import cli
from planning_memory.memory import Memory

FIXTURES = Path(__file__).parent / "fixtures" / "secrets"
CANARY = "CANARY-51d0-private-never-on-disk"


def _samples() -> list[tuple[str, str]]:
    found = []
    for line in (FIXTURES / "secrets.txt").read_text("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        _kind, secret, sentence = line.split("\t")
        found.append((secret, json.loads(sentence) if sentence.startswith('"') else sentence))
    return found


SAMPLES = _samples()


def _leaks(root: Path, needles: list[str]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            data = path.read_bytes().decode("utf-8", "replace")
            found += [f"{path.relative_to(root)}: {n[:12]}..." for n in needles if n in data]
    return found


def test_corpus_is_large_enough() -> None:
    assert len(SAMPLES) >= 50


def test_every_entry_path_redacts(empty_repo: Path) -> None:
    mem = Memory(empty_repo)
    runner = CliRunner()
    private = f"the deploy password is <private>{CANARY}</private> ok"
    needles = [secret for secret, _ in SAMPLES] + [CANARY]
    for i, (_secret, sentence) in enumerate(SAMPLES):
        path = i % 6
        if path == 0:  # CLI save
            out = runner.invoke(
                cli,
                ["-C", str(empty_repo), "save", f"Note {i}", "--what", sentence, "-t", "discovery"],
            )
            assert out.exit_code == 0, out.output
        elif path == 1:  # API
            mem.learn_pattern(f"Pattern {i}", sentence, example=sentence)
        elif path == 2:
            mem.learn_from_mistake(f"Mistake {i}: {sentence}", correction=sentence)
        elif path == 3:  # sessions: messages, decisions, steps
            mem.log(sentence, role="user")
            mem.record_decision(f"Q{i}", sentence, reasoning=sentence)
            mem.sessions.add_step(None, sentence, sentence)
        elif path == 4:  # learning triggers
            mem.learn_utterance(f"always use {sentence}")
        else:  # Markdown hand edit (of a current render, as a person would)
            mem.refresh_views()
            md = mem.layout.patterns_md
            md.write_text(md.read_text("utf-8") + f"\n## Hand {i}\n\n{sentence}\n", "utf-8")
            assert not mem.sync().conflicts
    mem.save(private, "discovery", body={"what": private, "why": "", "where": "", "learned": ""})
    mem.log(private, role="assistant")
    mem.log(f"[MEMORIZE: {private}]", role="assistant")
    mem.render()
    assert len(mem.records()) > len(SAMPLES) // 2  # the samples really were stored
    assert _leaks(empty_repo, needles) == []


def test_import_redacts(empty_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    doc = {
        "longTerm": {
            "patterns": [
                {
                    "id": f"pat_{i:03d}",
                    "name": f"P{i}",
                    "description": sentence,
                    "example": sentence,
                }
                for i, (_secret, sentence) in enumerate(SAMPLES)
            ]
            + [{"id": "pat_999", "name": "canary", "description": f"<private>{CANARY}</private>"}]
        }
    }
    source = tmp_path_factory.mktemp("outside") / "memory.json"
    source.write_text(json.dumps(doc), "utf-8")
    out = CliRunner().invoke(cli, ["-C", str(empty_repo), "import", str(source)])
    assert out.exit_code == 0, out.output
    assert _leaks(empty_repo, [s for s, _ in SAMPLES] + [CANARY]) == []


@pytest.mark.parametrize("event", ["UserPromptSubmit"])
def test_hook_prompt_is_redacted(empty_repo: Path, event: str) -> None:
    secret, sentence = SAMPLES[0]
    payload = {
        "session_id": "abc",
        "hook_event_name": event,
        "cwd": str(empty_repo),
        "prompt": f"{sentence} and <private>{CANARY}</private>",
    }
    done = subprocess.run(
        [sys.executable, "-m", "planning_memory.cli.run", "hook", "claude-code", event],
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        cwd=empty_repo,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert _leaks(empty_repo, [secret, CANARY]) == []
    sessions = list((empty_repo / ".planning" / "memory" / "short-term").glob("session-*.json"))
    assert sessions, "the hook logged the prompt"
