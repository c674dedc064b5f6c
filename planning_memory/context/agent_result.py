"""Seed 000's ``processAgentResult``: an agent's report after a task, turned into memory.

The pair of ``prepare_agent_context``, which tells the agent what to know before."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from planning_memory.errors import InputError


class AgentMemory(Protocol):
    """The memory operations a processed result uses (``Memory`` offers them)."""

    def record_file_access(
        self, path: str, action: str = ..., session_id: str | None = ...
    ) -> dict[str, Any]: ...

    def update_file_entity(
        self,
        path: str,
        *,
        notes: list[str] | None = ...,
        purpose: str | None = ...,
        modified_by: list[str] | None = ...,
    ) -> dict[str, Any]: ...

    def record_decision(
        self,
        question: str,
        decision: str,
        reasoning: str = ...,
        alternatives: Sequence[str] = ...,
        session_id: str | None = ...,
    ) -> dict[str, Any]: ...

    def learn_pattern(
        self, name: str, description: str = ..., example: str = ..., **fields: Any
    ) -> object: ...

    def learn_from_mistake(
        self, description: str, correction: str = ..., severity: str = ..., **fields: Any
    ) -> object: ...

    def record_error(
        self, error: str, resolution: str | None = ..., *, tool: str | None = ...
    ) -> dict[str, Any]: ...


def process_agent_result(
    memory: AgentMemory, agent: str, result: Mapping[str, Any]
) -> dict[str, int]:
    """Files modified -> file access and entity annotations; decisions -> recorded (reusable
    ones learned as patterns); errors fixed -> mistakes, and resolved errors in the session's
    errors list. Returns how many of each."""
    _check(result)  # all of it before anything is recorded
    done = {"files": 0, "decisions": 0, "patterns": 0, "mistakes": 0}
    source = f"agent:{agent}"
    for item in result.get("filesModified", result.get("files_modified", [])):
        memory.record_file_access(item["path"], "modified")
        memory.update_file_entity(item["path"], modified_by=[agent], purpose=item.get("purpose"))
        done["files"] += 1
    for decision in result.get("decisions", []):
        question = decision["question"]
        reasoning = decision.get("reasoning", "")
        answer = decision.get("answer", decision.get("decision", ""))
        memory.record_decision(question, answer, reasoning, decision.get("alternatives", ()))
        done["decisions"] += 1
        if decision.get("isPattern") or decision.get("is_pattern"):
            name = decision.get("patternName") or question
            example = decision.get("implementation", "")
            memory.learn_pattern(name, reasoning, example, source=source)
            done["patterns"] += 1
    for error in result.get("errorsFixed", result.get("errors_fixed", [])):
        severity = error.get("severity") or "medium"
        memory.learn_from_mistake(error["original"], error.get("fix", ""), severity, source=source)
        fix = error.get("fix") if isinstance(error.get("fix"), str) else ""
        memory.record_error(error["original"], fix.strip() or f"fixed by {agent}", tool=agent)
        done["mistakes"] += 1
    return done


# each list of an agent's result -> the text field every item of it needs
_NEEDS = {
    ("filesModified", "files_modified"): "path",
    ("decisions",): "question",
    ("errorsFixed", "errors_fixed"): "original",
}


def _check(result: Mapping[str, Any]) -> None:
    """Raise InputError naming the first item an agent's result gets wrong (its JSON path
    and what it needs)."""
    if not isinstance(result, Mapping):
        raise InputError("an agent result is a JSON object (filesModified, decisions, errorsFixed)")
    for keys, field in _NEEDS.items():
        key = next((k for k in keys if k in result), keys[0])
        items = result.get(key, [])
        if not isinstance(items, list):
            raise InputError(f"$.{key}: expected a list of objects, got {type(items).__name__}")
        for n, item in enumerate(items):
            value = item.get(field) if isinstance(item, Mapping) else None
            if not isinstance(value, str) or not value.strip():
                raise InputError(
                    f"$.{key}[{n}]: '{field}' is required (a non-empty string)",
                    hint=f"each item of {key} needs its {field}",
                )
