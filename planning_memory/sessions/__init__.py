"""Short-term memory: sessions, their conversation, rolling summary and end summary.

The part's API (see docs/sessions.md): ``Sessions``, the sessions of one memory tree bound to
its config, a clock and a channel; the values it returns; the summariser interface; and
``new_session`` and the constants other parts use.

    files      the on-disk session: shape, paths, reading, the window, the locked rewrite
    log        recording: messages, decisions, file accesses, steps, current context
    failures   the errors list: errors met in the session and how each was resolved
    applied    the memories a session delivered to the agent, each counted once
    lifecycle  start, rename, pause / resume and checkpoints, end, delete
    rolling    the summary queue, the rolling summary and the archive move
    briefing   what an agent is told: temporal context and get_session_context
    summarize  the summarisers: the interface, the extractive one, an LLM command
    goal       what a session is about: the task a prompt states, without its rules
    decided    the decisions a conversation states, each with the question it answers
    elsewhere  the unfinished work of the other open sessions (crashed or still running)
    repeats    near-duplicate texts: one of each said many times
    union      two copies of one session made one (an import), and a session made whole
    api        ``Sessions``, all of the above bound to one memory tree
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planning_memory.core.exports import exports

if TYPE_CHECKING:
    from planning_memory.sessions.api import Sessions as Sessions
    from planning_memory.sessions.elsewhere import Unfinished as Unfinished
    from planning_memory.sessions.files import CHECKPOINT_KEYS as CHECKPOINT_KEYS
    from planning_memory.sessions.files import CONTEXT_KEYS as CONTEXT_KEYS
    from planning_memory.sessions.files import DEFAULT_CHANNEL as DEFAULT_CHANNEL
    from planning_memory.sessions.files import STATUSES as STATUSES
    from planning_memory.sessions.files import Session as Session
    from planning_memory.sessions.files import SessionInfo as SessionInfo
    from planning_memory.sessions.files import Settings as Settings
    from planning_memory.sessions.files import new_session as new_session
    from planning_memory.sessions.files import said_something as said_something
    from planning_memory.sessions.lifecycle import Deleted as Deleted
    from planning_memory.sessions.log import FILE_ACTIONS as FILE_ACTIONS
    from planning_memory.sessions.log import ROLES as ROLES
    from planning_memory.sessions.log import Appended as Appended
    from planning_memory.sessions.repeats import collapse as collapse_repeats
    from planning_memory.sessions.repeats import said_before as said_before
    from planning_memory.sessions.repeats import words as repeat_words
    from planning_memory.sessions.rolling import SummaryOutcome as SummaryOutcome
    from planning_memory.sessions.summarize import CommandSummarizer as CommandSummarizer
    from planning_memory.sessions.summarize import EndRequest as EndRequest
    from planning_memory.sessions.summarize import EndSummary as EndSummary
    from planning_memory.sessions.summarize import ExtractiveSummarizer as ExtractiveSummarizer
    from planning_memory.sessions.summarize import Summarizer as Summarizer
    from planning_memory.sessions.summarize import Summary as Summary
    from planning_memory.sessions.summarize import SummaryRequest as SummaryRequest
    from planning_memory.sessions.summarize import from_config as summarizer_from_config
    from planning_memory.sessions.union import absorb as absorb_session
    from planning_memory.sessions.union import whole as whole_session

    __all__ = [
        "CHECKPOINT_KEYS",
        "CONTEXT_KEYS",
        "DEFAULT_CHANNEL",
        "FILE_ACTIONS",
        "ROLES",
        "STATUSES",
        "Appended",
        "CommandSummarizer",
        "Deleted",
        "EndRequest",
        "EndSummary",
        "ExtractiveSummarizer",
        "Session",
        "SessionInfo",
        "Sessions",
        "Settings",
        "Summarizer",
        "Summary",
        "SummaryOutcome",
        "SummaryRequest",
        "Unfinished",
        "absorb_session",
        "collapse_repeats",
        "new_session",
        "repeat_words",
        "said_before",
        "said_something",
        "summarizer_from_config",
        "whole_session",
    ]
else:
    __getattr__, __dir__, __all__ = exports(
        __name__,
        {
            "Appended": "log",
            "CHECKPOINT_KEYS": "files",
            "CONTEXT_KEYS": "files",
            "CommandSummarizer": "summarize",
            "DEFAULT_CHANNEL": "files",
            "Deleted": "lifecycle",
            "EndRequest": "summarize",
            "EndSummary": "summarize",
            "ExtractiveSummarizer": "summarize",
            "summarizer_from_config": "summarize:from_config",
            "FILE_ACTIONS": "log",
            "ROLES": "log",
            "STATUSES": "files",
            "Session": "files",
            "SessionInfo": "files",
            "Sessions": "api",
            "Settings": "files",
            "Summarizer": "summarize",
            "Summary": "summarize",
            "SummaryOutcome": "rolling",
            "SummaryRequest": "summarize",
            "Unfinished": "elsewhere",
            "new_session": "files",
            "said_something": "files",
            "absorb_session": "union:absorb",
            "collapse_repeats": "repeats:collapse",
            "repeat_words": "repeats:words",
            "said_before": "repeats",
            "whole_session": "union:whole",
        },
    )
