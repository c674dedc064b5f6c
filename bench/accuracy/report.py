"""Markdown tables of the harness' figures, and docs/bench-accuracy.md written from them."""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from datetime import date
from typing import Any

EXAMPLES = 6  # examples printed per kind of disagreement


def pct(hit: int, total: int) -> str:
    return f"{hit / total:.1%} ({hit:,}/{total:,})" if total else "n/a"


def mean(value: float | None) -> str:
    return f"{value:.1%}" if value is not None else "n/a"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def definitions_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        for lang, s in sorted(r["definitions"].items()):
            if not (s.ctags_functions or s.codemap_functions):
                continue
            rows.append(
                [
                    r["name"],
                    lang,
                    pct(s.found, s.ctags_functions),
                    s.line_off,
                    pct(s.confirmed, s.codemap_functions),
                    f"{s.unconfirmed_nested} / {len(s.unconfirmed)}",
                    pct(s.classes_found, s.ctags_classes),
                    f"{s.nested_found}/{s.nested_classes}, {s.local_found}/{s.local_classes}",
                    r["not_verbatim"].get(lang, 0),
                ]
            )
    header = [
        "corpus",
        "language",
        "function recall vs ctags",
        "same name, other line",
        "precision (a ctags tag of that name +-1 line)",
        "no tag: nested / other",
        "top-level class recall",
        "nested, local classes found",
        "names not in the file",
    ]
    return table(header, rows)


def components_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        s = r.get("components")
        if s is None:
            continue
        rows.append(
            [
                r["name"],
                pct(s.found, s.compiler),
                pct(s.confirmed, s.codemap),
                s.compared,
                f"{mean(s.own_recall.mean)} ({s.own_recall.hit}/{s.own_recall.total})",
                f"{mean(s.all_recall.mean)} ({s.all_recall.hit}/{s.all_recall.total})",
                f"{mean(s.precision.mean)} ({s.precision.hit}/{s.precision.total})",
            ]
        )
    header = [
        "corpus",
        "component recall",
        "component precision",
        "props compared (components)",
        "props recall, declared in the corpus",
        "props recall, all (inherited too)",
        "props precision",
    ]
    return table(header, rows)


def imports_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        s = r.get("imports")
        cells: list[Any] = ["n/a"] * 5
        if s is not None:
            o = s.outcomes
            cells = [
                pct(s.agree, s.compared),
                o["other file"],
                o["left unresolved"] + o["not recorded"],
                o["TS unresolved, map resolved"],
                o["asset (not code)"],
            ]
        rows.append([r["name"], *cells, len(r["self_imports"])])
    header = [
        "corpus",
        "relative/alias imports: same file as TypeScript",
        "another file",
        "unresolved or missing",
        "TS unresolved, map resolved",
        "assets (not compared)",
        "imports resolved to the importing file",
    ]
    return table(header, rows)


def calls_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        s = r.get("calls")
        if s is None:
            continue
        rows.append(
            [
                r["name"],
                f"{r['edges']:,}",
                s.sampled,
                s.labelled,
                pct(s.correct, s.labelled),
                _gone(s.gone),
                len(s.unlabelled),
            ]
        )
    header = [
        "corpus",
        "call edges in the map",
        "sample",
        "labelled",
        "precision (correct edges)",
        "labelled edges no longer in the map",
        "sampled edges without a label",
    ]
    return table(header, rows)


def call_edges_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        for s in r.get("call_edges", []):
            rows.append(
                [
                    r["name"],
                    s.language,
                    s.tool,
                    f"{s.reference:,}",
                    f"{s.ours:,}",
                    f"{s.both:,}",
                    mean(s.recall),
                    mean(s.precision),
                    f"{s.unmapped:,}",
                    f"{s.seconds:.1f}",
                ]
            )
    header = [
        "corpus",
        "language",
        "reference",
        "reference edges",
        "map edges",
        "both",
        "recall",
        "precision",
        "reference calls without a function of the map at an end",
        "reference CPU s",
    ]
    return table(header, rows)


def _gone(rows: list[dict[str, str]]) -> str:
    right = sum(1 for r in rows if r["correct"] == "yes")
    return f"{len(rows)} ({right} correct, {len(rows) - right} false)" if rows else "0"


def timing_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        t = r["timing"]
        floor = t["tree_sitter"]
        aider = t.get("aider") or {}
        rows.append(
            [
                r["name"],
                f"{r['files']:,}",
                f"{r['kb']:,}",
                f"{t['scan_wall']:.2f} ({t['scan_seconds']:.2f})",
                f"{t['ctags']:.2f}",
                f"{floor:.2f}",
                f"{t['scan_seconds'] / floor:.1f}x" if floor else "n/a",
                f"{t['scan_seconds'] / t['ctags']:.1f}x" if t["ctags"] else "n/a",
                f"{aider['seconds']:.2f}" if "seconds" in aider else aider.get("error", "n/a"),
            ]
        )
    header = [
        "corpus",
        "files",
        "KB",
        "`pmem scan` cold, process s (scan's own s)",
        "`ctags -R` s",
        "tree-sitter parse only, 2 processes s",
        "scan / tree-sitter",
        "scan / ctags",
        "aider repo map, cold s",
    ]
    return table(header, rows)


