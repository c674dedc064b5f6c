"""Summarisers: the extractive rules, and an external command run as a real process."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core.model import effective_config
from planning_memory.errors import ExternalCommandError
from planning_memory.sessions import summarize
from planning_memory.sessions.summarize import (
    CommandSummarizer,
    EndRequest,
    ExtractiveSummarizer,
    SummaryRequest,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "summarizers"
GOOD = f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / 'good.py'))}"
FAIL = shlex.quote(str(FIXTURES / "fail.sh"))
HANG = shlex.quote(str(FIXTURES / "hang.sh"))


def msg(i: int, role: str, content: str) -> dict[str, Any]:
    return {
        "id": f"msg_{i:04d}",
        "role": role,
        "content": content,
        "at": f"2024-01-20T15:{i:02d}:00Z",
        "tool_results": [],
    }


CONVERSATION = [
    msg(0, "user", "Hola, ¿qué tal?"),
    msg(1, "assistant", "Bien. ¿En qué te ayudo?"),
    msg(2, "user", "The server runs on 192.168.1.12 with Docker Compose. Thanks!"),
    msg(3, "user", "I prefer short answers. Prefiero respuestas en español."),
    msg(4, "assistant", "Ok. We decided to use NextAuth for login. [MEMORIZE: user is María]"),
    msg(5, "user", "cool"),
    msg(6, "user", "Nunca uses jerga técnica en los entregables."),
]


# -- extractive --------------------------------------------------------------------------------
def test_extractive_keeps_facts_preferences_and_decisions() -> None:
    result = ExtractiveSummarizer().summarize(SummaryRequest(CONVERSATION))
    assert result.key_facts == (
        "The server runs on 192.168.1.12 with Docker Compose.",
        "I prefer short answers.",
        "Prefiero respuestas en español.",
        "user is María",
        "We decided to use NextAuth for login.",
        "Nunca uses jerga técnica en los entregables.",
    )
    assert "7 messages from 2024-01-20T15:00:00Z to 2024-01-20T15:06:00Z" in result.summary
    assert "5 from the user" in result.summary
    # small talk is not a fact
    assert not any("qué tal" in f or f == "cool" for f in result.key_facts)


def test_extractive_is_deterministic() -> None:
    a = ExtractiveSummarizer().summarize(SummaryRequest(CONVERSATION, "before", ("x",)))
    b = ExtractiveSummarizer().summarize(SummaryRequest(CONVERSATION, "before", ("x",)))
    assert a == b


def test_extractive_adds_only_new_facts_and_keeps_previous_summary() -> None:
    previous = ("I PREFER  short answers.",)
    result = ExtractiveSummarizer().summarize(
        SummaryRequest(CONVERSATION, "Earlier: setup.", previous)
    )
    assert "I prefer short answers." not in result.key_facts
    assert result.summary.startswith("Earlier: setup.\n7 messages")


def test_extractive_summary_stays_bounded() -> None:
    summarizer = ExtractiveSummarizer()
    text = ""
    for i in range(300):
        text = summarizer.summarize(SummaryRequest([msg(i % 60, "user", "x " * 200)], text)).summary
    assert len(text) <= summarize.MAX_SUMMARY_CHARS
    assert text  # the newest lines are kept


def test_extractive_nothing_to_summarise() -> None:
    result = ExtractiveSummarizer().summarize(SummaryRequest([], "kept", ("f",)))
    assert result == summarize.Summary("kept", ())


def end_request(**extra: Any) -> EndRequest:
    fields: dict[str, Any] = {
        "goal": "Add login",
        "summary": "Set up the project.",
        "key_facts": ["The app uses Next.js 14.", "I prefer tabs."],
        "messages": [
            msg(10, "user", "Next we still need to write the tests."),
            msg(11, "assistant", "Done with the form."),
        ],
        "decisions": [
            {"question": "Which auth library?", "decision": "NextAuth", "reasoning": "fits"}
        ],
        "files_accessed": [
            {"path": "src/login.tsx", "action": "created", "at": "2024-01-20T15:00:00Z"},
            {"path": "src/app.tsx", "action": "read", "at": "2024-01-20T15:01:00Z"},
            {"path": "src/login.tsx", "action": "modified", "at": "2024-01-20T15:02:00Z"},
        ],
        "steps": [{"action": "ran npm test", "result": "3 passed", "at": "2024-01-20T15:03:00Z"}],
        "current_context": {"active_task": "Implement login", "active_phase": None},
    }
    fields.update(extra)
    return EndRequest(**fields)


def test_extractive_end_summary_sections() -> None:
    result = ExtractiveSummarizer().end_summary(end_request())
    assert result.goal == "Add login"
    assert result.instructions == ("I prefer tabs.",)
    assert result.discoveries == ("The app uses Next.js 14.",)
    assert result.accomplished == (
        "Decided: NextAuth (Which auth library?)",
        "ran npm test: 3 passed",
        "Created src/login.tsx",
        "Modified src/login.tsx",
    )
    assert result.next_steps == (
        "Next we still need to write the tests.",
        "Continue: Implement login",
    )
    assert result.relevant_files == ("src/login.tsx", "src/app.tsx")
    assert set(result.as_dict()) == {
        "goal",
        "instructions",
        "discoveries",
        "accomplished",
        "next_steps",
        "relevant_files",
    }


def test_extractive_end_goal_falls_back_to_first_user_sentence() -> None:
    result = ExtractiveSummarizer().end_summary(end_request(goal=None))
    assert result.goal == "Next we still need to write the tests."


def test_memorize_markers_both_languages() -> None:
    text = "ok [MEMORIZE: likes tea] and [MEMORIZAR: prefiere reportes cortos] [memorizar:  x ]"
    assert summarize.memorize_markers(text) == ["likes tea", "prefiere reportes cortos", "x"]
    assert summarize.memorize_markers("[MEMORIZE: ]  [MEMORIZE no colon]") == []
    assert summarize.memorize_markers("[MEMORIZE: [REDACTED]] [MEMORIZE: a [REDACTED:jwt] b]") == [
        "a [REDACTED:jwt] b"
    ]


# -- external command --------------------------------------------------------------------------
def test_command_rolling_summary_from_real_script() -> None:
    messages = [msg(1, "user", "fact: the DB is Postgres 16"), msg(2, "assistant", "noted")]
    result = CommandSummarizer(GOOD, timeout=30).summarize(SummaryRequest(messages))
    assert result.summary == "LLM summary of 2 messages"
    assert result.key_facts == ("the DB is Postgres 16",)


def test_command_end_summary_from_real_script_filters_unsafe_paths() -> None:
    result = CommandSummarizer(GOOD, timeout=30).end_summary(end_request())
    assert result.goal == "LLM: Add login"
    assert result.discoveries == ("saw 2 recent messages",)
    assert result.relevant_files == ("src/login.tsx",)  # ../ and absolute paths dropped


def test_command_that_fails_raises_with_its_stderr() -> None:
    with pytest.raises(ExternalCommandError) as info:
        CommandSummarizer(FAIL, timeout=30).summarize(SummaryRequest(CONVERSATION))
    text = str(info.value)
    assert "exited with status 3" in text
    assert "error: model not available" in text
    assert "left unchanged" in text


def test_command_that_hangs_is_killed_at_the_timeout() -> None:
    began = time.monotonic()
    with pytest.raises(ExternalCommandError, match=r"timed out after 0.5 s"):
        CommandSummarizer(HANG, timeout=0.5).summarize(SummaryRequest(CONVERSATION))
    # the script's `sleep 60` child holds stdout open: only a process-group kill returns fast
    assert time.monotonic() - began < 10


def test_missing_command() -> None:
    with pytest.raises(ExternalCommandError, match="could not start"):
        CommandSummarizer("/nonexistent/llm-cli --flag").summarize(SummaryRequest(CONVERSATION))
    with pytest.raises(ExternalCommandError, match="empty"):
        CommandSummarizer("  ")


def test_command_printing_nothing(tmp_path: Path) -> None:
    script = tmp_path / "silent.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\n")
    script.chmod(0o755)
    with pytest.raises(ExternalCommandError, match="printed nothing"):
        CommandSummarizer(str(script)).summarize(SummaryRequest(CONVERSATION))


def test_prompt_carries_previous_summary_facts_and_messages() -> None:
    prompt = summarize.rolling_prompt(SummaryRequest(CONVERSATION[:2], "old summary", ("f1",)))
    assert "old summary" in prompt
    assert "- f1" in prompt
    assert "[2024-01-20T15:00:00Z] user: Hola, ¿qué tal?" in prompt
    end = summarize.end_prompt(end_request())
    assert "Which auth library? -> NextAuth" in end
    assert "created src/login.tsx" in end
    assert "active_task: Implement login" in end


# -- parsing command output --------------------------------------------------------------------
def test_parse_rolling_forms() -> None:
    assert summarize.parse_rolling('{"summary": "s", "key_facts": ["a", 3, ""]}') == (
        summarize.Summary("s", ("a", "3"))
    )
    assert summarize.parse_rolling('noise\n```json\n{"summary": "t"}\n```\n').summary == "t"
    assert summarize.parse_rolling("just prose { not json").summary == "just prose { not json"


def test_parse_end_markdown() -> None:
    text = """# Session summary
## Goal
Ship the login page.
## Instructions
- keep answers short
## Discoveries
* the API is at /api/v2
**Accomplished**
1. wrote the form
## Next Steps
- add tests
## Relevant Files
- src/login.tsx
- /etc/passwd
"""
    result = summarize.parse_end(text)
    assert result.goal == "Ship the login page."
    assert result.instructions == ("keep answers short",)
    assert result.discoveries == ("the API is at /api/v2",)
    assert result.accomplished == ("wrote the form",)
    assert result.next_steps == ("add tests",)
    assert result.relevant_files == ("src/login.tsx",)


def test_parse_end_garbage_is_an_error() -> None:
    with pytest.raises(ExternalCommandError, match="none of the sections"):
        summarize.parse_end("I could not summarise that, sorry.")


def test_from_config() -> None:
    assert isinstance(summarize.from_config(effective_config({})), ExtractiveSummarizer)
    cfg = effective_config(
        {"memory": {"shortTerm": {"summarizer": {"command": "llm -m x", "timeoutSeconds": 5}}}}
    )
    chosen = summarize.from_config(cfg)
    assert isinstance(chosen, CommandSummarizer)
    assert chosen.argv == ["llm", "-m", "x"]
    assert chosen.timeout == 5
