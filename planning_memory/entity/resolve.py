"""Import resolution: a module as written in an import -> a repository path or a package name.

- Python: relative imports (``from ..core import db``) from the importing file's package;
  absolute ones against the source roots (the repository root, ``src/``, and the parent of
  every top-level package, i.e. of each outermost folder holding ``__init__.py``). ``a.b.c``
  tries ``a/b/c.py``, ``a/b/c/__init__.py``, then ``a/b`` (``c`` may be a name in it).
- JavaScript/TypeScript: ``./`` and ``../`` paths with the usual extensions and ``index``
  files (``./x.js`` also finds ``x.ts``); ``compilerOptions.paths`` and ``baseUrl`` of the
  nearest ``tsconfig.json`` / ``jsconfig.json`` (``@/*`` -> ``src/*``).
- Go: import paths under the module path of the nearest ``go.mod`` -> the package folder.
- Java: ``a.b.C`` -> a file ending in ``a/b/C.java``; ``a.b.*`` -> that package's folder.
- Rust: ``crate::``, ``self::``, ``super::`` and ``mod x;`` -> ``x.rs`` or ``x/mod.rs`` under
  the crate's ``src/``; a leading name that is a local module is tried before a crate name.
Anything else is external: the package name (``react``, ``@scope/pkg``, ``requests``, ``fmt``).
Only the small config files (tsconfig, go.mod) are read, through the ``read`` callable.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from planning_memory.entity.languages import FAMILY

Reader = Callable[[str], bytes | None]

JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_JSONC_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_GO_MODULE = re.compile(rb"^\s*module\s+(\S+)", re.MULTILINE)


@dataclass
class _TsConfig:
    base: str  # folder that baseUrl and paths are relative to
    has_base_url: bool
    paths: list[tuple[str, list[str]]]


@dataclass
class Context:
    """What resolution needs to know about the repository, built once per scan. The
    per-language indexes are built on first use: a scan of one TypeScript file in a large
    repository needs none of them."""

    files: frozenset[str]
    read: Reader
    _java_dirs: dict[str, str | None] = field(default_factory=dict)
    _memo: dict[tuple[str, str, str], tuple[str | None, str | None]] = field(default_factory=dict)
    _tsconfig: dict[str, _TsConfig | None] = field(default_factory=dict)
    _gomod: dict[str, tuple[str, str] | None] = field(default_factory=dict)

    @cached_property
    def dirs(self) -> frozenset[str]:
        """Every folder holding a source file, and their parents."""
        dirs = {""}
        for path in self.files:
            parent = posixpath.dirname(path)
            while parent not in dirs:
                dirs.add(parent)
                parent = posixpath.dirname(parent)
        return frozenset(dirs)

    @cached_property
    def python_roots(self) -> tuple[str, ...]:
        return _python_roots(self.files)

    @cached_property
    def java_by_name(self) -> dict[str, list[str]]:
        java: dict[str, list[str]] = {}
        for path in self.files:
            if path.endswith(".java"):
                java.setdefault(posixpath.basename(path), []).append(path)
        return java


def build_context(files: Iterable[str], read: Reader) -> Context:
    return Context(frozenset(files), read)


def _python_roots(paths: frozenset[str]) -> tuple[str, ...]:
    roots = {"", "src"}
    for path in paths:
        if path.endswith("__init__.py"):
            package = posixpath.dirname(path)
            parent = posixpath.dirname(package)
            if f"{parent}/__init__.py".lstrip("/") not in paths:
                roots.add(parent)
    return tuple(sorted(roots, key=lambda r: (r.count("/"), r)))


def resolve(
    module: str, importer: str, language: str, ctx: Context
) -> tuple[str | None, str | None]:
    """``(repository path, None)`` when ``module`` is in the repository (a folder for Go
    packages and Java wildcard imports), else ``(None, package name)``."""
    family = FAMILY.get(language, "")
    resolver = _RESOLVERS.get(family)
    if resolver is None or not module:
        return None, module or None
    # the answer depends on the importer's folder only (its module path, for Rust)
    key = (module, importer if family == "rust" else posixpath.dirname(importer), family)
    found = ctx._memo.get(key)
    if found is None:
        found = ctx._memo[key] = resolver(module, importer, ctx)
    return found


# -- Python --------------------------------------------------------------------------------
def _python(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        base = posixpath.dirname(importer)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        found = _python_module(base, module[dots:], ctx)
        return found, None
    for root in ctx.python_roots:
        found = _python_module(root, module, ctx, relative=False)
        if found:
            return found, None
    return None, module.split(".", 1)[0]


def _python_module(base: str, dotted: str, ctx: Context, *, relative: bool = True) -> str | None:
    parts = [p for p in dotted.split(".") if p]
    while True:
        stem = posixpath.join(base, *parts) if parts else base
        for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi"):
            candidate = candidate.lstrip("/")
            if candidate in ctx.files:
                return candidate
        if not parts or (not relative and len(parts) == 1):
            return None
        parts.pop()


# -- JavaScript / TypeScript ---------------------------------------------------------------
def _js(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    if module.startswith(("./", "../")) or module in (".", ".."):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        return _js_file(target, ctx), None
    config = _tsconfig_for(posixpath.dirname(importer), ctx)
    if config is not None:
        found = _ts_alias(module, config, ctx)
        if found:
            return found, None
    if module.startswith(("@/", "~/", "#")):
        return None, None  # a path alias we could not resolve, not a package
    return None, _package_name(module)


def _js_file(target: str, ctx: Context) -> str | None:
    if target.startswith("../") or target == "..":
        return None
    target = "" if target == "." else target
    if target in ctx.files:
        return target
    stem, ext = posixpath.splitext(target)
    if ext in (".js", ".jsx", ".mjs", ".cjs"):
        for alt in (".ts", ".tsx", ".mts", ".cts"):
            if stem + alt in ctx.files:
                return stem + alt
    for extension in JS_EXTENSIONS:
        if target + extension in ctx.files:
            return target + extension
    for extension in JS_EXTENSIONS:
        candidate = posixpath.join(target, "index" + extension)
        if candidate in ctx.files:
            return candidate
    return None


def _ts_alias(module: str, config: _TsConfig, ctx: Context) -> str | None:
    for pattern, targets in config.paths:
        star = _match_star(pattern, module)
        if star is None:
            continue
        for target in targets:
            joined = posixpath.normpath(posixpath.join(config.base, target.replace("*", star)))
            found = _js_file(joined, ctx)
            if found:
                return found
    if config.has_base_url:
        return _js_file(posixpath.normpath(posixpath.join(config.base, module)), ctx)
    return None


def _match_star(pattern: str, module: str) -> str | None:
    if "*" not in pattern:
        return "" if pattern == module else None
    head, tail = pattern.split("*", 1)
    if module.startswith(head) and module.endswith(tail) and len(module) >= len(head + tail):
        return module[len(head) : len(module) - len(tail)]
    return None


def _package_name(module: str) -> str:
    parts = module.split("/")
    if module.startswith("@") and len(parts) > 1:
        return "/".join(parts[:2])
    return parts[0]


def _tsconfig_for(folder: str, ctx: Context) -> _TsConfig | None:
    if folder in ctx._tsconfig:
        return ctx._tsconfig[folder]
    config = None
    for name in ("tsconfig.json", "jsconfig.json"):
        config = _load_tsconfig(posixpath.join(folder, name).lstrip("/"), ctx, 0)
        if config is not None:
            break
    parent = posixpath.dirname(folder)
    if config is None and folder and parent != folder:
        config = _tsconfig_for(parent, ctx)
    ctx._tsconfig[folder] = config
    return config


def _load_tsconfig(path: str, ctx: Context, depth: int) -> _TsConfig | None:
    data = _jsonc(ctx.read(path))
    if data is None or depth > 4:
        return None
    folder = posixpath.dirname(path)
    raw_options = data.get("compilerOptions")
    options: dict[str, Any] = raw_options if isinstance(raw_options, dict) else {}
    parent = None
    extends = data.get("extends")
    if isinstance(extends, str) and extends.startswith("."):
        target = posixpath.normpath(posixpath.join(folder, extends))
        target = target if target.endswith(".json") else target + ".json"
        parent = _load_tsconfig(target, ctx, depth + 1)
    base_url = options.get("baseUrl")
    raw_paths = options.get("paths")
    if not isinstance(base_url, str) and not isinstance(raw_paths, dict):
        return parent or _TsConfig(folder, False, [])
    base = (
        posixpath.normpath(posixpath.join(folder, base_url))
        if isinstance(base_url, str)
        else folder
    )
    base = "" if base == "." else base
    paths: list[tuple[str, list[str]]] = []
    if isinstance(raw_paths, dict):
        for pattern, targets in raw_paths.items():
            if isinstance(targets, list):
                paths.append((str(pattern), [str(t) for t in targets if isinstance(t, str)]))
    elif parent is not None:
        paths = parent.paths
    return _TsConfig(base, isinstance(base_url, str), paths)


def _jsonc(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    text = _JSONC_COMMENT.sub(lambda m: m.group(1) or "", text)
    text = _TRAILING_COMMA.sub(r"\1", text)
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# -- Go ------------------------------------------------------------------------------------
def _go(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    found = _gomod_for(posixpath.dirname(importer), ctx)
    if found is not None:
        name, folder = found
        if module == name or module.startswith(name + "/"):
            target = posixpath.join(folder, module[len(name) :].strip("/")).strip("/")
            if target in ctx.dirs:
                return target, None
    return None, module


def _gomod_for(folder: str, ctx: Context) -> tuple[str, str] | None:
    if folder in ctx._gomod:
        return ctx._gomod[folder]
    raw = ctx.read(posixpath.join(folder, "go.mod").lstrip("/"))
    match = _GO_MODULE.search(raw) if raw else None
    if match:
        found: tuple[str, str] | None = (match.group(1).decode("utf-8", "replace"), folder)
    else:
        parent = posixpath.dirname(folder)
        found = _gomod_for(parent, ctx) if folder and parent != folder else None
    ctx._gomod[folder] = found
    return found


# -- Java ----------------------------------------------------------------------------------
def _java(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    parts = module.split(".")
    if parts[-1] == "*":
        suffix = "/".join(parts[:-1])
        if suffix not in ctx._java_dirs:
            ctx._java_dirs[suffix] = next(
                (f for f in sorted(ctx.dirs) if f == suffix or f.endswith("/" + suffix)), None
            )
        folder = ctx._java_dirs[suffix]
        return (folder, None) if folder is not None else (None, ".".join(parts[:2]))
    while len(parts) > 1:
        name = parts[-1] + ".java"
        suffix = "/".join(parts) + ".java"
        for candidate in ctx.java_by_name.get(name, []):
            if candidate == suffix or candidate.endswith("/" + suffix):
                return candidate, None
        parts.pop()
    return None, ".".join(module.split(".")[:2])


# -- Rust ----------------------------------------------------------------------------------
def _rust(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    src, here = _rust_module_path(importer)
    segments = module.split("::")
    head = segments[0]
    if head == "crate":
        return _rust_file(src, segments[1:], ctx), None
    if head in ("self", "super"):
        base = list(here)
        while segments and segments[0] in ("self", "super"):
            if segments.pop(0) == "super" and base:
                base.pop()
        return _rust_file(src, base + segments, ctx), None
    local = _rust_file(src, here + segments, ctx) or _rust_file(src, segments, ctx)
    if local:
        return local, None
    return None, head


def _rust_module_path(importer: str) -> tuple[str, list[str]]:
    """The crate's ``src`` folder and the module path of ``importer`` inside it."""
    parts = importer.split("/")
    if "src" in parts:
        index = len(parts) - 1 - parts[::-1].index("src")
        src = "/".join(parts[: index + 1])
        inner = parts[index + 1 :]
    else:
        src, inner = posixpath.dirname(importer), [posixpath.basename(importer)]
    stem = inner[-1].removesuffix(".rs") if inner else ""
    module = inner[:-1] + ([] if stem in ("lib", "main", "mod") else [stem])
    return src, module


def _rust_file(src: str, segments: list[str], ctx: Context) -> str | None:
    parts = [s for s in segments if s]
    while parts:
        stem = posixpath.join(src, *parts)
        for candidate in (f"{stem}.rs", f"{stem}/mod.rs"):
            if candidate in ctx.files:
                return candidate
        parts.pop()
    return None


_RESOLVERS: dict[str, Callable[[str, str, Context], tuple[str | None, str | None]]] = {
    "python": _python,
    "js": _js,
    "go": _go,
    "java": _java,
    "rust": _rust,
}
