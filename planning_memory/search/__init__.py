"""Contextual memory: the derived SQLite FTS5 index, its upkeep, ranking and the timeline.

``Index`` is the database (the package's only sqlite3 user); ``ensure_ready``, ``rebuild`` and
``reindex_codebase`` keep it in step with the files; ``search`` ranks hits; ``timeline`` gives a
memory's chronological neighbours. See docs/search.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.search.chronology import TimelineEntry as TimelineEntry
    from planning_memory.search.chronology import timeline as timeline
    from planning_memory.search.chunks import CHARS_PER_TOKEN as CHARS_PER_TOKEN
    from planning_memory.search.chunks import estimate_tokens as estimate_tokens
    from planning_memory.search.database import Filters as Filters
    from planning_memory.search.database import Index as Index
    from planning_memory.search.database import hold_open as hold_open
    from planning_memory.search.database import index_path as index_path
    from planning_memory.search.database import release_gone as release_gone
    from planning_memory.search.documents import SOURCES as SOURCES
    from planning_memory.search.documents import Doc as Doc
    from planning_memory.search.documents import read_session as read_session
    from planning_memory.search.documents import record_doc as record_doc
    from planning_memory.search.documents import session_files as session_files
    from planning_memory.search.glossary import translations as translations
    from planning_memory.search.ranking import Hit as Hit
    from planning_memory.search.ranking import check_sources as check_sources
    from planning_memory.search.ranking import embed_soon as embed_soon
    from planning_memory.search.ranking import matched_terms as matched_terms
    from planning_memory.search.ranking import query_terms as query_terms
    from planning_memory.search.ranking import search as search
    from planning_memory.search.recent import recent as recent_queries
    from planning_memory.search.recent import remember as remember_query
    from planning_memory.search.related import related_words as related_words
    from planning_memory.search.rows import Row as Row
    from planning_memory.search.semantic import chosen as chosen_embedder
    from planning_memory.search.semantic import load_embedder as load_embedder
    from planning_memory.search.semantic import notice as embedding_notice
    from planning_memory.search.semantic import semantic_wanted as semantic_wanted
    from planning_memory.search.upkeep import IndexReport as IndexReport
    from planning_memory.search.upkeep import ensure_memories as ensure_memories
    from planning_memory.search.upkeep import ensure_ready as ensure_ready
    from planning_memory.search.upkeep import index_files as index_files
    from planning_memory.search.upkeep import rebuild as rebuild
    from planning_memory.search.upkeep import reindex_codebase as reindex_codebase
    from planning_memory.search.upkeep import sync as sync_from_files

    __all__ = [
        "CHARS_PER_TOKEN",
        "SOURCES",
        "Doc",
        "Filters",
        "Hit",
        "Index",
        "IndexReport",
        "Row",
        "TimelineEntry",
        "check_sources",
        "chosen_embedder",
        "embed_soon",
        "embedding_notice",
        "ensure_memories",
        "ensure_ready",
        "estimate_tokens",
        "hold_open",
        "index_files",
        "index_path",
        "load_embedder",
        "matched_terms",
        "query_terms",
        "read_session",
        "rebuild",
        "recent_queries",
        "record_doc",
        "reindex_codebase",
        "related_words",
        "release_gone",
        "remember_query",
        "search",
        "semantic_wanted",
        "session_files",
        "sync_from_files",
        "timeline",
        "translations",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "CHARS_PER_TOKEN": "chunks",
            "Doc": "documents",
            "Filters": "database",
            "Hit": "ranking",
            "Index": "database",
            "IndexReport": "upkeep",
            "Row": "rows",
            "SOURCES": "documents",
            "TimelineEntry": "chronology",
            "check_sources": "ranking",
            "embed_soon": "ranking",
            "embedding_notice": "semantic:notice",
            "ensure_memories": "upkeep",
            "ensure_ready": "upkeep",
            "estimate_tokens": "chunks",
            "hold_open": "database",
            "index_files": "upkeep",
            "index_path": "database",
            "chosen_embedder": "semantic:chosen",
            "load_embedder": "semantic",
            "matched_terms": "ranking",
            "query_terms": "ranking",
            "read_session": "documents",
            "rebuild": "upkeep",
            "recent_queries": "recent:recent",
            "release_gone": "database",
            "record_doc": "documents",
            "reindex_codebase": "upkeep",
            "related_words": "related",
            "remember_query": "recent:remember",
            "search": "ranking",
            "semantic_wanted": "semantic",
            "session_files": "documents",
            "sync_from_files": "upkeep:sync",
            "timeline": "chronology",
            "translations": "glossary",
        },
    )
