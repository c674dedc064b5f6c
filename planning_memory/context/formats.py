"""Rendering packed context items: Markdown, XML-style tags, JSON or the agent prompt.

The seeds' XML-style tags and seed 000's agent prompt layout among them. Every memory text is
made inert on its way out, as in CLAUDE.md (``views.make_inert``): one line per item in
Markdown and the agent prompt, XML that parses (characters XML forbids removed), inert strings
in JSON. The agent prompt imports nothing, so its ``@`` stays as written. Pure: items in,
text out."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from planning_memory.context.items import REVIEW_FLAG
from planning_memory.views import at_as_written, inline, make_inert

if TYPE_CHECKING:
    from planning_memory.context.items import Item, Task

Renderer = Callable[[Sequence["Item"], "Task", int], str]

SECTION_ORDER = (
    "last",
    "patterns",
    "mistakes",
    "preferences",
    "files",
    "related",
    "session",
    "temporal",
)
MD_TITLES = {
    "last": "Last session",
    "patterns": "Patterns to follow",
    "mistakes": "Mistakes to avoid",
    "preferences": "Preferences",
    "files": "Relevant files",
    "related": "Related content",
    "session": "Session context",
    "temporal": "Temporal context",
}
AGENT_TITLES = {
    "last": "Last Session",
    "patterns": "Patterns to Follow",
    "mistakes": "Mistakes to Avoid",
    "preferences": "Preferences",
    "files": "Relevant Files",
    "related": "Additional Context",
    "session": "Session Context",
    "temporal": "Temporal Context",
}
XML_SECTIONS = {
    "last": ("last_session", "entry"),
    "patterns": ("patterns_to_follow", "pattern"),
    "mistakes": ("mistakes_to_avoid", "mistake"),
    "preferences": ("preferences", "preference"),
    "files": ("relevant_files", "file"),
    "related": ("related_content", "item"),
    "session": ("conversation_context", "entry"),
    "temporal": ("temporal_context", "now"),
}
_RECORD_PREFIXES = ("pat_", "mis_", "lrn_", "dec_", "msg_", "ses_")
LINE_LIMIT = 4000  # characters of one inert line (item texts are capped well below this)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def flat(value: Any) -> str:
    """A memory text made inert, on one line: what an item shows in Markdown."""
    return inline(str(value if value is not None else ""), LINE_LIMIT)


def inert_value(value: Any) -> Any:
    """Every string in a JSON value made inert (keys are the package's own names)."""
    if isinstance(value, str):
        return make_inert(value)
    if isinstance(value, dict):
        return {k: inert_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [inert_value(v) for v in value]
    return value


def by_section(items: Sequence[Item]) -> dict[str, list[Item]]:
    """Items grouped by section in output order; the session shown oldest message first."""
    groups: dict[str, list[Item]] = {s: [] for s in SECTION_ORDER}
    for item in items:
        groups.setdefault(item.section, []).append(item)
    groups["session"].sort(key=_session_order)
    return {s: g for s, g in groups.items() if g}


def _session_order(item: Item) -> tuple[int, float]:
    kind = item.data.get("kind")
    if kind == "message":
        return 3, float(item.data.get("seq") or 0)
    return {"summary": 0, "current": 1, "decision": 2}.get(str(kind), 4), item.order


def _id_tag(item: Item) -> str:
    scope = flat(item.data.get("scope") or "")
    if not item.id.startswith(_RECORD_PREFIXES):
        return f" [{scope}]" if scope else ""
    ident = flat(item.id)
    return f" [{ident}, {scope}]" if scope else f" [{ident}]"


def render_md(items: Sequence[Item], task: Task, budget: int) -> str:
    lines = ["# Memory context"]
    for section, group in by_section(items).items():
        lines.append(f"## {MD_TITLES[section]}")
        for item in group:
            if section == "temporal":
                lines.append(make_inert(item.text))
            elif section == "session" and item.data.get("kind") == "summary":
                lines.append(f"Summary: {flat(item.text)}")
            else:
                lines.append(render_line(item))
    return "\n".join(lines) + "\n"


def render_line(item: Item) -> str:
    """One item as a Markdown bullet: its text, id (and scope) and why it is included."""
    mark = "⚠️ " if item.section == "mistakes" else ""
    return f"- {mark}{flat(item.text)}{_id_tag(item)} (why: {flat(item.reason)})"


def _esc(text: str) -> str:
    """Inert text as XML character data: only characters XML allows, markup escaped."""
    text = _NOT_XML.sub("", make_inert(text))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(text: str) -> str:
    value = _esc(" ".join(text.split()))
    return '"' + value.replace('"', "&quot;") + '"'


def _tag(name: str, fallback: str) -> str:
    """``name`` if it is a plain XML name (a session entry's kind), else ``fallback``."""
    return name if re.fullmatch(r"[a-z][a-z_]{0,30}", name) else fallback


def render_xml(items: Sequence[Item], task: Task, budget: int) -> str:
    lines = ["<memory_context>"]
    for section, group in by_section(items).items():
        outer, inner = XML_SECTIONS[section]
        if section == "temporal":
            lines.append(f"<{outer}>\n{_esc(group[0].text)}\n</{outer}>")
            continue
        lines.append(f"<{outer}>")
        for item in group:
            tag = inner
            attrs = f" id={_attr(item.id)} reason={_attr(item.reason)}"
            if item.data.get("scope"):
                attrs += f" scope={_attr(str(item.data['scope']))}"
            if section == "session":
                tag = _tag(str(item.data.get("kind") or inner), inner)
                if item.data.get("role"):
                    attrs += f" role={_attr(str(item.data['role']))}"
            lines.append(f"<{tag}{attrs}>{_esc(item.text)}</{tag}>")
        lines.append(f"</{outer}>")
    lines.append("</memory_context>")
    return "\n".join(lines) + "\n"


def render_json(items: Sequence[Item], task: Task, budget: int) -> str:
    body: dict[str, Any] = {}
    for section, group in by_section(items).items():
        if section == "temporal":
            body["temporal_context"] = group[0].data
        else:
            name = XML_SECTIONS[section][0]
            body[name] = [item.as_dict() for item in group]
    body = inert_value(body)
    return json.dumps({"memory_context": body}, ensure_ascii=False, separators=(",", ":")) + "\n"


def _agent_line(item: Item) -> str:
    data = item.data
    flags = [flat(f) for f in (data.get("needs_review") and REVIEW_FLAG, data.get("scope")) if f]
    tail = f" ({'; '.join(flags)})" if flags else ""
    if item.section == "patterns":
        return f"- {flat(data.get('name'))}: {flat(data.get('description'))}{tail}"
    if item.section == "mistakes":
        correction = flat(data.get("correction") or "")
        text = f"- ⚠️ {flat(data.get('description'))}" + (f" → {correction}" if correction else "")
        return text + tail
    if item.section == "files":
        where = flat(data.get("path") or item.id)
        told = flat(" — ".join(t for t in (data.get("signature"), data.get("purpose")) if t))
        return f"- {where}: {told}" if told else f"- {where}"
    if item.section == "session" and data.get("kind") == "summary":
        return f"Summary: {flat(item.text)}"
    return f"- {flat(item.text)}"


def render_agent(items: Sequence[Item], task: Task, budget: int) -> str:
    """The agent prompt's memory sections. A prompt imports nothing, so an ``@`` stays as
    written ("@types/node"); the rest is inert as everywhere."""
    lines = ["## Memory Context"]
    for section, group in by_section(items).items():
        lines.append(f"\n### {AGENT_TITLES[section]}")
        for item in group:
            lines.append(make_inert(item.text) if section == "temporal" else _agent_line(item))
    return at_as_written("\n".join(lines) + "\n")


RENDERERS: dict[str, Renderer] = {
    "md": render_md,
    "xml": render_xml,
    "json": render_json,
    "agent": render_agent,
}
