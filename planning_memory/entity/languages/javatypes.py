"""Java calls through values of a known type, and the types of their arguments. Pure.

The call graph links ``Type.method()`` to the type's method when ``Type`` is a class of the
repository, and reads a call's argument list to pick among overloads. Where the source says
the type of a name, a call on it is recorded as a call on its type:

- a parameter, a local (``CharacterReader r``, ``var d = new Document()``), a loop variable
  (``for (Element e : els)``), a resource, a caught exception, a pattern
  (``o instanceof Foo foo``), or a field of an enclosing class (``reader`` or
  ``this.reader``): ``r.advance()`` is ``CharacterReader.advance``;
- ``super.m()`` in a class that ``extends Base``: ``Base.m``; ``super(...)`` in a
  constructor is ``Base.Base(...)`` (the base's constructor, by which the call graph also
  knows the class's base), ``this(...)`` the class's own constructor; a constructor that
  calls neither calls ``Base.Base()``, as Java does.

A name given two different types in one method, or declared without one (a lambda's
parameter, ``var x = f()``), is left alone, and so is a type variable's name. Each call
ends in its argument list: per argument its type where the source says it simply (a
literal, ``new X()``, a cast, a typed name, ``this``, a string concatenation, a method of
the file, a JDK method of fixed result such as ``String.valueOf`` or ``s.trim()``), ``->``
for a lambda or method reference, ``@Type.name`` for a call of a method of a class a value
is known to be (``opts.getOption(n)``: the linker reads that method's declared result),
else ``_``.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from planning_memory.entity.calltypes import LAMBDA, simple
from planning_memory.entity.syntax import MAX_CALL, Scope, field_text, text

QUERY = """
(formal_parameter) @declare
(spread_parameter) @declare
(local_variable_declaration) @declare
(enhanced_for_statement) @declare
(catch_formal_parameter) @declare
(resource type: (_)) @declare
(instanceof_expression name: (_)) @declare
(type_pattern) @declare
(field_declaration) @field
(lambda_expression parameters: (identifier) @unknown)
(lambda_expression parameters: (inferred_parameters (identifier) @unknown))
"""
_CLASS = re.compile(r"[A-Z]\w*(?:\.[A-Z]\w*)*")  # ``Element``, ``Connection.Response``
_LITERALS = {
    "string_literal": "String",
    "text_block": "String",
    "character_literal": "char",
    "true": "boolean",
    "false": "boolean",
    "null_literal": "null",
    "class_literal": "Class",
}
_INTEGERS = frozenset(
    {"decimal_integer_literal", "hex_integer_literal", "octal_integer_literal"}
    | {"binary_integer_literal"}
)
_FLOATS = frozenset({"decimal_floating_point_literal", "hex_floating_point_literal"})
_NOT_ARGUMENTS = frozenset({"line_comment", "block_comment"})
_CONFLICT = ""  # a name given two types, or declared without one
# what a method of every object returns, by name and argument count
_ANY_OBJECT = {("toString", 0): "String", ("hashCode", 0): "int", ("equals", 1): "boolean"}
_ANY_OBJECT_NAMES = frozenset(name for name, _count in _ANY_OBJECT)
# static methods of the JDK whose result type is fixed
_STATIC = {
    **dict.fromkeys(
        (
            *("String.valueOf", "String.format", "String.join", "Integer.toString"),
            *("Long.toString", "Character.toString", "Objects.toString", "Arrays.toString"),
            "Boolean.toString",
        ),
        "String",
    ),
    **dict.fromkeys(("Integer.parseInt", "Integer.compare", "Character.getNumericValue"), "int"),
    "Long.parseLong": "long",
    "Boolean.parseBoolean": "boolean",
    "Double.parseDouble": "double",
    **dict.fromkeys(("Character.isDigit", "Character.isLetter", "Objects.equals"), "boolean"),
    **dict.fromkeys(("Character.isWhitespace", "Character.isLetterOrDigit"), "boolean"),
}
_STRING_RESULTS = {
    **dict.fromkeys(
        (
            *("substring", "trim", "strip", "toLowerCase", "toUpperCase", "replace"),
            *("replaceAll", "concat", "repeat", "intern", "formatted", "stripLeading"),
            "stripTrailing",
        ),
        "String",
    ),
    **dict.fromkeys(("length", "indexOf", "lastIndexOf", "compareTo", "codePointAt"), "int"),
    **dict.fromkeys(("isEmpty", "isBlank", "startsWith", "endsWith", "contains"), "boolean"),
    **dict.fromkeys(("equalsIgnoreCase", "matches", "regionMatches"), "boolean"),
    "charAt": "char",
    "split": "String[]",
    "toCharArray": "char[]",
}
# methods of JDK types whose result type is fixed
_JDK_RESULTS = {
    "String": _STRING_RESULTS,
    "StringBuilder": {"length": "int", "charAt": "char", "indexOf": "int", "substring": "String"},
}


class Names:
    """The types of names: per method or constructor (``id`` of its scope) and, for fields,
    per class."""

    def __init__(self) -> None:
        self.scoped: dict[int, dict[str, str]] = {}
        self.declared: set[str] = set()  # every name declared anywhere in the file
        self.returns: dict[str, str] = {}  # a method of the file -> its result type (or "")

    def note(self, owner: Scope | None, name: Node | None, kind: str | None) -> None:
        if owner is None or name is None or name.type != "identifier":
            return
        found = self.scoped.get(id(owner))
        if found is None:
            found = self.scoped[id(owner)] = {}
        label, value = text(name), kind or _CONFLICT
        self.declared.add(label)
        before = found.get(label, value)
        found[label] = value if before == value else _CONFLICT

    def lookup(self, owner: Scope | None, name: str) -> str | None:
        """The type of ``name`` in ``owner``: its own names, then the enclosing methods'
        and classes' (fields), innermost first."""
        scope = owner
        while scope is not None:
            found = self.scoped.get(id(scope))
            if found is not None and name in found:
                return found[name] or None
            scope = scope.parent
        return None


