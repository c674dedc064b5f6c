"""Rust extractor: functions, methods, ``use`` and ``mod``, macro calls and doc comments.

Methods of ``impl`` and ``trait`` blocks are named ``Type.method`` (a trait's declarations
without a body too). ``use`` paths inside inline modules (``mod tests { use super::*; }``) are
rewritten relative to the file's own module, and a path naming the file itself is dropped.
Pure."""

from __future__ import annotations

import re
from functools import cache

import tree_sitter_rust
from tree_sitter import Node

from planning_memory.entity.facts import FileFacts, FunctionFact, ImportFact
from planning_memory.entity.languages import rusttypes
from planning_memory.entity.syntax import (
    Grammar,
    Scope,
    callee,
    comment_body,
    comments_before,
    count_branches,
    field_text,
    function_fact,
    innermost,
    nest,
    node_texts,
    ordered,
    squash,
    summary,
    text,
    unique,
)

QUERY = (
    """
[(function_item) (function_signature_item)] @function
(impl_item) @impl
(trait_item) @trait
(mod_item) @mod
[(struct_item) (enum_item) (union_item)] @type
(call_expression function: (_) @call)
(macro_invocation macro: (_) @macro)
(use_declaration) @use
[(if_expression) (match_arm) (for_expression) (while_expression) (loop_expression)] @branch
(binary_expression operator: ["&&" "||"]) @branch
"""
    + rusttypes.QUERY
)
_COMMENT = frozenset({"line_comment", "block_comment"})
_ATTRIBUTES = frozenset({"attribute_item"})
_TYPE_NAME = re.compile(r"[A-Za-z_]\w*")
_BINDING = ("param", "let", "unbound")  # rusttypes' captures


@cache
def grammar() -> Grammar:
    return Grammar(tree_sitter_rust.language(), QUERY)


def extract(source: bytes, path: str | None = None) -> FileFacts:
    """The facts of one Rust file (``path`` is not used)."""
    root, caps = grammar().captures(source)
    scopes = [Scope(n, field_text(n, "name"), "function") for n in caps.get("function", [])]
    scopes += [Scope(n, _impl_name(n), "impl") for n in caps.get("impl", [])]
    scopes += [Scope(n, field_text(n, "name"), "trait") for n in caps.get("trait", [])]
    modules = [n for n in caps.get("mod", []) if n.child_by_field_name("body") is not None]
    scopes += [Scope(n, field_text(n, "name"), "module") for n in modules]
    nest(scopes)
    for scope in scopes:
        parent = scope.parent
        if scope.kind == "function" and parent is not None and parent.kind in ("impl", "trait"):
            scope.kind = "method"
    called, macros = caps.get("call", []), caps.get("macro", [])
    calls = [
        (n.start_byte, callee(t)) for n, t in zip(called, node_texts(called, source), strict=True)
    ]
    calls += [
        (n.start_byte, callee(t) + "!")
        for n, t in zip(macros, node_texts(macros, source), strict=True)
    ]
    written = _assign(scopes, calls, caps)
    branches = count_branches(scopes, caps.get("branch", []))
    types = [field_text(n, "name") for n in caps.get("type", [])]
    functions = [_function(s, source, written) for s in scopes if s.is_function]
    exports = [f["qualified_name"] for f in functions if f["exported"]]
    exports += [field_text(n, "name") for n in caps.get("type", []) if _is_pub(n)]
    return {
        "purpose": summary(_inner_doc(root)),
        "imports": _imports(ordered(caps.get("use", [])), ordered(caps.get("mod", []))),
        "exports": unique(exports),
        "classes": unique(types + [s.name for s in scopes if s.kind == "trait"]),
        "functions": functions,
        "components": [],
        "complexity": 1 + branches,
        "parse_errors": root.has_error,
        "models": [],
    }


def _assign(
    scopes: list[Scope], calls: list[tuple[int, str]], caps: dict[str, list[Node]]
) -> dict[int, list[str]]:
    """Append each call to its function, a method call on a name of known type written as
    a call on the type (``rusttypes``); returns the calls as written of the functions that
    have such calls, by ``id`` of their scope."""
    calls.sort(key=lambda item: item[0])
    owners = innermost(scopes, [position for position, _ in calls])
    heads = {c.partition(".")[0] for _, c in calls if "." in c}
    declared = [n for kind in _BINDING for n in caps.get(kind, [])]
    rewrites: dict[int, str] = {}
    if heads and declared:
        positions = sorted({n.start_byte for n in declared})
        owner_of = dict(zip(positions, innermost(scopes, positions), strict=True))
        names = rusttypes.collect(caps, owner_of, rusttypes.Names(heads))
        rewrites = rusttypes.typed(calls, owners, names)
    written: dict[int, list[str]] = {}
    for i, (owner, (_position, call)) in enumerate(zip(owners, calls, strict=True)):
        if owner is None:
            continue
        if rewrites:
            written.setdefault(id(owner), []).append(call)
        owner.calls.append(rewrites.get(i, call))
    return written if rewrites else {}


