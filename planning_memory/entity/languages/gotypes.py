"""Go calls through values of a known type, written as calls on the type. Pure.

The call graph links ``Type.Method()`` and ``pkg.Type.Method()`` to the type's method and
never guesses the type of a value. Where the source says the type of a name, a call on the
name is recorded as a call on its type:

- a parameter (``func Use(cmd *m.Command)``) or a ``var`` with a type (``var c Command``):
  ``cmd.Name()`` is ``m.Command.Name`` (an import alias written as its package's name);
- a name given a composite literal (``c := &Command{}``, ``c := m.Command{}``),
  ``new(Command)`` or a type assertion (``c := v.(*Command)``): ``Command.Name``;
- a name given the first result of a call (``c := NewCommand()``, ``c, err := m.New()``):
  ``NewCommand().Name``, which the call graph reads through the declared result type of
  the function it links ``NewCommand`` to;
- a ``range`` variable over a name of slice type (``cmds []*Command``, ``cmds
  ...*Command``) or over a call (``for _, c := range cmd.Commands()``:
  ``Command.Commands()[].Name``, read through the slice type ``Commands`` returns);
- in a method, a field of the receiver whose struct the file declares (``c.parent.Name()``,
  ``for _, sub := range c.commands``).

Names are per function (a function literal's names count as its enclosing function's), then
the file's package-level ``var`` declarations. A name given two different types in one
function, or any value whose type is not said (a map's ``range``, a type switch, ``x :=
f`` of another kind), is left alone. The method receiver is not typed here: its calls are the
method's own (``self.Name``).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from planning_memory.entity.syntax import Scope, callee, text

QUERY = """
(parameter_declaration) @param
(var_spec) @var
(short_var_declaration) @short
(range_clause left: (_)) @range
(type_switch_statement alias: (_) @unknown)
(receive_statement left: (_) @unknown)
(variadic_parameter_declaration) @param
(type_spec type: (struct_type)) @struct
"""
_TYPE = re.compile(r"(\[\])?\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)(?:\[.*\])?")
_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\(\))?(?:\.[A-Za-z_]\w*(?:\(\))?)*")  # ``a.B().c``
_CONFLICT = ""  # a name given two types, or one of unknown type
_DEPTH = 3  # names given a call's result, each read through the next (``c := d.Root()``)


class Names:
    """The types of names per function (``id`` of its scope), and at package level."""

    def __init__(self, heads: set[str], aliases: dict[str, str]) -> None:
        self.heads = heads  # the names calls are made on: others need no type
        self.aliases = aliases  # import alias -> the package name the call graph knows
        self.local: dict[int, dict[str, str]] = {}
        self.package: dict[str, str] = {}
        self.fields: dict[str, dict[str, str]] = {}  # struct type -> field -> its type
        self.receivers: dict[int, tuple[str, str]] = {}  # method -> (receiver, its type)

    def note(self, owner: Scope | None, name: Node, kind: str | None) -> None:
        label = text(name)
        if label not in self.heads:
            return
        found = self.local.setdefault(id(owner), {}) if owner is not None else self.package
        before = found.get(label)
        value = kind if kind is not None else _CONFLICT
        found[label] = value if before is None or before == value else _CONFLICT

    def type_of(self, node: Node | None) -> str | None:
        """The type a type expression names (``*m.Command`` -> ``pkg.Command``, a slice
        ``[]*Command`` -> ``[]Command``), or None for a map, function, channel or interface
        literal."""
        match = _TYPE.fullmatch(text(node)) if node is not None else None
        if match is None:
            return None
        kind = match.group(2)
        head, dot, rest = kind.partition(".")
        if dot and head in self.aliases:
            kind = f"{self.aliases[head]}.{rest}"
        return "[]" + kind if match.group(1) else kind

    def kind_of(self, owner: Scope | None, name: str) -> str | None:
        """The type ``name`` has in ``owner``'s function, else at package level."""
        local = self.local.get(id(owner), {}) if owner is not None else {}
        return (local[name] if name in local else self.package.get(name)) or None

    def field_of(self, owner: Scope | None, name: str, field: str) -> str | None:
        """The type of ``name.field`` in ``owner``, when ``name`` is the method's receiver
        or a name of known type, and this file declares that struct type."""
        found = self.receivers.get(id(owner)) if owner is not None else None
        kind = found[1] if found is not None and found[0] == name else None
        if kind is None and name in self.heads:
            kind = self.kind_of(owner, name)
        return self.fields.get(kind, {}).get(field) if kind else None

    def value_of(self, node: Node | None) -> str | None:
        """The type a value has when the source says it: a composite literal (or its
        address), ``new(T)``, or a call's first result (``F()``, resolved by the call
        graph)."""
        if node is None:
            return None
        if node.type == "unary_expression" and text(node.child(0)) == "&":
            node = node.child_by_field_name("operand")
            if node is None:
                return None
        if node.type in ("composite_literal", "type_assertion_expression"):
            return self.type_of(node.child_by_field_name("type"))
        if node.type != "call_expression":
            return None
        function = node.child_by_field_name("function")
        if function is None or function.type not in ("identifier", "selector_expression"):
            return None
        if text(function) == "new":
            arguments = node.child_by_field_name("arguments")
            first = arguments.named_children[0] if arguments and arguments.named_children else None
            return self.type_of(first)
        made = callee(text(function))
        head, dot, rest = made.partition(".")
        if dot and head in self.aliases:
            made = f"{self.aliases[head]}.{rest}"
        return made + "()" if _CHAIN.fullmatch(made) else None


