"""Entity memory: a multi-language code map kept current by an incremental, sharded scan.

``scan`` brings it up to date; the look-ups (``get_file``, ``get_function``, ``get_component``,
``get_area``, ``get_relationships``) read it; annotations made with
``update_file_annotations`` survive rescans; anchors tie memories to the code they are about.
Languages live in ``languages/``, behind one registry. See docs/entity.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.entity.anchors import changed_anchors as changed_anchors
    from planning_memory.entity.anchors import complete_anchors as complete_anchors
    from planning_memory.entity.anchors import current_anchor_hash as current_anchor_hash
    from planning_memory.entity.anchors import mark_stale_anchors as mark_stale_anchors
    from planning_memory.entity.code_map import CodeMap as CodeMap
    from planning_memory.entity.ignore_rules import IgnoreRules as IgnoreRules
    from planning_memory.entity.on_disk import count_files as count_files
    from planning_memory.entity.on_disk import last_written as last_written
    from planning_memory.entity.query import entity_snapshot as entity_snapshot
    from planning_memory.entity.query import get_area as get_area
    from planning_memory.entity.query import get_component as get_component
    from planning_memory.entity.query import get_file as get_file
    from planning_memory.entity.query import get_function as get_function
    from planning_memory.entity.query import get_relationships as get_relationships
    from planning_memory.entity.query import update_file_annotations as update_file_annotations
    from planning_memory.entity.scanner import ScanReport as ScanReport
    from planning_memory.entity.scanner import scan as scan

    __all__ = [
        "CodeMap",
        "IgnoreRules",
        "ScanReport",
        "changed_anchors",
        "complete_anchors",
        "count_files",
        "current_anchor_hash",
        "entity_snapshot",
        "get_area",
        "get_component",
        "get_file",
        "get_function",
        "get_relationships",
        "last_written",
        "mark_stale_anchors",
        "scan",
        "update_file_annotations",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "CodeMap": "code_map",
            "IgnoreRules": "ignore_rules",
            "ScanReport": "scanner",
            "changed_anchors": "anchors",
            "complete_anchors": "anchors",
            "count_files": "on_disk",
            "current_anchor_hash": "anchors",
            "entity_snapshot": "query",
            "get_area": "query",
            "get_component": "query",
            "get_file": "query",
            "get_function": "query",
            "get_relationships": "query",
            "last_written": "on_disk",
            "mark_stale_anchors": "anchors",
            "scan": "scanner",
            "update_file_annotations": "query",
        },
    )
