"""React components in JavaScript/TypeScript: props, state, hooks and rendered children. Pure.

A component is a PascalCase function that renders JSX, or a class that has a ``render()``
that renders JSX, or extends ``Component``/``PureComponent`` (directly or through classes of
the same file), unless it is a base: a TS ``abstract`` class, or one that another class of
the file extends and that has no ``render`` on its chain. An anonymous default export is
named after its file, as Babel's display-name transform names it (``default`` when the file
declares a component of that name itself, so neither takes the other's name by position).
``props`` are the members of its props type when the file declares it (parameter
annotation, ``FC<P>`` on the variable, ``forwardRef<R, P>``, ``memo<P>``; interfaces,
aliases, ``A & B``, ``extends``), then the keys of a destructured first parameter, then what
the body reads (``props.x``, ``const {x} = props``); ``state`` the names
``useState``/``useReducer`` bind (for a class, the keys of ``state = {...}`` and
``setState``); ``hooks`` every other ``use*`` call in call order; ``children`` the
PascalCase or ``Member.Name`` JSX tags in order of first use, fragments and context
providers/consumers left out. Everything comes from nodes the file's one query
captured, and every name is exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from tree_sitter import Node

from planning_memory.entity.facts import ComponentFact
from planning_memory.entity.languages.tstypes import Types, kept_refs, object_keys, pattern_keys
from planning_memory.entity.syntax import (
    Scope,
    field_text,
    last_segment,
    lines,
    text,
    unique,
    within,
)

TRANSPARENT = frozenset(
    {"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"}
)
_STATE_HOOKS = frozenset({"useState", "useReducer"})
_HOOK = re.compile(r"^use[A-Z0-9]")
_REACT_BASES = frozenset({"Component", "PureComponent"})
_FC_TYPES = frozenset(
    {"FC", "FunctionComponent", "VFC", "VoidFunctionComponent", "SFC", "ComponentType"}
)
_PROPS_ARGUMENT = {"forwardRef": 1, "memo": 0}  # which type argument is the props type
_NOT_CHILDREN = frozenset({"Fragment", "React.Fragment"})
_CONTEXT_TAGS = (".Provider", ".Consumer")
Exported = Callable[[Scope], bool]


class JsxFile(Protocol):
    """What the component finder needs from a parsed file, each list sorted by position: JSX
    tags, callees, reads (``x.y`` and ``this.x.y`` member accesses, ``{...} = x``
    declarators), objects assigned to a class's ``state``, and the file's declared types."""

    jsx: list[Node]
    jsx_pos: list[int]
    call_nodes: list[Node]
    call_pos: list[int]
    call_text: list[str]
    reads: list[Node]
    reads_pos: list[int]
    state_objects: list[Node]
    state_pos: list[int]
    types: Types


def components(
    scopes: list[Scope], f: JsxFile, exported: Exported, path: str | None = None
) -> list[ComponentFact]:
    classes = _component_classes(scopes, f)
    found: list[ComponentFact] = []
    for scope in scopes:
        name = _component_name(scope)
        if name is None:
            continue
        if scope.kind == "function" and _has_jsx(scope, f):
            found.append(_function_component(scope, name, f, exported))
        elif scope in classes:
            found.append(_class_component(scope, name, f, exported))
    taken = {c["name"] for c in found}
    file_name = _file_component_name(path)
    if file_name not in taken:
        for component in found:
            if component["name"] == "default":
                component["name"] = file_name
    return found


def _component_name(scope: Scope) -> str | None:
    """A component's name as written; ``default`` for an anonymous default export (named
    after its file once the file's other components are known)."""
    if scope.name[:1].isupper():
        return scope.name
    return "default" if scope.name == "default" and scope.parent is None else None


def _file_component_name(path: str | None) -> str:
    """The name of a file's anonymous default export: ``site-footer.jsx`` -> ``SiteFooter``,
    an ``index`` file its folder's name; ``default`` when the path is unknown."""
    parts = (path or "").replace("\\", "/").split("/")
    stem = parts[-1].split(".", 1)[0]
    if stem == "index" and len(parts) > 1:
        stem = parts[-2]
    name = "".join(word[:1].upper() + word[1:] for word in re.findall(r"[A-Za-z0-9_$]+", stem))
    return name or "default"


