"""Summarisers: the extractive one (its rules, its caps, and its fact recall over the labelled
conversations of tests/fixtures/summaries), and an external command run as a real process."""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planning_memory.core.model import effective_config
from planning_memory.errors import ExternalCommandError
from planning_memory.memory import Memory
from planning_memory.sessions import summarize
from planning_memory.sessions.summarize import (
    CommandSummarizer,
    EndRequest,
    ExtractiveSummarizer,
    SummaryRequest,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "summarizers"
BENCH = Path(__file__).parents[2] / "bench" / "bench_summary_recall.py"
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
    assert result.summary.startswith(
        "Summary of 7 messages (2024-01-20T15:00:00Z to 2024-01-20T15:06:00Z)."
    )
    # small talk is neither a fact nor a line
    assert not any("qué tal" in f or f == "cool" for f in result.key_facts)
    assert "qué tal" not in result.summary and "cool" not in result.summary


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
    # a summary in another form (an LLM's, an older one) is kept, sentence by sentence
    assert "\n- Earlier: setup." in result.summary


def test_extractive_counts_messages_across_runs() -> None:
    summarizer = ExtractiveSummarizer()
    first = summarizer.summarize(SummaryRequest(CONVERSATION[:4]))
    second = summarizer.summarize(SummaryRequest(CONVERSATION[4:], first.summary))
    assert second.summary.startswith(
        "Summary of 7 messages (2024-01-20T15:00:00Z to 2024-01-20T15:06:00Z)."
    )


def test_extractive_summary_stays_bounded() -> None:
    summarizer = ExtractiveSummarizer()
    text = ""
    for i in range(300):
        text = summarizer.summarize(SummaryRequest([msg(i % 60, "user", "x " * 200)], text)).summary
    assert len(text) <= summarize.MAX_SUMMARY_CHARS
    assert text.startswith("Summary of 300 messages")


def test_dense_batches_stay_within_the_caps() -> None:
    """Every sentence is worth keeping: the text still stops at MAX_SUMMARY_CHARS, a run adds
    at most MAX_FACTS_PER_RUN ranked facts, and no fact passes MAX_FACT_CHARS."""
    summarizer = ExtractiveSummarizer()
    text, facts = "", []
    for run in range(5):
        batch = [
            msg(i % 60, "assistant", f"Set `worker_{run}_{i}` to port {4000 + i} with a timeout "
                f"of {i + 5} seconds in services/w{run}/conf_{i}.yaml because of bug #{run}{i}.")
            for i in range(200)
        ]  # fmt: skip
        result = summarizer.summarize(SummaryRequest(batch, text, tuple(facts)))
        assert len(result.summary) <= summarize.MAX_SUMMARY_CHARS
        assert len(result.key_facts) <= summarize.MAX_FACTS_PER_RUN
        assert all(len(f) <= summarize.MAX_FACT_CHARS for f in result.key_facts)
        text, facts = result.summary, summarize.unique([*facts, *result.key_facts])[-200:]
    assert len(text) > summarize.MAX_SUMMARY_CHARS - 400  # full, not starved
    assert "worker_4_" in "\n".join(facts)  # the last run added facts


def test_extractive_nothing_to_summarise() -> None:
    result = ExtractiveSummarizer().summarize(SummaryRequest([], "kept", ("f",)))
    assert result == summarize.Summary("kept", ())


def conversation(n: int) -> list[dict[str, Any]]:
    """``n`` messages of small talk, the user's and the agent's in turn."""
    return [msg(i, "user" if i % 2 == 0 else "assistant", "ok, thanks!") for i in range(n)]


def kept(result: summarize.Summary) -> str:
    return result.summary + "\n" + "\n".join(result.key_facts)


def test_the_whole_batch_counts_agent_turns_and_late_messages() -> None:
    messages = conversation(60)
    messages[3] = msg(
        3, "assistant", "The webhook handler `handleStripeEvent` times out after 10 s."
    )
    messages[40] = msg(40, "user", "keep failed jobs for 48 hours, not 7 days")
    messages[57] = msg(57, "assistant", "Fixed: ECONNREFUSED 127.0.0.1:6379 came from the tests.")
    result = ExtractiveSummarizer().summarize(SummaryRequest(messages))
    for fact in ("handleStripeEvent", "48 hours", "ECONNREFUSED 127.0.0.1:6379"):
        assert fact in kept(result)
    assert "thanks" not in kept(result)


def test_tool_output_errors_are_candidates() -> None:
    run = msg(20, "assistant", "Running the tests.")
    run["tool_results"] = [
        {"name": "Bash", "output": "collected 12 items\n...\nE   ModuleNotFoundError: No module "
         "named 'yaml'\n1 failed, 11 passed"}
    ]  # fmt: skip
    messages = [*conversation(20), run]
    result = ExtractiveSummarizer().summarize(SummaryRequest(messages))
    assert "ModuleNotFoundError: No module named 'yaml'" in kept(result)


def test_near_repeats_are_kept_once_the_newest() -> None:
    messages = conversation(20)
    messages[4] = msg(4, "assistant", "The API listens on port 8080 behind nginx.")
    messages[14] = msg(14, "assistant", "The API still listens on port 8080 behind nginx.")
    text = kept(ExtractiveSummarizer().summarize(SummaryRequest(messages)))
    assert "The API still listens on port 8080 behind nginx." in text
    assert "The API listens on port 8080 behind nginx." not in text


def test_a_changed_setting_is_not_a_repeat() -> None:
    messages = conversation(20)
    messages[4] = msg(4, "user", "Set the pool size to 10.")
    messages[14] = msg(14, "user", "Set the pool size to 5.")
    text = kept(ExtractiveSummarizer().summarize(SummaryRequest(messages)))
    assert "Set the pool size to 10." in text and "Set the pool size to 5." in text


def test_over_budget_the_newest_lines_stay() -> None:
    messages = [msg(i, "assistant", f"Deployed build {100 + i} to staging.") for i in range(100)]
    lines = ExtractiveSummarizer().summarize(SummaryRequest(messages)).summary.splitlines()[1:]
    builds = [int(line.split()[4]) for line in lines]
    assert 10 < len(builds) < 100  # the budget binds (20 characters a message)
    assert builds == list(range(200 - len(builds), 200))


def test_a_previous_summary_in_another_form_is_ranked_not_lost() -> None:
    llm = "The team deploys orders-api with Argo CD. Postgres 16 runs on RDS."
    result = ExtractiveSummarizer().summarize(SummaryRequest(conversation(10), llm))
    assert "- The team deploys orders-api with Argo CD." in result.summary
    assert "- Postgres 16 runs on RDS." in result.summary


def test_the_opening_request_heads_a_summary_without_goal() -> None:
    messages = conversation(30)
    messages[0] = msg(0, "user", "hey")
    messages[2] = msg(2, "user", "The notifications-svc pods keep restarting in prod.")
    summarizer = ExtractiveSummarizer()
    first = summarizer.summarize(SummaryRequest(messages[:1]))  # nothing said yet
    assert "Opening request" not in first.summary
    second = summarizer.summarize(SummaryRequest(messages[1:], first.summary))
    opening = "Opening request: The notifications-svc pods keep restarting in prod."
    assert second.summary.splitlines()[1] == opening
    with_goal = summarizer.summarize(SummaryRequest(messages, goal="Fix the restarts"))
    assert "Opening request" not in with_goal.summary
    end = summarizer.end_summary(EndRequest(None, second.summary, (), messages[-3:]))
    assert end.goal == "The notifications-svc pods keep restarting in prod."


def test_score_prefers_specific_sentences_over_chatter() -> None:
    dense = "I'll set `statement_timeout` to 5000 ms because queries hung the API."
    chatter = "Let me have a look at that for you now."
    assert summarize.score(dense, "assistant") > summarize.FACT_SCORE
    assert summarize.score(chatter, "assistant") < summarize.LINE_SCORE
    assert summarize.score("gracias!!", "user") < 0


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
    assert result.discoveries == ("The app uses Next.js 14.", "Set up the project.")
    assert result.accomplished == (
        "Decided: NextAuth (Which auth library?)",
        "ran npm test: 3 passed",
        "Created src/login.tsx",
        "Modified src/login.tsx",
        "Done with the form.",
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


def test_the_goal_is_the_first_task_never_a_rule_or_a_go_on() -> None:
    messages = [
        msg(0, "user", "Always use pnpm."),
        msg(1, "assistant", "Entendido, usaré pnpm para todo."),
        msg(2, "user", "Vale, sigue con el paso 2"),
        msg(3, "user", "Build the signup form with email validation"),
        msg(4, "assistant", "Understood: I will add the form to src/signup.tsx first."),
        msg(5, "assistant", "The old EMAIL_RE in src/signup.tsx rejected 1 in 40 addresses."),
    ]
    result = ExtractiveSummarizer().end_summary(EndRequest(None, "", (), messages))
    assert result.goal == "Build the signup form with email validation"
    assert result.discoveries == ("The old EMAIL_RE in src/signup.tsx rejected 1 in 40 addresses.",)
    assert result.next_steps == ()  # "usaré pnpm para todo" is no to-do
    only_rules = [msg(0, "user", "Always use pnpm."), msg(1, "user", "ok continue")]
    assert ExtractiveSummarizer().end_summary(EndRequest(None, "", (), only_rules)).goal == ""


def test_end_summary_lists_named_repository_files_after_accessed_ones() -> None:
    said = msg(12, "assistant", "Moved the check to src/auth/guard.ts (see /etc/hosts, ../x.py).")
    result = ExtractiveSummarizer().end_summary(end_request(messages=[said]))
    assert result.relevant_files == ("src/login.tsx", "src/app.tsx", "src/auth/guard.ts")


def test_end_summary_sections_stay_capped() -> None:
    facts = [f"Port {5000 + i} serves tenant_{i} from eu-{i}." for i in range(300)]
    wishes = [msg(i, "user", f"Always run job_{i} before 0{i % 9}:00.") for i in range(60)]
    result = ExtractiveSummarizer().end_summary(end_request(key_facts=facts, messages=wishes))
    for section in ("instructions", "discoveries", "accomplished", "next_steps"):
        assert len(getattr(result, section)) <= summarize.MAX_END_ITEMS


def test_memorize_markers_both_languages() -> None:
    text = "ok [MEMORIZE: likes tea] and [MEMORIZAR: prefiere reportes cortos] [memorizar:  x ]"
    assert summarize.memorize_markers(text) == ["likes tea", "prefiere reportes cortos", "x"]
    assert summarize.memorize_markers("[MEMORIZE: ]  [MEMORIZE no colon]") == []
    assert summarize.memorize_markers("[MEMORIZE: [REDACTED]] [MEMORIZE: a [REDACTED:jwt] b]") == [
        "a [REDACTED:jwt] b"
    ]


# -- fact recall over the labelled conversations (tests/fixtures/summaries) ---------------------
@pytest.fixture(scope="module")
def bench() -> Any:
    """``bench/bench_summary_recall.py``: the labelled set, the scorer, the old summariser."""
    spec = importlib.util.spec_from_file_location("bench_summary_recall", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_labelled_set(bench: Any) -> None:
    cases = bench.load_cases()
    assert len(cases) >= 10
    assert {c.language for c in cases} == {"en", "es"}
    for case in cases:
        assert 20 <= len(case.messages) <= 80, case.id
        assert {m["role"] for m in case.messages} == {"user", "assistant"}, case.id
        text = bench.conversation_text(case)
        assert [f for f in case.facts if not bench.found(f, text)] == [], case.id


@pytest.mark.parametrize(("mode", "least"), [("rolling", 0.8), ("end", 0.8), ("one-by-one", 0.75)])
def test_fact_recall_over_the_labelled_set(bench: Any, mode: str, least: float) -> None:
    scores = bench.score(ExtractiveSummarizer(), bench.load_cases(), mode)
    report = f"extractive / {mode}\n{bench.report(scores)}"
    print(report)  # per conversation, with the facts missed (pytest -s shows it)
    assert bench.overall(scores) >= least, report
    assert min(s.recall for s in scores) >= 0.6, report


def test_facts_outlast_a_hundred_filler_messages(bench: Any) -> None:
    """Facts (decisions, errors, files, numbers, names) planted among 100 near-identical
    filler messages ("ok, run the tests again please (24)", "vale, sigue") all survive the
    rolling summary and the end summary, and no filler line does."""
    for label, got, total, junk in bench.filler_scores(ExtractiveSummarizer()):
        assert (got, junk) == (total, 0), label
    assert sum(got for _, got, _, _ in bench.filler_scores(bench.Baseline())) < 3 * 21


def test_recall_is_not_bought_with_size(bench: Any) -> None:
    """The summary and key facts stay well short of the conversation, and beat sentences
    drawn at random to the same size by a wide margin (the old summariser did not)."""
    cases = bench.load_cases()
    summarizer = ExtractiveSummarizer()
    assert bench.kept_share(summarizer, cases) < 0.6
    recall = bench.overall(bench.score(summarizer, cases, "rolling"))
    assert recall > bench.random_recall(summarizer, cases, seeds=2) + 0.15
    assert recall > bench.overall(bench.score(bench.Baseline(), cases, "rolling")) + 0.5


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


def test_summaries_run_where_the_messages_arrive_without_a_daemon(
    empty_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``pmem watch``: the message that passes the window starts the summary in the
    background; the caller does not wait for it, and older messages are summarised."""
    monkeypatch.setenv("PMEM_BACKGROUND", "1")
    config_path = empty_repo / ".planning/memory-config.json"
    config = json.loads(config_path.read_text("utf-8"))
    config["memory"]["shortTerm"]["contextWindow"] = 4
    config_path.write_text(json.dumps(config), "utf-8")
    mem = Memory(empty_repo)
    sid = mem.sessions.current_id()
    spawned = []
    for n in range(6):
        done = mem.log(f"we decided to use port {8000 + n} for service {n}", session_id=sid)
        spawned.append(done.newly_queued)
    assert spawned == [False, False, False, False, True, False]  # one start, not one per message
    deadline = time.monotonic() + 60
    while not Memory(empty_repo).sessions.get(sid)["rolling_summary"]["summary"]:
        assert time.monotonic() < deadline, "no summary was written in the background"
        time.sleep(0.1)
    summary = Memory(empty_repo).sessions.get(sid)["rolling_summary"]
    assert "8000" in summary["summary"] + " ".join(summary["key_facts"])
