"""JSON Schema (2020-12) loading and validation; the only module that imports jsonschema.

Schemas ship inside the wheel (``planning_memory/schemas``); in a source checkout they are read
from the top-level ``schemas/`` folder. Pure apart from reading those packaged files once.
jsonschema and referencing are imported on first use (they cost ~75 ms of every start-up).
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planning_memory.errors import SchemaError

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

SCHEMA_SUFFIX = ".schema.json"


@dataclass(frozen=True)
class Problem:
    """One schema violation: where (a JSON path like ``$.tags[2]``) and what."""

    json_path: str
    message: str


def schema_dir() -> Path:
    packaged = Path(__file__).resolve().parents[1] / "schemas"  # an installed package's data
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "schemas"


def _anchor_patterns(value: Any) -> Any:
    """ECMA-262 ``$`` is the end of the text; Python's ``$`` also matches before a final
    newline. Rewrite a closing ``$`` to ``\\Z`` so ``"pat_1\\n"`` fails as the schema means."""
    if isinstance(value, dict):
        out = {k: _anchor_patterns(v) for k, v in value.items()}
        pattern = out.get("pattern")
        if isinstance(pattern, str) and pattern.endswith("$") and not pattern.endswith("\\$"):
            out["pattern"] = pattern[:-1] + "\\Z"
        return out
    if isinstance(value, list):
        return [_anchor_patterns(v) for v in value]
    return value


@functools.cache
def _schemas() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(schema_dir().glob(f"*{SCHEMA_SUFFIX}")):
        schema = _anchor_patterns(json.loads(path.read_text("utf-8")))
        found[path.name[: -len(SCHEMA_SUFFIX)]] = schema
    return found


@functools.cache
def _registry() -> Registry:  # type: ignore[type-arg]
    from referencing import Registry, Resource

    resources_ = [
        (schema["$id"], Resource.from_contents(schema))
        for schema in _schemas().values()
        if "$id" in schema
    ]
    return Registry().with_resources(resources_)


def names() -> list[str]:
    return sorted(_schemas())


def get(name: str) -> dict[str, Any]:
    try:
        return _schemas()[name]
    except KeyError:
        raise SchemaError(f"no schema named {name!r}; known: {', '.join(names())}") from None


@functools.cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(get(name), registry=_registry())


MAX_SHOWN = 80  # characters of an offending value quoted in a message


def _problem(error: ValidationError) -> Problem:
    """The error as a Problem; a long offending value (a 60,000-character string) is cut short
    so that the message stays one readable line. A schema node's ``errorMessage`` replaces
    jsonschema's wording (a pattern says little to a person)."""
    message = error.message
    if error.validator == "pattern":
        message = message.replace("\\\\Z'", "$'")  # show the pattern as the schema file has it
    shown = repr(error.instance)
    custom = error.schema.get("errorMessage") if isinstance(error.schema, dict) else None
    if isinstance(custom, str):
        message = f"{shown} {custom}"
    elif error.validator == "maxItems" and isinstance(error.instance, list):
        message = f"{len(error.instance):,} items; at most {error.validator_value:,} are allowed"
    if len(shown) > MAX_SHOWN and shown in message:
        short = f"{shown[:MAX_SHOWN]}... ({len(shown):,} characters)"
        message = message.replace(shown, short)
    return Problem(error.json_path, message)


WALKED = 1000  # items of an array jsonschema looks at one by one before it looks at them all


def _cut(value: Any) -> Any:
    """``value`` with every array cut to its first ``WALKED + 1`` items: each error jsonschema
    finds in it is an error of ``value`` too (an item's, ``uniqueItems``, or ``maxItems``,
    which a longer array breaks as well)."""
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value[: WALKED + 1]]
    return value


def problems(name: str, value: Any) -> list[Problem]:
    """Every violation of schema ``name`` by ``value``, best first. Arrays are first checked
    by their first ``WALKED`` items (10,000 tags: one error, not 10,000 items walked); only
    when those hold no error is every item walked."""
    fast = fast_check(name)
    if fast is not None and fast(value):
        return []  # the compiled check passes only what jsonschema passes; errors come from it
    check = validator(name)
    errors = list(check.iter_errors(_cut(value)))
    for error in errors:  # the length of the array itself, not of its cut
        if error.validator == "maxItems":
            error.instance = _at(value, error.absolute_path)
    if not errors:
        errors = list(check.iter_errors(value))
    if not errors:
        return []
    from jsonschema.exceptions import best_match

    best = best_match(errors)
    rest = sorted((e for e in errors if e is not best), key=lambda e: e.json_path)
    return [_problem(best), *(_problem(e) for e in rest)]


def _at(value: Any, path: Iterable[str | int]) -> Any:
    for key in path:
        value = value[key]
    return value


def check(name: str, value: Any, *, path: str | None = None) -> None:
    """Raise SchemaError with the best violation (its JSON path) if ``value`` is invalid."""
    found = problems(name, value)
    if found:
        raise SchemaError(found[0].message, path=path, json_path=found[0].json_path)


