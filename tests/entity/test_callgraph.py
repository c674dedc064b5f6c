"""``called_by`` across files: which call shapes link to which definitions, on small real
repositories (Python and TypeScript) scanned end to end."""

from __future__ import annotations

import json
from pathlib import Path

from planning_memory.core.layout import Layout
from planning_memory.entity import scan
from planning_memory.store import Store


def called_by(root: Path, files: dict[str, str]) -> dict[str, list[str]]:
    """Scan a repository holding ``files``; every function key -> its callers."""
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    layout = Layout.for_repo(root)
    assert scan(layout, Store(layout), {}).errors == 0
    found: dict[str, list[str]] = {}
    for shard in (layout.entity / "files").rglob("_shard*.json"):
        for key, entity in json.loads(shard.read_text()).get("functions", {}).items():
            found[key] = entity.get("called_by", [])
    return found


# -- self / this: one attribute deep, the caller's own class ------------------------------
STACK = """
class Stack:
    def __init__(self):
        self.items = []

    def pop(self):
        return self.items.pop()

    def drain(self):
        return self.pop()


class Queue:
    def pop(self):
        return self.head.next.pop()

    def close(self):
        return 1


class Pool:
    def close(self):
        return 2

    def shutdown(self):
        self.close()
"""


def test_self_attribute_calls_are_not_calls_of_the_own_method(tmp_path: Path) -> None:
    links = called_by(tmp_path, {"stack.py": STACK})
    assert links["stack.py::Stack.pop"] == ["stack.py::Stack.drain"]  # not Stack.pop itself
    assert links["stack.py::Queue.pop"] == []


def test_self_calls_link_the_callers_own_class_only(tmp_path: Path) -> None:
    links = called_by(tmp_path, {"stack.py": STACK})
    assert links["stack.py::Pool.close"] == ["stack.py::Pool.shutdown"]
    assert links["stack.py::Queue.close"] == []


def test_this_attribute_calls_are_not_calls_of_the_own_method(tmp_path: Path) -> None:
    source = """
export class Stack {
  pop() { return this.items.pop() }
  drain() { return this.pop() }
}
"""
    links = called_by(tmp_path, {"stack.ts": source})
    assert links["stack.ts::Stack.pop"] == ["stack.ts::Stack.drain"]


# -- imports: aliases, modules, default and namespace imports -----------------------------
HELPER = "def helper():\n    return 1\n\n\nclass Klass:\n    def make(self):\n        return 2\n"


def test_python_calls_through_an_aliased_name_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": HELPER,
            "app.py": "from pkg.mod import helper as h\n\n\ndef run():\n    return h()\n",
        },
    )
    assert links["pkg/mod.py::helper"] == ["app.py::run"]


def test_python_calls_through_a_module_alias_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": HELPER,
            "app.py": (
                "import pkg.mod as m\n\n\ndef run():\n    return m.helper()\n\n\n"
                "def build():\n    return m.Klass.make(None)\n"
            ),
        },
    )
    assert links["pkg/mod.py::helper"] == ["app.py::run"]
    assert links["pkg/mod.py::Klass.make"] == ["app.py::build"]


def test_python_relative_imports_of_names_and_modules_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "pkg/__init__.py": "def top():\n    return 0\n",
            "pkg/mod.py": HELPER,
            "pkg/app.py": (
                "from . import mod, top\nfrom .mod import Klass as K\n\n\n"
                "def run():\n    return mod.helper() + K.make(None) + top()\n"
            ),
        },
    )
    assert links["pkg/mod.py::helper"] == ["pkg/app.py::run"]
    assert links["pkg/mod.py::Klass.make"] == ["pkg/app.py::run"]
    assert links["pkg/__init__.py::top"] == ["pkg/app.py::run"]


def test_typescript_calls_through_default_and_namespace_imports_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/http.ts": "export default async function fetchJson(url: string) {\n"
            "  return url\n}\n",
            "src/api.ts": "export function get(path: string) { return path }\n",
            "src/app.ts": (
                "import fetchJson from './http'\n"
                "import * as api from './api'\n\n"
                "export async function load() {\n"
                "  api.get('/u')\n  return fetchJson('/x')\n}\n"
            ),
        },
    )
    assert links["src/http.ts::fetchJson"] == ["src/app.ts::load"]
    assert links["src/api.ts::get"] == ["src/app.ts::load"]


