"""Call edges through declared types (Go, Java, Rust), scanned end to end: a call on a value
links to its type's method when the source says the type, Java overloads by argument count
and type, and a call on a type or path links to that type's function only."""

from __future__ import annotations

from pathlib import Path

from .test_callgraph import called_by

# -- Go: parameters, locals, literals, constructors, receivers, imported types ------------
GO = {
    "go.mod": "module example.com/kit\n\ngo 1.22\n",
    "m/command.go": """package m

type Command struct {
	parent   *Command
	commands []*Command
}

func (c *Command) Prefix() string {
	if c.parent != nil {
		return c.parent.Prefix()
	}
	for _, sub := range c.commands {
		sub.Name()
	}
	return ""
}

func NewCommand() *Command { return &Command{} }

func (c *Command) Name() string { return "" }

func (c *Command) Root() *Command { return c }

func (c *Command) Run() { c.Name() }
""",
    "m/use.go": """package m

func Local() {
	var c Command
	c.Name()
	d := NewCommand()
	d.Root().Name()
}

func (c *Command) Children() []*Command { return nil }

func (c *Command) Walk() {
	for _, child := range c.Children() {
		child.Root()
	}
}
""",
    "app/app.go": """package app

import (
	"strings"

	cmds "example.com/kit/m"
)

func Param(cmd *cmds.Command) { cmd.Name() }

func Literal() {
	c := &cmds.Command{}
	c.Name()
	v := cmds.Command{}
	v.Root()
}

func Made() {
	c := cmds.NewCommand()
	c.Name()
}

func Ranged(list []*cmds.Command) {
	for _, c := range list {
		c.Name()
	}
}

func Asserted(v any) {
	c := v.(*cmds.Command)
	c.Name()
}

func Unknown(index map[string]*cmds.Command, b strings.Builder) {
	for _, c := range index {
		c.Name()
	}
	b.Name()
}
""",
}


def test_go_calls_through_typed_parameters_locals_and_results_link(tmp_path: Path) -> None:
    links = called_by(tmp_path, GO)
    assert links["m/command.go::Command.Name"] == [
        "app/app.go::Asserted",
        "app/app.go::Literal",
        "app/app.go::Made",
        "app/app.go::Param",
        "app/app.go::Ranged",
        "m/command.go::Command.Prefix",  # a field of the receiver: c.commands
        "m/command.go::Command.Run",
        "m/use.go::Local",
    ]  # not Unknown: a map's values are not followed, strings.Builder is not ours
    # another Command's Prefix (c.parent): its own type, so its own method
    assert links["m/command.go::Command.Prefix"] == ["m/command.go::Command.Prefix"]
    assert links["m/command.go::Command.Root"] == [
        "app/app.go::Literal",
        "m/use.go::Command.Walk",  # the range over a call, in another file of the package
        "m/use.go::Local",
    ]


# -- Java: overloads by argument count and type -------------------------------------------
JSOUP = """package org.example;

import java.io.File;

public class Jsoup {
    public static Doc parse(String html) { return null; }
    public static Doc parse(String html, String baseUri) { return null; }
    public static Doc parse(File file) { return null; }
    public static Doc parse(File file, String charset, String baseUri) { return null; }
    public static void log(String format, Object... args) {}
}
"""
JAVA_USE = """package org.example;

import java.io.File;

class Use {
    void literal() { Jsoup.parse("<p>"); }
    void two(String html, String base) { Jsoup.parse(html, base); }
    void file(File in) { Jsoup.parse(in); }
    void unknown() { Jsoup.parse(make()); }
    void three() { Jsoup.parse(new File("x"), "UTF-8", ""); }
    void varargs() { Jsoup.log("x"); Jsoup.log("%s %s", 1, 2); }
}
"""


