"""A session's "Saved in this chat" (seed 003's web tab): which records, in which order, and
the type and text filters."""

from __future__ import annotations

from typing import Any

from planning_memory.viewer.saved import saved_in

SID = "ses_01HMKP5GC0QR5G41H5MY08Y01C"


def _record(rid: str, updated: str, **fields: Any) -> dict[str, Any]:
    base = {
        "id": rid,
        "type": "learning",
        "title": f"title {rid}",
        "body": {"what": "", "why": "", "where": "", "learned": ""},
        "source": f"session:{SID}",
        "updated_at": updated,
        "deleted_at": None,
        "pinned": False,
        "topic_key": None,
    }
    return {**base, **fields}


RECORDS = [
    _record("lrn_old", "2026-03-01T10:00:00Z"),
    _record("lrn_new", "2026-03-03T10:00:00Z", body={"what": "Uses BCRYPT cost 12"}),
    _record("lrn_pinned", "2026-02-01T10:00:00Z", pinned=True),
    _record("mis_one", "2026-03-02T10:00:00Z", type="mistake", topic_key="auth/hashing"),
    _record("lrn_gone", "2026-03-04T10:00:00Z", deleted_at="2026-03-05T10:00:00Z"),
    _record("lrn_other", "2026-03-04T10:00:00Z", source="session:ses_01HOTHER"),
    _record("lrn_cli", "2026-03-04T10:00:00Z", source="cli"),
]


def test_seed003_saved_in_this_chat_lists_the_sessions_live_records_pinned_first() -> None:
    found = [r["id"] for r in saved_in(RECORDS, SID)]
    assert found == ["lrn_pinned", "lrn_new", "mis_one", "lrn_old"]


def test_seed003_saved_in_this_chat_filters_by_type_and_text_in_any_case() -> None:
    assert [r["id"] for r in saved_in(RECORDS, SID, record_type="mistake")] == ["mis_one"]
    assert [r["id"] for r in saved_in(RECORDS, SID, text="bcrypt")] == ["lrn_new"]  # content
    assert [r["id"] for r in saved_in(RECORDS, SID, text="AUTH/HASH")] == ["mis_one"]  # topic
    assert [r["id"] for r in saved_in(RECORDS, SID, text="e lrn_o")] == ["lrn_old"]  # title
    assert saved_in(RECORDS, SID, text="bcrypt", record_type="mistake") == []
    assert [r["id"] for r in saved_in(RECORDS, SID, text="i")] == [
        "lrn_pinned",
        "lrn_new",
        "mis_one",
        "lrn_old",
    ]  # one character is enough
