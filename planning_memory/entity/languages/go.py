"""Go extractor: functions, methods (``Type.Method``), types, imports and doc comments.

The methods an interface type declares are methods too (``Router.Use``). A call through an
import alias (``import foo "example.com/x/bar"``, ``foo.Get()``) is recorded under the name
the import path gives its package (``bar.Get``), which the call graph links, unless another
import of the file gives that same name. Pure."""

from __future__ import annotations

import re
from functools import cache

import tree_sitter_go
from tree_sitter import Node

from planning_memory.entity.facts import FileFacts, FunctionFact
from planning_memory.entity.languages import gotypes
from planning_memory.entity.syntax import (
    Grammar,
    Scope,
    callee,
    comments_before,
    count_branches,
    field_text,
    function_fact,
    innermost,
    leading_comment,
    node_texts,
    ordered,
    squash,
    string_value,
    summary,
    text,
    unique,
)

QUERY = (
    """
(function_declaration) @function
(method_declaration) @method
(type_spec type: (interface_type (method_elem) @declared))
(type_spec name: (type_identifier) @type)
(call_expression function: (_) @call)
(import_spec path: (_) @import)
[(if_statement) (for_statement) (expression_case) (type_case) (communication_case)] @branch
(binary_expression operator: ["&&" "||"]) @branch
"""
    + gotypes.QUERY
)
_COMMENT = frozenset({"comment"})
_DOCUMENTED = frozenset({"function_declaration", "method_declaration", "type_declaration"})
_RECEIVER = re.compile(r"[A-Za-z_]\w*")
_DECLARING = ("param", "var", "short", "range", "unknown")  # gotypes' captures


@cache
def grammar() -> Grammar:
    return Grammar(tree_sitter_go.language(), QUERY)


def extract(source: bytes, path: str | None = None) -> FileFacts:
    """The facts of one Go file (``path`` is not used)."""
    root, caps = grammar().captures(source)
    scopes = [Scope(n, field_text(n, "name"), "function") for n in caps.get("function", [])]
    for node in caps.get("method", []):
        scope = Scope(node, field_text(node, "name"), "method")
        scope.qualified = f"{_receiver(node)}.{scope.name}"
        scopes.append(scope)
    for node in caps.get("declared", []):
        scope = Scope(node, field_text(node, "name"), "method")
        scope.qualified = f"{_interface(node)}.{scope.name}"
        scopes.append(scope)
    scopes.sort(key=lambda s: s.start)
    imports = ordered(caps.get("import", []))
    called = caps.get("call", [])
    calls = [
        (n.start_byte, callee(t)) for n, t in zip(called, node_texts(called, source), strict=True)
    ]
    written = _assign(scopes, calls, caps, _aliases(imports))
    for scope in scopes:
        if scope.node.type == "method_declaration":
            _own_calls(scope)
    branches = count_branches(scopes, caps.get("branch", []))
    types = [text(n) for n in caps.get("type", [])]
    exports = [s.qualified for s in scopes if _exported(s)] + [t for t in types if t[:1].isupper()]
    return {
        "purpose": summary(_package_doc(root)),
        "imports": [{"module": string_value(text(n))} for n in imports],
        "exports": unique(exports),
        "classes": unique(types),
        "functions": [_function(s, source, written) for s in scopes],
        "components": [],
        "complexity": 1 + branches,
        "parse_errors": root.has_error,
        "models": [],
    }


_VERSION = re.compile(r"v\d+")


def package_name(module: str) -> str:
    """The name a Go import path gives its package: its last element, skipping a major
    version suffix (``github.com/go-chi/chi/v5`` -> ``chi``)."""
    parts = [p for p in module.split("/") if p]
    while len(parts) > 1 and _VERSION.fullmatch(parts[-1]):
        parts.pop()
    return parts[-1] if parts else ""