def collect(caps: dict[str, list[Node]], owners_of: dict[int, Scope | None], names: Names) -> Names:
    """Read the declarations of ``caps`` (this module's ``QUERY``); ``owners_of`` maps a
    node's start byte to its function."""
    for node in caps.get("range", []):  # a name ranged over needs its type too
        right = node.child_by_field_name("right")
        if right is not None and right.type == "identifier":
            names.heads.add(text(right))
    for node in caps.get("struct", []):
        struct = node.child_by_field_name("type")
        fields = names.fields.setdefault(text(node.child_by_field_name("name")), {})
        for spec in _field_declarations(struct):
            kind = names.type_of(spec.child_by_field_name("type"))
            for name in spec.children_by_field_name("name"):
                fields[text(name)] = kind or _CONFLICT
    for node in caps.get("param", []):
        owner = owners_of.get(node.start_byte)
        if owner is None:
            continue
        # the receiver's calls are the method's own (``self.``): it shadows, untyped; its
        # fields have the types its struct declares
        receiver = _is_receiver(node)
        if receiver:
            made = names.type_of(node.child_by_field_name("type"))
            for name in _names(node):
                if made is not None and not made.startswith("[]"):
                    names.receivers[id(owner)] = (text(name), made)
        kind = None if receiver else names.type_of(node.child_by_field_name("type"))
        if kind is not None and node.type == "variadic_parameter_declaration":
            kind = "[]" + kind  # ``cmds ...*Command`` is a slice
        for name in _names(node):
            names.note(owner, name, kind)
    for node in caps.get("var", []):
        owner = owners_of.get(node.start_byte)
        if owner is None and not _top_level(node):
            continue
        declared = node.child_by_field_name("type")
        values = _values(node.child_by_field_name("value"))
        targets = _names(node)
        for i, name in enumerate(targets):
            if declared is not None:
                kind = names.type_of(declared)
            else:
                kind = _positional(names, values, i, len(targets))
            names.note(owner, name, kind)
    for node in caps.get("short", []):
        owner = owners_of.get(node.start_byte)
        left = node.child_by_field_name("left")
        values = _values(node.child_by_field_name("right"))
        targets = [n for n in left.named_children] if left is not None else []
        for i, name in enumerate(targets):
            if name.type == "identifier":
                names.note(owner, name, _positional(names, values, i, len(targets)))
    for node in caps.get("range", []):  # last: the ranged-over names have their types
        owner = owners_of.get(node.start_byte)
        left = node.child_by_field_name("left")
        targets = list(left.named_children) if left is not None else []
        element = _element(names, owner, node.child_by_field_name("right"))
        for i, name in enumerate(targets):
            if name.type == "identifier":
                names.note(owner, name, element if i == 1 else None)
    for node in caps.get("unknown", []):
        owner = owners_of.get(node.start_byte)
        found = node.named_children if node.type == "expression_list" else _names(node)
        for name in found:
            if name.type == "identifier":
                names.note(owner, name, None)
    return names


