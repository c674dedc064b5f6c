"""The code map pages: areas, folders, files, functions and components, and their links.

Functions show their callers and callees, and pictures show how areas (and a folder's files)
depend on each other.
Every page reads a bounded part of the map (the areas, one folder's shard, a page of the
folder list), so a map of 100k files answers as fast as a small one; only the look-up by name
(``/code/name``, the same as ``pmem entity relationships``) may read the whole map.
"""

from __future__ import annotations

import re
from typing import Any

from planning_memory.errors import InputError, NotFoundError, PlanningMemoryError
from planning_memory.viewer import anchored, charts
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
from planning_memory.viewer.jobs import Pending, line
from planning_memory.viewer.layout import PAGE_SIZE, Page, Request

MAX_NODES = 40  # files drawn in one folder's picture
MAX_DEFINITIONS = 12  # definitions of one name shown (each reads its folder)
FOLDERS_EVERY_S = 30
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
    find = req.arg("find")
    body = [lookup_form(find=find)]
    if find:
        body.append(section("Found", found(req, find), id_="found"))
    rows = (
        (
            link(url("/code/name", q=name), area_label(name, area)),
            str(area.get("file_count", "")),
            _files([area["entry"]]) if area.get("entry") else "—",
            _names(area.get("depends_on", [])),
            _names(area.get("components", [])),
        )
        for name, area in areas.items()
    )
    label = {name: area_label(name, area) for name, area in areas.items()}
    edges = [
        (label[a], label.get(d, d)) for a, area in areas.items() for d in area.get("depends_on", [])
    ]
    body.append(
        section(
            "Feature areas",
            table(("area", "files", "entry", "depends on", "components"), rows, id="areas"),
            charts.graph(list(label.values()), edges, "how feature areas depend on each other"),
        )
    )
    body.append(section("Folders", folder_list(req)))
    return Page("Code map", Html("".join(body)))


def folder_list(req: Request) -> Html:
    """The map's folders, a page at a time (listed in the background: at 100k files the walk
    takes a second; listed again after a scan, or every ``FOLDERS_EVERY_S`` for the changes
    the change stamp does not see, deep in the map)."""
    try:
        folders: list[str] = req.reads.jobs.kept(
            "code-folders",
            "Listing the code map's folders",
            lambda job: req.mem.code.folders(),
            every=FOLDERS_EVERY_S,
            version=req.reads.stamps()["entity"],
        )
    except Pending as waiting:
        return line(waiting.job)
    pg = req.page()
    shown = folders[(pg - 1) * PAGE_SIZE : pg * PAGE_SIZE]
    listing = tag(
        "ul",
        [tag("li", link(url("/code/folder", dir=f), f or "(repository root)")) for f in shown],
        class_="folders",
    )
    return Html(listing + pager("/code", {}, pg, len(folders), PAGE_SIZE))


def area_label(name: str, area: dict[str, Any]) -> str:
    """An area as its folder is named when the area's name is that folder's name written the
    map's way (``_pytest`` is the area ``-pytest``), else its name."""
    folders = [str(p).rstrip("/").rsplit("/", 1)[-1] for p in area.get("paths", [])]
    same = [f for f in folders if f != name and _normal(f) == name]
    return same[0] if len(set(same)) == 1 else name


def _normal(folder: str) -> str:
    """A folder's name the way the map names an area after it: lower case, words and
    underscores joined by ``-``."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", folder.strip())
    return re.sub(r"[_\s]+", "-", text.lower())


def found(req: Request, query: str) -> Html:
    try:
        hits = req.reads.indexed(
            f"search-code:{query}",
            f"Searching the code for “{query}”",
            lambda: req.mem.search(
                query, sources=["entity", "code"], limit=FOUND_LIMIT, remember=False
            ),
        )
    except Pending as waiting:
        return line(waiting.job)
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
        section("Memories anchored here", memories(req, entity["path"]), id_="anchored"),
        section("Functions", functions_table(mine)),
        section("Components", components_table(comps)),
    ]
    return Page(entity["path"], Html("".join(body)))


def memories(req: Request, path: str, function: dict[str, Any] | None = None) -> Html:
    """The memories anchored to ``path`` (to ``function`` of it when given), flagged when
    their code changed since they were saved."""
    try:
        found = anchored.of_file(req, path)
    except Pending as waiting:
        return line(waiting.job)
    if function is not None:
        found = [a for a in found if anchored.matches(a, function)]
    if not found:
        return tag("p", "no memory is anchored here", class_="empty")
    return anchored.listing(req, found, with_symbol=function is None)


def lookup(req: Request) -> Page:
    """An area, file, component or function by name, as ``pmem entity relationships`` gives
    it; what needs the whole map (a file's importers, a component's parents, a function of a
    bare name) is answered from the viewer's index of the map (``codeindex``)."""
    name = req.arg("q")
    code = req.mem.code
    if not name:
        raise InputError("name an area, file, component or function")
    if code.area(name) is not None:
        return _area_page(req, name, code.relationships(name))
    if "/" in name or "." in name.rsplit("/", 1)[-1]:
        try:
            entity = code.file(name)
        except PlanningMemoryError:
            entity = None
        if entity is not None:
            return _file_relationships(req, entity)
    if "::" in name:
        functions = code.functions(name)
        components = [] if functions else code.components(name)
        total = len(functions or components)
    else:
        index = req.reads.code_index()
        keys = index.components.get(name) or index.functions.get(name) or []
        kind = "components" if name in index.components else "functions"
        found = _load(req, keys, kind)
        components, functions = (found, []) if kind == "components" else ([], found)
        total = len(keys)
    if components:
        page = _component_page(req, name, components)
    elif functions:
        page = _function_page(req, name, functions)
    else:
        raise NotFoundError(f"no area, file, component or function named {name!r}")
    if total > len(components or functions):
        note = f"{total:,} definitions of {name}: the first {len(components or functions)} shown"
        return Page(page.title, Html(tag("p", note, class_="note") + page.body))
    return page


