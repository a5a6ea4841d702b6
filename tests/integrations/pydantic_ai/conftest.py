"""Fixtures for the pydantic-ai adapter tests: a scripted gate, an in-memory archive, and a
scripted FunctionModel whose turns are plain functions of the history (no network)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from ctxgate.archive import Archive
from ctxgate.gate import FunctionDecisionModel, GatePolicy, ToolGate
from ctxgate.integrations.pydantic_ai import Ctxgate

Probabilities = Mapping[str, tuple[float, float]]
"""tool name → (P(destructive), P(requested)); other tools: harmless and requested."""


def scripted_gate(table: Probabilities | None = None, *, audit: Any = None,
                  **policy: Any) -> ToolGate:
    """A gate whose decision model answers from ``table`` by tool name (constant time)."""
    table = dict(table or {})

    def answer(state, questions):
        d, r = table.get(state["tool_call"]["tool"], (0.05, 0.95))
        return {"destructive": d, "requested": r}

    policy.setdefault("cache_ttl_seconds", 0)
    return ToolGate(FunctionDecisionModel(fn=answer, threaded=False), GatePolicy(**policy),
                    audit=audit)


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """Every tool return in the history, oldest first."""
    return [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


def archive_id(text: str) -> str:
    """The archive id a digest names."""
    found = re.search(r"archive id ([0-9a-f]{12})", text)
    assert found, text[:400]
    return found.group(1)


Turn = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def make_agent(turn: Turn, capability: Ctxgate, **kwargs: Any) -> Agent[None, Any]:
    """An agent driven by ``turn`` with ``capability`` and deferred tool requests allowed."""
    kwargs.setdefault("output_type", [str, DeferredToolRequests])
    return Agent(FunctionModel(turn), capabilities=[capability], **kwargs)


def build_log(lines: int = 3000, error_at: int = 1712) -> str:
    """A build log with one error line in the middle."""
    out = []
    for i in range(1, lines + 1):
        out.append(f"[INFO] compiling module_{i}.c")
        if i == error_at:
            out.append(f"module_{i}.c:88: error: undefined reference to link_table")
    return "\n".join(out) + "\n"


@pytest.fixture(autouse=True)
def outside_any_repository(tmp_path, monkeypatch) -> None:
    """Run in a directory outside any git working tree (the effect rules read the disk)."""
    work = tmp_path / "not-a-repo"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture
def archive() -> Archive:
    return Archive()