def test_java_calls_link_only_the_overloads_that_can_take_their_arguments(
    tmp_path: Path,
) -> None:
    links = called_by(
        tmp_path, {"src/org/example/Jsoup.java": JSOUP, "src/org/example/Use.java": JAVA_USE}
    )
    parse = "src/org/example/Jsoup.java::Jsoup.parse"
    use = "src/org/example/Use.java::Use."
    assert links[parse] == [use + "literal", use + "unknown"]  # (String)
    assert links[parse + "#2"] == [use + "two"]  # (String, String)
    assert links[parse + "#3"] == [use + "file", use + "unknown"]  # (File)
    assert links[parse + "#4"] == [use + "three"]  # (File, String, String)
    assert links["src/org/example/Jsoup.java::Jsoup.log"] == [use + "varargs"]


JAVA_NODES = {
    "src/org/example/Node.java": """package org.example;

class Node {
    Node() {}
    Node(String name) {}
    String attr(String key) { return key; }
}
""",
    "src/org/example/Leaf.java": """package org.example;

class Leaf extends Node {
    Leaf() {}
}
""",
    "src/org/example/Element.java": """package org.example;

class Element extends Node {
    Element(String name) { super(name); }
    Element(int size) { this("x"); }
    Element select(String query) { return this; }
}
""",
    "src/org/example/Document.java": """package org.example;

class Document extends Element {
    Document() { super("#root"); }
}
""",
    "src/org/example/Page.java": """package org.example;

class Page {
    String link(Document doc) { return doc.select("a").attr("href") + doc.attr("x"); }
    String leaf(Leaf leaf) { return leaf.attr("y"); }
}
""",
}


def test_java_methods_a_class_inherits_link_through_its_constructors_super_calls(
    tmp_path: Path,
) -> None:
    """``super(...)`` links the base's constructor and says the class's base (a
    constructor without one calls the base's no-argument constructor): a method a
    ``Document`` inherits from ``Element`` or ``Node``, or a ``Leaf`` from ``Node``, links
    there."""
    links = called_by(tmp_path, JAVA_NODES)
    base = "src/org/example/"
    page = base + "Page.java::Page."
    assert links[base + "Node.java::Node.attr"] == [page + "leaf", page + "link"]
    assert links[base + "Element.java::Element.select"] == [page + "link"]
    assert links[base + "Node.java::Node.Node"] == [base + "Leaf.java::Leaf.Leaf"]
    assert links[base + "Node.java::Node.Node#2"] == [base + "Element.java::Element.Element"]
    assert links[base + "Element.java::Element.Element"] == [
        base + "Document.java::Document.Document",
        base + "Element.java::Element.Element#2",  # this("x")
    ]


def test_java_tests_see_their_package_across_source_roots(tmp_path: Path) -> None:
    """``src/test/java/org/x`` and ``src/main/java/org/x`` are one package: a test calls
    the package's classes without importing them."""
    links = called_by(
        tmp_path,
        {
            "src/main/java/org/x/Parser.java": (
                "package org.x;\n\nclass Parser {\n    static Parser html() { return null; }\n}\n"
            ),
            "src/test/java/org/x/ParserTest.java": (
                "package org.x;\n\nclass ParserTest {\n    void parses() { Parser.html(); }\n}\n"
            ),
        },
    )
    assert links["src/main/java/org/x/Parser.java::Parser.html"] == [
        "src/test/java/org/x/ParserTest.java::ParserTest.parses"
    ]


# -- Java and Rust: calls on another object or on a type ----------------------------------
JAVA_READER = """package org.example;

class CharacterReader {
    void advance() {}
}
"""
JAVA_TOKENISER = """package org.example;

class Tokeniser {
    private final CharacterReader reader = new CharacterReader();

    void advance(CharacterReader r, Object other) {
        r.advance();
        other.advance();
        this.reader.advance();
        String.valueOf(1);
    }

    static Tag valueOf(int i) { return null; }

    void walk(Tokeniser child) { child.walk(null); }
}
"""


