"""Python calls through values of a known class, written as calls on the class. Pure.

The call graph links ``Class.method()`` to the class's method but leaves a call on a value
of unknown type alone. Where the source says the type, the call is recorded as a call on it:

- a parameter or local annotated with a class (``def f(c: Console)``, ``x: Console = ...``,
  ``Optional[Console]``, ``Console | None``, ``"Console"``), or a local made by calling a
  class (``x = Console()``): ``x.print()`` is ``Console.print``;
- an attribute of ``self`` given a class in the class body (``console: Console``) or in a
  method (``self.console = Console()``, ``self.console: Console``):
  ``self.console.print()`` is ``Console.print``;
- ``super().m()`` (and ``super(C, self).m()``) in a method: ``Base.m`` for the class's
  first base that is not a typing helper; so is ``self.m()`` in a class that neither
  defines nor assigns ``m`` (an inherited method).

A class is a name whose last part starts with a capital letter (builtins and the typing
helpers are not). A name given two different classes in one function is left alone.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from planning_memory.entity.syntax import Scope, field_text, innermost, text

_CLASS = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*")
_OPTIONAL = re.compile(r"(?:typing\.)?Optional\[\s*(.+?)\s*\]")
_HELPERS = frozenset(
    {"Any", "Self", "Optional", "Union", "Callable", "Generic", "Protocol", "ABC", "Type", "Final"}
)
_CONFLICT = ""  # a name given two classes
# ``self.x = ...`` or ``self.x: T = ...``; a match that follows a word character
# (``myself.x =``) is passed over (``_self_assigned``): a pattern that starts with a literal is
# searched for several times faster than one that starts with ``\b``
_SELF_ASSIGNED = re.compile(r"self\.(\w+)\s*(?::[^=\n]*)?=(?!=)")
_WORD_CHAR = re.compile(r"\w")
_ASSIGNED = re.compile(r"\w+")


def class_of(annotation: str) -> str | None:
    """The class an annotation names, or None (``list[X]``, ``int``, a union of classes)."""
    value = annotation.strip().strip("'\"").strip()
    match = _OPTIONAL.fullmatch(value)
    if match is not None:
        value = match.group(1)
    if "|" in value:
        parts = [p.strip() for p in value.split("|") if p.strip() != "None"]
        if len(parts) != 1:
            return None
        value = parts[0]
    if not _CLASS.fullmatch(value) or value.rpartition(".")[2] in _HELPERS:
        return None
    return value


def _made_by(node: Node | None) -> str | None:
    """The class a value is made by calling (``Console()``, ``rich.Console(...)``)."""
    if node is None or node.type != "call":
        return None
    function = node.child_by_field_name("function")
    if function is None or function.type not in ("identifier", "attribute"):
        return None
    name = text(function)
    return name if _CLASS.fullmatch(name) and name.rpartition(".")[2] not in _HELPERS else None


def _note(found: dict[str, str], name: str, kind: str | None, known: set[str]) -> None:
    if kind is None or kind.partition(".")[0] not in known:
        return
    before = found.get(name)
    found[name] = kind if before is None or before == kind else _CONFLICT


class Types:
    """Names of known class per function scope, and ``self`` attributes per class scope."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.locals: dict[int, dict[str, str]] = {}
        self.attributes: dict[int, dict[str, str]] = {}
        self.members: dict[int, frozenset[str]] = {}  # a class -> the names it defines
        self.bases: dict[int, str | None] = {}  # a class -> its first base (``_base``)
        self.inherited: dict[tuple[int, str], str | None] = {}  # see ``_inherited``

    def __bool__(self) -> bool:
        return bool(self.locals or self.attributes)


def collect(
    parameters: list[Node], assignments: list[Node], scopes: list[Scope], known: set[str]
) -> Types:
    """What the typed ``parameters`` and the ``assignments`` (all of the file's that give a
    class, in source order) say about the classes of names. Only classes whose first name is
    ``known`` count (defined in the file or bound by an import): a builtin or an undefined
    name is left alone."""
    types = Types(known)
    typed = []  # (parameter name, class)
    for node in parameters:
        name = node.child_by_field_name("name")
        if name is None:  # typed_parameter: the identifier is its first child
            name = node.named_children[0] if node.named_children else None
        annotation = node.child_by_field_name("type")
        if name is None or name.type != "identifier" or annotation is None:
            continue
        kind = class_of(text(annotation))
        if kind is not None and kind.partition(".")[0] in known:
            typed.append((node.start_byte, text(name), kind))
    owners = innermost(scopes, [position for position, *_ in typed])
    for (_, name_text, kind), owner in zip(typed, owners, strict=True):
        if owner is not None:
            _note(types.locals.setdefault(id(owner), {}), name_text, kind, known)
    given = []  # (node, its left side, the class it is given, annotated)
    for node in assignments:
        left = node.child_by_field_name("left")
        if left is None or left.type not in ("identifier", "attribute"):
            continue
        annotation = node.child_by_field_name("type")
        kind = (
            class_of(text(annotation))
            if annotation is not None
            else _made_by(node.child_by_field_name("right"))
        )
        if kind is not None and kind.partition(".")[0] in known:
            given.append((node, left, kind, annotation))
    owners = innermost(scopes, [node.start_byte for node, *_ in given])
    for (node, left, kind, annotation), owner in zip(given, owners, strict=True):
        if left.type == "identifier":
            if owner is not None:
                _note(types.locals.setdefault(id(owner), {}), text(left), kind, known)
            else:
                cls = _class_body_of(node, scopes)
                if cls is not None and annotation is not None:
                    _note(types.attributes.setdefault(id(cls), {}), text(left), kind, known)
        elif left.type == "attribute" and owner is not None and _is_self(left, owner):
            attrs = types.attributes.setdefault(id(owner.parent), {})
            _note(attrs, field_text(left, "attribute"), kind, known)
    return types


