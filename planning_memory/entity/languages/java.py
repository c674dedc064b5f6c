"""Java extractor: classes, interfaces, records, methods, constructors, imports, Javadoc.

Interface and abstract methods (declarations without a body) are methods too, so that
``Interface.method`` can be looked up. Pure."""

from __future__ import annotations

import re
from functools import cache
from operator import itemgetter

import tree_sitter_java
from tree_sitter import Node

from planning_memory.entity.facts import FileFacts, FunctionFact, ImportFact
from planning_memory.entity.languages import javatypes
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
    nest,
    ordered,
    squash,
    summary,
    text,
    unique,
)

QUERY = (
    """
(method_declaration) @function
(constructor_declaration) @constructor
[(class_declaration) (interface_declaration) (enum_declaration) (record_declaration)
 (annotation_type_declaration)] @class
(method_invocation) @call
(object_creation_expression type: (_) @new)
(explicit_constructor_invocation) @constructor_call
(import_declaration) @import
[(if_statement) (for_statement) (enhanced_for_statement) (while_statement) (do_statement)
 (catch_clause) (switch_label) (ternary_expression)] @branch
(binary_expression operator: ["&&" "||"]) @branch
"""
    + javatypes.QUERY
)
_COMMENT = frozenset({"block_comment", "line_comment"})
_DOCUMENTED = frozenset(
    {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
)
_CONSTRUCTOR = "constructor"  # an explicit constructor call: ``super(...)``, ``this(...)``
_TYPE_ARGUMENTS = re.compile(r"\.\s*<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>\s*")
_ENTITY = re.compile(r"@(?:Entity|Table|Document)\b")


@cache
def grammar() -> Grammar:
    return Grammar(tree_sitter_java.language(), QUERY)


def extract(source: bytes, path: str | None = None) -> FileFacts:
    """The facts of one Java file (``path`` is not used)."""
    root, caps = grammar().captures(source)
    scopes = [Scope(n, field_text(n, "name"), "method") for n in caps.get("function", [])]
    scopes += [Scope(n, field_text(n, "name"), "constructor") for n in caps.get("constructor", [])]
    classes = [Scope(n, field_text(n, "name"), "class") for n in caps.get("class", [])]
    every = nest(scopes + classes)
    written = _assign(every, caps, source)
    branches = count_branches(every, caps.get("branch", []))
    types = [s for s in every if s.kind == "class"]
    exports = [s.qualified for s in types if s.parent is None and _public(s)]
    public: dict[int, bool] = {}  # see ``_exported``
    return {
        "purpose": summary(_purpose(root, types)),
        "imports": _imports(ordered(caps.get("import", []))),
        "exports": exports,
        "classes": [s.qualified for s in types],
        "functions": [_function(s, source, written, public) for s in every if s.is_function],
        "components": [],
        "complexity": 1 + branches,
        "parse_errors": root.has_error,
        "models": [s.name for s in types if _ENTITY.search(_modifiers(s.node))],
    }


def _assign(every: list[Scope], caps: dict[str, list[Node]], source: bytes) -> dict[int, list[str]]:
    """Append each call to its function: a method call with its argument list, and on a
    name of known class as a call on the class (``javatypes``); returns each function's
    calls as written (without either), by ``id`` of its scope."""
    names = javatypes.collect(caps, every)
    found = [(n.start_byte, n, "") for n in caps.get("call", [])]
    found += [(n.start_byte, n, "new " + callee(text(n))) for n in caps.get("new", [])]
    found += [(n.start_byte, n, _CONSTRUCTOR) for n in caps.get("constructor_call", [])]
    found.sort(key=itemgetter(0))
    owners = innermost(every, [position for position, _node, _text in found])
    whole = source.decode("ascii") if source.isascii() else None  # sliced by byte offsets
    written: dict[int, list[str]] = {}
    typed: dict[tuple[int, str], str] = {}  # (function, call as written) -> on its class
    chained: set[int] = set()  # constructors that call another by ``super(...)``/``this(...)``
    receiver, arguments, with_arguments = (
        javatypes.receiver,
        javatypes.arguments,
        javatypes.with_arguments,
    )
    for owner, (_position, node, made) in zip(owners, found, strict=True):
        if owner is None:
            continue
        if not made:  # a method call (most): its receiver's type, its arguments'
            args = node.child_by_field_name("arguments")
            as_written = _invocation(node, args, source, whole)
            memo = (id(owner), as_written)
            known = typed.get(memo)
            if known is None:
                known = typed[memo] = receiver(as_written, owner, names)
            if args is None or not args.named_child_count:
                call = with_arguments(known, [])
            else:
                call = with_arguments(known, arguments(args, owner, names))
        elif made != _CONSTRUCTOR:  # ``new X(...)``: X's constructor, its arguments
            as_written = made
            creation = node.parent
            args = creation.child_by_field_name("arguments") if creation is not None else None
            call = with_arguments(made.split("<", 1)[0], arguments(args, owner, names))
        else:  # ``super(...)``: the base's constructor; ``this(...)``: another
            args = node.child_by_field_name("arguments")
            as_written = field_text(node, "constructor")
            known = javatypes.constructor(as_written, owner)
            if args is None or not args.named_child_count:
                call = with_arguments(known, [])
            else:
                call = with_arguments(known, arguments(args, owner, names))
            chained.add(id(owner))
        written.setdefault(id(owner), []).append(as_written)
        owner.calls.append(call)
    for scope in every:  # Java calls the base's no-argument constructor when no other
        if scope.kind == "constructor" and id(scope) not in chained:
            implicit = javatypes.constructor("super", scope)
            if implicit != "super":
                scope.calls.append(javatypes.with_arguments(implicit, []))
    return written


def _invocation(node: Node, args: Node | None, source: bytes, whole: str | None) -> str:
    """The callee as written (before its argument list ``args``), without type arguments
    (``Collections.<T>empty`` -> ``Collections.empty``); ``whole`` is an ASCII ``source``
    decoded."""
    end = args.start_byte if args is not None else node.end_byte
    if whole is not None:
        written = whole[node.start_byte : end]
    else:
        written = source[node.start_byte : end].decode("utf-8", "replace")
    if "<" in written:
        written = _TYPE_ARGUMENTS.sub(".", written)
    return callee(written)


def _modifiers(node: Node) -> str:
    for child in node.children:
        if child.type == "modifiers":
            return text(child)
    return ""


def _public(scope: Scope) -> bool:
    if scope.parent is not None and scope.parent.node.type == "interface_declaration":
        return "private" not in _modifiers(scope.node)
    return "public" in _modifiers(scope.node).split()


def _exported(scope: Scope, memo: dict[int, bool]) -> bool:
    """Whether ``scope`` and every scope around it are public (memoised in ``memo``)."""
    found = memo.get(id(scope))
    if found is None:
        parent = scope.parent
        found = memo[id(scope)] = _public(scope) and (parent is None or _exported(parent, memo))
    return found


def _function(
    scope: Scope, source: bytes, written: dict[int, list[str]], public: dict[int, bool]
) -> FunctionFact:
    node = scope.node
    signature = field_text(node, "parameters")
    returns = field_text(node, "type")
    if returns:
        signature += " -> " + returns
    fact = function_fact(
        scope,
        source,
        signature=squash(signature),
        purpose=comments_before(node, _COMMENT, frozenset()),
        exported=_exported(scope, public),
    )
    if id(scope) in written:  # side effects are read from the calls as written
        fact["written_calls"] = unique(written[id(scope)])
    return fact


def _purpose(root: Node, types: list[Scope]) -> str | None:
    header = leading_comment(root, _COMMENT, frozenset(), _DOCUMENTED)
    if header:
        return header
    for scope in types:
        if scope.parent is None:
            return comments_before(scope.node, _COMMENT, frozenset())
    return None


def _imports(nodes: list[Node]) -> list[ImportFact]:
    found: list[ImportFact] = []
    for node in nodes:
        parts = [text(c) for c in node.named_children if c.type != "asterisk"]
        module = parts[0] if parts else ""
        if any(c.type == "asterisk" for c in node.named_children):
            module += ".*"
        if module:
            found.append({"module": module})
    return found
