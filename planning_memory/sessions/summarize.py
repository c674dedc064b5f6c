"""Summarisers for sessions: which one a config names (``from_config``), and the names of
all three modules in one place (``summary_base``: the interface; ``extractive``: the built-in
one; ``command``: an external LLM command).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planning_memory.sessions.command import CommandSummarizer as CommandSummarizer
from planning_memory.sessions.command import end_prompt as end_prompt
from planning_memory.sessions.command import parse_end as parse_end
from planning_memory.sessions.command import parse_rolling as parse_rolling
from planning_memory.sessions.command import rolling_prompt as rolling_prompt
from planning_memory.sessions.extractive import FACT_SCORE as FACT_SCORE
from planning_memory.sessions.extractive import LINE_SCORE as LINE_SCORE
from planning_memory.sessions.extractive import MAX_FACTS_PER_RUN as MAX_FACTS_PER_RUN
from planning_memory.sessions.extractive import ExtractiveSummarizer as ExtractiveSummarizer
from planning_memory.sessions.extractive import candidates as candidates
from planning_memory.sessions.extractive import score as score
from planning_memory.sessions.summary_base import MAX_END_ITEMS as MAX_END_ITEMS
from planning_memory.sessions.summary_base import MAX_FACT_CHARS as MAX_FACT_CHARS
from planning_memory.sessions.summary_base import MAX_SUMMARY_CHARS as MAX_SUMMARY_CHARS
from planning_memory.sessions.summary_base import EndRequest as EndRequest
from planning_memory.sessions.summary_base import EndSummary as EndSummary
from planning_memory.sessions.summary_base import Summarizer as Summarizer
from planning_memory.sessions.summary_base import Summary as Summary
from planning_memory.sessions.summary_base import SummaryRequest as SummaryRequest
from planning_memory.sessions.summary_base import memorize_markers as memorize_markers
from planning_memory.sessions.summary_base import message_facts as message_facts
from planning_memory.sessions.summary_base import unique as unique


def from_config(config: Mapping[str, Any]) -> Summarizer:
    """The summariser an effective config names: its command, else the extractive one."""
    spec = config["memory"]["shortTerm"].get("summarizer") or {}
    command = spec.get("command")
    if command:
        return CommandSummarizer(command, float(spec.get("timeoutSeconds") or 60))
    return ExtractiveSummarizer()
