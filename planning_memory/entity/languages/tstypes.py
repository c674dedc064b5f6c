"""TypeScript type members and object keys: what interfaces, aliases and literals name. Pure.

The member names of the interfaces and type aliases a file declares (and the imported types
they are built from), and the keys of object literals and patterns, exactly as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tree_sitter import Node

from planning_memory.entity.syntax import field_text, last_segment, text, unique, unquote

_SAME_KEYS = frozenset({"Readonly", "Partial", "Required"})
_OMIT = frozenset({"Omit", "$Omit", "$Diff"})  # Flow-style helpers as projects declare them
_COMPONENT_PROPS = frozenset(
    {"ComponentProps", "ComponentPropsWithRef", "ComponentPropsWithoutRef"}
)
_JOINED = frozenset({"union_type", "intersection_type"})
MAX_REFS = 2000  # characters of imported types recorded for one type (``props_type``)


def key_name(node: Node | None) -> str:
    """A property key exactly as written (a string key without its quotes); "" for a
    computed ``[key]``."""
    if node is None or node.type == "computed_property_name":
        return ""
    return unquote(text(node)) if node.type == "string" else text(node)


def object_keys(node: Node) -> list[str]:
    """The keys an object literal spells out (spreads and computed keys left out)."""
    keys = []
    for child in node.named_children:
        if child.type == "shorthand_property_identifier":
            keys.append(text(child))
        elif child.type == "pair":
            keys.append(key_name(child.child_by_field_name("key")))
        elif child.type == "method_definition":
            keys.append(key_name(child.child_by_field_name("name")))
    return [k for k in keys if k]


def pattern_keys(pattern: Node) -> list[str]:
    """The keys an object pattern takes (``{ a, b = 1, c: d, ...rest }`` -> a, b, c)."""
    keys = []
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            keys.append(text(child))
        elif child.type == "object_assignment_pattern":
            keys.append(field_text(child, "left"))
        elif child.type == "pair_pattern":
            keys.append(key_name(child.child_by_field_name("key")))
    return [k for k in keys if k]


class Types:
    """The interfaces and type aliases one file declares, and the member names of a type
    built from them: ``A & B``, ``A | B``, ``extends``, ``Readonly<A>``, ``Omit<A, 'x'>``
    (and the Flow-style ``$Omit<A, 'x'>``, ``$Diff<A, {x: ...}>`` projects declare),
    ``PropsWithChildren<A>``, inline ``{ ... }``. A type from elsewhere gives no members; one
    the file imports (``imports``: local name -> ``(module, imported name)``, ``*`` for a
    namespace) is reported in ``refs``, when asked, as ``import('module').Name``, and the
    props of a component it imports (``ComponentProps<typeof Button>``) as
    ``typeof import('module').Button`` (a default import by its local name); inside
    ``Omit`` the keys left out follow: ``Omit<import('module').Name, 'a' | 'b'>``. A generic
    type, the file's own or imported, is read as declared: its arguments are not
    substituted (``BaseProps<HTMLDivElement>`` is ``import('module').BaseProps``)."""

    def __init__(
        self, declarations: Iterable[Node], imports: Mapping[str, tuple[str, str]] | None = None
    ) -> None:
        self.declared = {field_text(node, "name"): node for node in declarations}
        self.imports = imports or {}

    def members(
        self, node: Node, seen: frozenset[str] = frozenset(), refs: list[str] | None = None
    ) -> list[str]:
        kind = node.type
        if kind in _JOINED:
            return [m for part in _parts(node) for m in self.members(part, seen, refs)]
        if kind in ("type_annotation", "parenthesized_type"):
            return [m for child in node.named_children for m in self.members(child, seen, refs)]
        if kind in ("object_type", "interface_body"):
            return _signatures(node)
        if kind in ("type_identifier", "nested_type_identifier"):
            return self._declared(text(node), seen, refs)
        if kind == "generic_type":
            return self._generic(node, seen, refs)
        return []

    def exported(self, names: Iterable[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """For each type among ``names`` the file declares: its members (those with any),
        and the imported types it is built from (those with any: ``refs``)."""
        found: dict[str, list[str]] = {}
        imported: dict[str, list[str]] = {}
        for name in names:
            if name in self.declared:
                refs: list[str] = []
                members = unique(self._declared(name, frozenset(), refs))
                if members:
                    found[name] = members
                if refs:
                    imported[name] = kept_refs(refs)
        return found, imported

    def _generic(self, node: Node, seen: frozenset[str], refs: list[str] | None) -> list[str]:
        name = field_text(node, "name")
        arguments = node.child_by_field_name("type_arguments")
        args = arguments.named_children if arguments is not None else []
        wrapper = last_segment(name)
        if wrapper in _SAME_KEYS and args:
            return self.members(args[0], seen, refs)
        if wrapper == "PropsWithChildren" and args:
            return [*self.members(args[0], seen, refs), "children"]
        if wrapper in _COMPONENT_PROPS and len(args) == 1 and args[0].type == "type_query":
            return self._component_props(args[0], refs)
        if wrapper == "Pick" and len(args) == 2:
            return _literal_keys(args[1])
        if wrapper in _OMIT and len(args) == 2:
            listed = _literal_keys(args[1]) if wrapper != "$Diff" else self.members(args[1], seen)
            inner: list[str] | None = [] if refs is not None else None
            kept = [m for m in self.members(args[0], seen, inner) if m not in listed]
            if refs is not None and inner:
                left_out = " | ".join(f"'{k}'" for k in listed)
                refs.extend(f"Omit<{ref}, {left_out}>" if listed else ref for ref in inner)
            return kept
        if name not in self.declared and self._imported(name) is None:
            return []  # its members depend on its arguments (``ComponentProps<typeof X>``)
        return self._declared(name, seen, refs)

    def _declared(self, name: str, seen: frozenset[str], refs: list[str] | None) -> list[str]:
        declaration = self.declared.get(name)
        if declaration is None and refs is not None:
            ref = self._imported(name)
            if ref is not None:
                refs.append(ref)
        if declaration is None or name in seen:
            return []
        seen = seen | {name}
        if declaration.type != "interface_declaration":
            value = declaration.child_by_field_name("value")
            return self.members(value, seen, refs) if value is not None else []
        body = declaration.child_by_field_name("body")
        own = _signatures(body) if body is not None else []
        for clause in declaration.children:
            if clause.type == "extends_type_clause":
                own += [m for base in clause.named_children for m in self.members(base, seen, refs)]
        return own

    def _component_props(self, query: Node, refs: list[str] | None) -> list[str]:
        """``ComponentProps<typeof X>``: nothing here, ``X``'s props as a ref when the file
        imports ``X`` (they are merged once every file is read)."""
        if refs is None or query.named_child_count != 1:
            return []
        name = text(query.named_children[0])
        head, _, rest = name.partition(".")
        binding = self.imports.get(head)
        if binding is None or (rest and binding[1] != "*"):
            return []
        module, imported = binding
        target = rest if rest else (head if imported == "default" else imported)
        refs.append(f"typeof import('{module}').{target}")
        return []

    def _imported(self, name: str) -> str | None:
        """``import('module').Name`` for a type name the file imports (``Props``, ``T.Props``
        through a namespace), else None."""
        head, _, rest = name.partition(".")
        binding = self.imports.get(head)
        if binding is None:
            return None
        module, imported = binding
        if imported == "*":
            return f"import('{module}').{rest}" if rest else None
        return None if rest else f"import('{module}').{imported}"


def kept_refs(refs: list[str]) -> list[str]:
    """``refs`` without repeats, as many as ``&``-joined fit in ``MAX_REFS`` characters."""
    kept: list[str] = []
    size = 0
    for ref in unique(refs):
        size += len(ref) + (3 if kept else 0)
        if size > MAX_REFS:
            break
        kept.append(ref)
    return kept


def _signatures(body: Node) -> list[str]:
    names = [
        key_name(child.child_by_field_name("name"))
        for child in body.named_children
        if child.type in ("property_signature", "method_signature")
    ]
    return [n for n in names if n]


def _literal_keys(node: Node) -> list[str]:
    """The string literals of ``'a' | 'b'`` (the keys of ``Omit``/``Pick``)."""
    keys = []
    for part in _parts(node):
        if part.type == "literal_type" and part.named_child_count:
            literal = part.named_children[0]
            if literal.type == "string":
                keys.append(unquote(text(literal)))
    return keys


def _parts(node: Node) -> list[Node]:
    """The operands of ``A | B | ...`` / ``A & B & ...`` in order, however many: the
    grammar nests them one level per operator, too deep to recurse into for a generated
    union of thousands of literals. Any other node is its own one part."""
    parts: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _JOINED:
            stack.extend(reversed(current.named_children))
        else:
            parts.append(current)
    return parts
