"""The code map pages: areas, folders, files, functions and components, and their links.

Functions show their callers and callees, and pictures show how areas (and a folder's files)
depend on each other.
Every page reads a bounded part of the map (the areas, one folder's shard, a page of the
folder list), so a map of 100k files answers as fast as a small one; only the look-up by name
(``/code/name``, the same as ``pmem entity relationships``) may read the whole map.
"""

from __future__ import annotations

from typing import Any

from planning_memory.viewer import charts
from planning_memory.viewer.html import (
    Html,
    definitions,
    link,
    pager,
    section,
    table,
    tag,
    url,
)
from planning_memory.viewer.layout import PAGE_SIZE, Page, Request

MAX_NODES = 40  # files drawn in one folder's picture
FOUND_LIMIT = 30


def _names(values: list[Any], to: str = "/code/name") -> Html:
    return Html(", ".join(link(url(to, q=v), str(v)) for v in values) or "—")


def _files(paths: list[Any]) -> Html:
    return Html(", ".join(link(url("/code/file", path=p), str(p)) for p in paths) or "—")


def lookup_form(query: str = "", find: str = "") -> Html:
    return tag(
        "div",
        tag(
            "form",
            tag(
                "input",
                type="search",
                name="find",
                value=find,
                id="find",
                placeholder="search files and code",
                aria_label="search the code map",
            ),
            tag("button", "Search", type="submit"),
            action="/code",
            method="get",
        ),
        tag(
            "form",
            tag(
                "input",
                type="text",
                name="q",
                value=query,
                id="lookup",
                placeholder="area, file, component or function",
                aria_label="name",
            ),
            tag("button", "Relationships", type="submit"),
            action="/code/name",
            method="get",
        ),
        class_="filters",
    )


def page(req: Request) -> Page:
    areas: dict[str, Any] = req.reads.memo("code-areas", req.mem.code.areas, part="entity")
    folders: list[str] = req.reads.memo(
        "code-folders", req.mem.code.folders, part="entity", max_age=30
    )
    find = req.arg("find")
    body = [lookup_form(find=find)]
    if find:
        body.append(section("Found", found(req, find), id_="found"))
    rows = (
        (
            link(url("/code/name", q=name), name),
            str(area.get("file_count", "")),
            _files([area["entry"]]) if area.get("entry") else "—",
            _names(area.get("depends_on", [])),
            _names(area.get("components", [])),
        )
        for name, area in areas.items()
    )
    edges = [(a, d) for a, area in areas.items() for d in area.get("depends_on", [])]
    body.append(
        section(
            "Feature areas",
            table(("area", "files", "entry", "depends on", "components"), rows),
            charts.graph(list(areas), edges, "how feature areas depend on each other"),
        )
    )
    pg = req.page()
    shown = folders[(pg - 1) * PAGE_SIZE : pg * PAGE_SIZE]
    listing = tag(
        "ul",
        [tag("li", link(url("/code/folder", dir=f), f or "(repository root)")) for f in shown],
        class_="folders",
    )
    body.append(section("Folders", listing, pager("/code", {}, pg, len(folders), PAGE_SIZE)))
    return Page("Code map", Html("".join(body)))


def found(req: Request, query: str) -> Html:
    hits = req.mem.search(query, sources=["entity", "code"], limit=FOUND_LIMIT, remember=False)
    rows = []
    for hit in hits:
        path = hit.path or hit.ref_id.split("::", 1)[0]
        rows.append((link(url("/code/file", path=path), hit.ref_id or path), hit.source, hit.title))
    return table(("found", "source", "title"), rows)


def folder(req: Request) -> Page:
    """One folder's files, a page at a time, with the functions and components of those
    files."""
    directory = req.arg("dir")
    data = req.mem.code.folder(directory)
    pg = req.page()
    files = data["files"][(pg - 1) * PAGE_SIZE : pg * PAGE_SIZE]
    shown = {f["path"] for f in files}
    rows = (
        (
            link(url("/code/file", path=f["path"]), f["path"].rsplit("/", 1)[-1]),
            str(f.get("language", "")),
            str(f.get("lines", "")),
            str(f.get("complexity", "")),
            _files(f.get("depends_on", [])),
        )
        for f in files
    )
    drawn = [f["path"] for f in files][:MAX_NODES]
    edges = [(f["path"], d) for f in files for d in f.get("depends_on", [])]
    nodes = list(dict.fromkeys([*drawn, *(d for _, d in edges)]))[:MAX_NODES]
    where = directory or "the root"
    body = [
        lookup_form(),
        section(
            "Files",
            table(("file", "language", "lines", "complexity", "imports"), rows),
            pager("/code/folder", {"dir": directory}, pg, len(data["files"]), PAGE_SIZE),
            charts.graph(nodes, edges, f"what the files of {where} import"),
        ),
        section("Functions", functions_table([f for f in data["functions"] if f["file"] in shown])),
        section(
            "Components", components_table([c for c in data["components"] if c["file"] in shown])
        ),
    ]
    return Page(f"Folder {directory or '(repository root)'}", Html("".join(body)))


