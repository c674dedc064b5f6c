"""The pure edits behind the installers, on the shapes users' files come in: Aider's ``read:``
(one value, a flow list, a block list with comments), Codex's TOML (our table first, between
others, with comments), managed Markdown blocks. Each result is parsed with the format's own
parser; each removal gives the original text back."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from planning_memory.agents.installers import edits

HERE = Path("file")
OURS = ["CONVENTIONS.md", ".planning/CLAUDE.md"]


@pytest.mark.parametrize(
    ("text", "reads"),
    [
        ("", []),
        ("model: gpt-4o\n", []),
        ("model: gpt-4o", []),
        ("read: NOTES.md\n", ["NOTES.md"]),
        ("read: 'NOTES.md'  # mine\nauto-commits: false\n", ["NOTES.md"]),
        ("read: [a.md, b.md]\nmodel: x\n", ["a.md", "b.md"]),
        ("# top\nread:\n  - a.md  # first\n  - b.md\nmodel: x\n", ["a.md", "b.md"]),
        ("read:\n    - a.md\n", ["a.md"]),
    ],
)
def test_aider_reads_are_added_and_taken_back(text: str, reads: list[str]) -> None:
    added = edits.set_reads(text, OURS, HERE)
    parsed = yaml.safe_load(added)
    listed = parsed["read"] if isinstance(parsed["read"], list) else [parsed["read"]]
    assert listed == [*reads, *OURS]
    for key, value in (yaml.safe_load(text) or {}).items():
        if key != "read":
            assert parsed[key] == value
    assert edits.set_reads(added, OURS, HERE) == added
    back = edits.drop_reads(added, OURS, HERE)
    assert as_lists(yaml.safe_load(back)) == as_lists(yaml.safe_load(text))
    if not reads or text.startswith("# top"):  # nothing else listed, or a block list
        assert back.rstrip("\n") == text.rstrip("\n")


def as_lists(config: dict[str, object] | None) -> dict[str, object]:
    """The config with a single ``read:`` value as the list of one it means to Aider."""
    config = dict(config or {})
    if isinstance(config.get("read"), str):
        config["read"] = [config["read"]]
    return config


ENTRY = {"command": "/opt/my tools/pmem", "args": ["mcp"]}


@pytest.mark.parametrize(
    "text",
    [
        "",
        'model = "o3"',
        '# mine\nmodel = "o3"\n\n[mcp_servers.github]\ncommand = "gh"\n',
        '[mcp_servers.planning-memory]\ncommand = "pmem"\nargs = ["mcp"]\n\n'
        '[profiles.x]\nmodel = "y"\n',
        '[a]\nb = 1\n\n[mcp_servers.planning-memory] # ours\ncommand = "uv"\n'
        'args = ["run", "pmem", "mcp"]\n',
    ],
)
def test_codex_toml_table_is_set_and_removed(text: str) -> None:
    merged, notes = edits.merge_toml(text, "mcp_servers", ENTRY, HERE)
    assert notes == []
    config = tomllib.loads(merged)
    assert config["mcp_servers"]["planning-memory"] == ENTRY
    before = tomllib.loads(text)
    for key, value in before.items():
        if key != "mcp_servers":
            assert config[key] == value
    assert edits.merge_toml(merged, "mcp_servers", ENTRY, HERE) == (merged, [])
    dropped = tomllib.loads(edits.drop_toml(merged, "mcp_servers", HERE))
    before.get("mcp_servers", {}).pop("planning-memory", None)
    if before.get("mcp_servers") == {}:
        del before["mcp_servers"]
    assert dropped == before


def test_a_foreign_toml_entry_is_left_alone() -> None:
    text = '[mcp_servers.planning-memory]\ncommand = "other"\n'
    assert edits.merge_toml(text, "mcp_servers", ENTRY, HERE)[0] == text
    assert edits.drop_toml(text, "mcp_servers", HERE) == text


@pytest.mark.parametrize("text", ["", "# Title\n", "# Title\n\nbody", "# T\n\nb\n\n## After\n"])
def test_a_managed_block_is_set_replaced_and_removed(text: str) -> None:
    once = edits.set_block(text, "one", HERE)
    assert edits.block_of(once, HERE) == "one\n"
    twice = edits.set_block(once, "two\nlines", HERE)
    assert edits.block_of(twice, HERE) == "two\nlines\n"
    assert twice.replace("two\nlines", "one") == once
    assert edits.drop_block(twice, HERE).rstrip("\n") == text.rstrip("\n")


def test_json_keeps_the_files_layout() -> None:
    for like in ('{\n    "a": 1\n}\n', '{"a": 1}', '{\n\t"a": 1\n}'):
        assert edits.json_text({"a": 1}, like) == like


# -- properties ---------------------------------------------------------------------------------
lines = st.lists(
    st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30
    ).filter(lambda line: "planning-memory:" not in line),
    max_size=8,
)


@given(lines, st.text(max_size=200).filter(lambda t: "planning-memory:" not in t))
def test_any_markdown_gets_its_block_and_gives_it_back(given_lines: list[str], inner: str) -> None:
    text = "".join(f"{line}\n" for line in given_lines)
    added = edits.set_block(text, inner, HERE)
    assert edits.block_of(added, HERE) == inner.rstrip() + "\n"
    assert edits.set_block(added, inner, HERE) == added
    assert edits.drop_block(added, HERE) == text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    st.sampled_from([None, 2, 4, "\t"]),
)
def test_a_json_file_keeps_its_layout(value: dict[str, object], indent: int | str | None) -> None:
    like = json.dumps(value, indent=indent, ensure_ascii=False) + "\n"
    assert edits.json_text(value, like) == like
