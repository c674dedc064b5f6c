"""Rust extraction: functions, impl and trait methods, use/mod declarations, doc comments."""

from __future__ import annotations

from planning_memory.entity.facts import FunctionFact
from planning_memory.entity.languages import rust
from planning_memory.entity.sideeffects import classify

SOURCE = b"""//! Configuration loading for the CLI.
//!
//! Reads TOML files and the environment.

use std::{env, fs, path::{Path, PathBuf}};
use serde::Deserialize;
use crate::error::{ConfigError, Result as AppResult};
pub use self::defaults::DEFAULT_PORT;

mod defaults;
pub mod watch;

/// Settings read from disk.
#[derive(Debug, Deserialize)]
pub struct Config {
    pub port: u16,
    pub root: PathBuf,
}

impl Config {
    /// Loads the config at `path`, falling back to defaults.
    pub fn load(path: &Path) -> AppResult<Config> {
        let text = fs::read_to_string(path).map_err(ConfigError::Io)?;
        let mut config: Config = toml::from_str(&text)?;
        if let Ok(port) = env::var("APP_PORT") {
            config.port = port.parse().unwrap_or(defaults::DEFAULT_PORT);
        }
        Ok(config)
    }

    fn validate(&self) -> bool {
        self.port > 0 && self.root.exists()
    }
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.root.display(), self.port)
    }
}

pub trait Source {
    fn read(&self) -> String;
    fn name(&self) -> &str { "unknown" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_defaults() {
        println!("testing");
        assert!(Config::load(Path::new("missing.toml")).is_err());
    }
}
"""


def _fn(facts: dict, qualified: str) -> FunctionFact:  # type: ignore[type-arg]
    return next(f for f in facts["functions"] if f["qualified_name"] == qualified)


def test_rust_file_facts() -> None:
    facts = rust.extract(SOURCE)
    assert facts["purpose"] == "Configuration loading for the CLI."
    modules = {(i["module"], bool(i.get("reexport"))) for i in facts["imports"]}
    assert modules == {
        ("std::env", False),
        ("std::fs", False),
        ("std::path::Path", False),
        ("std::path::PathBuf", False),
        ("serde::Deserialize", False),
        ("crate::error::ConfigError", False),
        ("crate::error::Result", False),
        ("self::defaults::DEFAULT_PORT", True),
        ("self::defaults", False),
        ("self::watch", True),
        # `use super::*;` in the tests module names this file: no import
    }
    assert set(facts["classes"]) == {"Config", "Source"}
    assert {f["qualified_name"] for f in facts["functions"]} == {
        "Config.load",
        "Config.validate",
        "Config.fmt",
        "Source.read",
        "Source.name",
        "tests.loads_defaults",
    }


def test_rust_methods() -> None:
    facts = rust.extract(SOURCE)
    load = _fn(facts, "Config.load")
    assert load["kind"] == "method"
    assert load["signature"] == "(path: &Path) -> AppResult<Config>"
    assert load["purpose"] == "Loads the config at `path`, falling back to defaults."
    assert load["exported"] is True
    assert load["complexity"] == 2
    assert classify(load["calls"]) == ["environment", "filesystem"]
    assert _fn(facts, "Config.validate")["exported"] is False
    assert _fn(facts, "Config.fmt")["exported"] is True  # a trait impl is public through the trait
    assert "println!" in _fn(facts, "tests.loads_defaults")["calls"]


def test_rust_uses_inside_inline_modules_are_relative_to_the_file() -> None:
    facts = rust.extract(
        b"""
mod outer {
    use super::helpers::x;
    use self::inner::y;
    mod nested;
    mod inner {
        use super::super::top::z;
        use super::super::super::up;
        use super::*;
        use crate::a::b;
        use std::io;
        fn f() { use super::w; }
    }
}
"""
    )
    assert [i["module"] for i in facts["imports"]] == [
        "self::helpers::x",
        "self::outer::inner::y",
        "self::top::z",
        "super::up",
        "self::outer",
        "crate::a::b",
        "std::io",
        "self::outer::w",
        "self::outer::nested",
    ]


def test_rust_trait_method_declarations_are_functions() -> None:
    facts = rust.extract(
        b"""
/// A place to keep items.
pub trait Store {
    /// Loads one item.
    fn get(&self, id: u64) -> Option<Item>;
    fn put(&mut self, item: Item) -> Result<(), Error>;
    fn len(&self) -> usize { 0 }
}

trait Private {
    fn hidden(&self);
}

extern "C" {
    fn abs(x: i32) -> i32;
}
"""
    )
    get = _fn(facts, "Store.get")
    assert get["kind"] == "method"
    assert get["signature"] == "(&self, id: u64) -> Option<Item>"
    assert get["purpose"] == "Loads one item."
    assert get["exported"] is True  # as public as the trait
    assert get["calls"] == [] and get["complexity"] == 1
    assert _fn(facts, "Store.put")["lines"] == [6, 6]
    assert _fn(facts, "Store.len")["exported"] is True
    assert _fn(facts, "Private.hidden")["exported"] is False
    assert _fn(facts, "abs")["kind"] == "function"
    assert {"Store.get", "Store.put", "Store.len"} <= set(facts["exports"])
