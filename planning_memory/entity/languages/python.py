"""Python extractor: functions, methods, classes, imports, calls and docstrings. Pure.

A call through a name an import binds is recorded by what it imports, so that the call graph
can tell an imported function from a local one: ``loads()`` after ``from json import loads``
is ``json.loads``, ``h()`` after ``from .tax import rate as h`` is ``.tax.rate``, and
``m.get()`` after ``import pkg.mod as m`` is ``pkg.mod.get``. A name imported as itself
keeps its text when something is looked up on it (``mod.f()``, ``Klass.m()``,
``logger.debug()``): the call graph finds a module and a class by that name, and the
side-effect patterns read receivers such as ``logger`` as written. A name the module
defines itself (a ``def`` or ``class`` outside a class body) shadows an import of it.
"""

from __future__ import annotations

import codecs
import re
from functools import cache
from operator import itemgetter

import tree_sitter_python
from tree_sitter import Node

from planning_memory.entity.facts import FileFacts, FunctionFact, ImportFact
from planning_memory.entity.languages import pytypes
from planning_memory.entity.syntax import (
    MAX_CALL,
    Grammar,
    Scope,
    callee,
    count_branches,
    field_text,
    function_fact,
    innermost,
    last_segment,
    leading_comment,
    nest,
    node_texts,
    ordered,
    squash,
    string_value,
    summary,
    text,
    unique,
)

QUERY = """
(function_definition) @function
(class_definition) @class
(call function: (_) @call)
(import_statement) @import
(import_from_statement) @import
(typed_parameter) @param
(typed_default_parameter) @param
(assignment type: (_)) @assign
(assignment right: (call function: (identifier) @_made (#match? @_made "^[A-Z]"))) @assign
(assignment
  right: (call function: (attribute attribute: (identifier) @_made (#match? @_made "^[A-Z]")))
) @assign
[(if_statement) (elif_clause) (for_statement) (while_statement) (except_clause)
 (boolean_operator) (conditional_expression) (case_clause) (for_in_clause) (if_clause)] @branch
"""
_COMMENT = frozenset({"comment"})
_DOCUMENTED = frozenset({"function_definition", "class_definition", "decorated_definition"})
_MODEL_BASES = frozenset({"Model", "Base", "DeclarativeBase", "Document"})
_HEAD = re.compile(r"\w+(?=$|[.(\[])")  # a call's first name
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")  # PEP 263
_BLANK = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")
_OVERLOAD = re.compile(r"@\s*(?:\w+\.)*overload")


@cache
def grammar() -> Grammar:
    return Grammar(tree_sitter_python.language(), QUERY)


def extract(source: bytes, path: str | None = None) -> FileFacts:
    """The facts of one Python module (``path`` is not used)."""
    root, caps = grammar().captures(source)
    stubs = b"overload" in source  # else no ``def`` can be an ``@overload`` signature
    scopes = [
        Scope(n, field_text(n, "name"), "function")
        for n in caps.get("function", [])
        if not (stubs and _overload_stub(n))
    ]
    classes = [Scope(n, field_text(n, "name"), "class") for n in caps.get("class", [])]
    every = nest(scopes + classes)
    for scope in every:
        if scope.kind == "function" and scope.parent is not None and scope.parent.kind == "class":
            scope.kind = "constructor" if scope.name == "__init__" else "method"
    imports = ordered(caps.get("import", []))
    called = caps.get("call", [])
    calls = [
        (n.start_byte, callee(t)) for n, t in zip(called, node_texts(called, source), strict=True)
    ]
    calls.sort(key=itemgetter(0))  # stable: an outer call before the inner one it starts with
    owners = innermost(every, [position for position, _ in calls])
    params, assigned = caps.get("param", []), caps.get("assign", [])
    rewrites: dict[int, str] = {}
    if params or assigned or b"super(" in source or b"self." in source:
        known = {s.name for s in every if s.kind == "class"} | _bound_names(imports)
        types = pytypes.collect(ordered(params), ordered(assigned), every, known)
        rewrites = pytypes.typed(calls, owners, types)
    bindings = _bindings(imports, every)
    texts = _all_through([c for _, c in calls], bindings) if bindings else [c for _, c in calls]
    written: dict[int, list[str]] = {}
    if rewrites:  # side effects are read from the calls as written (``logger.info``)
        for owner, call in zip(owners, texts, strict=True):
            if owner is not None:
                written.setdefault(id(owner), []).append(call)
        for i, call in rewrites.items():
            texts[i] = _through(call, bindings) if bindings else call
    for owner, call in zip(owners, texts, strict=True):
        if owner is not None:
            owner.calls.append(call)
    branches = count_branches(every, caps.get("branch", []))
    exports = _exports(root, every)
    public = set(exports)
    return {
        "purpose": summary(_module_docstring(root)),
        "imports": _imports(imports),
        "exports": exports,
        "classes": [s.qualified for s in every if s.kind == "class"],
        "functions": [_function(s, source, public, written) for s in every if s.is_function],
        "components": [],
        "complexity": 1 + branches,
        "parse_errors": root.has_error,
        "models": _models(every),
    }


