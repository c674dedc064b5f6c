"""Long-term memory: patterns, mistakes, learnings, preferences and the rules that learn them.

``LongTerm`` holds one tree's records and applies seed 000's and seed 003's rules (reinforce,
escalate, upsert by topic, dedup window, soft delete, pin); ``Outcome`` says what a call did;
``Lesson`` what an utterance taught.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.longterm.catalog import Catalog as Catalog
    from planning_memory.longterm.catalog import close_all as close_catalogs
    from planning_memory.longterm.lessons import Lesson as Lesson
    from planning_memory.longterm.level import LongTerm as LongTerm
    from planning_memory.longterm.level import observation_fields as observation_fields
    from planning_memory.longterm.preferences import read as read_preferences
    from planning_memory.longterm.records import check_record as check_record
    from planning_memory.longterm.records import load_all as load_all
    from planning_memory.longterm.records import load_checked as load_checked
    from planning_memory.longterm.records import load_record as load_record
    from planning_memory.longterm.records import save as save_record
    from planning_memory.longterm.rules import Outcome as Outcome
    from planning_memory.longterm.rules import new_record as new_record
    from planning_memory.longterm.rules import written_ids as written_ids
    from planning_memory.longterm.triggers import detect as detect
    from planning_memory.longterm.triggers import detect_all as detect_all
    from planning_memory.longterm.triggers import (
        extract_memorize_markers as extract_memorize_markers,
    )

    __all__ = [
        "Catalog",
        "Lesson",
        "LongTerm",
        "Outcome",
        "check_record",
        "close_catalogs",
        "detect",
        "detect_all",
        "extract_memorize_markers",
        "load_all",
        "load_checked",
        "load_record",
        "new_record",
        "observation_fields",
        "read_preferences",
        "save_record",
        "written_ids",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "Lesson": "lessons",
            "LongTerm": "level",
            "Outcome": "rules",
            "check_record": "records",
            "Catalog": "catalog",
            "close_catalogs": "catalog:close_all",
            "detect": "triggers",
            "detect_all": "triggers",
            "extract_memorize_markers": "triggers",
            "load_all": "records",
            "load_checked": "records",
            "load_record": "records",
            "new_record": "rules",
            "written_ids": "rules",
            "observation_fields": "level",
            "read_preferences": "preferences:read",
            "save_record": "records:save",
        },
    )
