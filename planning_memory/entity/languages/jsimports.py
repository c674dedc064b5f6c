"""JavaScript/TypeScript module links: imports, exports, what import bindings stand for. Pure.

``imports_exports`` lists the modules a file imports (ES ``import``, ``require()``, dynamic
``import()``, ``export ... from``) and the names it exports (``export default X`` records
``X``, also through HOC calls). ``bindings`` reads what each ``import`` binds, and
``call_names`` turns that into what a call through the binding is recorded as, so the call
graph can tell an imported function from a local one, as the Python extractor does: an
aliased name is the name it imports (``h()`` after ``import { helper as h }`` is ``helper``;
``x.helper`` when the file defines a ``helper`` of its own), a namespace is its module's name
(``ns.f()`` after ``import * as ns from './http-client'`` is ``httpClient.f``) and a default
import called is ``module.name`` (``fetchJson()`` after ``import fetchJson from './http'`` is
``http.fetchJson``). A module's name is the one the call graph knows a JS/TS file by: its
file name's stem (the folder's name for ``index``; ``.`` and ``..`` need the importer's path),
hyphens camel-cased. Namespaces and default imports are followed for project modules only
(``./``, ``../``, ``@/``, ``~/``); a package keeps its text (``axios()``, ``fs.readFile()``)
except through an alias. A name imported as itself keeps its text, as does a default import
something is looked up on (``logger.info()``), and a name the file defines itself shadows the
import.
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple, Protocol

from tree_sitter import Node

from planning_memory.entity.facts import ImportFact
from planning_memory.entity.languages.react import TRANSPARENT
from planning_memory.entity.languages.tstypes import key_name, object_keys
from planning_memory.entity.syntax import (
    MAX_CALL,
    field_text,
    last_segment,
    ordered,
    text,
    unique,
    unquote,
)

_PROJECT = ("./", "../", "@/", "~/")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_HYPHEN = re.compile(r"-+([A-Za-z0-9$])")


class ModuleFile(Protocol):
    """What the import and export readers need from a parsed file: its root, the nodes its
    query captured by name, and its callees (nodes and texts) sorted by position."""

    root: Node
    caps: dict[str, list[Node]]
    call_nodes: list[Node]
    call_text: list[str]


class Binding(NamedTuple):
    """What an ``import`` binds a local name to: ``module`` as written and the ``name`` it
    imports there (``default`` for a default import, ``*`` for a namespace)."""

    module: str
    name: str


# -- bindings ------------------------------------------------------------------------------
def bindings(nodes: list[Node]) -> dict[str, Binding]:
    """The local names the ``import`` statements ``nodes`` bind, type-only imports included."""
    found: dict[str, Binding] = {}
    for node in nodes:
        source = node.child_by_field_name("source")
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if source is None or clause is None:
            continue
        module = unquote(text(source))
        for child in clause.named_children:
            if child.type == "identifier":
                found[text(child)] = Binding(module, "default")
            elif child.type == "namespace_import" and child.named_child_count:
                found[text(child.named_children[-1])] = Binding(module, "*")
            elif child.type == "named_imports":
                for spec in child.named_children:
                    name = spec.child_by_field_name("name")
                    if spec.type != "import_specifier" or name is None:
                        continue
                    alias = spec.child_by_field_name("alias")
                    found[text(alias or name)] = Binding(module, key_name(name))
    return found


def call_names(
    bound: dict[str, Binding], path: str | None, defined: set[str]
) -> dict[str, tuple[str, str]]:
    """What a call through each bound name is recorded as: ``name -> (text, when)``, where
    ``when`` is ``always`` (an alias), ``called`` (a default import, only when it is called
    itself) or ``looked-up`` (a namespace, only when a name is looked up on it). ``defined``
    holds the names the file defines itself: they shadow an import."""
    found: dict[str, tuple[str, str]] = {}
    for local, (module, name) in bound.items():
        if local in defined:
            continue
        stem = (
            module_name(module, path)
            if module.startswith(_PROJECT) or module in (".", "..")
            else None
        )
        if name == "default":
            if stem:
                found[local] = (f"{stem}.{local}", "called")
        elif name == "*":
            if stem:
                found[local] = (stem, "looked-up")
        elif name != local and _IDENTIFIER.fullmatch(name):
            if name not in defined:
                found[local] = (name, "always")
            elif stem:
                found[local] = (f"{stem}.{name}", "always")
    return found


def through(call: str, names: dict[str, tuple[str, str]]) -> str:
    """``call`` with its first name replaced by what ``names`` records it as (see
    ``call_names``)."""
    head = call.partition(".")[0]
    if head not in names:
        if "(" not in head and "[" not in head and "?" not in head:
            return call  # the common case, without the regular expression
        match = _IDENTIFIER.match(call)
        if match is None or match.group() not in names:
            return call
        head = match.group()
    value, when = names[head]
    rest = call[len(head) :]
    looked_up = rest.startswith((".", "?."))
    if (when == "called" and looked_up) or (when == "looked-up" and not looked_up):
        return call
    value += rest
    return value if len(value) <= MAX_CALL else value[: MAX_CALL - 1] + "…"


def in_project(module: str) -> bool:
    """True for a module of the project: relative, or through a ``@/``/``~/`` alias."""
    return module.startswith(_PROJECT) or module in (".", "..")


def module_name(module: str, path: str | None) -> str | None:
    """The name the call graph knows the file ``module`` names by: the file name's stem
    (``./http-client`` -> ``httpClient``, ``./user.service`` -> ``user``), the folder's for
    an ``index`` file or a folder (``./Button/index``, ``.`` from ``src/lib/a.ts`` ->
    ``lib``); None when it cannot tell or the name is no identifier."""
    if module.startswith(("./", "../")) or module in (".", ".."):
        if path is None and module.rstrip("/").endswith("."):
            return None
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path or ""), module))
    else:
        target = module.rstrip("/")
    parts = target.split("/")
    stem = parts[-1].split(".", 1)[0]
    if stem == "index" and len(parts) > 1:
        stem = parts[-2]
    name = _HYPHEN.sub(lambda m: m.group(1).upper(), stem)
    return name if _IDENTIFIER.fullmatch(name) and name not in (".", "..") else None


# -- imports and exports -------------------------------------------------------------------
def imports_exports(f: ModuleFile) -> tuple[list[ImportFact], list[str]]:
    imports: list[ImportFact] = []
    for node in ordered(f.caps.get("import", [])):
        source = node.child_by_field_name("source")
        if source is not None:
            imports.append({"module": unquote(text(source))})
    for position, name in enumerate(f.call_text):
        if name in ("require", "import"):
            module = _first_string_argument(f.call_nodes[position])
            if module:
                imports.append({"module": module})
    exports: list[str] = []
    for node in ordered(f.caps.get("export", [])):
        exports.extend(_exported_names(node))
        source = node.child_by_field_name("source")
        if source is not None:
            imports.append({"module": unquote(text(source)), "reexport": True})
    exports.extend(_commonjs_exports(f.root))
    return imports, unique(exports)


def _first_string_argument(callee_node: Node) -> str | None:
    call = callee_node.parent
    args = call.child_by_field_name("arguments") if call is not None else None
    if args is None or args.named_child_count == 0:
        return None
    first = args.named_children[0]
    if first.type not in ("string", "template_string"):
        return None
    value = unquote(text(first))
    return value if "${" not in value else None


def _exported_names(node: Node) -> list[str]:
    declaration = node.child_by_field_name("declaration")
    if declaration is not None:
        return _declared_names(declaration)
    names: list[str] = []
    for child in node.named_children:
        if child.type == "export_clause":
            for spec in child.named_children:
                alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                names.append(text(alias))
        elif child.type == "namespace_export":
            names.extend(text(c) for c in child.named_children)
    value = node.child_by_field_name("value")
    if value is not None:
        names.append(_default_export_name(value))
    return names


def _default_export_name(value: Node) -> str:
    """The name ``export default`` (or ``module.exports =``) gives its value: an identifier,
    a named function or class, the component inside HOC calls (``withStyles(s)(Button)``,
    ``connect(a, b)(Comp)``, ``memo(Row)``), else ``default``."""
    while value.type in TRANSPARENT and value.named_child_count:
        value = value.named_children[0]
    if value.type == "identifier":
        return text(value)
    if value.type != "call_expression":
        return field_text(value, "name") or "default"
    arguments = value.child_by_field_name("arguments")
    if arguments is None or arguments.type != "arguments":  # a tagged template
        return "default"
    first = next((a for a in arguments.named_children if a.type != "comment"), None)
    if first is None:
        return "default"
    if first.type == "identifier" and not text(first)[:1].isupper():
        return "default"  # `createStore(reducer)` exports a store, not `reducer`
    return _default_export_name(first)


def _declared_names(declaration: Node) -> list[str]:
    if declaration.type in ("lexical_declaration", "variable_declaration"):
        names: list[str] = []
        for declarator in declaration.named_children:
            target = declarator.child_by_field_name("name")
            if target is not None:
                names.extend(_pattern_names(target))
        return names
    name = field_text(declaration, "name")
    return [name] if name else []


def _pattern_names(pattern: Node) -> list[str]:
    """The variables a declaration pattern binds: ``{ a, b: c, d = 1, ...e }`` binds a, c, d
    and e."""
    kind = pattern.type
    if kind in ("identifier", "shorthand_property_identifier_pattern"):
        return [text(pattern)]
    if kind == "pair_pattern":
        value = pattern.child_by_field_name("value")
        return _pattern_names(value) if value is not None else []
    if kind in ("object_assignment_pattern", "assignment_pattern"):
        left = pattern.child_by_field_name("left")
        return _pattern_names(left) if left is not None else []
    if kind in ("object_pattern", "array_pattern", "rest_pattern"):
        return [name for child in pattern.named_children for name in _pattern_names(child)]
    return []


def _commonjs_exports(root: Node) -> list[str]:
    names: list[str] = []
    for stmt in root.named_children:
        if stmt.type != "expression_statement" or stmt.named_child_count != 1:
            continue
        assign = stmt.named_children[0]
        if assign.type != "assignment_expression":
            continue
        left = field_text(assign, "left")
        right = assign.child_by_field_name("right")
        if left.startswith("exports.") or left.startswith("module.exports."):
            names.append(last_segment(left))
        elif left == "module.exports" and right is not None:
            is_object = right.type == "object"
            names.extend(object_keys(right) if is_object else [_default_export_name(right)])
    return names