def _load(req: Request, keys: list[str], kind: str) -> list[dict[str, Any]]:
    """The entities of ``keys`` in their full shape (one folder read per folder they are in)."""
    wanted = set(sorted(keys)[:MAX_DEFINITIONS])
    folders = sorted({k.split("::", 1)[0].rpartition("/")[0] for k in wanted})
    found = [e for f in folders for e in req.mem.code.folder(f)[kind] if e["key"] in wanted]
    return sorted(found, key=lambda e: str(e["key"]))


def _areas(req: Request, paths: list[str]) -> Html:
    areas: dict[str, Any] = req.reads.memo("code-areas", req.mem.code.areas, part="entity")
    names = sorted(
        {
            name
            for name, area in areas.items()
            for p in paths
            if p in area.get("files", [])
            or any(p.startswith(f + "/") for f in area.get("paths", []))
        }
    )
    return definitions([("feature areas", _names(names))]) if names else Html("")


def _file_relationships(req: Request, entity: dict[str, Any]) -> Page:
    path = entity["path"]
    try:
        importers: Html = _files(req.reads.code_index().imported_by(path))
    except Pending as waiting:
        importers = line(waiting.job)
    body = [
        definitions(
            [
                ("file", _files([path])),
                ("imports", _files(entity.get("depends_on", []))),
                ("imported by", importers),
                ("packages", ", ".join(entity.get("packages", []))),
                ("components", _names(entity.get("components", []))),
            ]
        ),
        _areas(req, [path]),
        section("Memories anchored here", memories(req, path), id_="anchored"),
    ]
    return Page(f"file: {path}", Html(lookup_form(path) + "".join(body)))


def _component_page(req: Request, name: str, found: list[dict[str, Any]]) -> Page:
    names = {str(c["name"]) for c in found}
    try:
        index = req.reads.code_index()
        parents: Html = _names(sorted({p for n in names for p in index.parents.get(n, [])}))
    except Pending as waiting:
        parents = line(waiting.job)
    files = sorted({str(c["file"]) for c in found})
    body = [
        definitions(
            [
                ("files", _files(files)),
                ("children", _names(sorted({ch for c in found for ch in c.get("children", [])}))),
                ("rendered by", parents),
                ("hooks", ", ".join(sorted({h for c in found for h in c.get("hooks", [])}))),
            ]
        ),
        _areas(req, files),
    ]
    return Page(f"component: {name}", Html(lookup_form(name) + "".join(body)))


def _function_page(req: Request, name: str, found: list[dict[str, Any]]) -> Page:
    body = [
        definitions(
            [
                ("file", _files([d["file"]])),
                ("calls (callees)", _names(d.get("calls", []))),
                ("called by (callers)", _names(d.get("called_by", []))),
                ("side effects", ", ".join(d.get("side_effects", []))),
            ]
        )
        for d in found
    ]
    body.append(_areas(req, sorted({str(d["file"]) for d in found})))
    anchored_here = [
        Html(tag("h3", tag("code", d["key"])) + memories(req, str(d["file"]), d))
        if len(found) > 1
        else memories(req, str(d["file"]), d)
        for d in found
    ]
    body.append(section("Memories anchored here", anchored_here, id_="anchored"))
    return Page(f"function: {name}", Html(lookup_form(name) + "".join(body)))


def _area_page(req: Request, name: str, rel: dict[str, Any]) -> Page:
    body = definitions(
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
    return Page(f"area: {rel.get('name', name)}", Html(lookup_form(name) + body))
