"""JavaScript/TypeScript calls on values of a known class, written as calls on the class.

The call graph links ``Class.method()`` to the class's method but leaves a call on a value
of unknown type alone. Where the source says the class, the call is recorded on it:

- a parameter or variable annotated with a class (``function f(c: Console)``,
  ``const x: Console = ...``, ``Console | null``, ``Console<T>``), or a variable made with
  ``new`` (``const x = new Console()``): ``x.print()`` is ``Console.print``;
- a field of the class given a class (``private con: Console``, ``con = new Console()``,
  ``constructor(private con: Console)``, ``this.con = new Console()`` in a method):
  ``this.con.print()`` is ``Console.print``;
- ``super.m()`` in a method: ``Base.m`` for the class the method's class extends.

A class is a name whose last part starts with a capital letter, leaving out the built-in
ones (``Map``, ``Promise``, ...). A name given two different classes in one function is left
alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tree_sitter import Node

from planning_memory.entity.syntax import Scope, field_text, innermost, text

_CLASS = re.compile(r"(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*")
_BUILTIN = frozenset(
    {
        "Array",
        "Map",
        "Set",
        "WeakMap",
        "WeakSet",
        "Promise",
        "Date",
        "Error",
        "RegExp",
        "Record",
        "Partial",
        "Readonly",
        "Required",
        "Pick",
        "Omit",
        "Object",
        "String",
        "Number",
        "Boolean",
        "Function",
        "Symbol",
        "URL",
        "Response",
        "Request",
        "Headers",
        "ReadonlyArray",
    }
)
_CONFLICT = ""  # a name given two classes
_PARAMETERS = frozenset({"required_parameter", "optional_parameter"})


def class_of(annotation: str) -> str | None:
    """The class a type annotation names, or None (a union of classes, ``string``, ...)."""
    value = annotation.strip().removeprefix(":").strip()
    if "|" in value:
        parts = [p.strip() for p in value.split("|") if p.strip() not in ("null", "undefined", "")]
        if len(parts) != 1:
            return None
        value = parts[0]
    value = value.split("<", 1)[0].strip()
    if not _CLASS.fullmatch(value) or value.rpartition(".")[2] in _BUILTIN:
        return None
    return value


def _made_by(node: Node | None) -> str | None:
    """The class ``new X(...)`` makes."""
    if node is None or node.type != "new_expression":
        return None
    made = field_text(node, "constructor")
    if not _CLASS.fullmatch(made) or made.rpartition(".")[2] in _BUILTIN:
        return None
    return made


def _note(found: dict[str, str], name: str, kind: str | None, known: set[str]) -> None:
    if kind is None or kind.partition(".")[0] not in known:
        return
    before = found.get(name)
    found[name] = kind if before is None or before == kind else _CONFLICT


class Types:
    """Names of a known class per function scope, and fields per class scope."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.locals: dict[int, dict[str, str]] = {}
        self.fields: dict[int, dict[str, str]] = {}

    def __bool__(self) -> bool:
        return bool(self.locals or self.fields)


def collect(declared: Iterable[Node], scopes: list[Scope], known: set[str]) -> Types:
    """What the parameters of ``scopes`` and the ``declared`` nodes (variable declarators,
    class fields, assignments to ``this.x``; in source order) say about classes of names.
    Only the classes ``known`` count (their first name): those the file defines or imports
    from the project; an interface, a type alias, a library's class or a global
    (``FormEvent``, ``AbortController``) is left alone, as the call graph could not place
    a call on it anyway."""
    types = Types(known)
    for scope in scopes:
        if scope.is_function:
            _parameters(scope, types)
    nodes = list(declared)
    owners = innermost(scopes, [n.start_byte for n in nodes])
    for node, owner in zip(nodes, owners, strict=True):
        kind = node.type
        if kind == "variable_declarator":
            name = node.child_by_field_name("name")
            if owner is None or name is None or name.type != "identifier":
                continue
            _note(
                types.locals.setdefault(id(owner), {}), text(name), _class_given(node), types.known
            )
        elif kind in ("public_field_definition", "field_definition"):
            cls = _class_of_field(node, scopes)
            field = field_text(node, "name") or field_text(node, "property")
            if cls is not None and field:
                _note(types.fields.setdefault(id(cls), {}), field, _class_given(node), types.known)
        elif kind == "assignment_expression" and owner is not None:
            left = node.child_by_field_name("left")
            cls = owner.parent if owner.parent is not None else None
            if left is None or cls is None or cls.kind != "class":
                continue
            if left.type == "member_expression" and field_text(left, "object") == "this":
                made = _made_by(node.child_by_field_name("right"))
                _note(
                    types.fields.setdefault(id(cls), {}),
                    field_text(left, "property"),
                    made,
                    types.known,
                )
    return types


