"""Render CLAUDE.md: the bounded summary of the memory an agent reads as instructions.

Pure and deterministic to the byte, like ``render``. Each live record gives at most one entry
(``claude_entry``: its section, its place in it and its line); ``assemble_claude_md`` orders
them, adds the preferences and drops the lowest-priority entries whole to stay within the
limit, so a caller that kept the entries of unchanged records gets the same bytes. Every memory
text goes through ``make_inert`` on one line. No file I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from string import Template
from typing import Any

from planning_memory.core import claude_section, preference_text
from planning_memory.core import is_taught as taught
from planning_memory.errors import ConfigError
from planning_memory.views.fileformat import header_line, source_hash
from planning_memory.views.inert import inline
from planning_memory.views.render import frame, sort_key

CLAUDE_SECTIONS = {
    "pinned": "Pinned",
    "taught": "Taught rules",
    "preferences": "Preferences",
    "mistakes": "Mistakes to avoid",
    "patterns": "Patterns to follow",
    "decisions": "Architecture and decisions",
}
TITLE_LIMIT = 120
TEXT_LIMIT = 400
_TYPE_ORDER = {"mistake": 0, "pattern": 1}


def _label(record: Mapping[str, Any]) -> str:
    text = record.get("name") if record.get("type") == "pattern" else record.get("title")
    return inline(str(text or record.get("title") or record.get("id")), TITLE_LIMIT)


def _pieces(*pairs: tuple[str, Any]) -> str:
    """``**Label:** text`` pieces joined; the first label is left out."""
    out = []
    for number, (label, value) in enumerate(pairs):
        text = inline(str(value or ""), TEXT_LIMIT)
        if text:
            out.append(text if number == 0 else f"**{label}:** {text}")
    return " ".join(out)


def _entry(record: Mapping[str, Any]) -> str:
    kind = record.get("type")
    if kind == "pattern":
        head, text = f"- **{_label(record)}**", _pieces(("", record.get("description")))
    elif kind == "mistake":
        head = f"- **{_label(record)}** ({inline(str(record.get('severity')), 20)})"
        text = _pieces(("", record.get("description")), ("Instead", record.get("correction")))
    else:
        body = record.get("body") or {}
        what = record.get("learned") or body.get("learned") or body.get("what")
        head = f"- **{_label(record)}** ({inline(str(kind), 20)})"
        text = _pieces(("", what), ("Why", body.get("why")))
    return f"{head}: {text}" if text else head


def is_taught(record: Mapping[str, Any]) -> bool:
    """A person taught it (``core.is_taught``, the context packer's rule too)."""
    return taught(record.get("tags") or [], str(record.get("type")))


def _preference_entries(preferences: Mapping[str, Any]) -> list[str]:
    entries = []
    for name, section in sorted(preferences.items()):
        if not isinstance(section, Mapping) or not section:
            continue
        values = preference_text(section)
        title = inline(name.replace("_", " "), TITLE_LIMIT)
        entries.append(f"- **{title}**: {inline(values, TEXT_LIMIT)}")
    return entries


# (section, sort key, line): a live record's entry in CLAUDE.md
Entry = tuple[str, list[Any], str]


def claude_entry(record: Mapping[str, Any]) -> Entry | None:
    """The entry a record gives CLAUDE.md, or None (deleted, or in no section:
    ``core.claude_section``)."""
    section = claude_section(record)
    if section is None:
        return None
    if section in ("pinned", "taught"):
        key = [_TYPE_ORDER.get(str(record.get("type")), 2), str(record["id"])]
    elif section == "decisions":
        key = [str(record.get("updated_at", "")), str(record["id"])]
    else:
        key = sort_key(record, "mistakes" if section == "mistakes" else "patterns")
    return section, key, _entry(record)


def _ordered(entries: Iterable[Entry], preferences: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(section, line)`` for everything CLAUDE.md may show, highest priority first: pinned
    and taught (mistakes, then patterns, then the rest), preferences, critical and high
    mistakes, established patterns, then architecture and decisions, newest first."""
    found: dict[str, list[Entry]] = {key: [] for key in CLAUDE_SECTIONS}
    for entry in entries:
        found[entry[0]].append(entry)
    out = []
    for key in CLAUDE_SECTIONS:
        if key == "preferences":
            out += [(key, line) for line in _preference_entries(preferences)]
            continue
        ordered = sorted(found[key], key=lambda e: e[1], reverse=key == "decisions")
        out += [(key, entry[2]) for entry in ordered]
    return out


def _claude_text(
    entries: list[tuple[str, str]],
    left_out: int,
    template: str,
    max_chars: int,
    source: str,
    header: bool,
) -> str:
    sections = {}
    for key, title in CLAUDE_SECTIONS.items():
        lines = [line for section, line in entries if section == key]
        sections[key] = f"## {title}\n\n" + "\n".join(lines) + "\n" if lines else ""
    noun = "entry was" if left_out == 1 else "entries were"
    sections["omitted"] = (
        f"_{left_out} more {noun} left out to stay within {max_chars:,} characters; see "
        "`.planning/patterns.md` and `.planning/mistakes.md`, or run `pmem context`._\n"
        if left_out
        else ""
    )
    body = frame(template, **sections)
    if not header:
        return body
    return header_line("CLAUDE.md", source, body, comment=False) + "\n" + body


def claude_source_hash(
    records: Iterable[Mapping[str, Any]], preferences: Mapping[str, Any], template: str
) -> str:
    """The ``source-hash`` of CLAUDE.md: what it is rendered from, the records it has an
    entry for, every live pattern and mistake (a merge that sums uses or occurrences can make
    one of them shown: see ``cache.RenderCache.source_hash``), the preferences and the
    template. A change to any other record leaves it as it is."""
    shown = [r for r in records if claude_entry(r) is not None or _may_show(r)]
    return source_hash([*shown, preferences], template)


def _may_show(record: Mapping[str, Any]) -> bool:
    return record.get("type") in ("pattern", "mistake") and record.get("deleted_at") is None


def render_claude_md(
    records: Iterable[Mapping[str, Any]],
    preferences: Mapping[str, Any],
    template: str,
    *,
    max_chars: int,
    source_hash: str,
    header: bool = True,
) -> str:
    """What an agent must know, at most ``max_chars`` characters: pinned items, what a person
    taught (``is_taught``: from the first time, not only once established), preferences, high
    and critical mistakes with their corrections, established patterns, architecture and
    decisions, in that priority. Lower-priority entries are dropped whole (and counted);
    every memory text goes through ``make_inert`` on one line. ``header=False`` leaves out the
    hash line (e.g. for a managed block)."""
    found = [e for e in map(claude_entry, records) if e is not None]
    return assemble_claude_md(
        found, preferences, template, max_chars=max_chars, source_hash=source_hash, header=header
    )


def assemble_claude_md(
    entries: Iterable[Entry],
    preferences: Mapping[str, Any],
    template: str,
    *,
    max_chars: int,
    source_hash: str,
    header: bool = True,
) -> str:
    """CLAUDE.md from the records' entries (in the order the records were read)."""
    lines = _ordered(entries, preferences)

    def build(kept: int) -> str:
        return _claude_text(
            lines[:kept], len(lines) - kept, template, max_chars, source_hash, header
        )

    high, shown = len(lines), set(Template(template).get_identifiers())
    # every line is in the full text: when they alone pass the limit, skip building it
    bound = sum(len(line) for key, line in lines if key in shown)
    if bound <= max_chars and len(build(high)) <= max_chars:
        return build(high)
    if len(build(0)) > max_chars:
        raise ConfigError(
            f"CLAUDE.md limit of {max_chars:,} characters is smaller than its "
            f"empty frame ({len(build(0)):,})",
            json_path="render.claudeMdMaxChars",
        )
    return build(_most_that_fit(build, high, max_chars))


def _most_that_fit(build: Callable[[int], str], high: int, max_chars: int) -> int:
    """The most entries (fewer than ``high``) whose text fits, when none fits and all do not.
    The length grows with every entry kept (each adds a line, the count of those left out
    shrinks by at most a few characters), so a search finds it; from the small end, because
    a limit keeps a few dozen entries of thousands."""
    low, step = 0, 1  # build(low) fits
    while low + step < high and len(build(low + step)) <= max_chars:
        low, step = low + step, step * 2
    high = min(low + step, high)  # build(high) does not fit
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if len(build(middle)) <= max_chars else (low, middle)
    return low
