"""JavaScript, TypeScript and TSX extractor, including React function and class components.

A function is an entity when it has a name: a declaration, a method, or a function/arrow
expression bound to a variable, object key, class field or ``memo``/``forwardRef`` wrapper,
or through a hook that keeps a function (``const f = useCallback(() => ..., deps)``, and
``useMemo`` whose factory returns a function). A TypeScript interface's method signatures
(and members typed as a function) are methods of the interface, as Java's interface methods.
An object literal bound to a variable names the functions inside it (``authOptions.authorize``).
Anonymous callbacks are transparent: their calls belong to the named function around them.
Names are exactly as written (a string key loses only its quotes). Imports, exports and
what calls through import bindings are recorded as come from ``jsimports``, components from
``react``, declared types' members from ``tstypes``. Pure.
"""

from __future__ import annotations

import re
from functools import cache

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Node

from planning_memory.entity.facts import FileFacts, FunctionFact
from planning_memory.entity.languages import jsimports, jstypes, react
from planning_memory.entity.languages.react import TRANSPARENT
from planning_memory.entity.languages.tstypes import Types, key_name
from planning_memory.entity.syntax import (
    Grammar,
    Scope,
    assign_calls,
    callee,
    comments_before,
    count_branches,
    field_text,
    function_fact,
    last_segment,
    leading_comment,
    nest,
    node_texts,
    ordered,
    squash,
    summary,
    text,
    unique,
)

_BASE = """
(function_declaration) @function
(generator_function_declaration) @function
(function_expression) @function
(arrow_function) @function
(method_definition) @function
(class_declaration) @class
(class) @class
(variable_declarator name: (identifier) value: (object)) @object
(call_expression function: (_) @call)
(new_expression constructor: (_) @new)
(variable_declarator) @declare
(assignment_expression left: (member_expression object: (this)) right: (new_expression)) @declare
(import_statement) @import
(export_statement) @export
[(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
 (catch_clause) (ternary_expression) (switch_case)] @branch
(binary_expression operator: ["&&" "||" "??"]) @branch
"""
_JSX = """
(jsx_opening_element) @jsx
(jsx_self_closing_element) @jsx
(member_expression
  object: [(identifier) (member_expression object: (this) property: (property_identifier))]
  property: (property_identifier)) @read
(variable_declarator
  name: (object_pattern)
  value: [(identifier) (member_expression object: (this) property: (property_identifier))]) @read
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier) @_state)
  right: (object) @state
  (#eq? @_state "state"))
"""
_JS_STATE = """
(field_definition property: (property_identifier) @_state value: (object) @state
  (#eq? @_state "state"))
(field_definition) @declare
"""
_TSX_STATE = """
(public_field_definition name: (property_identifier) @_state value: (object) @state
  (#eq? @_state "state"))
"""
_TS = """
(public_field_definition) @declare
(abstract_class_declaration) @class
(interface_declaration) @type
(type_alias_declaration) @type
"""
_COMMENT = frozenset({"comment"})
_SKIP_TOP = frozenset({"hash_bang_line", "expression_statement"})
_DOCUMENTED = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "export_statement",
    }
)
_DECORATORS = frozenset({"decorator"})
_WRAPPERS = frozenset({"memo", "forwardRef", "observer", "styled", "withRouter", "connect"})
# hooks that hand back the function they are given (``useEvent``/``useEventCallback``: the
# stable-callback hooks of the React RFC and of common hook libraries)
_CALLBACK_HOOKS = frozenset({"useCallback", "useEffectEvent", "useEvent", "useEventCallback"})
_FUNCTIONS = frozenset({"arrow_function", "function_expression"})
_PRISMA = re.compile(r"(?:^|\.)prisma\.([A-Za-z_]\w*)\.\w+$")


@cache
def grammar(dialect: str) -> Grammar:
    if dialect == "javascript":
        return Grammar(tree_sitter_javascript.language(), _BASE + _JSX + _JS_STATE)
    if dialect == "typescript":
        return Grammar(tree_sitter_typescript.language_typescript(), _BASE + _TS)
    return Grammar(tree_sitter_typescript.language_tsx(), _BASE + _JSX + _TS + _TSX_STATE)


