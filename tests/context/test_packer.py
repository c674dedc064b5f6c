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
            extra = {"severity": rec["severity"]} if rec["type"] == "mistake" else {}
            put(
                layout,
                store,
                rec["type"],
                f"{prefix}_{n}",
                description=" ".join(rec["words"]),
                pinned=rec["pinned"],
                **extra,
            )
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
