"""The context packer: budget, priorities, reasons, formats, agent prompt."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning_memory.context import packer as context
from planning_memory.context.packer import FORMATS, Item, Task, build_context, pack
from planning_memory.core.layout import Layout
from planning_memory.core.model import new_long_term
from planning_memory.errors import InputError
from planning_memory.search import upkeep as indexer
from planning_memory.search.chunks import estimate_tokens
from planning_memory.search.database import Index
from planning_memory.store import Store

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
WORDS = [
    "auth",
    "login",
    "token",
    "session",
    "cache",
    "retry",
    "fetch",
    "error",
    "database",
    "schema",
    "migration",
    "test",
]


def put(layout: Layout, store: Store, rtype: str, rid: str, **fields: Any) -> None:
    title = fields.pop("title", rid)
    store.write_json(
        layout.record_path(rtype, rid), new_long_term(rtype, rid, NOW, title=title, **fields)
    )


def make_session(layout: Layout, store: Store, sid: str, n: int, **extra: Any) -> None:
    value: dict[str, Any] = {
        "id": sid,
        "channel": extra.pop("channel", "cli"),
        "status": "active",
        "goal": "add login",
        "started_at": "2026-01-10T09:00:00Z",
        "updated_at": "2026-01-10T11:00:00Z",
        "ended_at": None,
        "messages": [
            {
                "id": f"msg_{sid[4:]}{i}",
                "role": "user" if i % 2 else "assistant",
                "content": f"message {i} about the login form",
                "at": f"2026-01-10T10:{i % 60:02d}:00Z",
                "tool_results": [],
            }
            for i in range(n)
        ],
        "decisions": [
            {
                "id": f"dec_{sid[4:]}1",
                "question": "Which auth library?",
                "decision": "NextAuth",
                "reasoning": "fits Next.js",
                "alternatives": ["Clerk"],
                "decided_at": "2026-01-10T10:05:00Z",
            }
        ],
        "files_accessed": [],
        "steps": [],
        "current_context": {
            "active_task": "implement login",
            "active_phase": "implementation",
            "focus_area": "authentication",
        },
        "rolling_summary": {
            "summary": "The user builds a Next.js app.",
            "key_facts": ["uses prisma"],
            "last_summarized_msg_id": None,
            "message_count": 0,
        },
        "end_summary": None,
        "checkpoint": None,
    }
    value.update(extra)
    store.write_json(layout.session_path(sid), value)


@pytest.fixture
def mem(tmp_path: Path) -> tuple[Layout, Store]:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    put(
        layout,
        store,
        "pattern",
        "pat_err",
        title="Error handling",
        name="Error handling",
        description="Always wrap fetch in try/catch with typed errors",
        tags=["typescript"],
    )
    put(
        layout,
        store,
        "pattern",
        "pat_pin",
        title="Repository layer",
        name="Repository layer",
        description="Data access goes through repositories",
        pinned=True,
    )
    put(
        layout,
        store,
        "mistake",
        "mis_any",
        title="any",
        description="Using any in TypeScript",
        correction="use unknown",
        severity="critical",
    )
    put(
        layout,
        store,
        "mistake",
        "mis_fetch",
        title="fetch timeout",
        description="fetch without a timeout hangs login",
        correction="pass an AbortSignal timeout",
        severity="high",
    )
    put(
        layout,
        store,
        "mistake",
        "mis_css",
        title="css",
        description="inline styles everywhere",
        correction="use modules",
        severity="high",
    )
    for i in range(40):
        put(
            layout,
            store,
            "learning",
            f"lrn_{i:03d}",
            title=f"note {i} about {WORDS[i % len(WORDS)]}",
            learned=" ".join([WORDS[i % len(WORDS)], *(f"filler{i}x{k}" for k in range(30))]),
        )
    make_session(layout, store, "ses_1", 30)
    return layout, store


def test_sections_reasons_and_priorities(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    pack_ = build_context(layout, store, "fix the login fetch error", now=NOW, budget=3000)
    by_id = {i.id: i for i in pack_.items}
    assert by_id["pat_pin"].reason.startswith("pinned")
    assert by_id["mis_any"].reason == "critical mistake"
    assert by_id["mis_fetch"].reason == "high-severity mistake matching the task"
    assert "pat_err" in by_id and by_id["pat_err"].reason.startswith("matches")
    assert all(i.reason for i in pack_.items)
    text = pack_.text
    for title in (
        "## Patterns to follow",
        "## Mistakes to avoid",
        "## Session context",
        "## Temporal context",
    ):
        assert title in text
    assert text.index("## Patterns") < text.index("## Mistakes") < text.index("## Session")
    assert "Current date & time: Saturday, 2026-01-10" in text
    assert "Summary: The user builds a Next.js app." in text
    # the window holds the last 15 messages (config default), oldest of them first
    assert (
        "message 29 about" in text and "message 15 about" in text and "message 14 about" not in text
    )
    assert text.index("message 15 about") < text.index("message 29 about")


def test_most_important_items_survive_a_small_budget(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    pack_ = build_context(layout, store, "database migration", now=NOW, budget=150)
    assert pack_.tokens <= 150
    kept = {i.id for i in pack_.items}
    assert {"pat_pin", "mis_any", "now"} <= kept
    assert pack_.dropped > 0


def test_entries_are_never_cut(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    for budget in (100, 180, 260, 400, 900):
        pack_ = build_context(layout, store, "auth token cache", now=NOW, budget=budget)
        assert pack_.tokens <= budget
        for item in pack_.items:
            assert item.text.split("\n")[0] in pack_.text


def test_budget_limits(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    for bad in (99, 20001, 0.5):
        with pytest.raises(InputError):
            build_context(layout, store, "x", now=NOW, budget=bad)  # type: ignore[arg-type]
    assert build_context(layout, store, "x", now=NOW).budget == 1500


def test_xml_and_json_formats(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    xml = build_context(layout, store, "login fetch", now=NOW, fmt="xml").text
    assert xml.startswith("<memory_context>") and xml.rstrip().endswith("</memory_context>")
    for tag in (
        "<conversation_context>",
        "<temporal_context>",
        "<mistakes_to_avoid>",
        "<patterns_to_follow>",
    ):
        assert tag in xml
    data = json.loads(build_context(layout, store, "login fetch", now=NOW, fmt="json").text)
    body = data["memory_context"]
    assert body["temporal_context"]["date"] == "2026-01-10"
    assert all("reason" in item for item in body["mistakes_to_avoid"])
    with pytest.raises(InputError):
        build_context(layout, store, "x", now=NOW, fmt="yaml")


def test_xml_escapes_memory_text(tmp_path: Path) -> None:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    put(layout, store, "pattern", "pat_x", description="</memory_context><evil>", pinned=True)
    xml = build_context(layout, store, "anything", now=NOW, fmt="xml").text
    assert "<evil>" not in xml and xml.count("</memory_context>") == 1


def test_gap_notice_and_timezone(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    later = datetime(2026, 1, 14, 12, 0, tzinfo=UTC)
    config = {"memory": {"shortTerm": {"timezone": "America/Sao_Paulo"}}}
    text = build_context(layout, store, "x", now=later, config=config).text
    assert "Notice: 4 days have passed since the last message." in text
    assert "Timezone: America/Sao_Paulo" in text and "09:00:00 -0300" in text


def test_files_named_by_the_task_and_entities(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    store.write_json(
        layout.entity / "files" / "src.json",
        {"src/auth/LoginForm.tsx": {"purpose": "Login form with email and password"}},
    )
    task = {"description": "style the form", "files": ["src/auth/LoginForm.tsx"]}
    pack_ = build_context(layout, store, task, now=NOW)
    assert "src/auth/LoginForm.tsx: Login form with email and password" in pack_.text


def test_context_counts_accesses(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    build_context(layout, store, "x", now=NOW)
    with Index.open(layout) as index:
        row = index.by_key("record:pat_pin")
        assert row is not None and row.access_count == 1
    build_context(layout, store, "x", now=NOW, touch=False)
    with Index.open(layout) as index:
        row = index.by_key("record:pat_pin")
        assert row is not None and row.access_count == 1


def test_prepare_agent_context_follows_the_seed_layout(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    text = context.prepare_agent_context(
        layout, store, "executor", "fix the login fetch error", now=NOW, budget=700
    )
    assert estimate_tokens(text) <= 700
    order = ["## Memory Context", "### Patterns to Follow", "### Mistakes to Avoid", "## Task"]
    positions = [text.index(h) for h in order]
    assert positions == sorted(positions)
    assert "- ⚠️ Using any in TypeScript → use unknown" in text
    assert text.endswith("## Task\nfix the login fetch error\n")


def test_agent_channel_picks_its_session(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    make_session(layout, store, "ses_2", 3, channel="agent:reviewer", goal="review")
    chosen = context.current_session(layout, store, agent="reviewer")
    assert chosen is not None and chosen["id"] == "ses_2"


def test_full_context_has_the_seed_keys(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    full = context.full_context(
        layout, store, {"description": "login fetch", "context": ["typescript"]}, now=NOW
    )
    assert set(full) >= {
        "patterns",
        "mistakes",
        "entities",
        "related_content",
        "session_context",
        "temporal_context",
    }
    assert any(p["id"] == "pat_err" for p in full["patterns"])


# -- properties -------------------------------------------------------------------------------
item_strategy = st.builds(
    Item,
    section=st.sampled_from(["patterns", "mistakes", "files", "related", "session", "temporal"]),
    id=st.from_regex(r"(pat|mis|msg)_[A-Z0-9]{1,8}", fullmatch=True),
    text=st.text(min_size=0, max_size=2000),
    reason=st.text(min_size=1, max_size=40),
    tier=st.integers(0, 5),
    order=st.floats(0, 100),
)


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(item_strategy, max_size=40),
    budget=st.integers(100, 20000),
    fmt=st.sampled_from(FORMATS),
)
def test_pack_never_exceeds_the_budget(items: list[Item], budget: int, fmt: str) -> None:
    result = pack(items, budget, fmt, Task("t"))
    assert result.tokens == estimate_tokens(result.text) <= budget
    assert len(result.items) + result.dropped == len(items)


record_strategy = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["pattern", "mistake", "learning", "decision"]),
        "pinned": st.booleans(),
        "severity": st.sampled_from(["low", "medium", "high", "critical"]),
        "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=400),
    }
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(record_strategy, max_size=25),
    messages=st.integers(0, 40),
    budget=st.integers(100, 20000),
    fmt=st.sampled_from(FORMATS),
    task=st.lists(st.sampled_from(WORDS), max_size=5),
)
def test_context_never_exceeds_the_budget(
    records: list[dict[str, Any]], messages: int, budget: int, fmt: str, task: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout.for_repo(Path(tmp))
        store = Store(layout)
        for n, rec in enumerate(records):
            prefix = {"pattern": "pat", "mistake": "mis"}.get(rec["type"], "lrn")
            extra: dict[str, Any] = {}
            if rec["type"] == "mistake":
                extra["severity"] = rec["severity"]
            text = " ".join(rec["words"])
            if rec["type"] in ("pattern", "mistake"):
                extra["description"] = text
            else:  # a learning has no description: its text is its body
                extra["body"] = {"what": text, "why": "", "where": "", "learned": ""}
            put(layout, store, rec["type"], f"{prefix}_{n}", pinned=rec["pinned"], **extra)
        if messages:
            make_session(layout, store, "ses_p", messages)
        result = build_context(layout, store, " ".join(task), now=NOW, budget=budget, fmt=fmt)
        assert estimate_tokens(result.text) <= budget
        pinned = [
            f"{'pat' if r['type'] == 'pattern' else 'mis' if r['type'] == 'mistake' else 'lrn'}_{n}"
            for n, r in enumerate(records)
            if r["pinned"]
        ]
        kept = {i.id for i in result.items}
        if budget >= 20000 and sum(len(r["words"]) for r in records) < 2000:
            assert set(pinned) <= kept


def test_index_reused_when_given(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    with Index.open(layout) as index:
        indexer.rebuild(index, layout, store)
        pack_ = build_context(layout, store, "login", now=NOW, index=index)
        assert pack_.items


def test_context_over_the_example_tree(example_repo: Path) -> None:
    layout = Layout.for_repo(example_repo)
    store = Store(layout)
    task = {"description": "add a forgot password flow with an email reset link"}
    when = datetime(2024, 1, 22, tzinfo=UTC)
    pack_ = build_context(layout, store, task, now=when, budget=1500)
    assert pack_.tokens <= 1500
    text = pack_.text
    assert "ForgotPassword" in text and "sendPasswordReset" in text
    assert "Notice: 1 day has passed since the last message." in text
    small = build_context(layout, store, task, now=when, budget=200)
    kept = {i.reason for i in small.items}
    assert "pinned: always included" in kept and small.tokens <= 200


# -- what a person taught, the last session, preferences, review flags ------------------------
TAUGHT = ["learned-from-conversation"]


def test_taught_rules_are_in_every_block_above_search_hits(mem: tuple[Layout, Store]) -> None:
    """A rule learned from a trigger phrase is in the block whatever the task, from the first
    time (not once established), before what search infers; a small budget keeps it."""
    layout, store = mem
    put(
        layout,
        store,
        "pattern",
        "pat_pnpm",
        title="Use pnpm, never npm",
        description="Always use pnpm, never npm",
        tags=TAUGHT,
        source="session:ses_1",
    )
    put(
        layout,
        store,
        "mistake",
        "mis_env",
        title="Never commit .env files",
        description="never commit .env files",
        tags=TAUGHT,
        source="session:ses_1",
    )
    for task in ("fix the login fetch error", "database migration", ""):
        pack_ = build_context(layout, store, task, now=NOW, budget=3000)
        by_id = {i.id: i for i in pack_.items}
        for rid in ("pat_pnpm", "mis_env"):
            assert by_id[rid].reason == "taught: always included"
            assert by_id[rid].tier == 1
        text = pack_.text
        assert text.index("Always use pnpm") < text.index("## Mistakes to avoid")
        matches = [i for i in pack_.items if i.reason.startswith("matches")]
        assert all(pack_.items.index(by_id["pat_pnpm"]) < pack_.items.index(m) for m in matches)
    small = build_context(layout, store, "database migration", now=NOW, budget=200)
    assert {"pat_pnpm", "mis_env"} <= {i.id for i in small.items} and small.tokens <= 200


def test_high_severity_mistakes_rank_above_search_hits(mem: tuple[Layout, Store]) -> None:
    layout, store = mem
    pack_ = build_context(layout, store, "database migration schema", now=NOW, budget=3000)
    by_id = {i.id: i for i in pack_.items}
    assert by_id["mis_css"].reason == "high-severity mistake" and by_id["mis_css"].tier == 2
    first_hit = next(n for n, i in enumerate(pack_.items) if i.reason.startswith("matches"))
    assert pack_.items.index(by_id["mis_css"]) < first_hit


def ended_session(layout: Layout, store: Store, sid: str, ended_at: str, **summary: Any) -> None:
    make_session(layout, store, sid, 2, status="ended", ended_at=ended_at, updated_at=ended_at)
    value = store.read_json(layout.session_path(sid))
    value["end_summary"] = {
        "goal": "Retry failed payment webhooks",
        "instructions": [],
        "discoveries": [],
        "accomplished": ["Added exponential backoff"],
        "next_steps": ["Add a test for the retry limit", "Log the event id on failure"],
        "relevant_files": ["src/payments/webhook.py"],
    } | summary
    store.write_json(layout.session_path(sid), value)


def test_the_last_session_with_open_next_steps_and_a_stale_notice(tmp_path: Path) -> None:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    ended_session(layout, store, "ses_old", "2025-12-20T10:00:00Z", goal="An older session")
    ended_session(layout, store, "ses_last", "2026-01-01T10:00:00Z")
    make_session(layout, store, "ses_now", 0)  # just started: nothing said yet
    pack_ = build_context(layout, store, "", now=NOW, session_id="ses_now")
    text = pack_.text
    assert text.index("## Last session") < text.index("## Temporal context")
    assert "Notice: the last session ended 9 days ago (2026-01-01T10:00:00Z)" in text
    assert "Goal: Retry failed payment webhooks" in text and "An older session" not in text
    assert "- Next step: Add a test for the retry limit" in text
    assert "- Next step: Log the event id on failure" in text
    assert "Accomplished: Added exponential backoff" in text
    reasons = {i.id: (i.reason, i.tier) for i in pack_.items}
    assert reasons["ses_last"] == ("last session", 1)
    assert reasons["last:ses_last:0"] == ("open next step of the last session", 2)
    as_json = json.loads(build_context(layout, store, "", now=NOW, fmt="json").text)
    assert as_json["memory_context"]["last_session"][0]["days_ago"] == 9
    same_day = datetime(2026, 1, 1, 18, 0, tzinfo=UTC)
    today = build_context(layout, store, "", now=same_day, session_id="ses_now").text
    assert "The last session ended at 2026-01-01T10:00:00Z." in today and "Notice" not in today


def test_an_ended_session_with_nothing_to_say_does_not_hide_the_last_real_one(
    tmp_path: Path,
) -> None:
    """An empty `/clear` ends a session with no summary: the block still shows the last
    session that had one, with its next steps."""
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    ended_session(layout, store, "ses_real", "2025-12-30T10:00:00Z")
    make_session(
        layout, store, "ses_clear", 0, status="ended", ended_at="2026-01-01T10:00:00Z",
        updated_at="2026-01-01T10:00:00Z",
    )  # fmt: skip
    make_session(layout, store, "ses_now", 0)
    text = build_context(layout, store, "", now=NOW, session_id="ses_now").text
    assert "- Next step: Add a test for the retry limit" in text
    assert "2025-12-30T10:00:00Z" in text


def test_preferences_json_is_a_compact_section(tmp_path: Path) -> None:
    """Seed 002's profile sections (imported from memoria/) and the usual ones."""
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    store.write_json(
        layout.preferences,
        {
            "user": {"nombre": "Ana", "rol": "backend"},
            "user_preferences": {"idioma_codigo": "inglés", "tests": True},
            "business": {"producto": "pagos"},
            "code_style": {"quotes": "single", "semicolons": False},
            "preferences": {"respuestas": "cortas"},
            "updated_at": "2026-01-01T00:00:00Z",
        },
    )
    pack_ = build_context(layout, store, "anything at all", now=NOW, budget=400)
    text = pack_.text
    assert "## Preferences" in text
    for line in (
        "- user preferences: idioma_codigo: inglés; tests: yes (why: preferences.json)",
        "- code style: quotes: single; semicolons: no",
        "- business: producto: pagos",
        "- user: nombre: Ana; rol: backend",
    ):
        assert line in text
    assert text.index("user preferences:") < text.index("code style:")
    reasons = {i.reason for i in pack_.items if i.section == "preferences"}
    assert reasons == {"preferences.json"}
    agent = context.prepare_agent_context(layout, store, "coder", "anything", now=NOW)
    assert "### Preferences" in agent