def extract_javascript(source: bytes, path: str | None = None) -> FileFacts:
    return extract(source, "javascript", path)


def extract_typescript(source: bytes, path: str | None = None) -> FileFacts:
    return extract(source, "typescript", path)


def extract_tsx(source: bytes, path: str | None = None) -> FileFacts:
    return extract(source, "tsx", path)


class _File:
    """Working state for one file: captured nodes sorted by position."""

    def __init__(self, source: bytes, dialect: str) -> None:
        self.source = source
        self.root, caps = grammar(dialect).captures(source)
        self.caps = caps
        self.call_nodes = sorted(caps.get("call", []), key=lambda n: n.start_byte)
        self.call_pos = [n.start_byte for n in self.call_nodes]
        self.call_text = [callee(t) for t in node_texts(self.call_nodes, source)]
        self.supers = b"super." in source
        self.jsx = sorted(caps.get("jsx", []), key=lambda n: n.start_byte)
        self.jsx_pos = [n.start_byte for n in self.jsx]
        self.reads = ordered(caps.get("read", []))
        self.reads_pos = [n.start_byte for n in self.reads]
        self.state_objects = ordered(caps.get("state", []))
        self.state_pos = [n.start_byte for n in self.state_objects]
        self.bound = jsimports.bindings(caps.get("import", []))
        self.types = Types(caps.get("type", []), self.bound)


def extract(source: bytes, dialect: str, path: str | None = None) -> FileFacts:
    """The facts of one JavaScript, TypeScript or TSX module; ``path`` (when known) names an
    anonymous default-exported component after its file."""
    f = _File(source, dialect)
    scopes = _scopes(f.caps)
    written, typed = _calls(f, scopes, path)
    new = f.caps.get("new", [])
    made = [
        (n.start_byte, "new " + callee(t))
        for n, t in zip(new, node_texts(new, source), strict=True)
    ]
    calls: dict[int, list[str]] = {}
    if typed is not written:  # side effects are read from the calls as written
        assign_calls(scopes, written + made)
        for scope in scopes:
            calls[id(scope)], scope.calls = scope.calls, []
    assign_calls(scopes, typed + made)
    branches = count_branches(scopes, f.caps.get("branch", []))
    imports, exports = jsimports.imports_exports(f)
    exported = set(exports)
    functions = [_function(s, f, exported, calls) for s in scopes if s.is_function]
    components = react.components(scopes, f, lambda scope: _is_exported(scope, exported), path)
    facts: FileFacts = {
        "purpose": summary(leading_comment(f.root, _COMMENT, _SKIP_TOP, _DOCUMENTED)),
        "imports": imports,
        "exports": exports,
        "classes": [s.qualified for s in scopes if s.kind == "class"],
        "functions": functions,
        "components": components,
        "complexity": 1 + branches,
        "parse_errors": f.root.has_error,
        "models": _models(f, scopes),
    }
    types, refs = f.types.exported(exports)
    for component in components:  # for ``ComponentProps<typeof X>`` in other files
        if not component["exported"]:
            continue
        if component["props"]:
            types[f"typeof {component['name']}"] = component["props"]
        if "props_type" in component:
            refs[f"typeof {component['name']}"] = component["props_type"].split(" & ")
    if types:
        facts["types"] = types
    if refs:
        facts["type_refs"] = refs
    return facts


Calls = list[tuple[int, str]]


def _calls(f: _File, scopes: list[Scope], path: str | None) -> tuple[Calls, Calls]:
    """Each call's position and text, a call through an import binding recorded by what it
    imports (``jsimports.call_names``): as written, and with calls on values of a known class
    written on the class (``jstypes``; the same list when there are none)."""
    texts = f.call_text
    known = {s.name for s in scopes if s.kind == "class"}
    known.update(local for local, (module, _) in f.bound.items() if jsimports.in_project(module))
    types = jstypes.collect(ordered(f.caps.get("declare", [])), scopes, known)
    typed_texts = jstypes.typed(f.call_pos, texts, scopes, types) if types or f.supers else texts
    if f.bound:
        defined = {
            s.name
            for s in scopes
            if (s.parent is None or s.parent.kind == "function") and s.kind != "interface"
        }
        names = jsimports.call_names(f.bound, path, defined)
        if names:
            texts = [jsimports.through(call, names) for call in texts]
            if typed_texts is not f.call_text:
                typed_texts = [jsimports.through(call, names) for call in typed_texts]
            else:
                typed_texts = texts
    written = list(zip(f.call_pos, texts, strict=True))
    if typed_texts == texts:
        return written, written
    return written, list(zip(f.call_pos, typed_texts, strict=True))


