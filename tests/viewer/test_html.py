"""Building HTML: text is escaped everywhere, attributes included; pictures escape labels."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from planning_memory.viewer import charts
from planning_memory.viewer.html import Html, esc, link, pager, table, tag, url

PAYLOAD = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def test_text_and_attributes_are_escaped() -> None:
    out = tag("a", PAYLOAD, href=PAYLOAD, title='" onmouseover="x')
    assert "<script>" not in out and "<img" not in out
    assert 'title="&quot; onmouseover=&quot;x"' in out
    assert out.count("<a ") == 1 and out.endswith("</a>")


def test_markup_built_here_is_kept_and_flags_are_bare() -> None:
    inner = tag("b", "bold")
    assert tag("p", inner, "<i>", hidden=True, id=None) == "<p hidden><b>bold</b>&lt;i&gt;</p>"
    assert tag("input", name="q", value="a&b") == '<input name="q" value="a&amp;b">'


@given(st.text())
def test_any_text_comes_out_inert(text: str) -> None:
    out = tag("td", text)
    assert out.count("<") == 2 and out.count(">") == 2  # only the element's own tags
    assert esc(text) == esc(esc(text))  # escaping Html again does nothing


def test_urls_keep_their_parameters_encoded() -> None:
    assert url("/records", q="a&b=c", type="", page=2) == "/records?q=a%26b%3Dc&page=2"
    assert 'href="/record?id=x%22%3E"' in link(url("/record", id='x">'), "x")


def test_an_empty_table_says_so_and_the_pager_counts() -> None:
    assert "nothing here" in table(("a",), [])
    nav = pager("/records", {"type": "mistake"}, 2, 120, 50)
    assert "page 2 of 3 (120 in all)" in nav
    assert "type=mistake&amp;page=1" in nav and "page=3" in nav


def test_pictures_escape_their_labels_and_drop_unknown_edges() -> None:
    svg = charts.graph(["a", PAYLOAD], [("a", PAYLOAD), ("a", "missing")], "deps")
    assert isinstance(svg, Html) and "<script>" not in svg
    assert svg.count('class="edge"') == 1
    bars = charts.hbars([(PAYLOAD, 3), ("b", 1)], "bars")
    assert "<img" not in bars and bars.count('class="bar"') == 2
    line = charts.growth([("2024-01-01", 2), ("2024-01-03", 1)], [("2024-01-02", 4)], "g")
    assert "<path" in line and ">3</text>" in line  # the cumulative total
    assert "no dated records" in charts.growth([], [], "g")
