"""Feature areas (``relationships.json``): groups of files that make up one feature. Pure.

An area's name comes from a file's folders, after dropping the parts every project has
(``src``, ``lib``, ``app``, ``components``, ``api``, ``internal``, ``pkg``, Java's
``src/main/java`` and the package prefix all Java files share, Next.js route groups
``(name)`` and dynamic segments ``[id]``): the first folder left names the area, lower-cased,
with the synonyms in ``SYNONYMS`` folded (``auth``, ``login``, ``signup``, ``session`` ... ->
``authentication``). A file whose folders name nothing takes its name's stem when that stem is
already an area (``services/auth.service.ts`` -> ``authentication``), else joins the one area
all the files importing it belong to (or, when nothing imports it, the one area of everything
it imports), if there is one.

Each area lists ``paths`` (folders wholly in it) and ``files`` (single files placed by name
or by imports), ``file_count``, ``entry`` (a Next.js ``route``/``page`` file, else an
``index``/``__init__``/``main``/``mod`` file, else the file most imported from outside the
area), ``components`` (React components), ``services`` (classes named ``*Service``,
``*Client``, ``*Repository``, ``*Provider``, ``*Store``, ``*Controller``, ``*Manager``,
``*Api``), ``database`` (models defined or queried: ORM classes, ``prisma.<model>``) and
``depends_on`` (areas it imports from). An area with ``"edited_by": "human"`` or
``"manual": true`` was written by a person: it is kept exactly as it is and never recomputed.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import Any

Entity = dict[str, Any]
GENERIC = frozenset(
    {
        "src",
        "source",
        "lib",
        "libs",
        "app",
        "apps",
        "pkg",
        "internal",
        "cmd",
        "components",
        "component",
        "pages",
        "api",
        "routes",
        "services",
        "service",
        "server",
        "client",
        "hooks",
        "utils",
        "util",
        "helpers",
        "common",
        "shared",
        "modules",
        "features",
        "feature",
        "main",
        "java",
        "kotlin",
        "scala",
        "python",
        "py",
        "js",
        "ts",
        "test",
        "tests",
        "__tests__",
        "spec",
        "specs",
        "packages",
        "crates",
        "controllers",
        "models",
        "views",
        "handlers",
        "core",
        "",
    }
)
SYNONYMS = {
    name: "authentication"
    for name in (
        "auth",
        "authentication",
        "authn",
        "login",
        "logout",
        "signin",
        "sign-in",
        "signup",
        "sign-up",
        "register",
        "registration",
        "session",
        "sessions",
        "password",
        "passwords",
        "oauth",
        "sso",
        "jwt",
        "nextauth",
        "identity",
        "forgot-password",
        "reset-password",
    )
}
_SERVICE = re.compile(r"(Service|Client|Repository|Provider|Store|Controller|Manager|Api)$")
_STEM_SUFFIX = re.compile(
    r"[._-]?(service|controller|repository|repo|routes?|handlers?|utils?|helpers?|store|api|"
    r"test|spec|types?|model|schema|module|component|page|hooks?)$",
    re.IGNORECASE,
)
_HUMAN = "human"
_ROUTE_FILE = re.compile(
    r"(^|/)(page|layout|template|loading|error|not-found|default|route)\.[jt]sx?$"
)


def _normal(segment: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", segment.strip())
    name = re.sub(r"[_\s]+", "-", name.lower())
    return SYNONYMS.get(name, name)


def _significant(segment: str) -> bool:
    if segment.startswith(("(", "[", "@", ".")) or segment.lower() in GENERIC:
        return False
    return not segment.isdigit()


def _java_prefix(files: dict[str, Entity]) -> str:
    """The folder prefix every Java file shares up to its package's last common part."""
    java = [p for p, e in files.items() if e.get("language") == "java"]
    if not java:
        return ""
    common = posixpath.commonpath([posixpath.dirname(p) for p in java]) if len(java) > 1 else ""
    return common


def area_key(path: str, java_prefix: str = "") -> tuple[str | None, str]:
    """``(area name or None, the folder that gives it)`` for one file from its folders."""
    folder = posixpath.dirname(path)
    if java_prefix and folder.startswith(java_prefix):
        rest = folder[len(java_prefix) :].strip("/")
        parts = rest.split("/") if rest else []
        prefix = java_prefix.split("/")
    else:
        parts = folder.split("/") if folder else []
        prefix = []
    for index, segment in enumerate(parts):
        if _significant(segment):
            return _normal(segment), "/".join([*prefix, *parts[: index + 1]])
    return None, ""


