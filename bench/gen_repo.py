"""Generate a deterministic synthetic source tree for the scan benchmark.

The tree holds ``--files`` small files (default 100,000) across the six scanned languages --
Python 25%, TypeScript 15%, TSX 10%, JavaScript 10%, Go 15%, Java 15%, Rust 10% -- in
folders of 25 files, each file importing and calling two neighbours, so imports resolve and
``called_by`` has work to do. The same ``--seed`` always gives the same bytes.

    .venv/bin/python bench/gen_repo.py OUT_DIR [--files 100000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from pathlib import Path

PER_DIR = 25
SHARES = (
    ("python", 25),
    ("typescript", 15),
    ("tsx", 10),
    ("javascript", 10),
    ("go", 15),
    ("java", 15),
    ("rust", 10),
)
_WORD_TEXT = (
    "user account order invoice payment cart item stock price report email session token "
    "profile search index cache queue event audit note tag file image upload export import"
)
WORDS = _WORD_TEXT.split()


def _name(rng: random.Random) -> str:
    return rng.choice(WORDS) + rng.choice(WORDS).title()


def _python(d: int, i: int, rng: random.Random) -> tuple[str, str]:
    a, b = (i + 1) % PER_DIR, (i + 2) % PER_DIR
    f1, f2, cls = _name(rng), _name(rng), _name(rng).title()
    body = f'''"""Module {d}.{i}: helpers for {f1}."""

from __future__ import annotations

import logging

from .mod_{a:02d} import run_{a}
from .mod_{b:02d} import run_{b}

log = logging.getLogger(__name__)


class {cls}{i}:
    """Holds {f2} state."""

    def __init__(self, size: int) -> None:
        self.size = size

    def grow(self, by: int) -> int:
        if by < 0 or by > 100:
            raise ValueError(by)
        self.size += by
        return self.size


def {f1.lower()}_{i}(items: list[int]) -> int:
    """Sum the even items."""
    total = 0
    for item in items:
        if item % 2 == 0:
            total += item
    log.info("total %s", total)
    return total


def run_{i}(n: int) -> int:
    if n <= 0:
        return 0
    return run_{a}(n - 1) + run_{b}(n - 2) + {f1.lower()}_{i}(list(range(n)))
'''
    return f"mod_{i:02d}.py", body


def _typescript(d: int, i: int, rng: random.Random) -> tuple[str, str]:
    a, b = (i + 1) % PER_DIR, (i + 2) % PER_DIR
    f1 = _name(rng)
    body = f"""/** Service {d}.{i} for {f1}. */
import {{ run{a} }} from './svc{a:02d}'
import {{ run{b} }} from './svc{b:02d}'

export interface {f1.title()}Options {{
  limit: number
  verbose?: boolean
}}

/** Runs step {i}. */
export function run{i}(n: number): number {{
  if (n <= 0) return 0
  return run{a}(n - 1) + run{b}(n - 2)
}}

export class {f1.title()}Service{i} {{
  constructor(private readonly options: {f1.title()}Options) {{}}

  async load(id: string): Promise<string | null> {{
    const response = await fetch(`/api/{f1}/${{id}}`)
    return response.ok ? response.text() : null
  }}
}}
"""
    return f"svc{i:02d}.ts", body


def _tsx(d: int, i: int, rng: random.Random) -> tuple[str, str]:
    a = (i + 1) % PER_DIR
    name = _name(rng).title()
    body = f"""'use client'
import {{ useState }} from 'react'
import {{ Card{a} }} from './Card{a:02d}'

export interface Card{i}Props {{
  title: string
  onSelect?: (id: number) => void
}}

/** Shows one {name}. */
export function Card{i}({{ title, onSelect }}: Card{i}Props) {{
  const [open, setOpen] = useState(false)
  return (
    <section onClick={{() => setOpen(!open)}}>
      <h2>{{title}}</h2>
      {{open && <Card{a} title="{name}" onSelect={{onSelect}} />}}
    </section>
  )
}}
"""
    return f"Card{i:02d}.tsx", body


def _javascript(d: int, i: int, rng: random.Random) -> tuple[str, str]:
    a, b = (i + 1) % PER_DIR, (i + 2) % PER_DIR
    f1 = _name(rng)
    body = f"""// Utilities {d}.{i} for {f1}.
const {{ step{a} }} = require('./util{a:02d}')
const {{ step{b} }} = require('./util{b:02d}')

function step{i}(values) {{
  return values.filter((v) => v > {i}).map((v) => step{a}([v]) + step{b}([v]))
}}

const format{i} = (value) => `${{value}}`.padStart(4, '0')

