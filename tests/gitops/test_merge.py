"""The record-level three-way merge rules (pure), conflict markers and their parsing."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.core.model import new_long_term
from planning_memory.errors import DecodeError
from planning_memory.gitops import merge as gitmerge
from planning_memory.gitops.merge import (
    conflict_text,
    kind_of,
    merge_copies,
    merge_json,
    split_conflicts,
)

NOW = datetime(2024, 1, 20, 15, 0, tzinfo=UTC)
T1, T2, T3 = "2024-01-21T10:00:00Z", "2024-01-22T10:00:00Z", "2024-01-23T10:00:00Z"


def pattern(**fields: Any) -> dict[str, Any]:
    return new_long_term("pattern", "pat_01HV0000000000000000000001", NOW, title="P", **fields)


def mistake(**fields: Any) -> dict[str, Any]:
    return new_long_term("mistake", "mis_01HV0000000000000000000001", NOW, title="M", **fields)


def edit(record: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**copy.deepcopy(record), **fields}


# -- counters ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "field"),
    [
        (pattern, "usage_count"),
        (mistake, "occurrences"),
        (pattern, "revision_count"),
        (pattern, "duplicate_count"),
        (lambda **f: new_long_term("learning", "lrn_01", NOW, title="L", **f), "applications"),
    ],
)
def test_counters_add_both_sides_increments(make: Any, field: str) -> None:
    base = make(**{field: 2})
    ours = edit(base, **{field: 3, "updated_at": T1})
    theirs = edit(base, **{field: 5, "updated_at": T2})
    result = merge_json(base, ours, theirs)
    assert result.clean
    assert result.value[field] == 2 + 1 + 3
    assert result.value["updated_at"] == T2


def test_equal_increments_on_both_sides_still_add_up() -> None:
    base = pattern(usage_count=1)
    result = merge_json(base, edit(base, usage_count=2), edit(base, usage_count=2, example="x"))
    assert result.value["usage_count"] == 3


def test_a_counter_that_went_down_while_the_other_side_changed_it_is_a_conflict() -> None:
    base = pattern(usage_count=4)
    result = merge_json(base, edit(base, usage_count=1), edit(base, usage_count=5))
    assert result.conflicts == ["$.usage_count"]
    one_sided = merge_json(base, edit(base, usage_count=1), edit(base, example="x"))
    assert one_sided.clean and one_sided.value["usage_count"] == 1


def test_established_is_derived_from_the_merged_uses() -> None:
    base = pattern(usage_count=3)
    result = merge_json(base, edit(base, usage_count=4), edit(base, usage_count=4, example="e"))
    assert result.value["usage_count"] == 5
    assert result.value["established"] is True


def test_established_on_either_side_stays() -> None:
    base = pattern(usage_count=1)
    result = merge_json(
        base, edit(base, established=True, example="a"), edit(base, tags=["x"], example="a")
    )
    assert result.value["established"] is True


# -- sets, timestamps, severity ----------------------------------------------------------------
def test_tags_merge_as_a_set_keeping_removals() -> None:
    base = pattern(tags=["a", "b", "c"])
    result = merge_json(base, edit(base, tags=["a", "b", "c", "x"]), edit(base, tags=["b", "y"]))
    assert result.clean
    assert result.value["tags"] == ["b", "x", "y"]


def test_timestamps_latest_and_earliest() -> None:
    base = mistake()
    ours = edit(base, last_occurrence=T3, updated_at=T1, created_at="2024-01-01T00:00:00Z")
    theirs = edit(base, last_occurrence=T2, updated_at=T2, created_at="2024-01-05T00:00:00Z")
    result = merge_json(base, ours, theirs)
    assert result.clean
    assert result.value["last_occurrence"] == T3
    assert result.value["updated_at"] == T2
    assert result.value["created_at"] == "2024-01-01T00:00:00Z"


def test_severity_takes_the_higher() -> None:
    base = mistake(severity="medium")
    result = merge_json(base, edit(base, severity="low"), edit(base, severity="critical"))
    assert result.clean and result.value["severity"] == "critical"


def test_a_merge_reaching_the_third_occurrence_escalates() -> None:
    base = mistake(occurrences=1, severity="medium")
    ours = edit(base, occurrences=2, updated_at=T1)
    theirs = edit(base, occurrences=2, updated_at=T2)
    result = merge_json(base, ours, theirs)
    assert result.value["occurrences"] == 3
    assert result.value["severity"] == "high"


def test_no_double_escalation_when_a_side_already_escalated() -> None:
    base = mistake(occurrences=2, severity="medium")
    ours = edit(base, occurrences=3, severity="high", updated_at=T1)
    theirs = edit(base, occurrences=3, severity="high", updated_at=T2)
    result = merge_json(base, ours, theirs)
    assert result.value["occurrences"] == 4
    assert result.value["severity"] == "high"


# -- deletion ----------------------------------------------------------------------------------
def test_a_deletion_wins_over_an_edit_made_before_it() -> None:
    base = pattern()
    deleted = edit(base, deleted_at=T2, updated_at=T2)
    edited = edit(base, description="new", updated_at=T1)
    for ours, theirs in ((deleted, edited), (edited, deleted)):
        result = merge_json(base, ours, theirs)
        assert result.clean
        assert result.value["deleted_at"] == T2
        assert result.value["description"] == "new"


def test_an_edit_after_the_deletion_keeps_the_record_live() -> None:
    base = pattern()
    deleted = edit(base, deleted_at=T1, updated_at=T1)
    edited = edit(base, description="still used", updated_at=T2)
    for ours, theirs in ((deleted, edited), (edited, deleted)):
        assert merge_json(base, ours, theirs).value["deleted_at"] is None


def test_a_touch_without_content_change_does_not_undo_a_deletion() -> None:
    base = pattern()
    deleted = edit(base, deleted_at=T1, updated_at=T1)
    touched = edit(base, updated_at=T2)
    assert merge_json(base, deleted, touched).value["deleted_at"] == T1


def test_both_deleted_keeps_the_earliest_and_a_restore_of_an_old_deletion_wins() -> None:
    base = pattern()
    result = merge_json(
        base, edit(base, deleted_at=T2, updated_at=T2), edit(base, deleted_at=T1, updated_at=T1)
    )
    assert result.value["deleted_at"] == T1
    gone = edit(base, deleted_at=T1, updated_at=T1)
    restored = edit(gone, deleted_at=None, updated_at=T2)
    assert merge_json(gone, restored, edit(gone, tags=["x"])).value["deleted_at"] is None


# -- conflicts ---------------------------------------------------------------------------------
def test_one_field_changed_differently_is_a_conflict_with_markers() -> None:
    base = pattern(description="old", usage_count=1)
    ours = edit(base, description="ours says", usage_count=2)
    theirs = edit(base, description="theirs says", usage_count=2)
    result = merge_json(base, ours, theirs)
    assert result.conflicts == ["$.description"]
    assert result.value["description"] == "ours says"
    assert result.other["description"] == "theirs says"
    assert result.value["usage_count"] == result.other["usage_count"] == 3
    text = conflict_text(result)
    assert '<<<<<<< ours\n  "description": "ours says",\n=======\n' in text
    assert '  "description": "theirs says",\n>>>>>>> theirs\n' in text
    assert text.count("<<<<<<<") == 1
    sides = split_conflicts(text)
    assert json.loads(sides.ours) == result.value
    assert json.loads(sides.theirs) == result.other
    assert sides.base is None


def test_removed_on_one_side_and_changed_on_the_other_conflicts() -> None:
    base = {"code_style": {"quotes": "single", "semi": False}}
    ours = {"code_style": {"semi": False}}
    theirs = {"code_style": {"quotes": "double", "semi": False}}
    result = merge_json(base, ours, theirs, kind="preferences")
    assert result.conflicts == ["$.code_style.quotes"]
    assert "quotes" not in result.value["code_style"]


def test_record_added_on_both_sides_with_different_content_conflicts() -> None:
    ours = pattern(description="one")
    theirs = pattern(description="two")
    result = merge_json(None, ours, theirs)
    assert result.conflicts == ["$.description"]
    assert merge_json(None, ours, copy.deepcopy(ours)).value == ours


def test_anchors_merge_by_path_and_symbol() -> None:
    anchor = {"path": "src/a.py", "symbol": "f", "hash": "h0"}
    base = pattern(anchors=[anchor])
    ours = edit(base, anchors=[anchor, {"path": "src/b.py", "symbol": None, "hash": "hb"}])
    theirs = edit(base, anchors=[{**anchor, "hash": "h1"}])
    result = merge_json(base, ours, theirs)
    assert result.clean
    assert [(a["path"], a["hash"]) for a in result.value["anchors"]] == [
        ("src/a.py", "h1"),
        ("src/b.py", "hb"),
    ]
    clash = merge_json(base, edit(base, anchors=[{**anchor, "hash": "h2"}]), theirs)
    assert clash.conflicts == ["$.anchors[src/a.py#f].hash"]


# -- other files -------------------------------------------------------------------------------
def session(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "ses_1",
        "started_at": "2024-01-20T15:00:00Z",
        "updated_at": "2024-01-20T15:00:00Z",
        "messages": [{"id": "msg_1", "role": "user", "content": "hi", "at": T1}],
        "decisions": [],
        "files_accessed": [{"path": "a.py", "action": "read", "at": T1}],
        "steps": [],
    }
    return {**base, **fields}


def test_sessions_merge_messages_by_id_in_time_order() -> None:
    base = session()
    m2 = {"id": "msg_2", "role": "assistant", "content": "ours", "at": T3}
    m3 = {"id": "msg_3", "role": "user", "content": "theirs", "at": T2}
    fa = {"path": "b.py", "action": "modified", "at": T2}
    ours = session(messages=[*base["messages"], m2], updated_at=T3)
    theirs = session(
        messages=[*base["messages"], m3],
        files_accessed=[*base["files_accessed"], fa],
        steps=[{"action": "test", "result": "ok", "at": T2}],
        updated_at=T2,
    )
    result = merge_json(base, ours, theirs, kind="session")
    assert result.clean
    assert [m["id"] for m in result.value["messages"]] == ["msg_1", "msg_3", "msg_2"]
    assert [f["path"] for f in result.value["files_accessed"]] == ["a.py", "b.py"]
    assert result.value["steps"] == theirs["steps"]
    assert result.value["updated_at"] == T3
    edited = merge_json(
        base,
        session(messages=[{**base["messages"][0], "content": "A"}]),
        session(messages=[{**base["messages"][0], "content": "B"}]),
    )
    assert edited.conflicts == ["$.messages[msg_1].content"]


def test_preferences_merge_key_by_key_and_arrays_as_sets() -> None:
    base = {"testing": {"framework": "vitest"}, "architecture": {"avoid": ["a"]}}
    ours = {
        "testing": {"framework": "vitest", "coverage": 80},
        "architecture": {"avoid": ["a", "b"]},
        "updated_at": T1,
    }
    theirs = {
        "testing": {"framework": "vitest", "style": "bdd"},
        "architecture": {"avoid": ["c"]},
        "updated_at": T2,
    }
    result = merge_json(base, ours, theirs, kind=kind_of(".planning/x/preferences.json"))
    assert result.clean
    assert result.value == {
        "testing": {"framework": "vitest", "coverage": 80, "style": "bdd"},
        "architecture": {"avoid": ["b", "c"]},
        "updated_at": T2,
    }


def test_entity_shards_union_by_key_and_conflict_on_a_shared_key() -> None:
    base = {"files": {"a.py": {"hash": "1"}}}
    ours = {"files": {"a.py": {"hash": "1"}, "b.py": {"hash": "2"}}}
    theirs = {"files": {"a.py": {"hash": "1"}, "c/d.py": {"hash": "3"}}}
    result = merge_json(base, ours, theirs, kind="entity")
    assert result.clean and set(result.value["files"]) == {"a.py", "b.py", "c/d.py"}
    clash = merge_json(base, {"files": {"a.py": {"hash": "x"}}}, {"files": {"a.py": {"hash": "y"}}})
    assert clash.conflicts == ['$.files["a.py"].hash']


def test_kind_of_paths() -> None:
    assert kind_of(".planning/memory/long-term/preferences.json") == "preferences"
    assert kind_of(".planning/memory/short-term/session-ses_1.json") == "session"
    assert kind_of(".planning/memory/entity/files/src.json") == "entity"
    assert kind_of(".planning/memory-config.json") == "config"
    assert kind_of(".planning/memory/long-term/patterns/pat_1.json") == "record"
    assert kind_of(None) == "record"


# -- markers -----------------------------------------------------------------------------------
def test_split_conflicts_reads_diff3_hunks() -> None:
    text = 'x\n<<<<<<< HEAD\n  "a": 2,\n||||||| base\n  "a": 1,\n=======\n  "a": 3,\n>>>>>>> b\ny\n'
    sides = split_conflicts(text)
    assert sides.base == 'x\n  "a": 1,\ny\n'
    assert sides.ours == 'x\n  "a": 2,\ny\n'
    assert sides.theirs == 'x\n  "a": 3,\ny\n'
    assert gitmerge.has_markers(text)
    assert not gitmerge.has_markers('{"a": "<<<<<<< not at line start"}')


@pytest.mark.parametrize(
    "text",
    ["<<<<<<< a\nx\n", "=======\n", "<<<<<<< a\n<<<<<<< b\n", "<<<<<<< a\n=======\n=======\n"],
)
def test_split_conflicts_refuses_unbalanced_markers(text: str) -> None:
    with pytest.raises(DecodeError):
        split_conflicts(text, path="f.json")


# -- properties --------------------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=12,
)
counter_names = ("usage_count", "revision_count", "duplicate_count")
words = st.sampled_from(["a", "b", "c", "d", "e"])


@given(json_values, json_values)
def test_merging_identical_sides_gives_that_side(base: Any, x: Any) -> None:
    result = merge_json(base, x, copy.deepcopy(x))
    assert result.clean and result.value == x


@st.composite
def side(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for name in counter_names:
        out[name] = base[name] + draw(st.integers(0, 4))
    out["tags"] = sorted(set(draw(st.lists(words, max_size=5))))
    out["updated_at"] = draw(st.sampled_from([T1, T2, T3]))
    return out


@settings(max_examples=200)
@given(st.data(), st.lists(words, max_size=4, unique=True))
def test_counters_and_sets_merge_symmetrically(data: st.DataObject, tags: list[str]) -> None:
    base = pattern(tags=tags)
    ours, theirs = data.draw(side(base)), data.draw(side(base))
    forward, backward = merge_json(base, ours, theirs), merge_json(base, theirs, ours)
    assert forward.clean and backward.clean
    assert forward.value == backward.value
    if ours != theirs:
        for name in counter_names:
            assert forward.value[name] == ours[name] + theirs[name] - base[name]
    kept = (set(ours["tags"]) & set(theirs["tags"])) | (
        (set(ours["tags"]) | set(theirs["tags"])) - set(tags)
    )
    assert set(forward.value["tags"]) == kept


@given(st.data())
def test_edits_of_different_fields_all_survive(data: st.DataObject) -> None:
    base = pattern(description="d", example="e", name="n")
    fields = ["description", "example", "name", "title"]
    mine = data.draw(st.sets(st.sampled_from(fields)))
    ours = edit(base, **{f: f"ours {f}" for f in mine})
    theirs = edit(base, **{f: f"theirs {f}" for f in fields if f not in mine})
    result = merge_json(base, ours, theirs)
    assert result.clean
    for f in fields:
        assert result.value[f] == (f"ours {f}" if f in mine else f"theirs {f}")


# -- two copies, no base (an import) -----------------------------------------------------------
def test_an_older_copy_adds_nothing_and_a_newer_one_is_taken() -> None:
    old = pattern(usage_count=1, tags=["http"])
    new = edit(old, usage_count=4, tags=["fetch", "http"], pinned=True, updated_at=T2)
    new["revision_count"] = 2
    assert merge_copies(new, old) is new
    assert merge_copies(old, new) == new
    assert merge_copies(new, copy.deepcopy(new)) == new
    assert merge_copies(new, edit(new, updated_at=T3)) is new  # a later clock alone adds nothing


def test_diverged_copies_keep_the_larger_counters_every_tag_and_the_newer_fields() -> None:
    base = mistake(occurrences=1, tags=["ts"])
    ours = edit(base, occurrences=3, severity="high", tags=["ts", "types"], updated_at=T1)
    theirs = edit(base, occurrences=2, tags=["lint", "ts"], correction="Use unknown", updated_at=T2)
    merged = merge_copies(ours, theirs)
    assert merged["occurrences"] == 3  # the larger, not 3 + 2: both count the shared one
    assert merged["severity"] == "high"
    assert merged["tags"] == ["lint", "ts", "types"]
    assert merged["correction"] == "Use unknown"  # theirs was written last
    assert merged["updated_at"] == T2
    assert merge_copies(theirs, ours) == merged


def test_on_the_same_updated_at_the_higher_revision_wins_then_ours() -> None:
    ours = pattern(description="ours")
    theirs = edit(ours, description="theirs", revision_count=2)
    assert merge_copies(ours, theirs)["description"] == "theirs"
    assert merge_copies(theirs, ours)["description"] == "theirs"
    same_age = edit(ours, description="other")
    assert merge_copies(ours, same_age) is ours


def test_the_newer_decision_on_deletion_wins() -> None:
    live = pattern(updated_at=T1)
    deleted = edit(live, deleted_at=T2, updated_at=T2)
    assert merge_copies(deleted, live) is deleted
    assert merge_copies(live, deleted) == deleted
    restored = edit(deleted, deleted_at=None, updated_at=T3)
    assert merge_copies(restored, deleted) is restored
    assert merge_copies(deleted, restored) == restored


def test_merging_again_changes_nothing() -> None:
    ours = pattern(usage_count=3, tags=["a"], updated_at=T1)
    theirs = edit(ours, usage_count=2, tags=["b"], example="x", updated_at=T2)
    merged = merge_copies(ours, theirs)
    assert merge_copies(merged, theirs) is merged
    assert merge_copies(merged, ours) is merged


def test_preference_copies_keep_every_key_and_take_the_newer_value() -> None:
    ours = {
        "code_style": {"quotes": "double", "semicolons": False},
        "architecture": {"avoid_patterns": ["singleton-abuse"]},
        "updated_at": T2,
    }
    theirs = {
        "code_style": {"quotes": "single", "indentation": 2},
        "architecture": {"avoid_patterns": ["god-objects"]},
        "testing": {"framework": "vitest"},
        "updated_at": T1,
    }
    merged = merge_copies(ours, theirs, kind="preferences")
    assert merged == {
        "code_style": {"quotes": "double", "semicolons": False, "indentation": 2},
        "architecture": {"avoid_patterns": ["singleton-abuse", "god-objects"]},
        "testing": {"framework": "vitest"},
        "updated_at": T2,
    }
    older = {"code_style": {"quotes": "single"}, "updated_at": T1}
    assert merge_copies(ours, older, kind="preferences") is ours


@settings(max_examples=200)
@given(st.data(), st.lists(words, max_size=4, unique=True))
def test_two_copies_never_lose_a_count_or_a_tag(data: st.DataObject, tags: list[str]) -> None:
    base = pattern(tags=tags)
    ours, theirs = data.draw(side(base)), data.draw(side(base))
    merged = merge_copies(ours, theirs)
    for name in counter_names:
        assert merged[name] == max(ours[name], theirs[name])
    assert set(merged["tags"]) == set(ours["tags"]) | set(theirs["tags"])
    latest = max(ours["updated_at"], theirs["updated_at"])
    assert merged is ours or merged["updated_at"] == latest  # ours: theirs only had a later clock
    assert merge_copies(merged, ours) is merged and merge_copies(merged, theirs) is merged


def test_confidence_raised_on_both_sides_takes_the_higher() -> None:
    base = new_long_term("preference", "lrn_01", NOW, title="L", confidence=0.5)
    ours = edit(base, confidence=0.6, duplicate_count=1, updated_at=T1)
    theirs = edit(base, confidence=0.7, duplicate_count=2, updated_at=T2)
    result = merge_json(base, ours, theirs)
    assert result.clean and result.value["confidence"] == 0.7
    assert result.value["duplicate_count"] == 3
