"""React components in JavaScript/TypeScript: props, state, hooks and rendered children. Pure.

A component is a PascalCase function that renders JSX, or a class extending ``Component`` or
``PureComponent`` that does. ``props`` are the keys of a destructured first parameter, else the
members of its props type and the ``props.x`` it reads; ``state`` the names ``useState`` /
``useReducer`` bind (for a class, the keys of ``state = {...}`` and ``setState({...})``);
``hooks`` every other ``use*`` call in call order; ``children`` the PascalCase or
``Member.Name`` JSX tags in order of first use.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from tree_sitter import Node

from planning_memory.entity.facts import ComponentFact
from planning_memory.entity.syntax import (
    Scope,
    field_text,
    last_segment,
    lines,
    string_value,
    text,
    unique,
    within,
)

_STATE_HOOKS = frozenset({"useState", "useReducer"})
_HOOK = re.compile(r"^use[A-Z0-9]")
_COMPONENT_BASE = re.compile(r"\b(?:Pure)?Component\b")
_IDENT = r"[A-Za-z_$][\w$]*"
Exported = Callable[[Scope], bool]


class JsxFile(Protocol):
    """What the component finder needs from a parsed file: its JSX tags and calls, sorted
    by position, and the members of the interfaces and type aliases it declares."""

    jsx: list[Node]
    jsx_pos: list[int]
    call_nodes: list[Node]
    call_pos: list[int]
    call_text: list[str]
    types: dict[str, list[str]]


def components(scopes: list[Scope], f: JsxFile, exported: Exported) -> list[ComponentFact]:
    found: list[ComponentFact] = []
    for scope in scopes:
        if not scope.name[:1].isupper():
            continue
        first, last = within(f.jsx_pos, scope.start, scope.end)
        if scope.kind == "function" and first < last:
            found.append(_function_component(scope, f, first, last, exported))
        elif scope.kind == "class" and _is_component_class(scope.node) and first < last:
            found.append(_class_component(scope, f, first, last, exported))
    return found


def _children(f: JsxFile, first: int, last: int) -> list[str]:
    names = []
    for node in f.jsx[first:last]:
        name = field_text(node, "name")
        if name and (name[0].isupper() or "." in name):
            names.append(name)
    return unique(names)


def _function_component(
    scope: Scope, f: JsxFile, first: int, last: int, exported: Exported
) -> ComponentFact:
    lo, hi = within(f.call_pos, scope.start, scope.end)
    hooks: list[str] = []
    state: list[str] = []
    for index in range(lo, hi):
        hook = last_segment(f.call_text[index])
        if not _HOOK.match(hook):
            continue
        if hook in _STATE_HOOKS:
            state.extend(_state_name(f.call_nodes[index]))
        else:
            hooks.append(hook)
    return {
        "name": scope.name,
        "kind": "function",
        "lines": lines(scope.node),
        "props": _function_props(scope.node, f),
        "state": unique(state),
        "hooks": unique(hooks),
        "children": _children(f, first, last),
        "exported": exported(scope),
    }


def _state_name(callee_node: Node) -> list[str]:
    call = callee_node.parent
    declarator = call.parent if call is not None else None
    if declarator is None or declarator.type != "variable_declarator":
        return []
    target = declarator.child_by_field_name("name")
    if target is None:
        return []
    if target.type == "array_pattern":
        names = [c for c in target.named_children if c.type == "identifier"]
        return [text(names[0])] if names else []
    return [text(target)] if target.type == "identifier" else []


def _function_props(node: Node, f: JsxFile) -> list[str]:
    params = node.child_by_field_name("parameters")
    first = node.child_by_field_name("parameter")
    if first is None and params is not None and params.named_child_count:
        first = params.named_children[0]
    if first is None:
        return []
    pattern, annotation = first, None
    if first.type in ("required_parameter", "optional_parameter"):
        pattern = first.child_by_field_name("pattern") or first
        annotation = first.child_by_field_name("type")
    elif first.type == "assignment_pattern":
        pattern = first.child_by_field_name("left") or first
    if pattern.type == "object_pattern":
        return unique(pattern_keys(pattern))
    props: list[str] = []
    if annotation is not None:
        props.extend(f.types.get(_type_name(text(annotation)), []))
    if pattern.type == "identifier":
        props.extend(_accessed(text(node), re.escape(text(pattern))))
    return unique(props)


def _accessed(body: str, holder: str) -> list[str]:
    names = re.findall(rf"\b{holder}\.({_IDENT})", body)
    for group in re.findall(rf"\{{([^{{}}]*)\}}\s*=\s*{holder}\b", body):
        names.extend(_keys_of(group))
    return names


def _keys_of(inner: str) -> list[str]:
    keys = []
    for part in inner.split(","):
        part = part.strip()
        if not part or part.startswith("..."):
            continue
        match = re.match(_IDENT, part)
        if match:
            keys.append(match.group(0))
    return keys


def _type_name(annotation: str) -> str:
    name = annotation.lstrip(":").strip()
    name = re.sub(r"^(?:Readonly|React\.FC|FC|PropsWithChildren)<(.*)>$", r"\1", name)
    return name.split("<", 1)[0].strip()


def _is_component_class(node: Node) -> bool:
    for child in node.children:
        if child.type == "class_heritage":
            return bool(_COMPONENT_BASE.search(text(child)))
    return False


def _class_component(
    scope: Scope, f: JsxFile, first: int, last: int, exported: Exported
) -> ComponentFact:
    body = text(scope.node)
    props = _accessed(body, r"this\.props")
    for heritage in scope.node.children:
        if heritage.type == "class_heritage":
            args = re.search(r"<\s*(" + _IDENT + r")", text(heritage))
            if args:
                props = f.types.get(args.group(1), []) + props
    state = []
    for match in re.finditer(r"(?:\bstate\s*=|this\.setState\()\s*\{", body):
        state.extend(_object_keys(body, match.end()))
    return {
        "name": scope.name,
        "kind": "class",
        "lines": lines(scope.node),
        "props": unique(props),
        "state": unique(state),
        "hooks": [],
        "children": _children(f, first, last),
        "exported": exported(scope),
    }


def _object_keys(body: str, start: int) -> list[str]:
    """Top-level keys of the object literal whose ``{`` ends just before ``start``."""
    depth, keys, token = 1, [], ""
    for char in body[start:]:
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and char == ",":
            keys.extend(_keys_of(token))
            token = ""
            continue
        if depth == 1:
            token += char
    keys.extend(_keys_of(token))
    return keys


def type_members(nodes: list[Node]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for node in nodes:
        body = node.child_by_field_name("body") or node.child_by_field_name("value")
        if body is None:
            continue
        names = [
            string_value(field_text(child, "name"))
            for child in body.named_children
            if child.type in ("property_signature", "method_signature")
        ]
        members[field_text(node, "name")] = [n for n in names if n]
    return members


def pattern_keys(pattern: Node) -> list[str]:
    keys: list[str] = []
    for child in pattern.named_children:
        if child.type in ("shorthand_property_identifier_pattern", "identifier"):
            keys.append(text(child))
        elif child.type == "object_assignment_pattern":
            keys.append(field_text(child, "left"))
        elif child.type == "pair_pattern":
            keys.append(string_value(field_text(child, "key")))
        elif child.type == "assignment_pattern":
            keys.append(field_text(child, "left"))
    return [k for k in keys if k]