def test_anchored_records_whose_code_changed_are_flagged(tmp_path: Path) -> None:
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    put(
        layout,
        store,
        "mistake",
        "mis_cmp",
        title="Compare passwords with ===",
        description="Compared the password hash with ===",
        correction="use bcrypt.compare",
        severity="high",
        needs_review=True,
        anchors=[{"path": "src/auth.ts", "symbol": "login", "hash": "0ea4"}],
    )
    put(
        layout,
        store,
        "pattern",
        "pat_ok",
        title="Hash passwords",
        description="hash passwords",
        pinned=True,
    )
    for fmt in FORMATS:
        text = build_context(layout, store, "compare password hash", now=NOW, fmt=fmt).text
        assert text.count("code changed since: review") == 1, fmt
    md = build_context(layout, store, "compare password hash", now=NOW).text
    assert "use bcrypt.compare (code changed since: review) [mis_cmp]" in md


def _webhook_learning(layout: Layout, store: Store) -> None:
    """The memory the task "stripe webhook retries" matches."""
    put(
        layout,
        store,
        "learning",
        "lrn_hook",
        title="Webhook retries use exponential backoff",
        learned="stripe webhook retries back off exponentially, at most five attempts",
    )


def test_standing_items_leave_room_for_what_the_task_matches(tmp_path: Path) -> None:
    """Taught rules, preferences and unmatched high-severity mistakes take at most a third of
    the budget up front; past it they wait for the task's best matches."""
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    for n in range(12):
        put(
            layout,
            store,
            "pattern",
            f"pat_t{n:02d}",
            title=f"Rule {n}",
            description=f"Always follow house rule number {n} about naming things",
            tags=TAUGHT,
        )
    store.write_json(layout.preferences, {"code_style": {"quotes": "single", "indent": 2}})
    _webhook_learning(layout, store)
    pack_ = build_context(layout, store, "stripe webhook retries", now=NOW, budget=400)
    kept = [i.id for i in pack_.items]
    assert "lrn_hook" in kept and "pat_t00" in kept and pack_.tokens <= 400
    deferred = [i for i in pack_.items if i.standing and i.tier == 3]
    assert deferred and all(kept.index(i.id) > kept.index("lrn_hook") for i in deferred)
    roomy = build_context(layout, store, "stripe webhook retries", now=NOW, budget=3000)
    assert all(i.tier < 3 for i in roomy.items if i.standing)