def _component_classes(scopes: list[Scope], f: JsxFile) -> set[Scope]:
    """The classes that are components: not abstract, and a JSX ``render()`` of their own
    or of a local base, or a local chain that reaches ``Component``/``PureComponent`` with a
    ``render`` (a method or a function field) on it, unless the class is a base that another
    class of the file extends (a class that never renders and that no class extends, such
    as a table's ``<Column>`` its parent reads the props of, stays a component)."""
    classes = [s for s in scopes if s.kind == "class"]
    by_name = {s.name: s for s in classes}
    extended = {by_name.get(_heritage(s.node)[0]) for s in classes}
    renders = {s.parent: s for s in scopes if s.name == "render" and s.parent is not None}
    found: set[Scope] = set()
    for cls in classes:
        if cls.node.type == "abstract_class_declaration":
            continue
        seen: set[Scope] = set()
        current: Scope | None = cls
        rendered = False
        while current is not None and current not in seen:
            render = renders.get(current)
            if render is not None and render.kind == "method" and _has_jsx(render, f):
                found.add(cls)
                break
            rendered = rendered or render is not None
            if last_segment(_heritage(current.node)[0]) in _REACT_BASES:
                if rendered or cls not in extended:
                    found.add(cls)
                break
            seen.add(current)
            current = by_name.get(_heritage(current.node)[0])
    return found


def _has_jsx(scope: Scope, f: JsxFile) -> bool:
    first, last = within(f.jsx_pos, scope.start, scope.end)
    return first < last


def _heritage(node: Node) -> tuple[str, Node | None]:
    """The base class of a class declaration as written, and its type arguments (TS)."""
    for child in node.children:
        if child.type != "class_heritage":
            continue
        for clause in child.named_children:
            if clause.type == "extends_clause":
                return field_text(clause, "value"), clause.child_by_field_name("type_arguments")
        return (text(child.named_children[0]) if child.named_child_count else ""), None
    return "", None


def _children(scope: Scope, f: JsxFile) -> list[str]:
    first, last = within(f.jsx_pos, scope.start, scope.end)
    names = []
    for node in f.jsx[first:last]:
        name = field_text(node, "name")
        if not name or not (name[0].isupper() or "." in name):
            continue
        if name not in _NOT_CHILDREN and not name.endswith(_CONTEXT_TAGS):
            names.append(name)
    return unique(names)


# -- function components -------------------------------------------------------------------
def _function_component(scope: Scope, name: str, f: JsxFile, exported: Exported) -> ComponentFact:
    lo, hi = within(f.call_pos, scope.start, scope.end)
    hooks: list[str] = []
    state: list[str] = []
    for index in range(lo, hi):
        hook = last_segment(f.call_text[index])
        if not _HOOK.match(hook):
            continue
        if hook in _STATE_HOOKS:
            state.extend(_state_names(f.call_nodes[index]))
        else:
            hooks.append(hook)
    refs: list[str] = []
    fact: ComponentFact = {
        "name": name,
        "kind": "function",
        "lines": lines(scope.node),
        "props": _function_props(scope, f, refs),
        "state": unique(state),
        "hooks": unique(hooks),
        "children": _children(scope, f),
        "exported": exported(scope),
    }
    return _with_props_type(fact, refs)


def _with_props_type(fact: ComponentFact, refs: list[str]) -> ComponentFact:
    """``fact`` with the imported types its props type is built from (``Types.members``'s
    ``refs``), ``&``-joined, as ``props_type``."""
    kept = kept_refs(refs)
    if kept:
        fact["props_type"] = " & ".join(kept)
    return fact


def _state_names(callee_node: Node) -> list[str]:
    """What ``const x = useState()``, ``const [x, setX] = ...`` or ``const [{ a, b }, set] =
    ...`` binds as state (never the setter)."""
    call = callee_node.parent
    declarator = call.parent if call is not None else None
    if declarator is None or declarator.type != "variable_declarator":
        return []
    target = declarator.child_by_field_name("name")
    if target is not None and target.type == "array_pattern":
        target = _first_element(target)
    if target is not None and target.type == "assignment_pattern":
        target = target.child_by_field_name("left")
    if target is None:
        return []
    if target.type == "object_pattern":
        return pattern_keys(target)
    return [text(target)] if target.type == "identifier" else []


def _first_element(array_pattern: Node) -> Node | None:
    for child in array_pattern.children:
        if child.type not in ("[", "comment"):
            return None if child.type in (",", "]") else child
    return None


def _function_props(scope: Scope, f: JsxFile, refs: list[str]) -> list[str]:
    pattern, annotation = _first_parameter(scope.node)
    props: list[str] = []
    for type_node in _props_types(scope.node, annotation):
        props.extend(f.types.members(type_node, refs=refs))
    if pattern is not None and pattern.type == "object_pattern":
        props.extend(pattern_keys(pattern))
    elif pattern is not None and pattern.type == "identifier":
        props.extend(_reads(f, text(pattern), scope))
    return unique(props)


