"""jedi's resolution of every call into a corpus' own Python sources.

For each call in each .py file (``ast``), jedi's ``goto`` at the called name (the attribute
of ``a.b.f()``, the name of ``f()``), imports followed. A function or method the corpus
defines is the callee; a class is its ``__init__`` when the class defines one. Prints
"F\\tfile" per source file, then per call "E\\tcaller file\\tcall line\\tcallee file\\t
callee first line\\tcallee last line\\tcallee name". Run in a venv with jedi:
``python jedi_calls.py ROOT``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import jedi


def called_name(call: ast.Call) -> tuple[int, int] | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.lineno, func.col_offset
    if isinstance(func, ast.Attribute) and func.end_lineno is not None:
        return func.end_lineno, (func.end_col_offset or 0) - len(func.attr)
    return None


def target(name: jedi.api.classes.Name) -> jedi.api.classes.Name | None:
    if name.type == "class":
        for member in name.defined_names():
            if member.name == "__init__" and member.type == "function":
                return member
        return None
    return name if name.type == "function" else None


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    files = sorted(
        p
        for p in root.rglob("*.py")
        if not any(x.startswith(".") for x in p.relative_to(root).parts)
    )
    project = jedi.Project(root, added_sys_path=[str(root / "src"), str(root)])
    out = [f"F\t{p.relative_to(root)}" for p in files]
    for path in files:
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        script = jedi.Script(source, path=path, project=project)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or (at := called_name(node)) is None:
                continue
            try:
                found = script.goto(*at, follow_imports=True)
            except Exception:  # jedi gives up on some constructs; that call counts as unresolved
                continue
            for name in found:
                callee = target(name)
                if callee is None or callee.module_path is None or callee.line is None:
                    continue
                where = Path(callee.module_path).resolve()
                if root not in where.parents:
                    continue
                end = callee.get_definition_end_position()
                out.append(
                    "\t".join(
                        [
                            "E",
                            str(path.relative_to(root)),
                            str(node.lineno),
                            str(where.relative_to(root)),
                            str(callee.get_definition_start_position()[0]),
                            str(end[0] if end else callee.line),
                            callee.name,
                        ]
                    )
                )
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
