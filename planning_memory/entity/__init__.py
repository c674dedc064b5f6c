"""Entity memory: a multi-language code map kept current by an incremental, sharded scan.

Public API (see docs/entity.md): ``scan``, ``ScanReport``, ``get_file``, ``get_function``,
``get_component``, ``get_area``, ``get_relationships``, ``update_file_annotations``,
``entity_snapshot``, ``current_anchor_hash``, ``changed_anchors``, ``mark_stale_anchors``.
"""

from __future__ import annotations

from planning_memory.entity.anchors import changed_anchors, current_anchor_hash, mark_stale_anchors
from planning_memory.entity.query import (
    entity_snapshot,
    get_area,
    get_component,
    get_file,
    get_function,
    get_relationships,
    update_file_annotations,
)
from planning_memory.entity.scanner import ScanReport, scan

__all__ = [
    "ScanReport",
    "changed_anchors",
    "current_anchor_hash",
    "entity_snapshot",
    "get_area",
    "get_component",
    "get_file",
    "get_function",
    "get_relationships",
    "mark_stale_anchors",
    "scan",
    "update_file_annotations",
]