def test_critical_mistakes_that_do_not_match_leave_room_for_what_does(tmp_path: Path) -> None:
    """Critical mistakes are shown whatever the task, but those the task does not match are
    standing: many of them do not push a small block's matching memory out."""
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    for n in range(10):
        put(
            layout,
            store,
            "mistake",
            f"mis_c{n:02d}",
            title=f"Outage {n}",
            description=f"Dropped table number {n} in production during a deploy window",
            correction="run migrations through the reviewed pipeline only",
            severity="critical",
        )
    _webhook_learning(layout, store)
    pack_ = build_context(layout, store, "stripe webhook retries", now=NOW, budget=600)
    kept = [i.id for i in pack_.items]
    assert "lrn_hook" in kept and "mis_c00" in kept and pack_.tokens <= 600
    severe = [i for i in pack_.items if i.id.startswith("mis_")]
    assert all(i.reason == "critical mistake" and i.standing for i in severe)
    matched = build_context(layout, store, "dropped table during the deploy", now=NOW, budget=600)
    assert not next(i for i in matched.items if i.id.startswith("mis_")).standing


def test_a_shared_word_does_not_make_a_mistake_match_the_task(tmp_path: Path) -> None:
    """A high-severity mistake matches the task when it is among the task's best records, not
    when it shares one common word with it; a fresh session's newest memories are standing."""
    layout = Layout.for_repo(tmp_path)
    store = Store(layout)
    for n in range(12):
        put(
            layout,
            store,
            "mistake",
            f"mis_h{n:02d}",
            title=f"Commands slip {n}",
            description=f"commands number {n} once printed the wrong exit code on failure",
            correction="check exit codes in the release checklist",
            severity="high",
        )
    put(
        layout,
        store,
        "pattern",
        "pat_groups",
        title="Group commands by feature",
        description="organise commands into groups by feature, one module per group",
    )
    pack_ = build_context(
        layout, store, "organise commands into groups by feature", now=NOW, budget=600
    )
    kept = {i.id: i for i in pack_.items}
    assert "pat_groups" in kept and pack_.tokens <= 600
    matching = [i for i in pack_.items if i.reason.endswith("matching the task")]
    assert len(matching) <= context.TOP_MATCHES