def _class_given(node: Node) -> str | None:
    annotation = node.child_by_field_name("type")
    if annotation is not None:
        return class_of(text(annotation))
    return _made_by(node.child_by_field_name("value"))


def _parameters(scope: Scope, types: Types) -> None:
    parameters = scope.node.child_by_field_name("parameters")
    if parameters is None:
        return
    cls = scope.parent if scope.kind == "constructor" else None
    for child in parameters.named_children:
        if child.type not in _PARAMETERS:
            continue
        pattern = child.child_by_field_name("pattern")
        annotation = child.child_by_field_name("type")
        if pattern is None or pattern.type != "identifier" or annotation is None:
            continue
        kind = class_of(text(annotation))
        _note(types.locals.setdefault(id(scope), {}), text(pattern), kind, types.known)
        first = child.named_children[0] if child.named_children else None
        if cls is not None and first is not None and first.type == "accessibility_modifier":
            _note(types.fields.setdefault(id(cls), {}), text(pattern), kind, types.known)


def _class_of_field(node: Node, scopes: list[Scope]) -> Scope | None:
    body = node.parent
    holder = body.parent if body is not None else None
    if holder is None:
        return None
    return next((s for s in scopes if s.kind == "class" and s.node == holder), None)


def _base(cls: Scope) -> str | None:
    """The class ``cls`` extends (``class A extends B<T>``: ``B``)."""
    for child in cls.node.named_children:
        if child.type == "class_heritage":
            clause = next((c for c in child.named_children if c.type == "extends_clause"), None)
            if clause is None:  # JavaScript: ``extends`` then the expression
                value = child.named_children[0] if child.named_children else None
            else:
                value = clause.child_by_field_name("value")
            name = text(value)
            return name if value is not None and _CLASS.fullmatch(name) else None
    return None


def typed(positions: list[int], calls: list[str], scopes: list[Scope], types: Types) -> list[str]:
    """``calls`` (at ascending ``positions``) with calls on a value of a known class written
    as calls on the class (see the module docstring); ``calls`` itself when none is."""
    heads = {name for found in types.locals.values() for name in found}
    heads.add("super")
    if types.fields:
        heads.add("this")
    maybe = [i for i, call in enumerate(calls) if "." in call and call.partition(".")[0] in heads]
    if not maybe:
        return calls
    owners = innermost(scopes, [positions[i] for i in maybe])
    found = list(calls)
    for i, owner in zip(maybe, owners, strict=True):
        if owner is not None:
            found[i] = _rewrite(calls[i], owner, types) or calls[i]
    return found


def _class_around(scope: Scope) -> Scope | None:
    """The class a method (or a function inside one: an arrow callback) belongs to."""
    current: Scope | None = scope
    while current is not None and current.kind != "class":
        current = current.parent
    return current


def _rewrite(call: str, owner: Scope, types: Types) -> str | None:
    head, _, rest = call.partition(".")
    if "." in rest and head != "this":
        return None
    if head == "this":
        field, dot, method = rest.partition(".")
        cls = _class_around(owner)
        if cls is None or not dot or "." in method:
            return None
        kind = types.fields.get(id(cls), {}).get(field)
        return f"{kind}.{method}" if kind else None
    if head == "super":
        cls = _class_around(owner)
        base = _base(cls) if cls is not None else None
        return f"{base}.{rest}" if base else None
    scope: Scope | None = owner
    while scope is not None and scope.is_function:
        kind = types.locals.get(id(scope), {}).get(head)
        if kind is not None:
            return f"{kind}.{rest}" if kind else None
        scope = scope.parent
    return None