def tables(results: list[dict[str, Any]]) -> str:
    return "\n\n".join(
        [
            "### Definitions against universal-ctags\n\n" + definitions_table(results),
            "### React components and props against the TypeScript compiler\n\n"
            + components_table(results),
            "### Import resolution against `ts.resolveModuleName`\n\n" + imports_table(results),
            "### Call edges against each language's type-aware tool\n\n"
            + call_edges_table(results),
            "### Call edges, hand-labelled sample\n\n" + calls_table(results),
            "### Time\n\n" + timing_table(results),
        ]
    )


def examples(results: list[dict[str, Any]]) -> str:
    """What disagreed, a few of each kind per corpus (what the extractors' owners read)."""
    out: list[str] = []
    for r in results:
        lines: list[str] = []
        for lang, s in sorted(r["definitions"].items()):
            lines += [
                f"- ctags {t.kind} not in the map ({lang}): `{t.file}:{t.line}` {t.name}"
                for t in s.missed[:EXAMPLES]
            ]
            lines += [
                f"- map function with no ctags tag ({lang}): `{f['file']}:{f['lines'][0]}` "
                f"{f['qualified_name']}"
                for f in s.unconfirmed[:EXAMPLES]
            ]
            lines += [
                f"- top-level {t.kind} not in `classes` ({lang}): `{t.file}:{t.line}` {t.name}"
                for t in s.missed_classes[:EXAMPLES]
            ]
        lines += [
            f"- name not in its file: {what} `{path}` {name}"
            for what, path, name in r["not_verbatim_list"][:EXAMPLES]
        ]
        if (c := r.get("components")) is not None:
            lines += [
                f"- component the compiler finds, not the map: `{m['file']}:{m['line']}` "
                f"{m['name']} ({m['kind']})"
                for m in c.missed[:EXAMPLES]
            ]
            lines += [
                f"- component the compiler does not find: `{m['file']}:{m['lines'][0]}` {m['name']}"
                for m in c.extra[:EXAMPLES]
            ]
            lines += [
                f"- props of `{path}` {name}: missing {', '.join(missing) or '-'}; "
                f"not in the type {', '.join(extra) or '-'}"
                for path, name, missing, extra in c.prop_diffs[:EXAMPLES]
            ]
        if (i := r.get("imports")) is not None:
            for outcome, items in sorted(i.examples.items()):
                lines += [
                    f"- import {outcome}: `{path}` `{module}` -> TypeScript {theirs}, map {mine}"
                    for path, module, theirs, mine in items[:EXAMPLES]
                ]
        lines += [
            f"- import resolved to its own file: `{path}` `{module}`"
            for path, module in r["self_imports"][:EXAMPLES]
        ]
        for e in r.get("call_edges", []):
            lines += [
                f"- edge {e.tool} has, not the map: {a} -> {b}" for a, b in e.missed[:EXAMPLES]
            ]
            lines += [f"- map edge {e.tool} lacks: {a} -> {b}" for a, b in e.extra[:EXAMPLES]]
        if (k := r.get("calls")) is not None:
            lines += [
                f"- false call edge: {w['caller']} -> {w['callee']} at `{w['call_site']}`: "
                f"{w['note']}"
                for w in k.wrong
            ]
            lines += [
                f"- labelled edge no longer in the map ({g['correct']}): "
                f"{g['caller']} -> {g['callee']}"
                for g in k.gone
            ]
            lines += [
                f"- sampled edge without a label: {caller} -> {callee}"
                for caller, callee in k.unlabelled
            ]
        if lines:
            out.append(f"#### {r['name']}\n\n" + "\n".join(lines))
    return "\n\n".join(out)


def machine(load_at_start: tuple[float, ...]) -> str:
    start, end = (", ".join(f"{x:.1f}" for x in load) for load in (load_at_start, os.getloadavg()))
    return (
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {start} at the start of the run, {end} at "
        "its end (the machine is shared: times are the fastest of the runs)"
    )


def document(
    results: list[dict[str, Any]],
    pins: str,
    tools: str,
    method: str,
    command: str,
    load_at_start: tuple[float, ...],
) -> str:
    return "\n\n".join(
        [
            "# Code map accuracy on real code",
            f"Generated by `{command}` on {date.today().isoformat()}; machine: "
            f"{machine(load_at_start)}. "
            "Rerun it to refresh every figure (the findings in "
            "[entity.md](entity.md#accuracy) are written from these).",
            "## Corpora and tools\n\n" + pins + "\n\n" + tools,
            "## Method\n\n" + method,
            "## Figures\n\n" + tables(results),
            "## Disagreements, a few of each kind\n\n" + examples(results),
        ]
    )
