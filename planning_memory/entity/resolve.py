"""Import resolution: a module as written in an import -> a repository path or a package name.

- Python: relative imports (``from ..core import db``) from the importing file's package;
  absolute ones against the source roots (the repository root, ``src/``, and the parent of
  every top-level package, i.e. of each outermost folder holding ``__init__.py``). ``a.b.c``
  tries ``a/b/c.py``, ``a/b/c/__init__.py``, then ``a/b`` (``c`` may be a name in it).
- JavaScript/TypeScript: ``./`` and ``../`` paths with the usual extensions and ``index``
  files (``./x.js`` also finds ``x.ts``); ``compilerOptions.paths`` and ``baseUrl`` of the
  nearest ``tsconfig.json`` / ``jsconfig.json`` (``@/*`` -> ``src/*``), after its ``extends``
  chain (relative files or packages in ``node_modules``; each option from the last file that
  sets it, ``baseUrl`` relative to that file, ``paths`` to ``baseUrl`` or else to theirs).
- Go: import paths under the module path of the nearest ``go.mod`` -> the package folder
  (``.`` for the repository root).
- Java: ``a.b.C`` -> a file ending in ``a/b/C.java``; ``a.b.*`` -> that package's folder.
- Rust: the nearest ``Cargo.toml`` places the importer in a crate (``src/lib.rs``,
  ``src/main.rs``, ``src/bin/``, ``tests/``, ``examples/``, ``benches/``, or a root its
  manifest names) and in a module of it; ``crate::`` walks the module tree from the crate
  root (``mod a;`` -> ``a.rs`` or ``a/mod.rs``), ``self::``/``super::`` from the importer's
  module; a path ending in items gives the file of its deepest module. A leading name is a
  child module, else a crate: ``std``/``core``/``alloc``, a dependency of the manifest (its
  package name; the files of a path dependency in the repository), or the package's own
  library.
Anything else is external: the package name (``react``, ``@scope/pkg``, ``requests``, ``fmt``).
No import resolves to the importing file itself (``use self::Item``): that is ``(None, None)``.
Only the small config files (tsconfig, go.mod, Cargo.toml) are read, through ``read``.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
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
_CONFIG_DIR = "${configDir}"
_TS_EXTENDS_DEPTH = 8


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
    _rust: dict[str, _Crate] = field(default_factory=dict)
    _cargo: dict[str, _Cargo | None] = field(default_factory=dict)
    _manifests: dict[str, dict[str, Any] | None] = field(default_factory=dict)

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
    if found[0] == importer:  # a name of the file itself (``self::Item``): not a link
        return None, None
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
            # a target under ``${configDir}`` is absolute (``/`` + the repository path)
            target = posixpath.join(config.base, target.replace("*", star))
            joined = posixpath.normpath(target).lstrip("/")
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
        options = _ts_options(posixpath.join(folder, name).lstrip("/"), folder, ctx, 0)
        if options is not None:
            config = _ts_config(options, folder)
            break
    parent = posixpath.dirname(folder)
    if config is None and folder and parent != folder:
        config = _tsconfig_for(parent, ctx)
    ctx._tsconfig[folder] = config
    return config


# ``(baseUrl, (paths, folder of the file declaring them))``, each None when not set
_TsOptions = tuple[str | None, tuple[list[tuple[str, list[str]]], str] | None]


def _ts_config(options: _TsOptions, folder: str) -> _TsConfig:
    """Paths are relative to the effective ``baseUrl``, else to the file declaring them."""
    base_url, paths = options
    base = base_url if base_url is not None else paths[1] if paths else folder
    return _TsConfig(base, base_url is not None, paths[0] if paths else [])


def _ts_options(path: str, leaf: str, ctx: Context, depth: int) -> _TsOptions | None:
    """The ``baseUrl`` and ``paths`` of the config at ``path`` after its ``extends`` chain
    (a file or list of files, later ones and then the file itself overriding); ``leaf`` is
    the folder of the config the chain started from (``${configDir}``)."""
    data = _jsonc(ctx.read(path)) if depth <= _TS_EXTENDS_DEPTH else None
    if data is None:
        return None
    folder = posixpath.dirname(path)
    base_url: str | None = None
    paths: tuple[list[tuple[str, list[str]]], str] | None = None
    extends = data.get("extends")
    for spec in [extends] if isinstance(extends, str) else _list(extends):
        target = _ts_extends(spec, folder, ctx) if isinstance(spec, str) else None
        inherited = _ts_options(target, leaf, ctx, depth + 1) if target else None
        if inherited is not None:
            base_url = inherited[0] if inherited[0] is not None else base_url
            paths = inherited[1] if inherited[1] is not None else paths
    options = data.get("compilerOptions")
    options = options if isinstance(options, dict) else {}
    raw_base, raw_paths = options.get("baseUrl"), options.get("paths")
    if isinstance(raw_base, str):
        base_url = _ts_join(folder, raw_base, leaf)
    if isinstance(raw_paths, dict):
        declared = [
            (
                str(pattern),
                [t.replace(_CONFIG_DIR, "/" + leaf) for t in targets if isinstance(t, str)],
            )
            for pattern, targets in raw_paths.items()
            if isinstance(targets, list)
        ]
        paths = (declared, folder)
    return base_url, paths


def _ts_join(folder: str, target: str, leaf: str) -> str:
    if target.startswith(_CONFIG_DIR):
        folder, target = leaf, "." + target[len(_CONFIG_DIR) :]
    joined = posixpath.normpath(posixpath.join(folder, target))
    return "" if joined == "." else joined


def _ts_extends(spec: str, folder: str, ctx: Context) -> str | None:
    """The config file an ``extends`` entry names: a path relative to ``folder`` or a
    package in a ``node_modules`` of ``folder`` or a parent (``.json`` may be left out)."""
    if spec.startswith(("./", "../")) or spec in (".", ".."):
        stem = posixpath.normpath(posixpath.join(folder, spec))
        candidates = [stem] if stem.endswith(".json") else [stem + ".json", stem]
    elif spec.startswith("/"):
        return None
    else:
        candidates = []
        current: str | None = folder
        while current is not None:
            stem = posixpath.join(current, "node_modules", spec)
            if spec.endswith(".json"):
                candidates.append(stem)
            else:
                candidates += [stem + ".json", stem + "/tsconfig.json"]
            current = posixpath.dirname(current) if current else None
    for candidate in candidates:
        if not candidate.startswith("../") and ctx.read(candidate) is not None:
            return candidate
    return None


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
                return target or ".", None  # the repository root folder is "."
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
_RUST_SYSROOT = frozenset({"std", "core", "alloc", "proc_macro", "test"})
_RUST_TARGETS = (("src", "bin"), ("tests",), ("examples",), ("benches",))
_RUST_DEPENDENCIES = ("dependencies", "dev-dependencies", "build-dependencies")


@dataclass(frozen=True)
class _Cargo:
    """A Cargo package: its library crate (name as code writes it, root file), the crate
    roots its manifest places elsewhere (``[[bin]] path = "crates/core/main.rs"``), and the
    crates it depends on: name in code (``tokio_util``) -> ``(package name, folder of a path
    dependency in the repository)``."""

    folder: str
    lib: str | None
    lib_root: str | None
    roots: tuple[str, ...]
    deps: dict[str, tuple[str, str | None]]


@dataclass(frozen=True)
class _Crate:
    """Where a Rust file sits: the folder its crate root's ``mod x;`` files live in, the
    crate root file (None for a module several crates share, like ``tests/common/mod.rs``)
    and the file's module path in the crate."""

    folder: str
    root: str | None
    module: tuple[str, ...]
    cargo: _Cargo | None