def functions_table(functions: list[dict[str, Any]]) -> Html:
    return table(
        ("function", "lines", "calls (callees)", "called by (callers)", "side effects"),
        (
            (
                link(url("/code/name", q=f["key"]), f["qualified_name"]),
                "–".join(str(n) for n in f.get("lines", [])),
                _names(f.get("calls", [])),
                _names(f.get("called_by", [])),
                ", ".join(f.get("side_effects", [])),
            )
            for f in functions
        ),
    )


def components_table(components: list[dict[str, Any]]) -> Html:
    return table(
        ("component", "props", "state", "hooks", "children"),
        (
            (
                link(url("/code/name", q=c["name"]), c["name"]),
                ", ".join(c.get("props", [])),
                ", ".join(c.get("state", [])),
                ", ".join(c.get("hooks", [])),
                _names(c.get("children", [])),
            )
            for c in components
        ),
    )


def file(req: Request) -> Page:
    path = req.arg("path")
    entity = req.mem.code.file(path)
    if entity is None:
        return Page(
            "Not in the code map",
            tag("p", f"{path} is not in the code map (`pmem scan` maps the code)", class_="error"),
            status=404,
        )
    directory = path.rsplit("/", 1)[0] if "/" in path else ""
    data = req.mem.code.folder(directory)
    mine = [f for f in data["functions"] if f["file"] == entity["path"]]
    comps = [c for c in data["components"] if c["file"] == entity["path"]]
    keep = (
        "language",
        "type",
        "lines",
        "complexity",
        "cyclomatic",
        "purpose",
        "exports",
        "classes",
        "packages",
        "notes",
        "modified_by",
        "hash",
    )
    fields = [
        (k, ", ".join(map(str, v)) if isinstance(v, list) else v)
        for k in keep
        if (v := entity.get(k)) not in (None, "", [])
    ]
    body = [
        tag(
            "p",
            "in ",
            link(url("/code/folder", dir=directory), directory or "(root)"),
            " · ",
            link(url("/code/name", q=entity["path"]), "what imports this file"),
        ),
        definitions([*fields, ("imports", _files(entity.get("depends_on", [])))]),
        section("Functions", functions_table(mine)),
        section("Components", components_table(comps)),
    ]
    return Page(entity["path"], Html("".join(body)))


def lookup(req: Request) -> Page:
    name = req.arg("q")
    rel: dict[str, Any] = req.mem.code.relationships(name)
    kind = rel.get("kind")
    if kind == "function":
        defs = [
            definitions(
                [
                    ("file", _files([d["file"]])),
                    ("calls (callees)", _names(d["calls"])),
                    ("called by (callers)", _names(d["called_by"])),
                    ("side effects", ", ".join(d.get("side_effects", []))),
                ]
            )
            for d in rel.get("definitions", [])
        ]
        body: list[Html] = [*defs]
    elif kind == "file":
        body = [
            definitions(
                [
                    ("file", _files([rel["name"]])),
                    ("imports", _files(rel.get("imports", []))),
                    ("imported by", _files(rel.get("imported_by", []))),
                    ("packages", ", ".join(rel.get("packages", []))),
                    ("components", _names(rel.get("components", []))),
                ]
            )
        ]
    elif kind == "component":
        body = [
            definitions(
                [
                    ("files", _files(rel.get("files", []))),
                    ("children", _names(rel.get("children", []))),
                    ("rendered by", _names(rel.get("rendered_by", []))),
                    ("hooks", ", ".join(rel.get("hooks", []))),
                ]
            )
        ]
    else:
        body = [
            definitions(
                [
                    ("entry", _files([rel["entry"]]) if rel.get("entry") else "—"),
                    ("folders", ", ".join(rel.get("paths", []))),
                    ("files", _files(rel.get("files", []))),
                    ("depends on", _names(rel.get("depends_on", []))),
                    ("components", _names(rel.get("components", []))),
                    ("services", ", ".join(rel.get("services", []))),
                    ("database", ", ".join(rel.get("database", []))),
                ]
            )
        ]
    areas = rel.get("areas")
    if areas:
        body.append(definitions([("feature areas", _names(areas))]))
    return Page(f"{kind}: {rel.get('name', name)}", Html(lookup_form(name) + "".join(body)))