def collect(caps: dict[str, list[Node]], scopes: list[Scope]) -> Names:
    """Read the declarations of ``caps`` (this module's ``QUERY``) made in ``scopes`` (the
    file's methods and classes, nested, in source order)."""
    names = Names()
    declared = [n for kind in ("declare", "field", "unknown") for n in caps.get(kind, [])]
    positions = sorted({n.start_byte for n in declared})
    owner_of = dict(zip(positions, _innermost(scopes, positions), strict=True))
    for node in caps.get("declare", []):
        owner = owner_of.get(node.start_byte)
        for name, kind in _declared(node):
            names.note(owner, name, kind)
    for node in caps.get("field", []):
        owner = owner_of.get(node.start_byte)
        kind = _type(node.child_by_field_name("type"))
        for declarator in node.children_by_field_name("declarator"):
            names.note(owner, declarator.child_by_field_name("name"), kind)
    for node in caps.get("unknown", []):
        names.note(owner_of.get(node.start_byte), node, None)
    for scope in scopes:  # what each method of the file returns: an argument ``f(x)``'s type
        if scope.kind == "method":
            generic = scope.node.child_by_field_name("type_parameters") is not None
            kind = None if generic else _type(scope.node.child_by_field_name("type"))
            before = names.returns.get(scope.name, kind or "")
            names.returns[scope.name] = kind if kind and before == kind else ""
    return names


def _innermost(scopes: list[Scope], positions: list[int]) -> list[Scope | None]:
    """For each position (ascending), the innermost scope of any kind holding it."""
    found: list[Scope | None] = []
    stack: list[Scope] = []
    i = 0
    for position in positions:
        while i < len(scopes) and scopes[i].start <= position:
            while stack and stack[-1].end <= scopes[i].start:
                stack.pop()
            stack.append(scopes[i])
            i += 1
        while stack and stack[-1].end <= position:
            stack.pop()
        found.append(stack[-1] if stack else None)
    return found


def _declared(node: Node) -> list[tuple[Node | None, str | None]]:
    """``(name, type)`` pairs a declaration makes (``var x = new X()`` gives ``X``)."""
    kind = node.type
    if kind == "local_variable_declaration":
        written = text(node.child_by_field_name("type"))
        declarators = node.children_by_field_name("declarator")
        if written != "var":
            found = simple(written)
            return [(d.child_by_field_name("name"), found) for d in declarators]
        return [
            (d.child_by_field_name("name"), _made(d.child_by_field_name("value")))
            for d in declarators
        ]
    if kind == "spread_parameter":
        inner = [c for c in node.named_children if c.type == "variable_declarator"]
        return [(inner[0].child_by_field_name("name") if inner else None, None)]
    if kind == "catch_formal_parameter":
        caught = next((c for c in node.named_children if c.type == "catch_type"), None)
        types = caught.named_children if caught is not None else []
        return [(node.child_by_field_name("name"), _type(types[0]) if len(types) == 1 else None)]
    if kind == "instanceof_expression":
        return [(node.child_by_field_name("name"), _type(node.child_by_field_name("right")))]
    if kind == "type_pattern":
        children = node.named_children
        return [(children[-1], _type(children[0]))] if len(children) == 2 else []
    return [(node.child_by_field_name("name"), _type(node.child_by_field_name("type")))]


def _type(node: Node | None) -> str | None:
    return simple(text(node)) if node is not None else None


def _made(value: Node | None) -> str | None:
    if value is None or value.type != "object_creation_expression":
        return None
    return _type(value.child_by_field_name("type"))


