"""JavaScript/TypeScript import resolution: relative paths and tsconfig/jsconfig aliases.

``./`` and ``../`` paths take the usual extensions and ``index`` files (``./x.js`` also finds
``x.ts``), each of the tsconfig's ``moduleSuffixes`` tried first (``./x`` -> ``x.native.ts``);
``compilerOptions.paths`` and ``baseUrl`` of the nearest ``tsconfig.json`` / ``jsconfig.json``
(``@/*`` -> ``src/*``) apply after its ``extends`` chain (relative files or packages in
``node_modules``; each option from the last file that sets it, ``baseUrl`` relative to that
file, ``paths`` to ``baseUrl`` or else to theirs). Anything else is a package (``react``,
``@scope/pkg``).
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planning_memory.entity.resolve.common import as_list

if TYPE_CHECKING:
    from planning_memory.entity.resolve.common import Context

JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_JSONC_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_CONFIG_DIR = "${configDir}"
_TS_EXTENDS_DEPTH = 8


@dataclass
class TsConfig:
    base: str  # folder that baseUrl and paths are relative to
    has_base_url: bool
    paths: list[tuple[str, list[str]]]
    suffixes: tuple[str, ...] = ("",)  # ``moduleSuffixes``: ``./x`` may be ``x.native.ts``


def resolve(module: str, importer: str, ctx: Context) -> tuple[str | None, str | None]:
    config = _tsconfig_for(posixpath.dirname(importer), ctx)
    if module.startswith(("./", "../")) or module in (".", ".."):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        return _js_file(target, ctx, config.suffixes if config else ("",)), None
    if config is not None:
        found = _ts_alias(module, config, ctx)
        if found:
            return found, None
    if module.startswith(("@/", "~/", "#")):
        return None, None  # a path alias we could not resolve, not a package
    return None, _package_name(module)


def _js_file(target: str, ctx: Context, suffixes: tuple[str, ...] = ("",)) -> str | None:
    """The file an import of ``target`` names: itself, with an extension (each of the
    tsconfig's ``moduleSuffixes`` tried before it, as TypeScript does), or its ``index``."""
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
    for base in (target, posixpath.join(target, "index")):
        for extension in JS_EXTENSIONS:
            for suffix in suffixes:
                if base + suffix + extension in ctx.files:
                    return base + suffix + extension
    return None


def _ts_alias(module: str, config: TsConfig, ctx: Context) -> str | None:
    for pattern, targets in config.paths:
        star = _match_star(pattern, module)
        if star is None:
            continue
        for target in targets:
            # a target under ``${configDir}`` is absolute (``/`` + the repository path)
            target = posixpath.join(config.base, target.replace("*", star))
            joined = posixpath.normpath(target).lstrip("/")
            found = _js_file(joined, ctx, config.suffixes)
            if found:
                return found
    if config.has_base_url:
        target = posixpath.normpath(posixpath.join(config.base, module))
        return _js_file(target, ctx, config.suffixes)
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


def _tsconfig_for(folder: str, ctx: Context) -> TsConfig | None:
    if folder in ctx.tsconfigs:
        return ctx.tsconfigs[folder]
    config = None
    for name in ("tsconfig.json", "jsconfig.json"):
        options = _ts_options(posixpath.join(folder, name).lstrip("/"), folder, ctx, 0)
        if options is not None:
            config = _ts_config(options, folder)
            break
    parent = posixpath.dirname(folder)
    if config is None and folder and parent != folder:
        config = _tsconfig_for(parent, ctx)
    ctx.tsconfigs[folder] = config
    return config


# ``(baseUrl, (paths, folder of the file declaring them), moduleSuffixes)``, each None when
# not set
_TsOptions = tuple[
    str | None, tuple[list[tuple[str, list[str]]], str] | None, tuple[str, ...] | None
]


def _ts_config(options: _TsOptions, folder: str) -> TsConfig:
    """Paths are relative to the effective ``baseUrl``, else to the file declaring them."""
    base_url, paths, suffixes = options
    base = base_url if base_url is not None else paths[1] if paths else folder
    return TsConfig(base, base_url is not None, paths[0] if paths else [], suffixes or ("",))


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
    suffixes: tuple[str, ...] | None = None
    extends = data.get("extends")
    for spec in [extends] if isinstance(extends, str) else as_list(extends):
        target = _ts_extends(spec, folder, ctx) if isinstance(spec, str) else None
        inherited = _ts_options(target, leaf, ctx, depth + 1) if target else None
        if inherited is not None:
            base_url = inherited[0] if inherited[0] is not None else base_url
            paths = inherited[1] if inherited[1] is not None else paths
            suffixes = inherited[2] if inherited[2] is not None else suffixes
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
    raw_suffixes = options.get("moduleSuffixes")
    if isinstance(raw_suffixes, list) and all(isinstance(x, str) for x in raw_suffixes):
        suffixes = tuple(raw_suffixes) or ("",)
    return base_url, paths, suffixes


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
