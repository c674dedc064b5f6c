"""The memory viewer (``pmem ui``): a read-only local web page over one repository's memory.

An entry point, like ``cli`` and ``watch``: it reaches the memory only through ``Memory``.
Server-rendered HTML with inline SVG pictures; its one small script polls for changes and
swaps the page's content in place. Nothing is fetched from outside the package.

    server    the HTTP server: routes, the Host check, the security headers, ``serve``
    layout    the frame of every page, the request a page reads, paging size
    reads     cached reads of the memory, and the change stamp the page polls
    jobs      long work in background threads, and the progress line a page shows meanwhile
    codeindex the code map's reverse look-ups (importers, parents, definitions), kept current
    anchored  the memories anchored to code, and whether that code changed since
    html      building HTML with every text escaped
    charts    inline SVG: growth line, bars, dependency graph
    history   ``git log`` of a record's file, commits per day
    overview  counts, growth, what needs review, what changed lately
    records   long-term records: filters, search, one record's page
    sessions  sessions per channel, one session's summaries, window and timeline
    agent     what the agent sees: a task's context block, item by item; injections
    code      the code map: areas, folders, files, functions, components
"""

from __future__ import annotations

from planning_memory.viewer.server import ViewerServer, serve

__all__ = ["ViewerServer", "serve"]
