"""Rust calls through values of a known type, written as calls on the type. Pure.

The call graph links ``Type::method()`` to the type's method when ``Type`` is one of the
repository's (through the file, its ``use``s and modules) and never guesses on a path. Where
the source says the type of a name, a method call on it is recorded on its type:

- a parameter (``t: &mut Template``, ``other: &Self``) or a ``let`` with a type
  (``let x: Template = ...``): ``t.render()`` is ``Template::render``;
- a ``let`` given a struct literal (``Template { .. }``): ``Template::render``;
- a ``let`` given a call (``let t = Template::new()``, ``let w = Walker::open()?``):
  ``Template::new().render``, which the call graph reads through the type ``new`` declares
  it returns (``Self``, ``Template``; after ``?`` the ``T`` of ``Result<T, E>`` or
  ``Option<T>``);
- an enum variant (``ExitCode::KilledBySigint.exit()``): ``ExitCode::exit``.

A name bound twice with different types in one function (Rust code rebinds names often:
``let x = x.unwrap()``), or bound without a type (a closure's parameter, a ``for`` or
``match`` pattern, ``if let``), is left alone.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from planning_memory.entity.syntax import Scope, callee, text

QUERY = """
(parameter) @param
(let_declaration) @let
(closure_parameters) @unbound
(for_expression pattern: (_) @unbound)
(let_condition pattern: (_) @unbound)
(match_arm pattern: (_) @unbound)
"""
_TYPE = re.compile(r"&?(?:'\w+\s*)?(?:mut\s+)?((?:[A-Za-z_]\w*::)*[A-Z]\w*)(?:<.*>)?")
_CHAIN = re.compile(r"[A-Za-z_]\w*(?:(?:::|\.)[A-Za-z_]\w*|\(\))*\(\)\??")  # ``a::B::new()?``
_VARIANT = re.compile(r"((?:[A-Za-z_]\w*::)*[A-Z]\w*)::[A-Z][a-z]\w*\.([A-Za-z_]\w*)")
_CONFLICT = ""  # a name bound twice, or without a type
_DEPTH = 3  # names given a call's result, each read through the next


class Names:
    """The types of names per function (``id`` of its scope)."""

    def __init__(self, heads: set[str]) -> None:
        self.heads = heads  # the names method calls are made on: others need no type
        self.local: dict[int, dict[str, str]] = {}

    def note(self, owner: Scope | None, name: Node, kind: str | None) -> None:
        label = text(name)
        if owner is None or label not in self.heads:
            return
        found = self.local.setdefault(id(owner), {})
        value = kind if kind is not None else _CONFLICT
        found[label] = value if found.get(label, value) == value else _CONFLICT


def collect(caps: dict[str, list[Node]], owner_of: dict[int, Scope | None], names: Names) -> Names:
    """Read the bindings of ``caps`` (this module's ``QUERY``); ``owner_of`` maps a node's
    start byte to its function."""
    for node in caps.get("param", []):
        pattern = node.child_by_field_name("pattern")
        kind = _type(node.child_by_field_name("type"))
        for name in _bound(pattern):
            names.note(owner_of.get(node.start_byte), name, kind)
    for node in caps.get("let", []):
        pattern = node.child_by_field_name("pattern")
        declared = node.child_by_field_name("type")
        kind = _type(declared) if declared is not None else _value(node)
        bound = _bound(pattern)
        for name in bound:
            names.note(owner_of.get(node.start_byte), name, kind if len(bound) == 1 else None)
    for node in caps.get("unbound", []):
        for name in _bound(node):
            names.note(owner_of.get(node.start_byte), name, None)
    return names


def _bound(pattern: Node | None) -> list[Node]:
    """The names a pattern binds (any identifier in it: a path's name is no receiver)."""
    if pattern is None:
        return []
    if pattern.type == "identifier":
        return [pattern]
    found = []
    stack = [pattern]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.type == "identifier":
                found.append(child)
            elif child.named_child_count:
                stack.append(child)
    return found


def _type(node: Node | None) -> str | None:
    match = _TYPE.fullmatch(text(node)) if node is not None else None
    return match.group(1) if match else None


def _value(node: Node) -> str | None:
    """The type a ``let``'s value has when the source says it: a struct literal's, or a
    call's result (``Template::new()``, ``Walker::open()?``, read by the call graph)."""
    value = node.child_by_field_name("value")
    if value is None:
        return None
    if value.type == "struct_expression":
        return _type(value.child_by_field_name("name"))
    if value.type not in ("call_expression", "try_expression"):
        return None
    made = callee(text(value))
    return made if _CHAIN.fullmatch(made) else None


def typed(calls: list[tuple[int, str]], owners: list[Scope | None], names: Names) -> dict[int, str]:
    """The method calls (position, text) on names of a known type, written as calls on the
    type: index in ``calls`` -> the new text."""
    found = {}
    for i, (_, call) in enumerate(calls):
        variant = _VARIANT.fullmatch(call)
        if variant is not None:  # ``ExitCode::Killed.exit()``: a variant of ``ExitCode``
            found[i] = f"{variant.group(1)}::{variant.group(2)}"
            continue
        owner = owners[i]
        local = names.local.get(id(owner)) if owner is not None else None
        if not local:
            continue
        now = call
        for _depth in range(_DEPTH):  # ``let u = t.clone()``: ``t.clone().x``, then t's type
            head, dot, rest = now.partition(".")
            kind = local.get(head) if dot else None
            if not kind:
                break
            now = f"{kind}{'.' if kind.endswith(('()', '?')) else '::'}{rest}"
            if not kind.endswith(("()", "?")):
                break
        if now != call:
            found[i] = now
    return found
