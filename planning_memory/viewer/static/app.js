// pmem ui: keep the page current. Polls /api/stamp; when the memory changed on disk, fetches
// this page again and swaps its <main> for the new one (parsed, never run: no innerHTML).
"use strict";
(function () {
  const INTERVAL_MS = 1500;
  let busy = false;

  function typing() {
    const el = document.activeElement;
    return el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA");
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
    document.body.dataset.updated = stamp;
  }

  async function poll() {
    if (busy || typing()) return;
    busy = true;
    try {
      const response = await fetch("/api/stamp", { cache: "no-store" });
      if (response.ok) {
        delete document.body.dataset.offline;
        const { stamp } = await response.json();
        const main = document.getElementById("content");
        if (main && stamp !== main.dataset.stamp) await refresh(stamp);
      }
    } catch (err) {
      document.body.dataset.offline = "1"; // the server stopped: keep the page as it is
    } finally {
      busy = false;
    }
  }

  setInterval(poll, INTERVAL_MS);
})();
