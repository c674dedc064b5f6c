"""No secret and no <private> text reaches disk through any entry path: the CLI, the Python
API, import, sessions, hand edits of the Markdown views, MCP-style saves and the hooks."""

from __future__ import annotations

import json
import os
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


SOURCE = '''"""Billing service. <private>CANARY-doc-7f3a</private> handles invoices."""

NOTE = "<private>CANARY-str-9b2c</private> and pushed with glpat-Xq3_vR8-kL2mN9_pQ4sT"
KEY = "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"


def charge_invoice(amount):
    """Charge an invoice. <private>CANARY-fn-5e6f</private>"""
    # <private>CANARY-comment-1d4e</private> DO_PAT
    password = "Passw0rd!2024"
    return amount
'''.replace("DO_PAT", "dop_v1_" + "3f9a" * 16)
SOURCE_NEEDLES = [
    "CANARY-doc-7f3a",
    "CANARY-str-9b2c",
    "CANARY-fn-5e6f",
    "CANARY-comment-1d4e",
    "glpat-Xq3_vR8",
    "SG.Xk2LmN0pRtV4",
    "dop_v1_3f9a",
    "Passw0rd!2024",
]


def test_source_files_are_redacted_on_the_way_into_the_index(tmp_path: Path) -> None:
    """Secrets and <private> canaries in a docstring, a string constant and a comment reach
    neither the code map, nor the search index, nor what `pmem context` / `search` print."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    Memory.init(tmp_path)
    (tmp_path / "billing.py").write_text(SOURCE, "utf-8")
    (tmp_path / "NOTES.md").write_text(f"# Billing\n\n{SOURCE}\n", "utf-8")
    runner = CliRunner()
    shown = ""
    for args in (
        ["scan"],
        ["reindex"],
        ["context", "charge invoice billing"],
        ["search", "billing"],
    ):
        out = runner.invoke(cli, ["-C", str(tmp_path), *args])
        assert out.exit_code == 0, out.output
        shown += out.output
    assert "[REDACTED" in shown  # the chunks were served, redacted
    assert [n for n in SOURCE_NEEDLES if n in shown] == []
    assert _leaks(tmp_path / ".planning", SOURCE_NEEDLES) == []
    # line numbers are kept: the function's chunk still names its lines
    assert "charge_invoice" in shown


def test_a_secret_cut_short_in_a_summary_is_redacted(tmp_path: Path) -> None:
    """The code map keeps a docstring's first sentence cut at 200 characters: a token across
    the cut leaves a piece that no shape matches any more; it must not reach the map."""
    token = "ghp_HTOC21skvaqFj0k0mc4PkJWP2QDNRYhY3h0O"
    doc = "Sync the mirror " + "and the cache " * 12 + f"with {token} then stop"
    (tmp_path / "sync.py").write_text(f'"""{doc}."""\n\n\ndef run(token="{token}"):\n    pass\n')
    Memory.init(tmp_path).scan(full=True)
    shards = "".join(p.read_text("utf-8") for p in (tmp_path / ".planning").rglob("*.json"))
    assert "Sync the mirror" in shards  # the purpose was kept, cut
    assert token[:10] not in shards


def _scan(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planning_memory.cli.run", "secrets", "scan", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def test_secrets_scan_refuses_devices_and_fifos(empty_repo: Path) -> None:
    """`secrets scan /dev/zero` used to read forever (24 GB); a FIFO would block."""
    done = _scan("/dev/zero", cwd=empty_repo)
    assert done.returncode == 4
    assert done.stderr.count("\n") == 1 and "not a regular file" in done.stderr
    assert "secrets found" not in done.stdout
    fifo = empty_repo / ".planning" / "pipe.json"
    os.mkfifo(fifo)
    assert "not a regular file" in _scan(str(fifo), cwd=empty_repo).stderr
    folder = _scan(".planning", cwd=empty_repo)  # inside a folder it is skipped, not read
    assert folder.returncode == 0 and "0 secrets found" in folder.stdout


def test_secrets_scan_of_a_missing_path_is_an_error(empty_repo: Path) -> None:
    done = _scan("/nonexistent", cwd=empty_repo)
    assert done.returncode != 0
    assert "secrets found" not in done.stdout
    assert "does not exist" in done.stderr


def test_secrets_scan_finds_the_new_kinds(empty_repo: Path) -> None:
    lines = [
        "pushed with glpat-Xq3_vR8-kL2mN9_pQ4sT",
        "bot TeleBot('5829304710:AAH9xKq2LmN0pRtV4wYz6Ab9CdE1fG3hJ5k')",
        "password=Passw0rd!2024",
    ]
    (empty_repo / "notes.txt").write_text("\n".join(lines) + "\n", "utf-8")
    done = _scan("notes.txt", "--json", cwd=empty_repo)
    assert done.returncode == 1
    found = json.loads(done.stdout)
    assert [h["where"] for h in found] == ["line 1", "line 2", "line 3"]
    assert "Passw0rd" not in done.stdout