def _stem(path: str) -> str:
    stem = posixpath.basename(path).split(".", 1)[0]
    previous = None
    while previous != stem:
        previous, stem = stem, _STEM_SUFFIX.sub("", stem)
    return _normal(stem) if stem else ""


def derive(files: dict[str, Entity]) -> dict[str, Entity]:
    """Areas computed from the file entities (paths, imports, components, classes, models)."""
    java_prefix = _java_prefix(files)
    owner: dict[str, str] = {}
    folders: dict[str, set[str]] = {}
    for path in files:
        key, folder = area_key(path, java_prefix)
        if key:
            owner[path] = key
            folders.setdefault(key, set()).add(folder)
    loose: dict[str, set[str]] = {}
    for path in files:
        if path in owner:
            continue
        stem = _stem(path)
        if stem in folders:
            owner[path] = stem
            loose.setdefault(stem, set()).add(path)
    _place_by_imports(files, owner, loose)
    members: dict[str, list[str]] = {}
    for path in sorted(owner):
        members.setdefault(owner[path], []).append(path)
    inbound: Counter[str] = Counter()
    for path, entity in files.items():
        for target in entity.get("imports", {}).values():
            if target in owner and owner[target] != owner.get(path):
                inbound[target] += 1
    return {
        name: _area(
            name, files, owner, group, folders.get(name, set()), loose.get(name, set()), inbound
        )
        for name, group in sorted(members.items())
    }


def _place_by_imports(
    files: dict[str, Entity], owner: dict[str, str], loose: dict[str, set[str]]
) -> None:
    importers: dict[str, list[str]] = {}
    imported: dict[str, list[str]] = {}
    for path, entity in files.items():
        for target in entity.get("imports", {}).values():
            if target in files:
                imported.setdefault(path, []).append(target)
                importers.setdefault(target, []).append(path)
    for path in sorted(files):
        if path in owner:
            continue
        for neighbours in (importers.get(path, []), imported.get(path, [])):
            areas = {owner[n] for n in neighbours if n in owner}
            if len(areas) == 1:
                name = areas.pop()
                owner[path] = name
                loose.setdefault(name, set()).add(path)
                break
            if areas:
                break


def _area(
    name: str,
    files: dict[str, Entity],
    owner: dict[str, str],
    members: list[str],
    folders: set[str],
    loose: set[str],
    inbound: Counter[str],
) -> Entity:
    components: list[str] = []
    services: list[str] = []
    database: list[str] = []
    depends: set[str] = set()
    for path in members:
        entity = files[path]
        if not _ROUTE_FILE.search(path):  # Next.js pages are entries, not parts
            components.extend(entity.get("components", []))
        services.extend(
            c.rsplit(".", 1)[-1] for c in entity.get("classes", []) if _SERVICE.search(c)
        )
        database.extend(entity.get("models", []))
        for target in entity.get("imports", {}).values():
            other = owner.get(target or "")
            if other and other != name:
                depends.add(other)
    return {
        "paths": sorted(_outermost(folders)),
        "files": sorted(loose),
        "file_count": len(members),
        "entry": _entry(members, inbound),
        "components": sorted(set(components)),
        "services": sorted(set(services)),
        "database": sorted(set(database)),
        "depends_on": sorted(depends),
        "edited_by": "scan",
    }


def _outermost(folders: set[str]) -> set[str]:
    return {f for f in folders if not any(f != o and f.startswith(o + "/") for o in folders)}


_ENTRY_PATTERNS = (
    re.compile(r"(^|/)route\.[jt]sx?$"),
    re.compile(r"(^|/)page\.[jt]sx?$"),
    re.compile(r"(^|/)(index\.[jt]sx?|__init__\.py|main\.\w+|mod\.rs|lib\.rs)$"),
)


def _entry(members: list[str], inbound: Counter[str]) -> str | None:
    if not members:
        return None
    for pattern in _ENTRY_PATTERNS:
        found = [m for m in members if pattern.search(m)]
        if found:
            return min(found, key=lambda p: (p.count("/"), p))
    used = [m for m in members if inbound[m]]
    if used:
        return min(used, key=lambda p: (-inbound[p], p))
    return min(members, key=lambda p: (p.count("/"), p))


def is_human(area: Any) -> bool:
    return isinstance(area, dict) and (
        area.get("edited_by") == _HUMAN or area.get("manual") is True
    )


def merge(derived: dict[str, Entity], existing: Any) -> dict[str, Any]:
    """The relationships document: derived areas, with every person-edited area kept as is."""
    areas: dict[str, Any] = dict(derived)
    if isinstance(existing, dict) and isinstance(existing.get("areas"), dict):
        for name, area in existing["areas"].items():
            if is_human(area):
                areas[name] = area
    return {"areas": areas, "version": 1}