def _aliases(paths: list[Node]) -> dict[str, str]:
    """Import alias -> the package name its path gives, for the aliases whose package name
    no other import of the file gives."""
    named: list[tuple[str, str]] = []  # (alias or "", package name)
    for node in paths:
        alias = field_text(node.parent, "name") if node.parent is not None else ""
        named.append((alias, package_name(string_value(text(node)))))
    counts: dict[str, int] = {}
    for _alias, name in named:
        counts[name] = counts.get(name, 0) + 1
    return {
        alias: name
        for alias, name in named
        if alias and alias not in (".", "_") and alias != name and counts[name] == 1
    }


def _through(call: str, aliases: dict[str, str]) -> str:
    head, dot, rest = call.partition(".")
    return f"{aliases[head]}.{rest}" if dot and head in aliases else call


def _assign(
    scopes: list[Scope],
    calls: list[tuple[int, str]],
    caps: dict[str, list[Node]],
    aliases: dict[str, str],
) -> dict[int, list[str]]:
    """Append each call to its function: a call on a name of known type written as a call
    on the type (``gotypes``; a local name shadows an import's), a call through an import
    alias as a call on its package; returns the calls as written of the functions that have
    calls on typed names, by ``id`` of their scope."""
    calls.sort(key=lambda item: item[0])
    owners = innermost(scopes, [position for position, _ in calls])
    heads = {c.partition(".")[0] for _, c in calls if "." in c}
    rewrites: dict[int, str] = {}
    declared = [n for kind in _DECLARING for n in caps.get(kind, [])]
    if heads and declared:
        positions = sorted({n.start_byte for n in declared})
        owners_of = dict(zip(positions, innermost(scopes, positions), strict=True))
        names = gotypes.collect(caps, owners_of, gotypes.Names(heads, aliases))
        rewrites = gotypes.typed(calls, owners, names)
    written: dict[int, list[str]] = {}
    for i, (owner, (_position, call)) in enumerate(zip(owners, calls, strict=True)):
        if owner is None:
            continue
        if aliases:
            call = _through(call, aliases)
        if rewrites:
            written.setdefault(id(owner), []).append(call)
        owner.calls.append(rewrites.get(i, call))
    return written if rewrites else {}


def _receiver(node: Node) -> str:
    receiver = node.child_by_field_name("receiver")
    for param in receiver.named_children if receiver is not None else []:
        kind = text(param.child_by_field_name("type")).lstrip("*").strip()
        match = _RECEIVER.match(kind)
        if match:
            return match.group(0)
    return "?"


def _own_calls(scope: Scope) -> None:
    """Calls on the method's receiver (``mx.handle()`` in ``func (mx *Mux) ...``) written as
    ``self.handle``, so they reach the receiver type's own methods, as in the other languages;
    a field's method (``mx.pool.Get()``) becomes ``self.pool.Get``, which links to nothing."""
    receiver = scope.node.child_by_field_name("receiver")
    params = receiver.named_children if receiver is not None else []
    name = field_text(params[0], "name") if params else ""
    if name and name != "_":
        prefix = name + "."
        scope.calls = [
            "self." + c[len(prefix) :] if c.startswith(prefix) else c for c in scope.calls
        ]


def _interface(node: Node) -> str:
    spec = node.parent.parent if node.parent is not None else None
    return field_text(spec, "name") if spec is not None else "?"


def _exported(scope: Scope) -> bool:
    return all(part[:1].isupper() for part in scope.qualified.split("."))


def _function(scope: Scope, source: bytes, written: dict[int, list[str]]) -> FunctionFact:
    node = scope.node
    signature = field_text(node, "parameters")
    result = field_text(node, "result")
    if result:
        signature += " " + result
    fact = function_fact(
        scope,
        source,
        signature=squash(signature),
        purpose=comments_before(node, _COMMENT, frozenset()),
        exported=_exported(scope),
    )
    if id(scope) in written:  # side effects are read from the calls as written
        fact["written_calls"] = unique(written[id(scope)])
    return fact


def _package_doc(root: Node) -> str | None:
    for child in root.children:
        if child.type == "package_clause":
            doc = comments_before(child, _COMMENT, frozenset())
            if doc:
                return doc
            break
    return leading_comment(root, _COMMENT, frozenset(), _DOCUMENTED)