def receiver(call: str, owner: Scope, names: Names) -> str:
    """``call`` on a name of known class written as a call on the class (``r.advance`` ->
    ``CharacterReader.advance``; ``this.reader.consume``, ``super.m`` likewise)."""
    head, dot, rest = call.partition(".")
    if not dot or (head not in names.declared and head not in ("this", "super")):
        return call
    if head == "this" and "." in rest:
        head, _, rest = rest.partition(".")
    elif head == "super":
        base = _superclass(owner)
        return f"{base}.{rest}" if base else call
    elif head == "this" or not head.isidentifier() or _CLASS.match(head):
        return call
    kind = names.lookup(owner, head)
    if kind and _CLASS.fullmatch(kind):
        return f"{kind}.{rest}"
    return call


def constructor(written: str, owner: Scope) -> str:
    """An explicit constructor call in the constructor ``owner``: ``super`` is the base's
    constructor (``Element.Element``), ``this`` another of the class's own
    (``this.Document``); ``written`` when the base is not said."""
    if written == "this":
        scope: Scope | None = owner
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        return f"this.{scope.name}" if scope is not None else written
    base = _superclass(owner) if written == "super" else None
    return f"{base}.{base.rpartition('.')[2]}" if base else written


def _superclass(owner: Scope) -> str | None:
    scope: Scope | None = owner
    while scope is not None and scope.kind != "class":
        scope = scope.parent
    superclass = scope.node.child_by_field_name("superclass") if scope is not None else None
    named = superclass.named_children if superclass is not None else []
    kind = _type(named[0]) if named else None
    return kind if kind and _CLASS.fullmatch(kind) else None


def arguments(found: Node | None, owner: Scope, names: Names) -> list[str]:
    """The type of each argument in the argument list ``found`` (``_``: not said)."""
    if found is None:
        return []
    types = []
    for argument in found.named_children:
        kind = argument.type
        if kind == "identifier":  # the commonest after literals: looked up here, no call
            types.append(names.lookup(owner, text(argument)) or "_")
        elif kind not in _NOT_ARGUMENTS:
            types.append(_LITERALS.get(kind) or _argument(argument, owner, names))
    return types


def _count(found: Node) -> int:
    """How many arguments the argument list ``found`` holds (their types not read)."""
    return sum(1 for a in found.named_children if a.type not in _NOT_ARGUMENTS)


def _argument(node: Node, owner: Scope, names: Names) -> str:
    kind = node.type
    literal = _LITERALS.get(kind)
    if literal is not None:
        return literal
    if kind in _INTEGERS:
        return "long" if text(node)[-1:] in "lL" else "int"
    if kind in _FLOATS:
        return "float" if text(node)[-1:] in "fF" else "double"
    if kind == "identifier":
        return names.lookup(owner, text(node)) or "_"
    if kind == "this":
        scope: Scope | None = owner
        while scope is not None and scope.kind != "class":
            scope = scope.parent
        return scope.name if scope is not None else "_"
    if kind in ("object_creation_expression", "cast_expression"):
        return _type(node.child_by_field_name("type")) or "_"
    if kind == "method_invocation":
        return _made_by(node, owner, names)
    if kind in ("lambda_expression", "method_reference"):
        return LAMBDA
    if kind == "binary_expression" and text(node.child_by_field_name("operator")) == "+":
        sides = (node.child_by_field_name("left"), node.child_by_field_name("right"))
        if any(side is not None and side.type == "string_literal" for side in sides):
            return "String"
    return "_"


def _made_by(node: Node, owner: Scope, names: Names) -> str:
    """The type of what the call ``node`` returns: a method of the file's (by its declared
    result), a JDK method whose result is fixed (``String.valueOf``, ``s.trim()``,
    ``x.toString()``), or ``@Type.name`` for a method of a class the value is known to be,
    which the linker reads from that method's signature; ``_`` when not said."""
    name = field_text(node, "name")
    found = node.child_by_field_name("object")
    if found is None:  # ``f(resolveOption(name))``: what the file's methods of that name return
        return names.returns.get(name) or "_"
    if name in _ANY_OBJECT_NAMES:
        listed = node.child_by_field_name("arguments")
        fixed = _ANY_OBJECT.get((name, 0 if listed is None else _count(listed)))
        if fixed is not None:
            return fixed
    if found.type != "identifier":
        kind = _argument(found, owner, names)
    elif (head := text(found)) in names.declared:
        kind = names.lookup(owner, head) or "_"
    elif _CLASS.fullmatch(head):  # ``String.valueOf(c)``, ``Options.of(x)``: a static method
        return _STATIC.get(f"{head}.{name}") or f"@{head}.{name}"
    else:
        return "_"
    if kind in _JDK_RESULTS:
        return _JDK_RESULTS[kind].get(name, "_")
    return f"@{kind}.{name}" if _CLASS.fullmatch(kind) else "_"


def with_arguments(call: str, args: list[str]) -> str:
    """``call(A,_)``: the argument list, shortened to ``_``s, or left out, to keep the call
    within ``MAX_CALL``."""
    if call.endswith("…"):
        return call
    full = f"{call}({','.join(args)})"
    if len(full) <= MAX_CALL:
        return full
    short = f"{call}({','.join('_' for _ in args)})"
    return short if len(short) <= MAX_CALL else call