# -- the fast path ---------------------------------------------------------------------------
# jsonschema walks a record in ~1.5 ms; ``validate`` must check 10k records in under 2 s. So each
# schema is also compiled into plain closures that answer one question, "valid?", in tens of
# microseconds. They are exact for valid values and conservative otherwise: when one says False
# (or meets a keyword it does not know), jsonschema decides and writes the messages.

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$anchor", "$defs", "$comment", "title", "description", "default"}
    | {"examples", "deprecated", "readOnly", "writeOnly", "format"}  # format: not asserted
    | {"errorMessage"}  # what ``_problem`` says instead of jsonschema
)
_KEYWORDS = frozenset(
    {"type", "enum", "const", "$ref", "allOf", "anyOf", "if", "then", "else"}
    | {"minLength", "maxLength", "pattern"}
    | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    | {"properties", "required", "additionalProperties", "unevaluatedProperties"}
    | {"propertyNames", "minProperties", "maxProperties"}
    | {"items", "prefixItems", "minItems", "maxItems", "uniqueItems"}
)
_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


class _Unsupported(Exception):
    """The schema uses something the fast path does not implement."""


@functools.cache
def fast_check(name: str) -> Check | None:
    """The compiled "is it valid?" check of schema ``name``, or None (use jsonschema)."""
    root = get(name)
    try:
        return _Compiler().node(root, _Refs(root))
    except _Unsupported:
        return None


@dataclass(frozen=True)
class _Resolved:
    contents: Any
    resolver: _Refs


@dataclass(frozen=True)
class _Refs:
    """``$ref`` resolution for the fast path, without the ``referencing`` library (~20 ms to
    import, paid by every hook): a ref is ``#/json/pointer`` in the current document or
    ``<name>.schema.json#/json/pointer`` in a sibling schema (all our refs are)."""

    document: dict[str, Any]

    def in_subresource(self, schema: Any) -> _Refs:
        return _Refs(schema) if isinstance(schema, dict) and "$id" in schema else self

    def lookup(self, ref: str) -> _Resolved:
        where, _, pointer = ref.partition("#")
        name = where.rsplit("/", 1)[-1]
        document = self.document
        if name:
            if not name.endswith(SCHEMA_SUFFIX) or name[: -len(SCHEMA_SUFFIX)] not in _schemas():
                raise _Unsupported
            document = _schemas()[name[: -len(SCHEMA_SUFFIX)]]
        node: Any = document
        for part in pointer.split("/")[1:] if pointer else []:
            key = part.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(key)] if isinstance(node, list) else node[key]
            except (KeyError, IndexError, ValueError, TypeError):
                raise _Unsupported from None
        return _Resolved(node, _Refs(document))


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]

    def check(v: Any) -> bool:
        for c in checks:  # noqa: SIM110 (a generator in all() costs a third more here)
            if not c(v):
                return False
        return True

    return check


def _same(a: Any, b: Any) -> bool:
    """Equal under jsonschema's rules, or False when unsure (1 vs 1.0, true vs 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict | list):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    return bool(a == b)


def _unique(items: list[Any]) -> bool:
    """No two items equal under jsonschema's rules (False when unsure)."""
    try:  # Python's == on scalars is coarser than jsonschema's (True == 1): safe to trust
        return len(set(items)) == len(items)
    except TypeError:  # objects or arrays among the items
        return len({_norm(item) for item in items}) == len(items)