def _rust(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    crate = _rust_crate(importer, ctx)
    extern = module.startswith("::")  # ``::name`` always names a crate
    segments = module.removeprefix("::").split("::")
    if segments[0] == "crate":
        return _rust_item(crate, [], segments[1:], ctx), None
    if segments[0] in ("self", "super"):
        base = list(crate.module)
        while segments and segments[0] in ("self", "super"):
            if segments.pop(0) == "super":
                if not base:
                    return None, None  # above the crate root
                base = base[:-1]
        return _rust_item(crate, base, segments, ctx), None
    # a child module of the importer's module, else a crate
    local = None if extern else _rust_module(crate.folder, list(crate.module), segments, ctx)
    return (local, None) if local else _rust_extern(crate, segments, extern, ctx)


def _rust_extern(
    crate: _Crate, segments: list[str], extern: bool, ctx: Context
) -> tuple[str | None, str | None]:
    """A path that starts with a crate name: a dependency (a package, or the files of a path
    dependency in the repository), the package's own library, or, in 2015-edition code, a
    module of the crate root. Without a Cargo.toml any other name is taken for a crate."""
    head, cargo = segments[0], crate.cargo
    if head in _RUST_SYSROOT:
        return None, head
    package, folder = cargo.deps.get(head, (None, None)) if cargo else (None, None)
    library = cargo if cargo and head == cargo.lib else None
    if library is None and folder is not None:
        library = _cargo_for(folder, ctx)
    if library is not None and library.lib_root is not None:
        root = library.lib_root
        found = _rust_item(_Crate(posixpath.dirname(root), root, (), None), [], segments[1:], ctx)
        return found, None
    if package is not None:
        return None, package
    local = _rust_module(crate.folder, [], segments, ctx) if crate.module and not extern else None
    if local:
        return local, None
    return None, None if cargo else head


def _rust_item(crate: _Crate, base: list[str], rest: list[str], ctx: Context) -> str | None:
    """The file of the deepest module in ``base + rest`` (``rest`` may end in items), else
    the file of module ``base`` itself."""
    found = _rust_module(crate.folder, base, rest, ctx)
    if found or not base:
        return found or crate.root
    return _rust_module(crate.folder, base[:-1], base[-1:], ctx)


def _rust_module(folder: str, base: list[str], rest: list[str], ctx: Context) -> str | None:
    """The file of the deepest module ``base + rest[:n]``, ``n >= 1``, or None."""
    parts = [s for s in rest if s]
    while parts:
        stem = posixpath.join(folder, *base, *parts)
        for candidate in (f"{stem}.rs", f"{stem}/mod.rs"):
            if candidate in ctx.files:
                return candidate
        parts.pop()
    return None


def _rust_crate(importer: str, ctx: Context) -> _Crate:
    known = ctx._rust.get(importer)
    if known is None:
        known = ctx._rust[importer] = _locate_crate(importer, ctx)
    return known


def _locate_crate(importer: str, ctx: Context) -> _Crate:
    cargo = _cargo_for(posixpath.dirname(importer), ctx)
    if cargo is None:  # no manifest: the last ``src`` folder is the crate's, if any
        parts = importer.split("/")
        if "src" not in parts[:-1]:
            return _Crate(posixpath.dirname(importer), importer, (), None)
        index = len(parts) - 1 - parts[::-1].index("src")
        src = "/".join(parts[: index + 1])
        lib: str | None = posixpath.join(src, "lib.rs")
        root = _src_root(src, lib if lib in ctx.files else None, importer, ctx)
        return _Crate(src, root, _rust_path(parts[index + 1 :]), None)
    parts = importer[len(cargo.folder) :].lstrip("/").split("/")
    for target in _RUST_TARGETS:
        size = len(target)
        if tuple(parts[:size]) != target or len(parts) == size:
            continue
        folder = posixpath.join(cargo.folder, *target)
        inner = parts[size:]
        if len(inner) == 1:  # tests/api.rs, src/bin/tool.rs: a crate root
            return _Crate(folder, importer, (), cargo)
        main = posixpath.join(folder, inner[0], "main.rs")
        if main in ctx.files:  # tests/api/main.rs and its modules
            return _Crate(posixpath.dirname(main), main, _rust_path(inner[1:]), cargo)
        return _Crate(folder, None, _rust_path(inner, root_files=False), cargo)
    if parts[0] == "src" and len(parts) > 1:
        src = posixpath.join(cargo.folder, "src")
        lib = cargo.lib_root if posixpath.dirname(cargo.lib_root or "") == src else None
        root = _src_root(src, lib, importer, ctx)
        return _Crate(src, root, _rust_path(parts[1:]), cargo)
    named = _named_root(cargo, importer) if parts != ["build.rs"] else None
    return named or _Crate(posixpath.dirname(importer), importer, (), cargo)


def _src_root(src: str, lib: str | None, importer: str, ctx: Context) -> str | None:
    """The crate root of a file under ``src/``: ``main.rs`` for itself, else the library's."""
    main = posixpath.join(src, "main.rs")
    if importer == main or lib is None:
        return main if main in ctx.files else None
    return lib


def _named_root(cargo: _Cargo, importer: str) -> _Crate | None:
    """The crate of ``importer`` among those whose root the manifest names elsewhere
    (``[[bin]] path = "crates/core/main.rs"``): the deepest folder holding ``importer``."""
    best = None
    for root in cargo.roots:
        folder = posixpath.dirname(root)
        if (not folder or importer.startswith(folder + "/")) and (
            best is None or len(folder) > len(best.folder)
        ):
            inner = importer[len(folder) :].lstrip("/").split("/")
            module = () if importer == root else _rust_path(inner, root_files=False)
            best = _Crate(folder, root, module, cargo)
    return best


def _rust_path(inner: list[str], *, root_files: bool = True) -> tuple[str, ...]:
    """The module path of a file at ``inner`` below its crate's folder."""
    stem = inner[-1].removesuffix(".rs")
    if stem == "mod" or (root_files and len(inner) == 1 and stem in ("lib", "main")):
        return tuple(inner[:-1])
    return (*inner[:-1], stem)


def _cargo_for(folder: str, ctx: Context) -> _Cargo | None:
    """The package of the nearest ``Cargo.toml`` at or above ``folder``."""
    if folder in ctx._cargo:
        return ctx._cargo[folder]
    manifest = _cargo_manifest(folder, ctx)
    found: _Cargo | None
    if manifest is not None:
        found = _cargo_package(folder, manifest, ctx)
    else:
        parent = posixpath.dirname(folder)
        found = _cargo_for(parent, ctx) if folder and parent != folder else None
    ctx._cargo[folder] = found
    return found


def _cargo_manifest(folder: str, ctx: Context) -> dict[str, Any] | None:
    if folder not in ctx._manifests:
        raw = ctx.read(posixpath.join(folder, "Cargo.toml").lstrip("/"))
        try:
            data = tomllib.loads(raw.decode("utf-8", "replace")) if raw is not None else None
        except tomllib.TOMLDecodeError:
            data = {}  # a package all the same: resolve without its dependencies
        ctx._manifests[folder] = data
    return ctx._manifests[folder]


def _cargo_package(folder: str, manifest: dict[str, Any], ctx: Context) -> _Cargo:
    tables = [manifest, *map(_tables, _tables(manifest.get("target")).values())]
    deps: dict[str, tuple[str, str | None]] = {}
    for table in tables:
        for kind in _RUST_DEPENDENCIES:
            for key, spec in _tables(table.get(kind)).items():
                deps[key.replace("-", "_")] = _cargo_dependency(folder, key, spec, ctx)
    lib, package = _tables(manifest.get("lib")), _tables(manifest.get("package"))
    roots = [_in_package(folder, lib.get("path"), ctx)]
    for kind in ("bin", "test", "example", "bench"):
        for target in _list(manifest.get(kind)):
            roots.append(_in_package(folder, _tables(target).get("path"), ctx))
    lib_root = roots[0] or _in_package(folder, "src/lib.rs", ctx)
    name = lib.get("name") or package.get("name")
    crate = name.replace("-", "_") if isinstance(name, str) and lib_root else None
    return _Cargo(folder, crate, lib_root, tuple(r for r in roots if r), deps)


def _in_package(folder: str, path: object, ctx: Context) -> str | None:
    if not isinstance(path, str):
        return None
    joined = posixpath.normpath(posixpath.join(folder, path))
    return joined if joined in ctx.files else None


def _cargo_dependency(folder: str, key: str, spec: object, ctx: Context) -> tuple[str, str | None]:
    """``(package name, folder of a path dependency inside the repository)``."""
    if isinstance(spec, dict) and spec.get("workspace") is True:
        declared = _workspace_dependency(folder, key, ctx)
        folder, spec = declared if declared else (folder, spec)
    if not isinstance(spec, dict):
        return key, None
    name = spec.get("package") if isinstance(spec.get("package"), str) else key
    path = spec.get("path")
    if isinstance(path, str):
        target = posixpath.normpath(posixpath.join(folder, path))
        if target != ".." and not target.startswith("../"):
            return str(name), "" if target == "." else target
    return str(name), None


def _workspace_dependency(folder: str, key: str, ctx: Context) -> tuple[str, object] | None:
    """Where a workspace at or above ``folder`` declares dependency ``key``."""
    while True:
        manifest = _cargo_manifest(folder, ctx)
        workspace = _tables(manifest.get("workspace")) if manifest else {}
        if workspace:
            spec = _tables(workspace.get("dependencies")).get(key)
            return (folder, spec) if spec is not None else None
        parent = posixpath.dirname(folder)
        if not folder or parent == folder:
            return None
        folder = parent


def _tables(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


_RESOLVERS: dict[str, Callable[[str, str, Context], tuple[str | None, str | None]]] = {
    "python": _python,
    "js": _js,
    "go": _go,
    "java": _java,
    "rust": _rust,
}