def _overload_stub(node: Node) -> bool:
    """Whether a ``def`` is a ``@typing.overload`` signature: the implementation that
    follows is the function (its calls, its callers)."""
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    return any(
        c.type == "decorator" and _OVERLOAD.fullmatch(text(c)) is not None for c in parent.children
    )


def _function(
    scope: Scope, source: bytes, public: set[str], written: dict[int, list[str]]
) -> FunctionFact:
    node = scope.node
    signature = field_text(node, "parameters")
    returns = node.child_by_field_name("return_type")
    if returns is not None:
        signature += " -> " + text(returns)
    fact = function_fact(
        scope,
        source,
        signature=squash(signature),
        purpose=_docstring(node.child_by_field_name("body")),
        exported=_is_exported(scope, public),
    )
    if id(scope) in written:
        fact["written_calls"] = unique(written[id(scope)])
    return fact


def _is_exported(scope: Scope, public: set[str]) -> bool:
    top = scope
    while top.parent is not None:
        if top.parent.kind != "class":
            return False
        top = top.parent
    private = scope.name.startswith("_") and not scope.name.endswith("__")
    return top.name in public and not private


def _docstring(body: Node | None) -> str | None:
    if body is None:
        return None
    first, index, count = None, 0, body.named_child_count
    while index < count:  # the first statement, without a list of every one
        first = body.named_child(index)
        if first is not None and first.type != "comment":
            break
        first, index = None, index + 1
    if first is not None and first.type == "expression_statement" and first.named_child_count == 1:
        value = first.named_child(0)
        if value is not None and value.type == "string":
            return string_value(text(value))
    return None


def _module_docstring(root: Node) -> str | None:
    doc = _docstring(root)
    if doc is not None:
        return doc
    return leading_comment(root, _COMMENT, frozenset(), _DOCUMENTED)


def _exports(root: Node, scopes: list[Scope]) -> list[str]:
    declared = _dunder_all(root)
    if declared is not None:
        return declared
    names = [s.name for s in scopes if s.parent is None and not s.name.startswith("_")]
    return unique(names)


def _dunder_all(root: Node) -> list[str] | None:
    for stmt in root.named_children:
        if stmt.type != "expression_statement" or stmt.named_child_count != 1:
            continue
        assign = stmt.named_children[0]
        if assign.type != "assignment" or field_text(assign, "left") != "__all__":
            continue
        right = assign.child_by_field_name("right")
        if right is None or right.type not in ("list", "tuple"):
            return None
        return [string_value(text(i)) for i in right.named_children if i.type == "string"]
    return None


def _imports(nodes: list[Node]) -> list[ImportFact]:
    found: list[ImportFact] = []
    for node in nodes:
        if node.type == "import_statement":
            for child in node.named_children:
                target = (
                    child.child_by_field_name("name") if child.type == "aliased_import" else child
                )
                found.append({"module": text(target)})
            continue
        module = field_text(node, "module_name")
        if module.strip(".") or not module:
            found.append({"module": module})
            continue
        for child in node.children_by_field_name("name"):
            target = child.child_by_field_name("name") if child.type == "aliased_import" else child
            found.append({"module": module + text(target)})
    seen: dict[str, ImportFact] = {}
    for item in found:
        seen.setdefault(item["module"], item)
    return list(seen.values())


