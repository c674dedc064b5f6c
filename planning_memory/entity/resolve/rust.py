"""Rust import resolution: ``use`` paths through the crate's modules and its dependencies.

The nearest ``Cargo.toml`` places the importer in a crate (``src/lib.rs``, ``src/main.rs``,
``src/bin/``, ``tests/``, ``examples/``, ``benches/``, or a root its manifest names) and in a
module of it; ``crate::`` walks the module tree from the crate root (``mod a;`` -> ``a.rs`` or
``a/mod.rs``), ``self::``/``super::`` from the importer's module; a path ending in items gives
the file of its deepest module. A leading name is a child module, else a crate:
``std``/``core``/``alloc``, a dependency of the manifest (its package name; the files of a
path dependency in the repository), or the package's own library.
"""

from __future__ import annotations

import posixpath
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planning_memory.entity.resolve.common import as_list, as_table

if TYPE_CHECKING:
    from planning_memory.entity.resolve.common import Context

_RUST_SYSROOT = frozenset({"std", "core", "alloc", "proc_macro", "test"})
_RUST_TARGETS = (("src", "bin"), ("tests",), ("examples",), ("benches",))
_RUST_DEPENDENCIES = ("dependencies", "dev-dependencies", "build-dependencies")


@dataclass(frozen=True)
class Cargo:
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
class Crate:
    """Where a Rust file sits: the folder its crate root's ``mod x;`` files live in, the
    crate root file (None for a module several crates share, like ``tests/common/mod.rs``)
    and the file's module path in the crate."""

    folder: str
    root: str | None
    module: tuple[str, ...]
    cargo: Cargo | None


def resolve(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
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
    crate: Crate, segments: list[str], extern: bool, ctx: Context
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
        found = _rust_item(Crate(posixpath.dirname(root), root, (), None), [], segments[1:], ctx)
        return found, None
    if package is not None:
        return None, package
    local = _rust_module(crate.folder, [], segments, ctx) if crate.module and not extern else None
    if local:
        return local, None
    return None, None if cargo else head


def _rust_item(crate: Crate, base: list[str], rest: list[str], ctx: Context) -> str | None:
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


def _rust_crate(importer: str, ctx: Context) -> Crate:
    known = ctx.crates.get(importer)
    if known is None:
        known = ctx.crates[importer] = _locate_crate(importer, ctx)
    return known


def _locate_crate(importer: str, ctx: Context) -> Crate:
    cargo = _cargo_for(posixpath.dirname(importer), ctx)
    if cargo is None:  # no manifest: the last ``src`` folder is the crate's, if any
        parts = importer.split("/")
        if "src" not in parts[:-1]:
            return Crate(posixpath.dirname(importer), importer, (), None)
        index = len(parts) - 1 - parts[::-1].index("src")
        src = "/".join(parts[: index + 1])
        lib: str | None = posixpath.join(src, "lib.rs")
        root = _src_root(src, lib if lib in ctx.files else None, importer, ctx)
        return Crate(src, root, _rust_path(parts[index + 1 :]), None)
    parts = importer[len(cargo.folder) :].lstrip("/").split("/")
    for target in _RUST_TARGETS:
        size = len(target)
        if tuple(parts[:size]) != target or len(parts) == size:
            continue
        folder = posixpath.join(cargo.folder, *target)
        inner = parts[size:]
        if len(inner) == 1:  # tests/api.rs, src/bin/tool.rs: a crate root
            return Crate(folder, importer, (), cargo)
        main = posixpath.join(folder, inner[0], "main.rs")
        if main in ctx.files:  # tests/api/main.rs and its modules
            return Crate(posixpath.dirname(main), main, _rust_path(inner[1:]), cargo)
        return Crate(folder, None, _rust_path(inner, root_files=False), cargo)
    if parts[0] == "src" and len(parts) > 1:
        src = posixpath.join(cargo.folder, "src")
        lib = cargo.lib_root if posixpath.dirname(cargo.lib_root or "") == src else None
        root = _src_root(src, lib, importer, ctx)
        return Crate(src, root, _rust_path(parts[1:]), cargo)
    named = _named_root(cargo, importer) if parts != ["build.rs"] else None
    return named or Crate(posixpath.dirname(importer), importer, (), cargo)


def _src_root(src: str, lib: str | None, importer: str, ctx: Context) -> str | None:
    """The crate root of a file under ``src/``: ``main.rs`` for itself, else the library's."""
    main = posixpath.join(src, "main.rs")
    if importer == main or lib is None:
        return main if main in ctx.files else None
    return lib


def _named_root(cargo: Cargo, importer: str) -> Crate | None:
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
            best = Crate(folder, root, module, cargo)
    return best


def _rust_path(inner: list[str], *, root_files: bool = True) -> tuple[str, ...]:
    """The module path of a file at ``inner`` below its crate's folder."""
    stem = inner[-1].removesuffix(".rs")
    if stem == "mod" or (root_files and len(inner) == 1 and stem in ("lib", "main")):
        return tuple(inner[:-1])
    return (*inner[:-1], stem)


def _cargo_for(folder: str, ctx: Context) -> Cargo | None:
    """The package of the nearest ``Cargo.toml`` at or above ``folder``."""
    if folder in ctx.cargos:
        return ctx.cargos[folder]
    manifest = _cargo_manifest(folder, ctx)
    found: Cargo | None
    if manifest is not None:
        found = _cargo_package(folder, manifest, ctx)
    else:
        parent = posixpath.dirname(folder)
        found = _cargo_for(parent, ctx) if folder and parent != folder else None
    ctx.cargos[folder] = found
    return found


def _cargo_manifest(folder: str, ctx: Context) -> dict[str, Any] | None:
    if folder not in ctx.manifests:
        raw = ctx.read(posixpath.join(folder, "Cargo.toml").lstrip("/"))
        try:
            data = tomllib.loads(raw.decode("utf-8", "replace")) if raw is not None else None
        except tomllib.TOMLDecodeError:
            data = {}  # a package all the same: resolve without its dependencies
        ctx.manifests[folder] = data
    return ctx.manifests[folder]


def _cargo_package(folder: str, manifest: dict[str, Any], ctx: Context) -> Cargo:
    tables = [manifest, *map(as_table, as_table(manifest.get("target")).values())]
    deps: dict[str, tuple[str, str | None]] = {}
    for table in tables:
        for kind in _RUST_DEPENDENCIES:
            for key, spec in as_table(table.get(kind)).items():
                deps[key.replace("-", "_")] = _cargo_dependency(folder, key, spec, ctx)
    lib, package = as_table(manifest.get("lib")), as_table(manifest.get("package"))
    roots = [_in_package(folder, lib.get("path"), ctx)]
    for kind in ("bin", "test", "example", "bench"):
        for target in as_list(manifest.get(kind)):
            roots.append(_in_package(folder, as_table(target).get("path"), ctx))
    lib_root = roots[0] or _in_package(folder, "src/lib.rs", ctx)
    name = lib.get("name") or package.get("name")
    crate = name.replace("-", "_") if isinstance(name, str) and lib_root else None
    return Cargo(folder, crate, lib_root, tuple(r for r in roots if r), deps)


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
        workspace = as_table(manifest.get("workspace")) if manifest else {}
        if workspace:
            spec = as_table(workspace.get("dependencies")).get(key)
            return (folder, spec) if spec is not None else None
        parent = posixpath.dirname(folder)
        if not folder or parent == folder:
            return None
        folder = parent