# -- scopes --------------------------------------------------------------------------------
def _scopes(caps: dict[str, list[Node]]) -> list[Scope]:
    scopes: list[Scope] = []
    for node in caps.get("function", []):
        name = _function_name(node)
        if name:
            scopes.append(Scope(node, name, "function"))
    for node in caps.get("class", []):
        name = field_text(node, "name") or _bound_name(node)
        if name:
            scopes.append(Scope(node, name, "class"))
    for node in caps.get("object", []):
        scopes.append(Scope(node, field_text(node, "name"), "object"))
    for node in caps.get("type", []):
        if node.type == "interface_declaration":
            scopes += _interface(node)
    nest(scopes)
    for scope in scopes:
        if scope.kind == "function" and scope.parent is not None and scope.parent.kind == "class":
            scope.kind = "constructor" if scope.name == "constructor" else "method"
        elif scope.kind == "function" and _argument_member(scope.node):
            scope.kind = "method"  # an option object's function: no bare call reaches it
    return scopes


def _argument_member(node: Node) -> bool:
    """Whether ``node`` is bound to a key of an object literal passed to a call (``ky(url,
    {retry: {delay: () => 10}})``), directly or inside such objects: a property the callee
    reads, which no bare call in the file can reach."""
    parent = node.parent
    while parent is not None and parent.type in TRANSPARENT:
        parent = parent.parent
    if parent is None or parent.type not in ("pair", "object"):
        return False  # a key's value, or a method written in the object
    while parent is not None and parent.type in ("pair", "object", *TRANSPARENT):
        parent = parent.parent
    return parent is not None and parent.type == "arguments"


def _interface(node: Node) -> list[Scope]:
    """An interface and its methods: method signatures and members typed as a function."""
    found = [Scope(node, field_text(node, "name"), "interface")]
    body = node.child_by_field_name("body")
    for member in body.named_children if body is not None else []:
        if member.type == "method_signature" or _function_type(member) is not None:
            name = key_name(member.child_by_field_name("name"))
            if name:
                found.append(Scope(member, name, "method"))
    return found


def _function_type(node: Node) -> Node | None:
    """The function type of a member typed as a function (``onChange?: (x: T) => void``)."""
    if node.type != "property_signature":
        return None
    annotation = node.child_by_field_name("type")
    value = annotation.named_children[0] if annotation and annotation.named_child_count else None
    while value is not None and value.type == "parenthesized_type" and value.named_child_count:
        value = value.named_children[0]
    return value if value is not None and value.type == "function_type" else None


def _function_name(node: Node) -> str | None:
    if node.type in ("function_declaration", "generator_function_declaration"):
        return field_text(node, "name") or None
    if node.type == "method_definition":
        return key_name(node.child_by_field_name("name")) or field_text(node, "name") or None
    bound, own = _bound_name(node), field_text(node, "name")
    if bound == "default" and own:  # `export default memo(function Row() {...})`
        return own
    return bound or own or None


def _bound_name(node: Node) -> str | None:
    """The name an expression is bound to: ``const x = ...``, ``key: ...``, a class field,
    ``obj.x = ...``, a ``memo(...)``/``forwardRef(...)`` wrapper, or ``export default``."""
    parent = node.parent
    while parent is not None and parent.type in TRANSPARENT:
        parent = parent.parent
    if parent is None:
        return None
    kind = parent.type
    if kind == "variable_declarator":
        target = parent.child_by_field_name("name")
        return text(target) if target is not None and target.type == "identifier" else None
    if kind == "pair":
        key = parent.child_by_field_name("key")
        return key_name(key) or text(key) or None
    if kind in ("public_field_definition", "field_definition"):
        return field_text(parent, "name") or field_text(parent, "property") or None
    if kind == "assignment_expression":
        left = field_text(parent, "left")
        return last_segment(left) if left and left != "module.exports" else None
    if kind == "arguments":
        call = parent.parent
        if call is not None and call.type == "call_expression":
            wrapper = last_segment(field_text(call, "function"))
            if wrapper in _WRAPPERS:
                return _bound_name(call)
            if wrapper in _CALLBACK_HOOKS and _first_argument(parent) == node:
                return _hook_bound(call)
        return None
    if kind in _FUNCTIONS and parent.child_by_field_name("body") == node:
        return _memo_bound(parent)  # ``useMemo(() => (x) => ...)``
    if kind == "return_statement":
        return _memo_bound(_returned_from(parent))  # ``useMemo(() => { return function ... })``
    if kind == "export_statement":
        return "default"
    return None