def _norm(value: Any) -> Any:
    """A hashable form for uniqueItems; values jsonschema calls equal never differ here."""
    if isinstance(value, dict):
        return ("o", tuple(sorted((k, _norm(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("a", tuple(_norm(v) for v in value))
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    return ("s", value)


class _Compiler:
    def __init__(self) -> None:
        self.memo: dict[int, Check] = {}

    def node(self, schema: Any, resolver: Any) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        if not isinstance(schema, dict) or set(schema) - _KEYWORDS - _ANNOTATIONS:
            raise _Unsupported
        if "$id" in schema:
            resolver = resolver.in_subresource(schema)
        checks = []
        if "type" in schema:
            checks.append(self.type_(schema["type"]))
        for key in ("enum", "const"):
            if key in schema:
                options = schema[key] if key == "enum" else [schema[key]]
                checks.append(self.enum(options))
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"], resolver))
        for sub in schema.get("allOf", []):
            checks.append(self.node(sub, resolver))
        if "unevaluatedProperties" in schema and ("anyOf" in schema or "if" in schema):
            raise _Unsupported  # what is evaluated would depend on the branch taken
        if "anyOf" in schema:
            options_ = [self.node(sub, resolver) for sub in schema["anyOf"]]
            checks.append(lambda v: any(c(v) for c in options_))
        if "if" in schema:
            checks.append(self.if_(schema, resolver))
        checks += self.string(schema) + self.number(schema)
        checks += self.object(schema, resolver) + self.array(schema, resolver)
        return _all(checks)

    def if_(self, schema: dict[str, Any], resolver: Any) -> Check:
        """A fast "no" from ``if`` may be wrong, so then both branches must hold."""
        test = self.node(schema["if"], resolver)
        then = self._maybe(schema, "then", resolver) or (lambda v: True)
        else_ = self._maybe(schema, "else", resolver) or (lambda v: True)
        return lambda v: then(v) if test(v) else then(v) and else_(v)

    def type_(self, names: Any) -> Check:
        wanted = [_TYPES[n] for n in ([names] if isinstance(names, str) else names)]
        return wanted[0] if len(wanted) == 1 else (lambda v: any(t(v) for t in wanted))

    def enum(self, options: list[Any]) -> Check:
        if all(isinstance(o, str) for o in options):
            allowed = frozenset(options)
            return lambda v: isinstance(v, str) and v in allowed
        return lambda v: any(_same(v, o) for o in options)

    def ref(self, ref: str, resolver: Any) -> Check:
        resolved = resolver.lookup(ref)
        key = id(resolved.contents)
        if key not in self.memo:
            late: list[Check] = []
            self.memo[key] = lambda v: late[0](v)  # a recursive schema reaches itself
            late.append(self.node(resolved.contents, resolved.resolver))
            self.memo[key] = late[0]
        return self.memo[key]

    def string(self, schema: dict[str, Any]) -> list[Check]:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        rx = re.compile(schema["pattern"]) if "pattern" in schema else None
        if not low and high is None and rx is None:
            return []

        def check(v: Any) -> bool:
            if not isinstance(v, str):
                return True
            if len(v) < low or (high is not None and len(v) > high):
                return False
            return rx is None or rx.search(v) is not None

        return [check]

    def number(self, schema: dict[str, Any]) -> list[Check]:
        bounds = [
            (schema.get("minimum"), operator.ge),
            (schema.get("maximum"), operator.le),
            (schema.get("exclusiveMinimum"), operator.gt),
            (schema.get("exclusiveMaximum"), operator.lt),
        ]
        tests = [(b, ok) for b, ok in bounds if b is not None]
        if not tests:
            return []

        def check(v: Any) -> bool:
            if type(v) not in (int, float):
                return True
            return all(ok(v, b) for b, ok in tests)

        return [check]

    def object(self, schema: dict[str, Any], resolver: Any) -> list[Check]:
        props = {k: self.node(s, resolver) for k, s in schema.get("properties", {}).items()}
        required = frozenset(schema.get("required", ()))
        extra = self._maybe(schema, "additionalProperties", resolver)
        unevaluated = self._maybe(schema, "unevaluatedProperties", resolver)
        evaluated = self.evaluated(schema, resolver) if unevaluated is not None else set()
        names = self._maybe(schema, "propertyNames", resolver)
        low, high = schema.get("minProperties", 0), schema.get("maxProperties")
        if not (props or required or extra or unevaluated or names or low or high is not None):
            return []

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            if len(v) < low or (high is not None and len(v) > high):
                return False
            if not required <= v.keys():
                return False
            for key, item in v.items():
                sub = props.get(key)
                if sub is not None:
                    if not sub(item):
                        return False
                elif extra is not None:
                    if not extra(item):
                        return False
                elif unevaluated is not None and key not in evaluated and not unevaluated(item):
                    return False
                if names is not None and not names(key):
                    return False
            return True

        return [check]

    def evaluated(self, schema: Any, resolver: Any) -> set[str]:
        """Property names that ``schema`` and its in-place subschemas (``$ref``, ``allOf``)
        evaluate: fewer than jsonschema may count, never more, so the check stays safe."""
        if not isinstance(schema, dict):
            return set()
        found = set(schema.get("properties", {}))
        if "$ref" in schema:
            resolved = resolver.lookup(schema["$ref"])
            found |= self.evaluated(resolved.contents, resolved.resolver)
        for sub in schema.get("allOf", []):
            found |= self.evaluated(sub, resolver)
        return found

    def array(self, schema: dict[str, Any], resolver: Any) -> list[Check]:
        each = self._maybe(schema, "items", resolver)
        prefix = [self.node(sub, resolver) for sub in schema.get("prefixItems", [])]
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        unique = bool(schema.get("uniqueItems"))
        if each is None and not prefix and not low and high is None and not unique:
            return []

        def check(v: Any) -> bool:
            if not isinstance(v, list):
                return True
            if len(v) < low or (high is not None and len(v) > high):
                return False
            for sub, item in zip(prefix, v, strict=False):
                if not sub(item):
                    return False
            if each is not None:
                for item in v[len(prefix) :] if prefix else v:
                    if not each(item):
                        return False
            return not unique or _unique(v)

        return [check]

    def _maybe(self, schema: dict[str, Any], key: str, resolver: Any) -> Check | None:
        return self.node(schema[key], resolver) if key in schema else None