def _repo_with_code(root: Path, records: int) -> Any:
    from planning_memory.memory import Memory

    mem = Memory.init(root)
    mem.save("Webhook handlers are idempotent", "pattern", description="dedupe webhook events")
    for n in range(records - 1):
        mem.save(f"Note {n} on caching", "learning", learned=f"cache entries expire ({n})")
    (root / "src").mkdir()
    for n in range(12):  # code that shares every word of the task, and is long
        line = "    webhook_event_{} = handle(webhook, event)  # dedupe\n"
        body = "".join(line.format(i) for i in range(30))
        (root / "src" / f"webhooks{n}.py").write_text(f"def dedupe_webhook_{n}(event):\n{body}")
    mem.reindex()
    return mem


def test_memory_comes_before_code_and_a_small_memory_is_shown_whole(tmp_path: Path) -> None:
    mem = _repo_with_code(tmp_path / "small", 4)
    pack_ = mem.context("dedupe webhook events", budget=600)
    kinds = [item.section for item in pack_.items if item.section in ("patterns", "files")]
    assert kinds[0] == "patterns"  # the matching pattern before any code
    records = {r["id"] for r in mem.records()}
    assert records <= {item.id for item in pack_.items}  # the notes the task does not match too
    big = _repo_with_code(tmp_path / "big", context.WHOLE_MEMORY + 2)
    shown = {item.id for item in big.context("dedupe webhook events", budget=600).items}
    assert not {r["id"] for r in big.records()} <= shown  # more than that: relevance decides
