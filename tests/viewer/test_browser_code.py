"""The viewer's code pages in a real headless Chromium: the memories anchored to a file and its
functions (and which point at code changed since), a memory's links to its code, the progress
line of long work, and the layout measured in the browser (no overlapping columns, labels
inside their chart)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from viewer_support import Viewer, make_demo, new_browser, pmem, start_viewer, stop_viewer, wait_for

ANCHORED_FILE = "src/components/Auth/LoginForm.tsx"
LONG = "a_folder_name_long_enough_to_run_past_its_column_on_the_code_map_page"
OVERLAPS = """
const boxes = Array.from(document.querySelectorAll(arguments[0]), (e) => e.getBoundingClientRect());
const bad = [];
boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b, j) => {
  if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
    bad.push([i, i + 1 + j]);
}));
return bad;
"""
OUTSIDE = """
const [inner, outer] = arguments;
const bad = [];
document.querySelectorAll(outer).forEach((box) => {
  const o = box.getBoundingClientRect();
  box.querySelectorAll(inner).forEach((el) => {
    for (const r of el.getClientRects()) {
      if (r.left < o.left - 1 || r.right > o.right + 1) bad.push(el.textContent);
    }
  });
});
return bad;
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The demo, with folders whose names are long, and an area named after ``_pytest``."""
    from viewer_support import isolated_env

    base = tmp_path_factory.mktemp("viewer-code")
    env = isolated_env(base / "home")
    root = make_demo(base / "demo", env)
    for i in range(3):
        (root / "src" / "_pytest").mkdir(exist_ok=True)
        (root / "src" / "_pytest" / f"mod{i}.py").write_text(f"def check{i}():\n    return {i}\n")
        deep = root / "src" / f"{LONG}_{i}" / f"{LONG}_inner"
        deep.mkdir(parents=True)
        (deep / "index.ts").write_text(f"export const value{i} = {i};\n")
    pmem(root, env, "scan")
    return root, env


def by_id(browser: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, element_id)


def anchored_rows(browser: Any) -> list[list[str]]:
    """The anchored memories' rows, read in one script (the page may swap in a newer copy
    of itself at any time)."""
    return list(
        browser.execute_script(
            """return Array.from(document.querySelectorAll('#anchored tbody tr'),
                (r) => Array.from(r.querySelectorAll('td'), (td) => td.innerText.trim()));"""
        )
    )


def open_link(browser: Any, text: str) -> None:
    """Follow the link ``text`` of the page's content (its address read in one script)."""
    href = browser.execute_script(
        """return Array.from(document.querySelectorAll('#content a'))
            .find((a) => a.innerText.trim() === arguments[0]).href;""",
        text,
    )
    browser.get(href)


def mine_in(rows: list[list[str]]) -> list[list[str]]:
    """``rows`` once they hold the memory the test saved (else nothing)."""
    return rows if any(r[0] == "The login form validates on blur" for r in rows) else []


def test_a_file_page_lists_the_memories_anchored_to_it(viewer: Viewer, browser: Any) -> None:
    from planning_memory import Memory

    mem = Memory.open(viewer.root)
    saved = mem.save(
        "The login form validates on blur",
        "learning",
        anchors=[f"{ANCHORED_FILE}::LoginForm", ANCHORED_FILE],
    )
    record_id = saved.record["id"]
    browser.get(viewer.url + f"code/file?path={ANCHORED_FILE}")
    # the page follows the records as they are read again after the save
    rows = wait_for(lambda: mine_in(anchored_rows(browser)), 60)
    mine = [r for r in rows if r[0] == "The login form validates on blur"]
    assert sorted(r[2] for r in mine) == ["LoginForm", "the whole file"]
    assert all(r[3] == "unchanged" for r in mine)
    # the example memory anchored to LoginForm (saved with its hash then) is listed too
    assert any(r[0] != mine[0][0] and r[2] == "LoginForm" for r in rows)
    open_link(browser, "The login form validates on blur")
    wait_for(lambda: f"record?id={record_id}" in browser.current_url)
    # the memory's page links back to its code: the file, and the function in it
    from selenium.webdriver.common.by import By

    anchors = browser.find_elements(By.CSS_SELECTOR, "table.anchors a")
    targets = {a.text: a.get_attribute("href") for a in anchors}
    assert targets[ANCHORED_FILE].endswith(
        "/code/file?path=src%2Fcomponents%2FAuth%2FLoginForm.tsx"
    )
    assert (
        "code/name?q=src%2Fcomponents%2FAuth%2FLoginForm.tsx%3A%3ALoginForm" in targets["LoginForm"]
    )
    browser.get(targets["LoginForm"])
    rows = wait_for(lambda: anchored_rows(browser), 60)
    assert ["The login form validates on blur", "learning", "unchanged"] in rows


