"""The pure core: canonical JSON, ids, the record model, the tree's layout and its rules.

Schemas, privacy, time and the exclude dialect too. Nothing here writes a file, starts a
process or keeps state; time comes in as ``now``. Every other part builds on these names.
"""

from __future__ import annotations

from planning_memory.core.exports import exports

TYPE_CHECKING = False  # without importing typing (a hook starts fast)
if TYPE_CHECKING:
    from planning_memory.core import codec as codec
    from planning_memory.core import privacy as privacy
    from planning_memory.core import schema as schema
    from planning_memory.core import stamps as stamps
    from planning_memory.core import temporal as temporal
    from planning_memory.core.ids import ID_RE as ID_RE
    from planning_memory.core.ids import check_id as check_id
    from planning_memory.core.ids import new_id as new_id
    from planning_memory.core.ignore import Exclusion as Exclusion
    from planning_memory.core.ignore import Patterns as Patterns
    from planning_memory.core.ignore import ignored_by_layers as ignored_by_layers
    from planning_memory.core.layout import CONFIG_NAME as CONFIG_NAME
    from planning_memory.core.layout import LONG_TERM_DIRS as LONG_TERM_DIRS
    from planning_memory.core.layout import PLANNING_DIR as PLANNING_DIR
    from planning_memory.core.layout import TREE_GITIGNORE as TREE_GITIGNORE
    from planning_memory.core.layout import Layout as Layout
    from planning_memory.core.layout import project_root as project_root
    from planning_memory.core.model import DECISION_TYPES as DECISION_TYPES
    from planning_memory.core.model import DEFAULT_CONFIG as DEFAULT_CONFIG
    from planning_memory.core.model import ESCALATE_AT as ESCALATE_AT
    from planning_memory.core.model import ESTABLISHED_AT as ESTABLISHED_AT
    from planning_memory.core.model import ID_PREFIX as ID_PREFIX
    from planning_memory.core.model import LEARNING_TYPES as LEARNING_TYPES
    from planning_memory.core.model import LONG_TERM_TYPES as LONG_TERM_TYPES
    from planning_memory.core.model import SCHEMA_FOR_TYPE as SCHEMA_FOR_TYPE
    from planning_memory.core.model import SEVERITIES as SEVERITIES
    from planning_memory.core.model import TAUGHT_TAG as TAUGHT_TAG
    from planning_memory.core.model import TAUGHT_TYPES as TAUGHT_TYPES
    from planning_memory.core.model import Record as Record
    from planning_memory.core.model import claude_section as claude_section
    from planning_memory.core.model import compact_json as compact_json
    from planning_memory.core.model import effective_config as effective_config
    from planning_memory.core.model import is_taught as is_taught
    from planning_memory.core.model import new_long_term as new_long_term
    from planning_memory.core.model import normalize as normalize
    from planning_memory.core.model import parse_timestamp as parse_timestamp
    from planning_memory.core.model import preference_text as preference_text
    from planning_memory.core.model import record_digest as record_digest
    from planning_memory.core.model import timestamp as timestamp
    from planning_memory.core.project import PROJECT_ID_RE as PROJECT_ID_RE
    from planning_memory.core.project import id_of as id_of
    from planning_memory.core.project import legacy_id as legacy_id
    from planning_memory.core.project import project_folder as project_folder
    from planning_memory.core.schema import check as check_schema
    from planning_memory.core.temporal import TemporalContext as TemporalContext
    from planning_memory.core.temporal import timezone_of as timezone_of

    __all__ = [
        "CONFIG_NAME",
        "DECISION_TYPES",
        "DEFAULT_CONFIG",
        "ESCALATE_AT",
        "ESTABLISHED_AT",
        "ID_PREFIX",
        "ID_RE",
        "LEARNING_TYPES",
        "LONG_TERM_DIRS",
        "LONG_TERM_TYPES",
        "PLANNING_DIR",
        "PROJECT_ID_RE",
        "SCHEMA_FOR_TYPE",
        "SEVERITIES",
        "TAUGHT_TAG",
        "TAUGHT_TYPES",
        "TREE_GITIGNORE",
        "Exclusion",
        "Layout",
        "Patterns",
        "Record",
        "TemporalContext",
        "check_id",
        "check_schema",
        "claude_section",
        "codec",
        "compact_json",
        "effective_config",
        "id_of",
        "ignored_by_layers",
        "is_taught",
        "legacy_id",
        "new_id",
        "new_long_term",
        "normalize",
        "parse_timestamp",
        "preference_text",
        "privacy",
        "project_folder",
        "project_root",
        "record_digest",
        "schema",
        "stamps",
        "temporal",
        "timestamp",
        "timezone_of",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "CONFIG_NAME": "layout",
            "DECISION_TYPES": "model",
            "DEFAULT_CONFIG": "model",
            "ESCALATE_AT": "model",
            "ESTABLISHED_AT": "model",
            "Exclusion": "ignore",
            "ID_PREFIX": "model",
            "ID_RE": "ids",
            "LEARNING_TYPES": "model",
            "LONG_TERM_DIRS": "layout",
            "LONG_TERM_TYPES": "model",
            "Layout": "layout",
            "PLANNING_DIR": "layout",
            "PROJECT_ID_RE": "project",
            "Patterns": "ignore",
            "Record": "model",
            "SCHEMA_FOR_TYPE": "model",
            "SEVERITIES": "model",
            "TAUGHT_TAG": "model",
            "TAUGHT_TYPES": "model",
            "TREE_GITIGNORE": "layout",
            "TemporalContext": "temporal",
            "check_id": "ids",
            "check_schema": "schema:check",
            "claude_section": "model",
            "codec": ".",
            "compact_json": "model",
            "effective_config": "model",
            "ignored_by_layers": "ignore",
            "is_taught": "model",
            "id_of": "project",
            "legacy_id": "project",
            "new_id": "ids",
            "new_long_term": "model",
            "normalize": "model",
            "parse_timestamp": "model",
            "preference_text": "model",
            "privacy": ".",
            "project_folder": "project",
            "project_root": "layout",
            "record_digest": "model",
            "schema": ".",
            "stamps": ".",
            "temporal": ".",
            "timestamp": "model",
            "timezone_of": "temporal",
        },
    )
