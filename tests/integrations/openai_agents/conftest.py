"""Fixtures for the Agents SDK adapter tests: the real SDK against a local scripted server."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from agents import (  # noqa: E402
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    set_tracing_disabled,
)
from openai import AsyncOpenAI  # noqa: E402

from ctxgate.archive import Archive  # noqa: E402
from ctxgate.gate import GatePolicy, ToolGate  # noqa: E402
from ctxgate.gate.backends.function import FunctionDecisionModel  # noqa: E402

set_tracing_disabled(True)


def model_for(server: Any, api: str = "responses") -> Any:
    """The SDK's own Responses (or Chat Completions) model, talking to ``server`` (no
    retries, no network)."""
    client = AsyncOpenAI(base_url=server.url, api_key="test-key", max_retries=0, timeout=30)
    if api == "chat":
        return OpenAIChatCompletionsModel(model="scripted", openai_client=client)
    return OpenAIResponsesModel(model="scripted", openai_client=client)


def scripted_gate(judge: Callable[[dict, str], dict[str, float]], *, audit: Any = None,
                  **policy: Any) -> ToolGate:
    """A gate whose model answers ``judge(tool_call, user_request)`` (a logic test double)."""

    async def fn(state: dict, questions: Any) -> dict[str, float]:
        return judge(state["tool_call"], str(state.get("user_request", "")))

    settings = {"cache_ttl_seconds": 0, "effects": False, **policy}
    return ToolGate(FunctionDecisionModel(fn=fn, model_id="scripted-judge"),
                    GatePolicy(**settings), audit=audit)


def keyword_judge(tool_call: dict, request: str) -> dict[str, float]:
    """Destructive when the tool's name starts with ``delete``; requested when the request
    says ``delete``; ``maybe`` in the request lands in the ask band."""
    destructive = 0.95 if tool_call["tool"].startswith("delete") else 0.05
    lowered = request.lower()
    requested = 0.9 if "delete" in lowered else 0.5 if "maybe" in lowered else 0.05
    return {"destructive": destructive, "requested": requested}


@pytest.fixture
def archive() -> Archive:
    return Archive()


@pytest.fixture
def gate() -> ToolGate:
    return scripted_gate(keyword_judge)