def test_java_calls_on_another_object_or_a_library_type_do_not_link_the_caller(
    tmp_path: Path,
) -> None:
    links = called_by(
        tmp_path,
        {
            "src/org/example/CharacterReader.java": JAVA_READER,
            "src/org/example/Tokeniser.java": JAVA_TOKENISER,
        },
    )
    tokeniser = "src/org/example/Tokeniser.java::Tokeniser."
    assert links["src/org/example/CharacterReader.java::CharacterReader.advance"] == [
        tokeniser + "advance"
    ]
    assert links[tokeniser + "advance"] == []  # `other` is of unknown type
    assert links[tokeniser + "valueOf"] == []  # String.valueOf is the library's
    assert links[tokeniser + "walk"] == [tokeniser + "walk"]  # a Tokeniser: recursion


RUST = {
    "Cargo.toml": '[package]\nname = "kit"\nversion = "0.1.0"\n',
    "src/main.rs": """mod exec;

use jiff::Zoned;

use crate::exec::Template;

fn now() -> i64 {
    Zoned::now();
    0
}

fn scan() {
    WorkerState::new().scan();
    Template::new();
}

fn is_socket(ft: &std::fs::FileType) -> bool {
    ft.is_socket()
}

struct WorkerState;

impl WorkerState {
    fn new() -> Self {
        WorkerState
    }

    fn scan(&self) {}
}
""",
    "src/exec.rs": """pub struct Template;

impl Template {
    pub fn new() -> Template {
        let parts = Vec::new();
        Template
    }
}
""",
}


def test_rust_calls_on_a_path_or_another_object_link_that_type_only(tmp_path: Path) -> None:
    links = called_by(tmp_path, RUST)
    assert links["src/exec.rs::Template.new"] == ["src/main.rs::scan"]  # not Vec::new
    assert links["src/main.rs::now"] == []  # Zoned::now is jiff's
    assert links["src/main.rs::is_socket"] == []  # ft is another object
    assert links["src/main.rs::WorkerState.scan"] == ["src/main.rs::scan"]
    assert links["src/main.rs::scan"] == []  # WorkerState::new().scan() is the method


RUST_TYPED = {
    "Cargo.toml": '[package]\nname = "kit"\nversion = "0.1.0"\n',
    "src/main.rs": """mod walk;

use crate::walk::Walker;

fn run(w: &mut Walker, path: &std::path::Path) {
    w.step();
    path.exists();
}

fn open() -> std::io::Result<()> {
    let made = Walker::open()?;
    made.step();
    let lit = Walker { depth: 0 };
    lit.step();
    let w = 3;
    w.step();
    Ok(())
}
""",
    "src/walk.rs": """pub struct Walker {
    pub depth: usize,
}

impl Walker {
    pub fn open() -> std::io::Result<Self> {
        Ok(Walker { depth: 0 })
    }

    pub fn step(&mut self) {}
}

pub struct Path;

impl Path {
    pub fn exists(&self) -> bool {
        true
    }
}
""",
}


def test_rust_calls_through_typed_parameters_and_lets_link(tmp_path: Path) -> None:
    """``w: &mut Walker``, ``let made = Walker::open()?`` (the ``Result``'s ``Self``) and a
    struct literal link ``Walker::step``; ``std::path::Path`` is not the repository's
    ``Path``, and a name bound again without a type (``let w = 3``) is left alone."""
    links = called_by(tmp_path, RUST_TYPED)
    assert links["src/walk.rs::Walker.step"] == ["src/main.rs::open", "src/main.rs::run"]
    assert links["src/walk.rs::Path.exists"] == []