def _first_parameter(node: Node) -> tuple[Node | None, Node | None]:
    """The first parameter's pattern (default value stripped) and its type annotation."""
    first = node.child_by_field_name("parameter")
    params = node.child_by_field_name("parameters")
    if first is None and params is not None:
        first = next((c for c in params.named_children if c.type != "comment"), None)
    annotation = None
    if first is not None and first.type in ("required_parameter", "optional_parameter"):
        annotation = first.child_by_field_name("type")
        first = first.child_by_field_name("pattern")
    if first is not None and first.type == "assignment_pattern":
        first = first.child_by_field_name("left")
    return first, annotation


def _props_types(node: Node, annotation: Node | None) -> list[Node]:
    """Where a function component's props type is written: its parameter's annotation, the
    type arguments of ``forwardRef``/``memo`` around it, an ``FC<P>`` on its variable."""
    found = [annotation] if annotation is not None else []
    parent = node.parent
    while parent is not None:
        if parent.type in TRANSPARENT:
            node, parent = parent, parent.parent
            continue
        call = parent.parent
        if parent.type != "arguments" or call is None or call.type != "call_expression":
            break
        index = _PROPS_ARGUMENT.get(last_segment(field_text(call, "function")))
        arguments = call.child_by_field_name("type_arguments")
        if index is not None and arguments is not None and arguments.named_child_count > index:
            found.append(arguments.named_children[index])
        node, parent = call, call.parent
    if parent is not None and parent.type == "variable_declarator":
        declared = parent.child_by_field_name("type")
        generic = declared.named_children[0] if declared and declared.named_child_count else None
        if generic is not None and generic.type == "generic_type":
            arguments = generic.child_by_field_name("type_arguments")
            if last_segment(field_text(generic, "name")) in _FC_TYPES and arguments is not None:
                found.extend(arguments.named_children[:1])
    return found


def _reads(f: JsxFile, holder: str, scope: Scope) -> list[str]:
    """The keys of ``holder`` (``props``, ``this.props``) that ``scope`` reads, in order."""
    lo, hi = within(f.reads_pos, scope.start, scope.end)
    names: list[str] = []
    for node in f.reads[lo:hi]:
        if node.type == "member_expression":
            if field_text(node, "object") == holder:
                names.append(field_text(node, "property"))
        elif field_text(node, "value") == holder:
            pattern = node.child_by_field_name("name")
            names.extend(pattern_keys(pattern) if pattern is not None else [])
    return names


# -- class components ----------------------------------------------------------------------
def _class_component(scope: Scope, name: str, f: JsxFile, exported: Exported) -> ComponentFact:
    arguments = _heritage(scope.node)[1]
    props = []
    refs: list[str] = []
    if arguments is not None and arguments.named_child_count:
        props.extend(f.types.members(arguments.named_children[0], refs=refs))
    props.extend(_reads(f, "this.props", scope))
    fact: ComponentFact = {
        "name": name,
        "kind": "class",
        "lines": lines(scope.node),
        "props": unique(props),
        "state": _class_state(scope, f),
        "hooks": [],
        "children": _children(scope, f),
        "exported": exported(scope),
    }
    return _with_props_type(fact, refs)


def _class_state(scope: Scope, f: JsxFile) -> list[str]:
    """Keys of ``state = {...}`` / ``this.state = {...}`` and of ``this.setState`` updates
    (an object, or a function returning one), in source order."""
    lo, hi = within(f.state_pos, scope.start, scope.end)
    found = [(node.start_byte, object_keys(node)) for node in f.state_objects[lo:hi]]
    lo, hi = within(f.call_pos, scope.start, scope.end)
    for index in range(lo, hi):
        if f.call_text[index] == "this.setState":
            found.append((f.call_pos[index], _updated_keys(_first_argument(f.call_nodes[index]))))
    found.sort(key=lambda item: item[0])
    return unique(key for _pos, keys in found for key in keys)


def _first_argument(callee_node: Node) -> Node | None:
    call = callee_node.parent
    arguments = call.child_by_field_name("arguments") if call is not None else None
    if arguments is None:
        return None
    return next((c for c in arguments.named_children if c.type != "comment"), None)


def _updated_keys(node: Node | None) -> list[str]:
    while node is not None and node.type in TRANSPARENT and node.named_child_count:
        node = node.named_children[0]
    if node is None:
        return []
    if node.type == "object":
        return object_keys(node)
    if node.type not in ("arrow_function", "function_expression"):
        return []
    body = node.child_by_field_name("body")
    if body is None or body.type != "statement_block":
        return _updated_keys(body)
    returns = [c for c in body.named_children if c.type == "return_statement"]
    return [
        k for r in returns for k in _updated_keys(r.named_children[0] if r.named_children else None)
    ]
