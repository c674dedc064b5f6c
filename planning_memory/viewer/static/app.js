// pmem ui: keep the page current. Polls /api/stamp; when the memory changed on disk, fetches
// this page again and swaps its <main> for the new one (parsed, never run: no innerHTML).
// While the page shows a progress line (long work running on the server), it polls faster,
// keeps the line's text current, and fetches the page again when that work is done.
"use strict";
(function () {
  const INTERVAL_MS = 1500;
  const WORKING_MS = 400;
  let busy = false;

  function typing() {
    const el = document.activeElement;
    return el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA");
  }

  function progressLines() {
    return Array.from(document.querySelectorAll("#content [data-job]"));
  }

  async function refresh(stamp) {
    const response = await fetch(location.href, { headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const parsed = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = parsed.getElementById("content");
    const main = document.getElementById("content");
    if (!fresh || !main) return;
    const open = new Set(Array.from(main.querySelectorAll("details[open]"), (d) => d.id).filter(Boolean));
    main.replaceWith(document.adoptNode(fresh));
    open.forEach((id) => { const d = document.getElementById(id); if (d) d.open = true; });
    document.title = parsed.title;
    document.body.dataset.updated = stamp;
  }

  async function poll() {
    const working = progressLines();
    if (busy || (typing() && !working.length)) return;
    busy = true;
    try {
      const response = await fetch("/api/stamp", { cache: "no-store" });
      if (response.ok) {
        delete document.body.dataset.offline;
        const { stamp, jobs } = await response.json();
        const running = jobs || {};
        let ended = false;
        working.forEach((el) => {
          const text = running[el.dataset.job];
          if (text === undefined) ended = true;
          else if (el.textContent !== text) el.textContent = text;
        });
        const main = document.getElementById("content");
        // never while you type in a form: the next poll after that does it
        if (main && !typing() && (ended || stamp !== main.dataset.stamp)) await refresh(stamp);
      }
    } catch (err) {
      document.body.dataset.offline = "1"; // the server stopped: keep the page as it is
    } finally {
      busy = false;
    }
  }

  function loop() {
    poll().finally(() => setTimeout(loop, progressLines().length ? WORKING_MS : INTERVAL_MS));
  }

  setTimeout(loop, progressLines().length ? WORKING_MS : INTERVAL_MS);
})();