def _bindings(nodes: list[Node], scopes: list[Scope]) -> dict[str, tuple[str, bool]]:
    """What the names bound by imports stand for, where that differs from the name, and
    whether the name is an alias: ``import a.b as m`` binds ``m`` to ``(a.b, True)``,
    ``from M import n as x`` binds ``x`` to ``(M.n, True)`` and ``from M import n`` binds
    ``n`` to ``(M.n, False)``. Names the module defines itself, or also imports as
    themselves (``import json`` beside a fallback ``import simplejson as json``), are left
    out."""
    found: dict[str, tuple[str, bool]] = {}
    itself: list[str] = []
    for node in nodes:
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "aliased_import":
                    found[field_text(child, "alias")] = (field_text(child, "name"), True)
                else:
                    itself.append(text(child).split(".", 1)[0])
            continue
        module = field_text(node, "module_name")
        prefix = module if not module.strip(".") else module + "."
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                found[field_text(child, "alias")] = (prefix + field_text(child, "name"), True)
            else:
                found[text(child)] = (prefix + text(child), False)
    for scope in scopes:
        if scope.parent is None or scope.parent.kind != "class":
            found.pop(scope.name, None)
    for name in itself:
        found.pop(name, None)
    return found


def _bound_names(nodes: list[Node]) -> set[str]:
    """The names the imports bind (``import a.b``: ``a``)."""
    found: set[str] = set()
    for node in nodes:
        if node.type == "import_statement":
            children = node.named_children
        else:
            children = node.children_by_field_name("name")
        for child in children:
            if child.type == "aliased_import":
                found.add(field_text(child, "alias"))
            else:
                found.add(text(child).split(".", 1)[0])
    return found


def _all_through(calls: list[str], bindings: dict[str, tuple[str, bool]]) -> list[str]:
    """``_through`` of each call, once per text (a module makes the same calls again)."""
    done: dict[str, str] = {}
    found = []
    for call in calls:
        value = done.get(call)
        if value is None:
            value = done[call] = _through(call, bindings)
        found.append(value)
    return found


def _through(call: str, bindings: dict[str, tuple[str, bool]]) -> str:
    """``call`` with its first name replaced by what an import binds it to: always for an
    alias, only when it is called itself (``n()``) for a name imported as itself."""
    head = call.partition(".")[0]
    if head not in bindings:
        if "(" not in head and "[" not in head:
            return call  # the common case, without the regular expression
        match = _HEAD.match(call)
        if match is None or match.group() not in bindings:
            return call
        head = match.group()
    target, alias = bindings[head]
    rest = call[len(head) :]
    if not alias and rest.startswith("."):
        return call
    value = target + rest
    return value if len(value) <= MAX_CALL else value[: MAX_CALL - 1] + "…"


def utf8_source(source: bytes) -> bytes:
    """``source`` as UTF-8: a module whose PEP 263 coding cookie (on its first line, or on
    its second after a comment or blank first line) names another encoding is decoded with
    it; any other source, or one that does not decode, is returned as it is."""
    if source.isascii() or source.startswith(codecs.BOM_UTF8):
        return source
    lines = source.split(b"\n", 2)[:2]
    for line in lines:
        match = _CODING.match(line)
        if match is not None:
            try:
                encoding = codecs.lookup(match.group(1).decode("ascii")).name
                return source if encoding == "utf-8" else source.decode(encoding).encode()
            except (LookupError, UnicodeError):
                return source
        if not _BLANK.match(line):
            break
    return source


def _models(scopes: list[Scope]) -> list[str]:
    models = []
    for scope in scopes:
        if scope.kind != "class":
            continue
        bases = field_text(scope.node, "superclasses").strip("()").split(",")
        if any(last_segment(base.strip()) in _MODEL_BASES for base in bases):
            models.append(scope.name)
    return models