# -- incremental: links that read another file's signature follow its changes -------------
def test_links_through_a_changed_signature_equal_a_fresh_scan(tmp_path: Path) -> None:
    """A call's links depend on what the functions it goes through declare (a result type,
    Java parameters): changing or removing them elsewhere relinks the call."""
    repo, fresh = tmp_path / "repo", tmp_path / "fresh"
    files = {
        **GO,
        "src/org/example/Jsoup.java": JSOUP,
        "src/org/example/Use.java": JAVA_USE,
    }
    called_by(repo, files)
    files["m/command.go"] = (
        files["m/command.go"]
        .replace("func NewCommand() *Command {", "func NewCommand() *Other {")
        .replace("func (c *Command) Root()", "func (c *Command) Top()")
        + '\ntype Other struct{}\n\nfunc (o *Other) Name() string { return "" }\n'
    )
    files["src/org/example/Jsoup.java"] = JSOUP.replace(
        "parse(File file) {", "parse(File file, int size) {"
    )
    incremental = called_by(repo, files)
    assert called_by(fresh, files) == incremental
    assert incremental["m/command.go::Other.Name"] == ["app/app.go::Made"]
    assert incremental["src/org/example/Jsoup.java::Jsoup.parse#3"] == []


def test_links_through_a_changed_class_hierarchy_equal_a_fresh_scan(tmp_path: Path) -> None:
    """A method a class inherits links through its bases: a class that now defines the
    method itself, or a constructor that now calls another base, relinks the call."""
    repo, fresh = tmp_path / "repo", tmp_path / "fresh"
    files = dict(JAVA_NODES)
    called_by(repo, files)
    base = "src/org/example/"
    files[base + "Element.java"] = files[base + "Element.java"].replace(
        "    Element select(", "    String attr(String key) { return key; }\n    Element select("
    )
    incremental = called_by(repo, files)
    assert called_by(fresh, files) == incremental
    assert incremental[base + "Element.java::Element.attr"] == [base + "Page.java::Page.link"]
    assert incremental[base + "Node.java::Node.attr"] == [base + "Page.java::Page.leaf"]
    files[base + "Document.java"] = files[base + "Document.java"].replace(
        "class Document extends Element", "class Document extends Node"
    )
    incremental = called_by(repo, files)
    fresh2 = tmp_path / "fresh2"
    assert called_by(fresh2, files) == incremental
    assert incremental[base + "Node.java::Node.attr"] == [
        base + "Page.java::Page.leaf",
        base + "Page.java::Page.link",
    ]


def test_calls_into_the_module_root_package_survive_an_incremental_scan(tmp_path: Path) -> None:
    """An incremental scan reads the stored imports as folders only: the name a Go import
    gives the module's root package (``kit`` for ``example.com/kit``, folder ``.``) comes
    from go.mod, so a rescan of the importer links what a fresh scan links."""
    repo, fresh = tmp_path / "repo", tmp_path / "fresh"
    files = {
        "go.mod": "module example.com/kit\n\ngo 1.22\n",
        "kit.go": """package kit

type Command struct{}

func (c *Command) Name() string { return "" }

func Helper() {}
""",
        "doc/doc.go": """package doc

import "example.com/kit"

func Gen(c *kit.Command) {
	kit.Helper()
	c.Name()
}
""",
    }
    called_by(repo, files)
    files["doc/doc.go"] += "\n// Other is new.\nfunc Other() {}\n"
    incremental = called_by(repo, files)
    assert incremental == called_by(fresh, files)
    assert incremental["kit.go::Helper"] == ["doc/doc.go::Gen"]
    assert incremental["kit.go::Command.Name"] == ["doc/doc.go::Gen"]


# -- Java: a nested class's simple name is the one nested where it is named ----------------
JAVA_BUILT = """package org.example;

class %s {
    static Builder builder() { return new Builder(); }

    static class Builder {
        Builder set() { return this; }
        %s get() { return null; }
    }
}
"""