def _hook_bound(call: Node) -> str | None:
    """The variable a hook call is bound to (``const f = useCallback(...)``), else None."""
    parent = call.parent
    while parent is not None and parent.type in TRANSPARENT:
        parent = parent.parent
    if parent is None or parent.type != "variable_declarator":
        return None
    return _bound_name(call)


def _memo_bound(factory: Node | None) -> str | None:
    """The variable ``useMemo`` binds to what ``factory`` (its first argument) returns."""
    arguments = factory.parent if factory is not None else None
    call = arguments.parent if arguments is not None else None
    if call is None or arguments is None or call.type != "call_expression":
        return None
    if last_segment(field_text(call, "function")) != "useMemo":
        return None
    return _hook_bound(call) if _first_argument(arguments) == factory else None


def _returned_from(statement: Node) -> Node | None:
    """The function whose body ``statement`` (a ``return``) is a top-level statement of."""
    block = statement.parent
    function = block.parent if block is not None else None
    if block is None or function is None or block.type != "statement_block":
        return None
    return function if function.type in _FUNCTIONS else None


def _first_argument(arguments: Node) -> Node | None:
    return next((c for c in arguments.named_children if c.type != "comment"), None)


def _statement(node: Node) -> Node:
    """The statement that carries ``node``'s doc comment."""
    current = node
    parent = current.parent
    while parent is not None and parent.type in (
        "pair",
        "variable_declarator",
        "lexical_declaration",
        "variable_declaration",
        "export_statement",
        "arguments",
        "call_expression",
        *TRANSPARENT,
    ):
        current, parent = parent, parent.parent
    return current


# -- functions -----------------------------------------------------------------------------
def _function(
    scope: Scope, f: _File, exported: set[str], written: dict[int, list[str]]
) -> FunctionFact:
    node = scope.node
    fact = function_fact(
        scope,
        f.source,
        signature=_signature(_function_type(node) or node),
        purpose=comments_before(_statement(node), _COMMENT, _DECORATORS),
        exported=_is_exported(scope, exported),
    )
    if id(scope) in written:
        fact["written_calls"] = unique(written[id(scope)])
    return fact


def _signature(node: Node) -> str:
    params = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
    value = text(params)
    if params is not None and params.type == "identifier":
        value = f"({value})"
    returns = node.child_by_field_name("return_type")
    if returns is not None:
        value += " => " + text(returns).lstrip(":").strip()
    return squash(value)


def _is_exported(scope: Scope, exported: set[str]) -> bool:
    if scope.parent is None:
        if scope.name in exported:
            return True
        statement = _statement(scope.node)
        return statement.type == "export_statement"
    if scope.parent.kind == "object":
        return _is_exported(scope.parent, exported)
    if scope.kind not in ("method", "constructor") or not _is_exported(scope.parent, exported):
        return False
    first = scope.node.child(0)
    private = first is not None and first.type == "accessibility_modifier"
    private = private and text(first) in ("private", "protected")
    return not private and not scope.name.startswith("#")


def _models(f: _File, scopes: list[Scope]) -> list[str]:
    models = []
    for name in f.call_text:
        match = _PRISMA.search(name)
        if match and not match.group(1).startswith("$"):
            models.append(match.group(1)[:1].upper() + match.group(1)[1:])
    for scope in scopes:
        if scope.kind == "class" and any(
            c.type == "decorator" and text(c).startswith("@Entity") for c in scope.node.children
        ):
            models.append(scope.name)
    return unique(models)