def test_typescript_calls_through_an_aliased_or_renamed_default_import_link(
    tmp_path: Path,
) -> None:
    links = called_by(
        tmp_path,
        {
            "src/http.ts": "export default async (url: string) => url\n",
            "src/x.ts": "export function helper() { return 1 }\n",
            "src/app.ts": (
                "import fetchJson from './http'\nimport { helper as h } from './x'\n\n"
                "export async function load() {\n  h()\n  return fetchJson('/x')\n}\n"
            ),
        },
    )
    assert links["src/x.ts::helper"] == ["src/app.ts::load"]
    assert links["src/http.ts::default"] == ["src/app.ts::load"]


# -- bare calls: Python scoping, imported names only --------------------------------------
def test_a_bare_call_links_the_local_definition_only(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "other.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
            "app.py": (
                "from other import g\n\n\ndef f():\n    return 3\n\n\n"
                "def run():\n    return f() + g()\n\n\n"
                "def outer():\n    def f():\n        return 4\n\n    return f()\n"
            ),
        },
    )
    assert links["app.py::f"] == ["app.py::run"]
    assert links["app.py::outer.f"] == ["app.py::outer"]
    assert links["other.py::f"] == []  # shadowed by app.py's own f
    assert links["other.py::g"] == ["app.py::run"]


def test_a_bare_call_links_an_imported_function_only_when_its_name_was_imported(
    tmp_path: Path,
) -> None:
    links = called_by(
        tmp_path,
        {
            "tools.py": "def helper():\n    return 1\n\n\ndef open(path):\n    return path\n",
            "app.py": (
                "import tools\n\n\ndef run(helper):\n    helper()\n"
                "    with open('x') as fh:\n        return fh.read()\n"
            ),
        },
    )
    assert links["tools.py::helper"] == []  # a parameter, not tools.helper
    assert links["tools.py::open"] == []  # the builtin


def test_method_calls_on_unknown_values_do_not_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "shapes.py": (
                "class Text:\n    def join(self, parts):\n        return parts\n\n"
                "    def pop(self):\n        return 1\n\n\n"
                "class Router:\n    def get(self, path):\n        return path\n"
            ),
            "app.py": (
                "from shapes import Router, Text\n\n\n"
                "def run(router, items):\n"
                "    router.get('/')\n    items.pop()\n    return ', '.join(['a'])\n\n\n"
                "def build():\n    return Router.get(None, '/')\n"
            ),
        },
    )
    assert links["shapes.py::Text.join"] == []
    assert links["shapes.py::Text.pop"] == []
    assert links["shapes.py::Router.get"] == ["app.py::build"]  # the class is known


def test_typescript_calls_through_a_namespace_under_another_name_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/http-client.ts": "export function getJson(url: string) { return url }\n",
            "src/user_repository.ts": "export function findUser(id: string) { return id }\n",
            "src/app.ts": (
                "import * as http from './http-client'\n"
                "import * as users from './user_repository'\n\n"
                "export function load() {\n  return http.getJson(users.findUser('1'))\n}\n"
            ),
        },
    )
    assert links["src/http-client.ts::getJson"] == ["src/app.ts::load"]
    assert links["src/user_repository.ts::findUser"] == ["src/app.ts::load"]


def test_an_aliased_import_links_the_imported_function_not_a_local_one(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/x.ts": "export function helper() { return 1 }\n",
            "src/app.ts": (
                "import { helper as h } from './x'\n\n"
                "function helper() { return 2 }\n\n"
                "export function load() {\n  return h() + helper()\n}\n"
            ),
        },
    )
    assert links["src/x.ts::helper"] == ["src/app.ts::load"]
    assert links["src/app.ts::helper"] == ["src/app.ts::load"]