def _impl_name(node: Node) -> str:
    match = _TYPE_NAME.match(field_text(node, "type").lstrip("&").strip())
    return match.group(0) if match else "?"


def _is_pub(node: Node) -> bool:
    first = node.named_children[0] if node.named_child_count else None
    return first is not None and first.type == "visibility_modifier"


def _function(scope: Scope, source: bytes, written: dict[int, list[str]]) -> FunctionFact:
    node = scope.node
    signature = field_text(node, "parameters")
    returns = field_text(node, "return_type")
    if returns:
        signature += " -> " + returns
    parent = scope.parent
    public_through = parent is not None and (  # a trait impl, or a public trait
        (parent.kind == "impl" and parent.node.child_by_field_name("trait") is not None)
        or (parent.kind == "trait" and _is_pub(parent.node))
    )
    fact = function_fact(
        scope,
        source,
        signature=squash(signature),
        purpose=_outer_doc(node),
        exported=_is_pub(node) or public_through,
    )
    if id(scope) in written:  # side effects are read from the calls as written
        fact["written_calls"] = unique(written[id(scope)])
    return fact


def _outer_doc(node: Node) -> str | None:
    return comments_before(node, _COMMENT, _ATTRIBUTES)


def _inner_doc(root: Node) -> str | None:
    parts = []
    for child in root.children:
        if child.type not in _COMMENT:
            break
        body = text(child)
        if body.startswith("//!") or body.startswith("/*!"):
            parts.append(body)
    if not parts:
        return None
    return "\n".join(comment_body(p) for p in parts)


def _imports(uses: list[Node], mods: list[Node]) -> list[ImportFact]:
    found: list[ImportFact] = []
    for node in uses:
        argument = node.child_by_field_name("argument")
        inline = _inline_modules(node)
        for written in expand_use(text(argument)):
            path = _from_file_module(written, inline)
            if path:
                found.append(_fact(path, node))
    for node in mods:
        if node.child_by_field_name("body") is None:
            path = "::".join(["self", *_inline_modules(node), field_text(node, "name")])
            found.append(_fact(path, node))
    return found


def _fact(path: str, node: Node) -> ImportFact:
    fact: ImportFact = {"module": path}
    if _is_pub(node):
        fact["reexport"] = True
    return fact


def _inline_modules(node: Node) -> list[str]:
    """Names of the inline ``mod x { ... }`` blocks around ``node``, outermost first."""
    names = []
    parent = node.parent
    while parent is not None:
        if parent.type == "mod_item":
            names.append(field_text(parent, "name"))
        parent = parent.parent
    return names[::-1]


def _from_file_module(path: str, inline: list[str]) -> str | None:
    """``path``, written inside the inline modules ``inline``, relative to the file's module
    instead; None when it names the file's module itself (``use super::*`` in ``mod tests``)."""
    if not inline:
        return path
    segments = path.split("::")
    if segments[0] == "self":
        return "::".join(["self", *inline, *segments[1:]])
    if segments[0] != "super":
        return path  # crate::, or a crate name
    ups = next((i for i, s in enumerate(segments) if s != "super"), len(segments))
    rest = segments[ups:]
    if ups > len(inline):
        return "::".join(["super"] * (ups - len(inline)) + rest)
    kept = inline[: len(inline) - ups]
    return "::".join(["self", *kept, *rest]) if kept or rest else None


def expand_use(tree: str) -> list[str]:
    """``a::{b, c::{d, self}}`` -> ``[a::b, a::c::d, a::c]``; aliases and globs dropped."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+[A-Za-z_]\w*", "", tree))
    brace = tree.find("{")
    if brace < 0:
        path = tree.removesuffix("::*")
        return [path] if path and path != "*" else []
    prefix = tree[:brace].removesuffix("::")
    inner = tree[brace + 1 : tree.rfind("}")]
    out: list[str] = []
    for part in _split_top(inner):
        if part == "self":
            out.append(prefix)
            continue
        for tail in expand_use(part):
            out.append(f"{prefix}::{tail}" if prefix else tail)
    return out


def _split_top(inner: str) -> list[str]:
    parts, depth, token = [], 0, ""
    for char in inner:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(token)
            token = ""
        else:
            token += char
    parts.append(token)
    return [p for p in parts if p]
