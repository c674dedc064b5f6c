"""The facts an extractor returns for one source file: plain typed dicts, cheap to pickle."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class ImportFact(TypedDict):
    """One imported module as written (``module``), before resolution to a repository path."""

    module: str
    reexport: NotRequired[bool]  # ``export ... from`` or an import inside a barrel file


class FunctionFact(TypedDict):
    name: str
    qualified_name: str
    kind: str  # function | method | constructor
    lines: list[int]  # [first, last], 1-based
    signature: str
    purpose: str | None
    calls: list[str]  # callee expressions, unique, in first-call order
    # the calls as written, when ``calls`` names the class of a receiver (``Console.print``
    # for ``c.print``): side effects are read from these; not stored
    written_calls: NotRequired[list[str]]
    exported: bool
    complexity: int  # 1 + branch points
    hash: str  # 16 hex digits of the function's source text


class ComponentFact(TypedDict):
    name: str
    kind: str  # function | class
    lines: list[int]
    props: list[str]
    state: list[str]
    hooks: list[str]
    children: list[str]
    exported: bool
    props_type: NotRequired[str]  # ``import('../types').Props`` (``&``-joined): from elsewhere


class FileFacts(TypedDict):
    purpose: str | None
    imports: list[ImportFact]
    exports: list[str]
    classes: list[str]
    functions: list[FunctionFact]
    components: list[ComponentFact]
    complexity: int  # 1 + branch points in the whole file
    parse_errors: bool
    models: list[str]  # database models defined or queried (ORM classes, prisma.<model>)
    types: NotRequired[dict[str, list[str]]]  # exported interfaces/type aliases -> members
    # the same (and ``typeof <Component>``) -> the imported types each is built from, as
    # ``props_type`` writes them
    type_refs: NotRequired[dict[str, list[str]]]