module.exports = {{ step{i}, format{i} }}
"""
    return f"util{i:02d}.js", body


def _go(d: int, i: int, rng: random.Random) -> tuple[str, str]:
    a, b = (i + 1) % PER_DIR, (i + 2) % PER_DIR
    f1 = _name(rng).title()
    body = f"""// Package p{d} holds generated code.
package p{d}

import (
	"fmt"
	"strings"
)

// {f1}{i} is a record.
type {f1}{i} struct {{
	Name  string
	Count int
}}

// Step{i} runs one step.
func Step{i}(n int) int {{
	if n <= 0 {{
		return 0
	}}
	return Step{a}(n-1) + Step{b}(n-2)
}}

func (r *{f1}{i}) Describe() string {{
	fmt.Println(r.Name)
	return strings.ToUpper(r.Name)
}}
"""
    return f"file{i:02d}.go", body


def _java(d: int, i: int, rng: random.Random) -> tuple[str, str]:
    a = (i + 1) % PER_DIR
    f1 = _name(rng).title()
    body = f"""package com.example.p{d};

import java.util.List;
import com.example.p{d}.Service{a:02d};

/** {f1} service number {i}. */
public class Service{i:02d} {{
    private final Service{a:02d} next;

    public Service{i:02d}(Service{a:02d} next) {{
        this.next = next;
    }}

    /** Counts the items over the limit. */
    public int count(List<Integer> items, int limit) {{
        int total = 0;
        for (int item : items) {{
            if (item > limit && item != {i}) {{
                total += 1;
            }}
        }}
        return total + next.count(items, limit + 1);
    }}
}}
"""
    return f"Service{i:02d}.java", body


def _rust(d: int, i: int, rng: random.Random) -> tuple[str, str]:
    a = (i + 1) % PER_DIR
    f1 = _name(rng).lower()
    body = f"""//! Generated module {d}.{i} ({f1}).
use super::m{a:02d}::step_{a};

/// A counter.
pub struct Counter{i} {{
    pub value: u64,
}}

impl Counter{i} {{
    pub fn new() -> Self {{
        Counter{i} {{ value: 0 }}
    }}

    pub fn bump(&mut self, by: u64) -> u64 {{
        if by > 10 {{ self.value += 10; }} else {{ self.value += by; }}
        self.value
    }}
}}

/// Step {i}.
pub fn step_{i}(n: u64) -> u64 {{
    if n == 0 {{ return 0; }}
    println!("{f1} {{}}", n);
    step_{a}(n - 1)
}}
"""
    return f"m{i:02d}.rs", body


WRITERS: dict[str, Callable[[int, int, random.Random], tuple[str, str]]] = {
    "python": _python,
    "typescript": _typescript,
    "tsx": _tsx,
    "javascript": _javascript,
    "go": _go,
    "java": _java,
    "rust": _rust,
}


def _folder(root: Path, language: str, d: int) -> Path:
    group = f"g{d // 50:03d}"
    return {
        "python": root / "py" / group / f"pkg{d:05d}",
        "typescript": root / "web" / "src" / group / f"svc{d:05d}",
        "tsx": root / "web" / "src" / "components" / group / f"ui{d:05d}",
        "javascript": root / "node" / "lib" / group / f"util{d:05d}",
        "go": root / "go" / "internal" / group / f"p{d}",
        "java": root / "java" / "src" / "main" / "java" / "com" / "example" / f"p{d}",
        "rust": root / "rust" / "src" / group / f"r{d:05d}",
    }[language]


def generate(root: Path, files: int, seed: int = 1) -> int:
    """Write the tree under ``root``; returns the number of source files written."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "go").mkdir(exist_ok=True)
    (root / "go" / "go.mod").write_text("module example.com/bench\n\ngo 1.22\n")
    (root / "rust").mkdir(exist_ok=True)
    (root / "rust" / "Cargo.toml").write_text('[package]\nname = "bench"\nversion = "0.1.0"\n')
    (root / ".gitignore").write_text("node_modules/\n/target/\n")
    written = 0
    folder_index = 0
    for language, share in SHARES:
        quota = files * share // 100
        while quota > 0:
            count = min(PER_DIR, quota)
            folder = _folder(root, language, folder_index)
            folder.mkdir(parents=True, exist_ok=True)
            if language == "python":
                (folder / "__init__.py").write_text("")
                count = max(count - 1, 0)
                written += 1
            if language == "rust":
                mods = "".join(f"pub mod m{i:02d};\n" for i in range(count))
                (folder / "mod.rs").write_text(mods)
                written += 1
            for i in range(count):
                name, text = WRITERS[language](folder_index, i, rng)
                (folder / name).write_text(text)
            written += count
            quota -= count + (1 if language in ("python", "rust") else 0)
            folder_index += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    count = generate(args.out, args.files, args.seed)
    print(f"wrote {count:,} source files under {args.out}")


if __name__ == "__main__":
    main()
