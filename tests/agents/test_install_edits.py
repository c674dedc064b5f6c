"""The pure edits behind the installers, on the shapes users' files come in: Aider's ``read:``
(one value, a flow list, a block list with comments), Codex's TOML (our table first, between
others, with comments), managed Markdown blocks, JSON in any layout (with comments). Each
result is parsed with the format's own parser; each removal gives the original text back."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from planning_memory.agents.installers import edits, jsonedit, reads

HERE = Path("file")
OURS = ["CONVENTIONS.md", ".planning/CLAUDE.md"]


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("", []),
        ("model: gpt-4o\n", []),
        ("read: NOTES.md\n", ["NOTES.md"]),
        ("read: CONVENTIONS.md\n", ["CONVENTIONS.md"]),
        ("read: 'NOTES.md'  # mine\nauto-commits: false\n", ["NOTES.md"]),
        ("read: [a.md, b.md]\nmodel: x\n", ["a.md", "b.md"]),
        ("read: [CONVENTIONS.md]  # mine\r\nmodel: x\r\n", ["CONVENTIONS.md"]),
        ("# top\nread:\n  - a.md  # first\n  - b.md\nmodel: x\n", ["a.md", "b.md"]),
        ("read:\n    - a.md\n    - CONVENTIONS.md\n", ["a.md", "CONVENTIONS.md"]),
        ("read:\r\n- a.md\r\nmodel: x\r\n", ["a.md"]),
        ("read:\nmodel: x\n", []),
    ],
)
def test_aider_reads_are_added_and_taken_back(text: str, listed: list[str]) -> None:
    added = reads.set_reads(text, OURS, HERE)
    parsed = yaml.safe_load(added)
    assert parsed["read"] == [*listed, *(f for f in OURS if f not in listed)]
    for key, value in (yaml.safe_load(text) or {}).items():
        if key != "read":
            assert parsed[key] == value
    assert ("\r\n" in text) == ("\r\n" in added) and "\r\n" not in added.replace("\r\n", "")
    assert reads.set_reads(added, OURS, HERE) == added
    assert reads.drop_reads(added, OURS, HERE) == text  # what the user listed stays, as it was


def test_aider_reads_the_user_listed_are_never_taken() -> None:
    text = "read:\n  - CONVENTIONS.md\n  - .planning/CLAUDE.md\n"
    assert reads.set_reads(text, OURS, HERE) == text
    assert reads.drop_reads(text, OURS, HERE) == text


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


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{}",
        "{}\n",
        '{"mcpServers":{}}',
        '{"mcpServers": {"github": {"command": "gh"}}}\n',
        '{\n  "permissions": {"allow": ["Bash(x)"]},\n  "mcpServers": {}\n}\n',
        '{\r\n    "a": 1\r\n}\r\n',
        '{\n\t// mine\n\t"servers": {\n\t\t"gh": {"type": "http"} /* x */\n\t},'
        '\n\t"inputs": []\n}\n',
    ],
)
def test_json_members_are_added_in_the_files_layout_and_taken_back(text: str) -> None:
    before = jsonedit.parse(text, HERE)
    after = {**before, "mcpServers": {**before.get("mcpServers", {}), "planning-memory": ENTRY}}
    added = jsonedit.patch(text, after)
    assert jsonedit.parse(added, HERE) == after
    assert ("\r\n" in text) == ("\r\n" in added) and "\r\n" not in added.replace("\r\n", "")
    if text.strip() not in ("", "{}") and "\n" not in text.strip():
        assert "\n" not in added.strip()  # a one-line file stays one line
    back = jsonedit.patch(added, before)
    assert back == (text if text.strip() else "{}\n")


def test_json_comments_stay_and_line_numbers_hold() -> None:
    text = '{\n  // a comment, "with": quotes\n  "a": 1 /* b */,\n  "c": [1, 2]\n}\n'
    assert jsonedit.parse(text, HERE) == {"a": 1, "c": [1, 2]}
    changed = jsonedit.patch(text, {"a": 2, "c": [1, 2, 3]})
    assert changed == '{\n  // a comment, "with": quotes\n  "a": 2 /* b */,\n  "c": [1, 2, 3]\n}\n'
    try:
        jsonedit.parse('{\n  // x\n  "a": ,\n}', HERE)
    except edits.InputError as exc:
        assert exc.line == 3
    else:  # pragma: no cover
        raise AssertionError("not an error")


# -- properties ---------------------------------------------------------------------------------
lines = st.lists(
    st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30
    ).filter(lambda line: "planning-memory:" not in line),
    max_size=8,
)


@given(  # the block's text is the memory's render: LF lines, written in the file's endings
    lines, st.text(max_size=200).filter(lambda t: "planning-memory:" not in t and "\r" not in t)
)
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
    st.dictionaries(st.text(max_size=8), json_values, max_size=3),
    st.sampled_from([None, 2, 4, "\t"]),
)
def test_a_json_file_keeps_its_layout(
    value: dict[str, object], more: dict[str, object], indent: int | str | None
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False) + "\n"
    assert jsonedit.patch(text, value) == text
    changed = {**value, **{f"new {k}": v for k, v in more.items()}}
    added = jsonedit.patch(text, changed)
    assert json.loads(added) == changed
    assert jsonedit.patch(added, value) == text  # added members taken back: the same bytes