def test_a_namespace_call_to_a_name_the_module_lacks_links_nothing(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/http.ts": (
                "export const cache = new Map()\nexport default (url: string) => url\n"
            ),
            "src/app.ts": (
                "import * as http from './http'\n\n"
                "export function load() {\n  return http.cache.get('/x')\n}\n"
            ),
        },
    )
    assert links["src/http.ts::default"] == []


def test_typescript_method_calls_on_unknown_values_do_not_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/store.ts": "export class Store {\n  get(key: string) { return key }\n"
            "  pop() { return 1 }\n}\n",
            "src/app.ts": (
                "import { Store } from './store'\n\n"
                "export function run(router: any, items: any[]) {\n"
                "  router.get('/')\n  items.pop()\n  return ['a'].join(',')\n}\n"
            ),
        },
    )
    assert links["src/store.ts::Store.get"] == []
    assert links["src/store.ts::Store.pop"] == []


def test_a_function_returned_by_a_hook_the_caller_calls_links(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/useAuth.ts": (
                "export function useAuth() {\n  const login = () => 1\n"
                "  const logout = () => 2\n  return { login, logout }\n}\n"
            ),
            "src/page.ts": (
                "import { useAuth } from './useAuth'\n\n"
                "export function Page() {\n  const { login } = useAuth()\n  return login()\n}\n\n"
                "export function Other(logout: () => void) {\n  return logout()\n}\n"
            ),
        },
    )
    assert links["src/useAuth.ts::useAuth.login"] == ["src/page.ts::Page"]
    assert links["src/useAuth.ts::useAuth.logout"] == []  # Other never calls useAuth


def test_a_function_returned_by_a_default_imported_hook_links(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/hooks/useAuth.ts": (
                "export default function useAuth() {\n  const login = () => 1\n"
                "  return { login }\n}\n"
            ),
            "src/page.ts": (
                "import useAuth from './hooks/useAuth'\n\n"
                "export function Page() {\n  const { login } = useAuth()\n  return login()\n}\n"
            ),
        },
    )
    assert links["src/hooks/useAuth.ts::useAuth"] == ["src/page.ts::Page"]
    assert links["src/hooks/useAuth.ts::useAuth.login"] == ["src/page.ts::Page"]


def test_a_module_call_prefers_the_module_over_the_files_it_re_exports(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "re/__init__.py": (
                "from . import _compiler\nfrom ._impl import escape\n\n\n"
                "def compile(pattern):\n    return _compiler.compile(pattern)\n"
            ),
            "re/_compiler.py": "def compile(pattern):\n    return pattern\n",
            "re/_impl.py": "def escape(text):\n    return text\n",
            "app.py": "import re\n\n\ndef run():\n    return re.compile('x'), re.escape('y')\n",
        },
    )
    assert links["re/__init__.py::compile"] == ["app.py::run"]
    assert links["re/_compiler.py::compile"] == ["re/__init__.py::compile"]
    assert links["re/_impl.py::escape"] == ["app.py::run"]  # found through the re-export


def test_a_receiver_named_like_the_callers_own_module_is_not_that_module(tmp_path: Path) -> None:
    source = (
        "class Progress:\n    def wrap_file(self, f):\n        return f\n\n\n"
        "def wrap_file(f):\n    progress = Progress()\n    return progress.wrap_file(f)\n"
    )
    links = called_by(tmp_path, {"rich/__init__.py": "", "rich/progress.py": source})
    assert links["rich/progress.py::wrap_file"] == []


# -- Python: a class called is its __init__; @overload signatures are not functions -------
SHAPES = """class Circle:
    def __init__(self, r):
        self.r = r


class Square:
    side = 1


def Make():
    return Circle(1)
"""


def test_a_python_call_of_a_class_links_its_own_init(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/shapes.py": SHAPES,
            "pkg/app.py": (
                "from .shapes import Circle, Make, Square\nfrom . import shapes\n\n\n"
                "def direct():\n    return Circle(2)\n\n\n"
                "def through_module():\n    return shapes.Circle(3)\n\n\n"
                "def no_init():\n    return Square()\n\n\n"
                "def function():\n    return Make()\n"
            ),
        },
    )
    assert links["pkg/shapes.py::Circle.__init__"] == [
        "pkg/app.py::direct",
        "pkg/app.py::through_module",
        "pkg/shapes.py::Make",
    ]
    assert links["pkg/shapes.py::Make"] == ["pkg/app.py::function"]  # a function: itself


