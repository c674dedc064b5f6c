"""Links a scan makes across files in Go, Rust and Java repositories: resolved imports, the
packages a file uses, ``called_by`` through a package selector, and look-ups of declarations
without a body (interface and trait methods)."""

from __future__ import annotations

import json
from pathlib import Path

from planning_memory.core import schema
from planning_memory.core.layout import Layout
from planning_memory.entity import get_file, get_function, scan
from planning_memory.memory import Memory
from planning_memory.store import Store


def run(root: Path) -> None:
    layout = Layout.for_repo(root)
    report = scan(layout, Store(layout), {"memory": {"entity": {"scanWorkers": 1}}})
    assert report.errors == 0, report.error_paths


def file_of(root: Path, path: str) -> dict:  # type: ignore[type-arg]
    layout = Layout.for_repo(root)
    found = get_file(layout, Store(layout), path)
    assert found is not None
    return found


def function(root: Path, name: str) -> dict:  # type: ignore[type-arg]
    layout = Layout.for_repo(root)
    (found,) = get_function(layout, Store(layout), name)
    return found


def write(root: Path, files: dict[str, str]) -> None:
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)


def valid_shards(root: Path) -> None:
    for path in (root / ".planning/memory/entity/files").rglob("_shard*.json"):
        errors = schema.validator("entity-files").iter_errors(json.loads(path.read_text()))
        assert not list(errors), path


GO_CHI = {
    "go.mod": "module github.com/go-chi/chi/v5\n\ngo 1.22\n",
    "chi.go": """// Package chi is a small router.
package chi

// NewRouter returns a new Mux object.
func NewRouter() *Mux {
	return NewMux()
}
""",
    "mux.go": """package chi

type Mux struct{}

// NewMux returns a newly initialized Mux object.
func NewMux() *Mux {
	return &Mux{}
}
""",
    "middleware/strip.go": """package middleware

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// StripSlashes removes trailing slashes.
func StripSlashes(next http.Handler) http.Handler {
	r := chi.NewRouter()
	return r
}
""",
}


def test_go_import_of_the_module_root_package(tmp_path: Path) -> None:
    write(tmp_path, GO_CHI)
    run(tmp_path)
    strip = file_of(tmp_path, "middleware/strip.go")
    assert strip["imports"] == {"github.com/go-chi/chi/v5": ".", "net/http": None}
    assert strip["packages"] == ["net/http"]
    valid_shards(tmp_path)


def test_go_calls_into_the_module_root_package_link(tmp_path: Path) -> None:
    write(tmp_path, GO_CHI)
    run(tmp_path)
    assert function(tmp_path, "NewRouter")["called_by"] == ["middleware/strip.go::StripSlashes"]


RUST_CRATE = {
    "Cargo.toml": '[package]\nname = "pathkit"\n\n[dependencies]\nanyhow = "1"\n',
    "src/lib.rs": """//! Path helpers.
use std::path::Path;

pub mod config;

/// The shared error type.
pub struct Error;

/// Whether `path` is hidden.
pub fn hidden(path: &Path) -> bool {
    path.starts_with(".")
}
""",
    "src/config.rs": """use std::path::Path;
use anyhow::Result;
use crate::Error;
use super::hidden;

pub trait Loader {
    fn load(&self, path: &Path) -> Result<String>;
}

pub fn visible(path: &Path) -> bool {
    !crate::hidden(path)
}

#[cfg(test)]
mod tests {
    use super::*;
}
""",
}


def test_rust_imports_packages_and_trait_methods(tmp_path: Path) -> None:
    write(tmp_path, RUST_CRATE)
    run(tmp_path)
    config = file_of(tmp_path, "src/config.rs")
    assert config["imports"] == {
        "anyhow::Result": None,
        "crate::Error": "src/lib.rs",
        "std::path::Path": None,
        "super::hidden": "src/lib.rs",
    }
    assert config["packages"] == ["anyhow", "std"]
    lib = file_of(tmp_path, "src/lib.rs")
    assert lib["imports"] == {"self::config": "src/config.rs", "std::path::Path": None}
    assert function(tmp_path, "hidden")["called_by"] == ["src/config.rs::visible"]
    load = function(tmp_path, "Loader.load")
    assert load["signature"] == "(&self, path: &Path) -> Result<String>"
    valid_shards(tmp_path)