def test_memories_on_code_changed_since_are_flagged(viewer: Viewer, browser: Any) -> None:
    """It edits the demo's LoginForm and scans again (memories saved after still hash as
    their code does)."""
    from planning_memory import Memory

    title = "The login form posts its fields"
    anchors = [f"{ANCHORED_FILE}::LoginForm", ANCHORED_FILE]
    Memory.open(viewer.root).save(title, "learning", anchors=anchors)
    source = viewer.root / ANCHORED_FILE
    text = source.read_text("utf-8")
    assert "export function LoginForm(" in text
    source.write_text(
        text.replace("export function LoginForm(", "export function LoginForm(/* edited */")
    )
    pmem(viewer.root, viewer.env, "scan")
    browser.get(viewer.url + f"code/file?path={ANCHORED_FILE}")
    rows = wait_for(lambda: [r for r in anchored_rows(browser) if r[0] == title], 60)
    assert {r[2]: r[3] for r in rows} == {
        "LoginForm": "code changed since",
        "the whole file": "code changed since",
    }
    # the memory's own page says so of each anchor too
    open_link(browser, title)
    wait_for(lambda: "record?id=" in browser.current_url)
    assert "code changed since" in by_id(browser, "content").text


def test_a_files_importers_come_from_the_index_of_the_map(viewer: Viewer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(viewer.url + "code/name?q=src/lib/auth/validators.ts")
    wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, "#content [data-job]"), 60)
    text = by_id(browser, "content").text
    printed = pmem(viewer.root, viewer.env, "entity", "relationships", "src/lib/auth/validators.ts")
    importers = [line for line in printed.splitlines() if "imported" in line.lower()]
    assert importers, printed
    for path in ("src/lib/auth/index.ts", "src/lib/auth/options.ts"):
        assert path in printed and path in text


def test_the_code_map_layout_has_no_overlaps(viewer: Viewer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(viewer.url + "code")
    shown = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "ul.folders a")]
    assert any(LONG in s for s in shown)
    # each folder's name stays inside its own column, and no two items overlap
    assert browser.execute_script(OUTSIDE, "a", "ul.folders li") == []
    assert browser.execute_script(OVERLAPS, "ul.folders li") == []
    # an area keeps its folder's name: _pytest, not "-pytest"
    areas = [
        a.text for a in browser.find_elements(By.CSS_SELECTOR, "#areas tbody td:first-child a")
    ]
    assert "_pytest" in areas and "-pytest" not in areas
    labels = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.chart g text'), (t) => t.textContent)"
    )
    assert "_pytest" in labels and "-pytest" not in labels


def test_the_growth_charts_labels_stay_inside_it(tmp_path: Path, browser: Any) -> None:
    """The y-axis label of a five-digit total is drawn whole (it was cut to "0000")."""
    from planning_memory.viewer import charts

    points = [(f"2024-01-{d:02d}", 2469) for d in range(1, 6)]
    svg = charts.growth(points, [("2024-01-03", 4)], "growth")
    css = Path(charts.__file__).parent / "static" / "app.css"
    page = tmp_path / "chart.html"
    page.write_text(f'<!doctype html><link rel="stylesheet" href="{css.as_uri()}">{svg}', "utf-8")
    browser.get(page.as_uri())
    found = browser.execute_script(
        """const svg = document.querySelector('svg.chart').getBoundingClientRect();
        return Array.from(document.querySelectorAll('svg.chart text'), (t) => {
          const r = t.getBoundingClientRect();
          return [t.textContent, r.left >= svg.left && r.right <= svg.right
                  && r.top >= svg.top && r.bottom <= svg.bottom];
        });"""
    )
    assert ["12345", True] in found
    assert all(inside for _, inside in found), found


def test_long_work_shows_a_progress_line_then_its_result(
    demo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A first search waits for the search index: the page shows a progress line (kept
    current by its script) while another process holds the index, then the results, in place."""
    from selenium.webdriver.common.by import By

    root = tmp_path / "repo"
    shutil.copytree(demo[0], root, symlinks=True)
    index = root / ".planning" / "memory" / "contextual" / "index.sqlite3"
    for stale in index.parent.glob("index.sqlite3*"):
        stale.unlink()
    index.parent.mkdir(parents=True, exist_ok=True)
    holder = sqlite3.connect(index, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # the index is busy: the viewer's build waits for it
    viewer = start_viewer(root, demo[1])
    browser = new_browser(tmp_path / "profile")
    try:
        browser.get(viewer.url + "records?q=bcrypt+compare")
        browser.execute_script("window.notReloaded = true")
        line = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#content [data-job]"))
        assert line[0].get_attribute("role") == "status"
        assert "Searching the records for “bcrypt compare”" in line[0].text
        first = line[0].text
        # the script keeps the line current (its seconds count up) while the work runs
        wait_for(lambda: (lambda t: t and t != first)(current_line(browser)), 15)
        assert not browser.find_elements(By.CSS_SELECTOR, "#records tbody tr")
        holder.execute("ROLLBACK")
        rows = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#records tbody tr"), 120)
        assert "Comparar contraseñas con ===" in rows[0].text
        assert not browser.find_elements(By.CSS_SELECTOR, "#content [data-job]")
        assert browser.execute_script("return window.notReloaded") is True  # swapped in place
    finally:
        holder.close()
        browser.quit()
        stop_viewer(viewer)


def current_line(browser: Any) -> str:
    return str(
        browser.execute_script(
            "const e = document.querySelector('#content [data-job]'); return e && e.textContent"
        )
        or ""
    )