def test_an_init_added_later_gets_the_class_callers(tmp_path: Path) -> None:
    files = {"shapes.py": "class Circle:\n    r = 1\n", "app.py": ""}
    files["app.py"] = "from shapes import Circle\n\n\ndef make():\n    return Circle()\n"
    assert "shapes.py::Circle.__init__" not in called_by(tmp_path, files)
    files["shapes.py"] = "class Circle:\n    def __init__(self):\n        self.r = 1\n"
    incremental = called_by(tmp_path, {"shapes.py": files["shapes.py"]})
    assert incremental["shapes.py::Circle.__init__"] == ["app.py::make"]


def test_python_overload_signatures_are_not_functions(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "conv.py": (
                "import typing as t\nfrom typing import overload\n\n\n"
                "@t.overload\ndef conv(v: int) -> int: ...\n\n\n"
                "@overload\ndef conv(v: str) -> str: ...\n\n\n"
                "def conv(v):\n    return v\n\n\n"
                "def use():\n    return conv(1)\n"
            ),
        },
    )
    assert links["conv.py::conv"] == ["conv.py::use"]
    assert "conv.py::conv#2" not in links


def test_a_function_of_an_object_passed_to_a_call_is_no_bare_call_target(
    tmp_path: Path,
) -> None:
    links = called_by(
        tmp_path,
        {
            "retry.ts": (
                "import {setTimeout as delay} from 'node:timers/promises';\n"
                "import ky from 'ky';\n\n"
                "export async function slow() {\n  await delay(300);\n}\n\n"
                "ky('/a', {retry: {delay: () => 10}, hooks: {before() {}}});\n\n"
                "export const api = {get: () => 1, list() { return api.get(); }};\n"
            ),
        },
    )
    assert links["retry.ts::delay"] == []  # `delay(300)` is the imported setTimeout
    assert links["retry.ts::api.get"] == ["retry.ts::api.list"]


def test_calls_of_private_methods_link(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "ky.ts": (
                "export class Ky {\n  static create() {\n    const ky = new Ky();\n"
                "    ky.#cancel();\n    return Ky.#normalize();\n  }\n\n"
                "  static #normalize() {\n    return 1;\n  }\n\n  #cancel() {}\n}\n"
            ),
        },
    )
    assert links["ky.ts::Ky.#cancel"] == ["ky.ts::Ky.create"]
    assert links["ky.ts::Ky.#normalize"] == ["ky.ts::Ky.create"]


def test_importing_a_python_submodule_binds_its_package(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "pkg/__init__.py": "def echo():\n    return 1\n",
            "pkg/sub/__init__.py": "def deep():\n    return 2\n",
            "pkg/sub/impl.py": "def work():\n    return 3\n",
            "test_it.py": (
                "import pkg.sub.impl\n\n\n"
                "def test_it():\n    return pkg.echo() + pkg.sub.deep() + pkg.sub.impl.work()\n"
            ),
        },
    )
    assert links["pkg/__init__.py::echo"] == ["test_it.py::test_it"]
    assert links["pkg/sub/__init__.py::deep"] == ["test_it.py::test_it"]
    assert links["pkg/sub/impl.py::work"] == ["test_it.py::test_it"]


def test_python_self_call_of_an_inherited_method_links_the_base(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/base.py": (
                "class ParamType:\n"
                "    def fail(self, message):\n        raise ValueError(message)\n\n"
                "    def convert(self, value):\n        return value\n"
            ),
            "pkg/types.py": (
                "from .base import ParamType\n\n\n"
                "class Choice(ParamType):\n"
                "    def convert(self, value):\n        self.fail(value)\n\n\n"
                "class Path(ParamType):\n"
                "    def __init__(self):\n        self.fail = print\n\n"
                "    def convert(self, value):\n        self.fail(value)\n"
            ),
        },
    )
    # Path assigns its own ``fail``: not the base's
    assert links["pkg/base.py::ParamType.fail"] == ["pkg/types.py::Choice.convert"]