def test_java_interface_methods_can_be_looked_up(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/main/java/com/acme/OrderRepository.java": """package com.acme;

public interface OrderRepository {
    /** Saves an order. */
    void save(Order order);
}
""",
            "src/main/java/com/acme/OrderService.java": """package com.acme;

public class OrderService {
    private final OrderRepository repository;

    public void place(Order order) {
        repository.save(order);
    }
}
""",
        },
    )
    run(tmp_path)
    save = function(tmp_path, "OrderRepository.save")
    assert save["purpose"] == "Saves an order."
    assert save["called_by"] == ["src/main/java/com/acme/OrderService.java::OrderService.place"]


def test_a_root_package_file_lists_the_subfolder_files_that_import_it(tmp_path: Path) -> None:
    """Go: a sub-folder importing the module's root package shows in the root files'
    relationships (the import resolves to ".")."""
    write(
        tmp_path,
        {
            "go.mod": "module example.com/kit\n\ngo 1.22\n",
            "kit.go": "package kit\n\nfunc New() int { return 1 }\n",
            "middleware/log.go": (
                'package middleware\n\nimport "example.com/kit"\n\n'
                "func Use() int { return kit.New() }\n"
            ),
        },
    )
    mem = Memory.init(tmp_path)
    mem.scan()
    assert mem.code.relationships("kit.go")["imported_by"] == ["middleware/log.go"]


PY_TYPED = {
    "pkg/__init__.py": "",
    "pkg/console.py": """class Console:
    def print(self, x):
        return x

    def log(self, x):
        return x


class Base:
    def setup(self):
        return 1
""",
    "pkg/app.py": """from typing import Optional

from .console import Base, Console


def render(c: Console, d: Optional[Console] = None):
    c.print(1)
    out = Console()
    out.log(2)


def unknown(items, other: "list[Console]"):
    items.print(5)
    other.log(6)


class App(Base):
    size: Console

    def __init__(self):
        self.console = Console()

    def setup(self):
        super().setup()
        self.console.print(3)
        self.size.log(4)
""",
}


def test_python_calls_through_typed_parameters_locals_attributes_and_super(
    tmp_path: Path,
) -> None:
    """``c: Console`` then ``c.print()``, ``out = Console(); out.log()``, ``self.console``
    given a class, and ``super().setup()`` link to the class's methods; a value of unknown
    type (``items.print()``, a ``list[Console]``) links to nothing."""
    write(tmp_path, PY_TYPED)
    run(tmp_path)
    assert function(tmp_path, "Console.print")["called_by"] == [
        "pkg/app.py::App.setup",
        "pkg/app.py::render",
    ]
    assert function(tmp_path, "Console.log")["called_by"] == [
        "pkg/app.py::App.setup",
        "pkg/app.py::render",
    ]
    assert function(tmp_path, "Base.setup")["called_by"] == ["pkg/app.py::App.setup"]


def test_typescript_calls_through_typed_parameters_locals_fields_and_super(
    tmp_path: Path,
) -> None:
    """The TypeScript counterparts: ``c: Console``, ``new Console()``, ``const x: Console``,
    class fields and constructor parameter properties, ``this.z = new Console()``, and
    ``super.setup()``; ``items: any`` links to nothing. Side effects stay read from the
    calls as written."""
    write(
        tmp_path,
        {
            "src/console.ts": """export class Console {
  print(x: number) { return x; }
  log(x: number) { return x; }
}
export class Base {
  setup() { return 1; }
}
""",
            "src/app.ts": """import { Base, Console } from './console';

export function render(c: Console, d?: Console | null) {
  c.print(1);
  const out = new Console();
  out.log(2);
  const typed: Console = make();
  typed.print(3);
}

export class App extends Base {
  private size: Console;
  con = new Console();
  constructor(private readonly out: Console) { super(); this.z = new Console(); }
  setup() {
    super.setup();
    this.size.log(4);
    this.out.print(5);
    [1].forEach(() => this.con.log(7));
  }
  other(items: any) { items.print(5); }
}
""",
        },
    )
    run(tmp_path)
    both = ["src/app.ts::App.setup", "src/app.ts::render"]
    assert function(tmp_path, "Console.print")["called_by"] == both
    assert function(tmp_path, "Console.log")["called_by"] == both
    assert function(tmp_path, "Base.setup")["called_by"] == ["src/app.ts::App.setup"]
    assert function(tmp_path, "App.other")["calls"] == ["items.print"]
    assert function(tmp_path, "App.constructor")["calls"] == ["new Console", "super"]


def test_go_calls_through_an_import_alias_link_unless_the_name_is_ambiguous(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "go.mod": "module example.com/app\n\ngo 1.22\n",
            "bar/bar.go": "package bar\n\nfunc Get() int { return 1 }\n",
            "other/bar/bar.go": "package bar\n\nfunc Get() int { return 2 }\n",
            "cmd/main.go": """package main

import (
	foo "example.com/app/bar"
)

func main() { foo.Get() }
""",
            "cmd/both.go": """package main

import (
	one "example.com/app/bar"
	two "example.com/app/other/bar"
)

func both() { one.Get(); two.Get() }
""",
        },
    )
    run(tmp_path)
    layout = Layout.for_repo(tmp_path)
    found = {f["key"]: f.get("called_by") for f in get_function(layout, Store(layout), "Get")}
    assert found == {"bar/bar.go::Get": ["cmd/main.go::main"], "other/bar/bar.go::Get": []}
