"""Fixtures for the LangChain adapter tests: a scripted chat model and gates over it.

``ScriptedChatModel`` is a real ``BaseChatModel`` (``bind_tools`` included) whose replies come
from a Python function of the messages it is sent, so a test can read the digest the model was
shown and answer with the ``expand`` call it names. No network is used anywhere.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field

from ctxgate.archive import Archive
from ctxgate.gate import FunctionDecisionModel, GatePolicy, ToolGate

Script = Callable[[list[BaseMessage]], AIMessage]

_ids = itertools.count(1)


class ScriptedChatModel(BaseChatModel):
    """A chat model whose every reply is ``script(messages)``; records what it was sent."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: Any
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        self.bound[:] = [getattr(t, "name", None) or t.get("name") for t in tools]
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.script(list(messages)))])


def call(tool_name: str, /, **args: Any) -> dict[str, Any]:
    """A tool call with a fresh id."""
    return {"name": tool_name, "args": args, "id": f"call_{next(_ids)}", "type": "tool_call"}


def steps(*replies: AIMessage | Callable[[list[BaseMessage]], AIMessage]) -> Script:
    """A script that answers with ``replies`` in order (a callable reply sees the messages)."""
    queue = list(replies)

    def script(messages: list[BaseMessage]) -> AIMessage:
        reply = queue.pop(0) if queue else AIMessage(content="done")
        return reply(messages) if callable(reply) else reply

    return script


def tool_messages(messages: Sequence[Any]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def archive_id(text: str) -> str:
    found = re.search(r"archive id ([0-9a-f]{12})", text)
    assert found, text[:400]
    return found.group(1)


def scripted_gate(answers: Callable[[dict[str, Any]], dict[str, float]] | dict[str, float],
                  **policy: Any) -> tuple[ToolGate, FunctionDecisionModel]:
    """A gate over a FunctionDecisionModel answering ``answers`` (or ``answers(state)``)."""

    def fn(state: Any, questions: Any) -> dict[str, float]:
        return answers(state) if callable(answers) else dict(answers)

    model = FunctionDecisionModel(fn=fn)
    policy.setdefault("cache_ttl_seconds", 0)
    return ToolGate(model, GatePolicy(**policy)), model


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    """A real SQLite archive in a private home."""
    with Archive.open(tmp_path / "home") as opened:
        yield opened