def _is_self(left: Node, owner: Scope) -> bool:
    """``self.<name>`` assigned in a method."""
    in_class = owner.parent is not None and owner.parent.kind == "class"
    return in_class and field_text(left, "object") == "self"


def _class_body_of(node: Node, scopes: list[Scope]) -> Scope | None:
    """The class whose body holds ``node`` directly (an annotated class attribute)."""
    parent = node.parent
    if parent is not None and parent.type == "expression_statement":
        parent = parent.parent
    if parent is None or parent.type != "block" or parent.parent is None:
        return None
    holder = parent.parent
    if holder.type != "class_definition":
        return None
    return next((s for s in scopes if s.node == holder), None)


def _base(cls: Scope) -> str | None:
    """The first base of ``cls`` that is not ``object`` or a typing helper, without its
    subscript (``Generic[T]``)."""
    bases = cls.node.child_by_field_name("superclasses")
    for child in bases.named_children if bases is not None else ():
        if child.type == "keyword_argument":
            continue
        name = text(child).split("[", 1)[0]
        if name == "object" or name.rpartition(".")[2] in _HELPERS:
            continue
        return name if _CLASS.fullmatch(name) else None
    return None


def _inherited(cls: Scope, name: str, types: Types) -> str | None:
    """``self.name()`` in a method of ``cls`` that neither defines nor assigns ``name``:
    ``Base.name`` for its first base, where Python's method order finds it first."""
    memo = (id(cls), name)
    if memo in types.inherited:
        return types.inherited[memo]
    own = types.members.get(id(cls))
    if own is None:
        own = types.members[id(cls)] = _members(cls.node)
    base = _base_of(cls, types) if name not in own else None
    found = types.inherited[memo] = f"{base}.{name}" if base else None
    return found


def _base_of(cls: Scope, types: Types) -> str | None:
    """``_base(cls)``, read once per class."""
    if id(cls) not in types.bases:
        types.bases[id(cls)] = _base(cls)
    return types.bases[id(cls)]


def _members(node: Node) -> frozenset[str]:
    """The names a class body defines or assigns, and those its methods assign on ``self``."""
    found = _self_assigned(text(node))
    body = node.child_by_field_name("body")
    for child in body.named_children if body is not None else ():
        if child.type == "decorated_definition":
            child = child.child_by_field_name("definition") or child
        if child.type in ("function_definition", "class_definition"):
            found.add(field_text(child, "name"))
        elif child.type == "expression_statement":
            found.update(_ASSIGNED.findall(text(child).split("=", 1)[0]))
    return frozenset(found)


def _self_assigned(source: str) -> set[str]:
    """The names ``source`` assigns on ``self``: what ``\\bself\\.(\\w+)...`` finds."""
    found: set[str] = set()
    pos = 0
    while (match := _SELF_ASSIGNED.search(source, pos)) is not None:
        start = match.start()
        if start and _WORD_CHAR.match(source, start - 1):
            pos = start + 1
            continue
        found.add(match.group(1))
        pos = match.end()
    return found


def typed(calls: list[tuple[int, str]], owners: list[Scope | None], types: Types) -> dict[int, str]:
    """The calls (position, text) on values of a known class, written as calls on the class
    (see the module docstring): index in ``calls`` -> the call's new text. ``owners`` holds
    each call's innermost function."""
    heads = {name for found in types.locals.values() for name in found}
    heads.update(("super()", "self"))
    found = {}
    seen: dict[tuple[int, str], str | None] = {}  # a call made again in the same function
    for i, (_, call) in enumerate(calls):
        owner = owners[i]
        if owner is not None and "." in call and call.partition(".")[0] in heads:
            memo = (id(owner), call)
            if memo in seen:
                rewritten = seen[memo]
            else:
                rewritten = seen[memo] = _rewrite(call, owner, types)
            if rewritten is not None:
                found[i] = rewritten
    return found


def _rewrite(call: str, owner: Scope, types: Types) -> str | None:
    head, _, rest = call.partition(".")
    if head == "self":
        attr, dot, method = rest.partition(".")
        cls = owner.parent if owner.parent is not None and owner.parent.kind == "class" else None
        if cls is not None and not dot and attr.isidentifier():
            return _inherited(cls, attr, types)
        if cls is None or not dot or "." in method or not method.isidentifier():
            return None
        kind = types.attributes.get(id(cls), {}).get(attr)
        return f"{kind}.{method}" if kind else None
    if head == "super()":
        cls = owner.parent if owner.parent is not None and owner.parent.kind == "class" else None
        base = _base_of(cls, types) if cls is not None and rest.isidentifier() else None
        return f"{base}.{rest}" if base else None
    if "." in rest or not rest.isidentifier() or not head.isidentifier():
        return None
    scope: Scope | None = owner
    while scope is not None and scope.is_function:
        kind = types.locals.get(id(scope), {}).get(head)
        if kind is not None:
            return f"{kind}.{rest}" if kind else None
        scope = scope.parent
    return None