def test_a_java_result_type_is_the_class_nested_in_the_declaring_file(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/org/example/Line.java": JAVA_BUILT % ("Line", "Line"),
            "src/org/example/Parser.java": JAVA_BUILT % ("Parser", "Parser"),
            "src/org/example/Main.java": (
                "package org.example;\n\nclass Main {\n"
                "    void run() { Line.builder().set().get(); }\n}\n"
            ),
        },
    )
    run = ["src/org/example/Main.java::Main.run"]
    assert links["src/org/example/Line.java::Line.Builder.get"] == run
    assert links["src/org/example/Parser.java::Parser.Builder.get"] == []


def test_new_links_the_constructor_that_takes_its_arguments(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/org/example/Order.java": (
                "package org.example;\n\nclass Order {\n    Order() {}\n"
                "    Order(String id) {}\n\n    static class Line {\n        Line() {}\n    }\n}\n"
            ),
            "src/org/example/Shop.java": (
                "package org.example;\n\nclass Shop {\n"
                '    void buy() { new Order("a"); new Order.Line(); new java.util.ArrayList<>(); '
                "}\n"
                "}\n"
            ),
            "src/shop.ts": (
                "import { Cart } from './cart';\n\n"
                "export function fill() {\n  return new Cart(1);\n}\n"
            ),
            "src/cart.ts": "export class Cart {\n  constructor(public n: number) {}\n}\n",
        },
    )
    buy = ["src/org/example/Shop.java::Shop.buy"]
    assert links["src/org/example/Order.java::Order.Order#2"] == buy  # Order(String)
    assert links["src/org/example/Order.java::Order.Order"] == []
    assert links["src/org/example/Order.java::Order.Line.Line"] == buy
    assert links["src/cart.ts::Cart.constructor"] == ["src/shop.ts::fill"]


def test_an_argument_made_by_a_method_of_the_file_has_its_result_type(tmp_path: Path) -> None:
    links = called_by(
        tmp_path,
        {
            "src/org/example/Line.java": (
                "package org.example;\n\nclass Line {\n"
                "    Option resolve(String name) { return null; }\n"
                "    String value(Option option) { return null; }\n"
                "    String value(String name) { return value(resolve(name)); }\n}\n"
            ),
            "src/org/example/Option.java": "package org.example;\n\nclass Option {}\n",
        },
    )
    line = "src/org/example/Line.java::Line.value"
    assert links[line] == [line + "#2"]  # value(Option), not itself
    assert links[line + "#2"] == []


def test_an_argument_made_by_a_library_or_another_class_picks_its_overloads(
    tmp_path: Path,
) -> None:
    line = "src/org/example/Line.java::Line.has"
    links = called_by(
        tmp_path,
        {
            "src/org/example/Line.java": (
                "package org.example;\n\nimport java.util.function.Supplier;\n\nclass Line {\n"
                "    Options options;\n"
                "    boolean has(char c) { return has(String.valueOf(c)); }\n"
                "    boolean has(String name) { return has(options.get(name)); }\n"
                "    boolean has(Option option) { return true; }\n"
                "    boolean has(Group group) { return has(group.selected(), () -> 1); }\n"
                "    boolean has(String name, Supplier<Integer> fallback) { return true; }\n"
                "    boolean has(String name, int fallback) { return true; }\n}\n"
            ),
            "src/org/example/Options.java": (
                "package org.example;\n\nclass Options {\n"
                "    Option get(String name) { return null; }\n}\n"
            ),
            "src/org/example/Group.java": (
                "package org.example;\n\nclass Group {\n    String selected() { return null; }\n}\n"
            ),
            "src/org/example/Option.java": "package org.example;\n\nclass Option {}\n",
        },
    )
    assert links[line] == []  # has(char): String.valueOf is a String
    assert links[line + "#2"] == [line]
    assert links[line + "#3"] == [line + "#2"]  # an Option, not a Group
    assert links[line + "#4"] == []
    assert links[line + "#5"] == [line + "#4"]  # a lambda is not an int
    assert links[line + "#6"] == []