def _element(names: Names, owner: Scope | None, node: Node | None) -> str | None:
    """The type of the elements ``range`` gives of ``node``: of a name of slice type, or of
    the slice a call returns (``F()[]``, read by the call graph)."""
    if node is None:
        return None
    if node.type == "identifier":
        kind = names.kind_of(owner, text(node))
        if kind is None:
            return None
        if kind.startswith("[]"):
            return kind[2:]
        return kind + "[]" if kind.endswith("()") else None
    if node.type == "selector_expression":  # ``range c.commands`` in a method of c
        operand = node.child_by_field_name("operand")
        kind = names.field_of(owner, text(operand), text(node.child_by_field_name("field")))
        return kind[2:] if kind and kind.startswith("[]") else None
    made = names.value_of(node) if node.type == "call_expression" else None
    return made + "[]" if made is not None and made.endswith("()") else None


def _field_declarations(struct: Node | None) -> list[Node]:
    lists = struct.named_children if struct is not None else []
    body = next((c for c in lists if c.type == "field_declaration_list"), None)
    return [c for c in body.named_children if c.type == "field_declaration"] if body else []


def _positional(names: Names, values: list[Node], i: int, count: int) -> str | None:
    """The type of the ``i``-th of ``count`` names given ``values``: a value each, or the
    first result of the one call on the right (``c, err := New()``)."""
    if len(values) == count:
        return names.value_of(values[i])
    if i == 0 and len(values) == 1 and values[0].type == "call_expression":
        kind = names.value_of(values[0])
        return kind if kind is not None and kind.endswith("()") else None
    if i == 0 and len(values) == 1 and values[0].type == "type_assertion_expression":
        return names.value_of(values[0])  # ``c, ok := v.(*Command)``
    return None


def _values(node: Node | None) -> list[Node]:
    if node is None:
        return []
    return list(node.named_children) if node.type == "expression_list" else [node]


def _names(node: Node) -> list[Node]:
    return [c for c in node.children_by_field_name("name") if c.type == "identifier"]


def _is_receiver(node: Node) -> bool:
    parent = node.parent
    method = parent.parent if parent is not None else None
    return (
        method is not None
        and method.type == "method_declaration"
        and method.child_by_field_name("receiver") == parent
    )


def _top_level(node: Node) -> bool:
    """A package-level ``var`` (not one inside a function literal of a package-level var)."""
    parent = node.parent
    while parent is not None and parent.type in ("var_declaration", "var_spec_list"):
        parent = parent.parent
    return parent is not None and parent.type == "source_file"


def typed(calls: list[tuple[int, str]], owners: list[Scope | None], names: Names) -> dict[int, str]:
    """The calls (position, text) on names of a known type, written as calls on the type:
    index in ``calls`` -> the new text."""
    found = {}
    for i, (_, call) in enumerate(calls):
        owner = owners[i]
        if owner is None:
            continue
        text_now = call
        head, dot, rest = call.partition(".")
        field, dot2, method = rest.partition(".")
        kind = names.field_of(owner, head, field) if dot2 else None
        if kind and not kind.startswith("[]"):  # ``c.parent.Name()``: the field's type
            text_now = f"{kind}.{method}"
        for _depth in range(_DEPTH):  # ``c := d.Root()``: ``d.Root().Name``, then d's type
            head, dot, rest = text_now.partition(".")
            kind = names.kind_of(owner, head) if dot and head in names.heads else None
            if kind is None or kind.startswith("[]"):
                break
            text_now = f"{kind}.{rest}"
            if not kind.endswith(("()", "()[]")):
                break
        if text_now != call:
            found[i] = text_now
    return found
