"""The viewer in a real headless Chromium: the pages load, search, a session's summary, the
agent's context block as ``pmem context`` prints it, escaping, the Host check, live updates."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from viewer_support import Viewer, new_browser, pmem, wait_for

PAGES = {
    "": "Overview",
    "records": "Long-term memory",
    "record?id=pat_01HKPZ6RR0HDVCD9G9QN8PNEM7": None,
    "sessions": "Sessions",
    "session?id=ses_01HMKP5GC0QR5G41H5MY08Y01C": None,
    "context": "What the agent sees",
    "code": "Code map",
    "code/folder?dir=src/components/Auth": "Folder src/components/Auth",
    "code/file?path=src/lib/auth/validators.ts": "src/lib/auth/validators.ts",
    "code/name?q=LoginForm": "component: LoginForm",
}


def at_any_time(text: str) -> str:
    """``text`` with the time its temporal line names blanked out."""
    return re.sub(r"(Current date & time: )[^.]*\.", r"\1….", text)


def by_id(browser: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, element_id)


def errors(browser: Any) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.parametrize("path", PAGES)
def test_each_page_loads(viewer: Viewer, browser: Any, path: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(viewer.url + path)
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert heading == (PAGES[path] or heading) and heading
    assert "Internal error" not in browser.title and "Not found" not in browser.title
    assert errors(browser) == []  # nothing refused by the CSP, no script error, no 404
    assert browser.execute_script("return document.querySelectorAll('nav.top a').length") == 5


def test_the_overview_draws_its_charts(viewer: Viewer, browser: Any) -> None:
    browser.get(viewer.url)
    assert browser.execute_script("return document.querySelectorAll('svg.chart').length") >= 2
    assert "Needs review" in by_id(browser, "content").text


def test_search_finds_a_record(viewer: Viewer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(viewer.url + "records")
    box = by_id(browser, "q")
    box.send_keys("bcrypt compare")
    box.submit()
    wait_for(lambda: "q=bcrypt" in browser.current_url)
    # a first search may build the search index: its progress line shows, then the results
    rows = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#records tbody tr"), 120)
    assert rows and "Comparar contraseñas con ===" in rows[0].text
    rows[0].find_element(By.TAG_NAME, "a").click()
    wait_for(lambda: "record?id=mis_" in browser.current_url)
    assert "await bcrypt.compare" in by_id(browser, "content").text


def test_a_session_page_shows_its_summary(viewer: Viewer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(viewer.url + "sessions")
    browser.find_element(By.CSS_SELECTOR, "#sessions tbody a").click()
    wait_for(lambda: "session?id=" in browser.current_url)
    assert "El usuario pidió agregar autenticación" in by_id(browser, "rolling").text
    assert "¿Qué librería de auth usar?" in by_id(browser, "content").text  # its decisions
    browser.find_element(By.CSS_SELECTOR, "#window a[href*='around=']").click()
    assert by_id(browser, "timeline").find_elements(By.TAG_NAME, "strong")  # the message


def test_the_agent_page_shows_what_pmem_context_prints(viewer: Viewer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    task = "add password reset to the login form"
    browser.get(viewer.url + "context")
    by_id(browser, "task").send_keys(task)
    by_id(browser, "budget").send_keys("700")
    by_id(browser, "task").submit()
    shown = wait_for(
        lambda: browser.execute_script(
            "const e = document.getElementById('context-text'); return e && e.textContent"
        )
    )
    printed = pmem(viewer.root, viewer.env, "context", task, "--budget", "700")
    # the same block but for the time it names: the two are built moments apart
    assert "Current date & time: " in shown
    assert at_any_time(shown + "\n") == at_any_time(printed)
    items = browser.find_elements(By.CSS_SELECTOR, "#items tbody tr")
    assert items and all(row.find_elements(By.TAG_NAME, "td")[3].text for row in items)
    assert "No injections recorded" in by_id(browser, "injections").text or browser.find_elements(
        By.CSS_SELECTOR, "details.injection"
    )


def test_an_injection_payload_shows_as_text(viewer: Viewer, browser: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    title = "<script>alert(1)</script><img src=x onerror=alert(2)> always escape"
    pmem(viewer.root, viewer.env, "save", title, "--what", '"><svg onload=alert(3)>')
    browser.get(viewer.url + "records?q=always+escape")
    link = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#records tbody a"), 60)[0]
    assert link.text == title
    link.click()
    wait_for(lambda: "record?id=" in browser.current_url)
    assert browser.find_element(By.TAG_NAME, "h1").text == title
    assert '"><svg onload=alert(3)>' in by_id(browser, "content").text
    main = by_id(browser, "content")
    assert main.find_elements(By.TAG_NAME, "img") == []
    assert main.find_elements(By.TAG_NAME, "script") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018


def test_a_foreign_host_is_refused(viewer: Viewer, tmp_path: Path) -> None:
    """DNS rebinding: another name that resolves to 127.0.0.1 gets nothing."""
    rebinding = new_browser(tmp_path / "profile", "--host-resolver-rules=MAP rebind.test 127.0.0.1")
    try:
        rebinding.get(f"http://rebind.test:{viewer.port}/records")
        text = rebinding.find_element("tag name", "body").text
        assert "refused" in text
        assert "Comparar" not in rebinding.page_source
    finally:
        rebinding.quit()


def test_the_page_updates_after_pmem_save_in_another_process(viewer: Viewer, browser: Any) -> None:
    browser.get(viewer.url + "records")
    browser.execute_script("window.notReloaded = true")
    title = "Live update: the viewer follows the disk"
    assert title not in by_id(browser, "content").text
    pmem(viewer.root, viewer.env, "save", title, "-t", "discovery")
    # read in one script: the poll may swap <main> between finding it and reading it
    text = "return document.getElementById('content').innerText"
    wait_for(lambda: title in browser.execute_script(text), timeout=15)
    assert browser.execute_script("return window.notReloaded") is True  # swapped in place


def test_what_was_injected_at_session_start_is_listed(viewer: Viewer, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    from planning_memory import Memory

    mem = Memory.open(viewer.root)
    sid = "ses_01HMKP5GC0QR5G41H5MY08Y01C"
    task = "injected: <b>bold</b> login form task"
    pack = mem.context(task, budget=600)
    mem.sessions.record_injection(sid, "SessionStart", task, pack.as_dict())
    browser.get(viewer.url + "context")
    folded = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "details.injection"))
    folded[0].click()
    text = folded[0].text
    assert "SessionStart" in text and task in text and sid in text
    assert folded[0].find_elements(By.TAG_NAME, "b") == []
    assert pack.text.splitlines()[0] in by_id(browser, "injections").text
    browser.get(viewer.url + f"session?id={sid}")
    assert browser.find_elements(By.CSS_SELECTOR, "#injections details.injection")


def test_seed003_a_session_page_lists_what_was_saved_in_this_chat(
    viewer: Viewer, browser: Any
) -> None:
    """Last in this module: it adds a session, which becomes the newest."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from planning_memory import Memory

    ticks = iter(range(10_000))  # each reading of the clock a minute later: a clear order
    start = datetime.now(UTC)
    mem = Memory.open(viewer.root, clock=lambda: start + timedelta(minutes=next(ticks)))
    sid = mem.sessions.start(goal="Harden the login")["id"]
    source = f"session:{sid}"
    older = mem.save("Rate-limit the login route", "decision", source=source)
    mem.save("Lock the account after 5 tries", "decision", source=source, pinned=True)
    mem.save("Never log passwords", "mistake", source=source, correction="log the user id")
    gone = mem.save("Drop the captcha idea", "decision", source=source)
    mem.forget(gone.record["id"])
    mem.log("Done. [MEMORIZE: the login form posts to /api/login]", "assistant", sid)
    mem.record_error("tsc: Property 'tries' does not exist", file="src/login.ts", session_id=sid)
    mem.record_error("npm test: port 3000 in use", "used port 0", session_id=sid)
    browser.get(viewer.url + f"session?id={sid}")
    errors_rows = browser.find_elements(By.CSS_SELECTOR, "#errors tbody tr")
    cells = [[td.text for td in r.find_elements(By.TAG_NAME, "td")] for r in errors_rows]
    assert [c[1] for c in cells] == [
        "npm test: port 3000 in use",
        "tsc: Property 'tries' does not exist",
    ]
    assert cells[0][4] == "used port 0" and cells[1][4] == "open" and cells[1][2] == "src/login.ts"
    # the records saved in the chat come from the records' job: shown once it is done
    rows = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#saved-records tbody tr"), 60)
    titles = [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows]
    assert titles[0] == "Lock the account after 5 tries"  # pinned first
    assert titles[1] == "the login form posts to /api/login"  # then the newest
    assert titles[-1] == "Rate-limit the login route" and older.record["id"]
    assert "Drop the captcha idea" not in by_id(browser, "saved").text  # forgotten
    Select(browser.find_element(By.NAME, "saved_type")).select_by_value("mistake")
    box = by_id(browser, "saved-q")
    box.send_keys("USER ID")  # the correction, any case
    box.submit()
    wait_for(lambda: "saved_q=USER" in browser.current_url)
    rows = browser.find_elements(By.CSS_SELECTOR, "#saved-records tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == ["Never log passwords"]
    assert errors(browser) == []
