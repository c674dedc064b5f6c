"""The search index's schema: its tables, indexes, triggers and lists, its version, and the
statements that bring an older version up to date in place (``database`` runs them).

Text only: the one module that talks to SQLite is ``database``.
"""

from __future__ import annotations

from planning_memory.core import TAUGHT_TAG, TAUGHT_TYPES
from planning_memory.search import vectors

SCHEMA_VERSION = 8  # 3: code and Markdown chunks stored redacted; 4: the lists' partial
# indexes; 5: vectors (document ids never reused, so a vector knows its document); 6: the
# records' list; 7: meta without the lines of the body (``rows._stored_meta``); 8: vectors of
# a memory's text and tags on e5's query side (``semantic.STORED_AS``)

# Lists the context block reads whatever the task (``Index.listed``), each a condition on
# ``docs`` answered by a partial index in update order: pinned records, high-severity mistakes,
# what a person taught (``core.is_taught``: the tag, or a taught type; tags are " a b "), and
# every record (the newest ones, and whether the memory is small enough to show whole).
LISTS = {
    "records": "source = 'record'",
    "pinned": "pinned = 1",
    "severe": "severity >= 2 AND type = 'mistake'",
    "taught": f"(instr(tags, ' {TAUGHT_TAG} ') > 0 OR type IN "
    f"({', '.join(repr(t) for t in TAUGHT_TYPES)}))",
}
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS docs(
      id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, grp TEXT NOT NULL,
      source TEXT NOT NULL, type TEXT NOT NULL, scope TEXT NOT NULL, tags TEXT NOT NULL,
      ref_id TEXT NOT NULL, session_id TEXT NOT NULL, created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL, pinned INTEGER NOT NULL, severity INTEGER NOT NULL,
      path TEXT NOT NULL, title TEXT NOT NULL, meta TEXT NOT NULL, body TEXT NOT NULL,
      terms TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS docs_grp ON docs(grp)",
    "CREATE INDEX IF NOT EXISTS docs_ref ON docs(ref_id)",
    "CREATE INDEX IF NOT EXISTS docs_created ON docs(source, created_at, ref_id)",
    """CREATE TABLE IF NOT EXISTS groups(
      grp TEXT PRIMARY KEY, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
      size INTEGER NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS access(key TEXT PRIMARY KEY, count INTEGER NOT NULL, last_at TEXT)",
    *(
        f"CREATE INDEX IF NOT EXISTS docs_{name} ON docs(updated_at) WHERE {condition}"
        for name, condition in LISTS.items()
    ),
    *vectors.SCHEMA,
    """CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
      title, body, tags, path, terms, content='docs', content_rowid='id',
      tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
      INSERT INTO fts(rowid, title, body, tags, path, terms)
      VALUES (new.id, new.title, new.body, new.tags, new.path, new.terms);
    END""",
    """CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
      INSERT INTO fts(fts, rowid, title, body, tags, path, terms)
      VALUES ('delete', old.id, old.title, old.body, old.tags, old.path, old.terms);
    END""",
)
DROP = (
    "DROP TRIGGER IF EXISTS docs_ai",
    "DROP TRIGGER IF EXISTS docs_ad",
    "DROP TABLE IF EXISTS fts",
    "DROP TABLE IF EXISTS docs",
    "DROP TABLE IF EXISTS groups",
    "DROP TABLE IF EXISTS meta",
    "DROP TABLE IF EXISTS vectors",
)

# Versions brought to ``SCHEMA_VERSION`` in place: these statements, then ``SCHEMA`` (every
# statement of which is ``IF NOT EXISTS``). Version 3 had other partial indexes than the lists'.
# Version 5 lacked the records' list; version 6 rows' meta reads as it is. Versions 5-7 hold
# vectors embedded another way: they are forgotten, and embedded again as after a clone.
REEMBED = ("DELETE FROM vectors", "DELETE FROM meta WHERE key = 'vectors_epoch'")
UPGRADES = {
    3: ("DROP INDEX IF EXISTS docs_pinned", "DROP INDEX IF EXISTS docs_severity"),
    5: REEMBED,
    6: REEMBED,
    7: REEMBED,
}
