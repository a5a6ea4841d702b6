"""``CtxgateMiddleware``: the gate, the firewall and the bound as LangChain agent middleware.

``create_agent(model, tools, middleware=[CtxgateMiddleware()], checkpointer=…)``:

* ``before_agent`` captures the run's user request (the latest real ``HumanMessage``, with
  the gate's short-reply rule) into the state, so it survives ``SummarizationMiddleware``.
* ``wrap_tool_call`` / ``awrap_tool_call`` gate every call before it runs (see
  :mod:`.gating`), then firewall and bound its result (see :mod:`.results`).
* ``wrap_model_call`` / ``awrap_model_call`` bound the current turn as the graph persists it
  (see :mod:`.persist`) before each model call: the model sees the bounded turn, and the cut
  results replace theirs in the state (no extra graph node, so no extra checkpoint).
* ``tools`` adds ``expand`` over the same archive (see :mod:`.expand`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from ctxgate.errors import ConfigError
from ctxgate.gate.request import extract_user_request
from ctxgate.integrations._adapter import ResultFirewall
from ctxgate.integrations._adapter.defaults import configured
from ctxgate.integrations.langchain.expand import expand_tool
from ctxgate.integrations.langchain.gating import REQUEST_KEY, GateStep, OnDeny, resumable
from ctxgate.integrations.langchain.messages import gate_messages
from ctxgate.integrations.langchain.persist import TurnBound
from ctxgate.integrations.langchain.results import ResultStep

if TYPE_CHECKING:
    from ctxgate.archive import Archive
    from ctxgate.firewall import FirewallPolicy
    from ctxgate.gate import ToolGate

__all__ = ["MIN_BOUND_BYTES", "CtxgateMiddleware", "CtxgateState"]

MIN_BOUND_BYTES = 1_024
"""Smallest ``max_result_bytes`` / ``max_turn_bytes`` accepted (UTF-8 bytes)."""

_THREAD_BYTES = 65_536
"""In async runs, results at least this large are firewalled in a worker thread (UTF-8
bytes, estimated from code points): smaller ones cost less than the thread hand-off."""


class CtxgateState(AgentState[Any]):
    """The agent state with the run's captured user request."""

    ctxgate_request: NotRequired[Annotated[str | None, PrivateStateAttr]]


class CtxgateMiddleware(AgentMiddleware[CtxgateState, Any, Any]):
    """Gate every tool call, firewall every result, bound what the graph persists.

    Args:
        gate: the :class:`~ctxgate.gate.ToolGate`; default the configured one
            (``ctxgate.App().gate``: the offline local model, loaded on the first call that
            needs it).
        archive: where large results (and the originals of cut ones) are stored; default the
            configured archive in ``CTXGATE_HOME`` (a broken one never blocks a result).
        firewall_policy: the firewall policy; default the configured one.
        firewall_tools: tool names whose large results are digested; ``None``: every tool.
        protected_reads: tool names never digested (explicit file reads).
        datasets: tool names shown whole up to ``verbatim_max_tokens`` (query results).
        on_deny: ``"message"`` (default): a refusal is an error ``ToolMessage`` and the run
            goes on; ``"raise"``: it raises :class:`~ctxgate.errors.ToolDenied`.
        max_result_bytes: bound of one result's content, UTF-8 bytes; default the
            configured ``[bound] max_bytes`` (1 MiB); ``0`` turns it off.
        max_turn_bytes: bound of the current turn's persisted record, UTF-8 bytes; default
            4 × ``max_result_bytes``; ``0`` turns it off.
        expand: add the ``expand`` tool (default ``True``).
    """

    state_schema = CtxgateState

    def __init__(
        self,
        gate: ToolGate | None = None,
        *,
        archive: Archive | None = None,
        firewall_policy: FirewallPolicy | None = None,
        firewall_tools: Sequence[str] | None = None,
        protected_reads: Sequence[str] = (),
        datasets: Sequence[str] = (),
        on_deny: OnDeny = "message",
        max_result_bytes: int | None = None,
        max_turn_bytes: int | None = None,
        expand: bool = True,
    ) -> None:
        super().__init__()
        if on_deny not in ("message", "raise"):
            raise ConfigError(f"on_deny must be 'message' or 'raise', got {on_deny!r}")
        given = configured(gate=gate, archive=archive, firewall_policy=firewall_policy,
                           load=max_result_bytes is None)
        gate, archive, firewall_policy = given.gate, given.archive, given.firewall_policy
        if max_result_bytes is None:
            max_result_bytes = given.config.bound.max_bytes
        if max_turn_bytes is None:
            max_turn_bytes = 4 * max_result_bytes
        for name, value in (("max_result_bytes", max_result_bytes),
                            ("max_turn_bytes", max_turn_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or \
                    (value != 0 and value < MIN_BOUND_BYTES):
                raise ConfigError(f"{name}={value!r}: use 0 (off) or a byte count of at least "
                                  f"{MIN_BOUND_BYTES} (a cut result keeps its marker, ~200 "
                                  "bytes, and some text)")
        self.gate = gate
        self.archive = archive
        self.gating = GateStep(gate=gate, on_deny=on_deny)
        self.results = ResultStep(
            firewall=ResultFirewall(archive=archive, policy=firewall_policy,
                                    firewalled=firewall_tools, protected_reads=protected_reads,
                                    datasets=datasets),
            max_result_bytes=max_result_bytes or None)
        self.turn_bound = TurnBound(max_bytes=max_turn_bytes, archive=archive) \
            if max_turn_bytes else None
        self._expand = expand_tool(archive) if expand else None
        self.tools = [self._expand] if self._expand is not None else []

    # ------------------------------------------------------------------ the run's request

    def before_agent(self, state: CtxgateState, runtime: Any) -> dict[str, Any] | None:
        """Capture the run's user request before anything can summarise it away."""
        self.gate.new_run()
        p = self.gate.policy
        markers = p.compaction_markers
        found = extract_user_request(
            gate_messages(state.get("messages") or (), markers[0] if markers else "[Summary]"),
            compaction_markers=markers, injected_prefixes=p.injected_prefixes,
            short_reply_chars=p.short_reply_chars)
        if found is None:
            return None  # keep what an earlier run captured
        return {REQUEST_KEY: found.text}

    # ------------------------------------------------------------------ tool calls

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Gate the call, run it, firewall and bound its result."""
        if self._expand is not None and request.tool is self._expand:
            return handler(request)  # reads back what this middleware archived: not gated
        refused = self.gating.judge(request.tool_call, request.state,
                                     resumable=resumable(_config(request)))
        if refused is not None:
            return refused
        result = handler(request)
        return self.results.apply(result, request.tool_call["name"],
                                  session_id=_thread_id(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """:meth:`wrap_tool_call` for async runs; large results are firewalled off the loop."""
        if self._expand is not None and request.tool is self._expand:
            return await handler(request)
        refused = await self.gating.ajudge(request.tool_call, request.state,
                                            resumable=resumable(_config(request)))
        if refused is not None:
            return refused
        result = await handler(request)
        name, session = request.tool_call["name"], _thread_id(request)
        if isinstance(result, ToolMessage) and _large(result.content):
            return await asyncio.to_thread(self.results.apply, result, name, session_id=session)
        return self.results.apply(result, name, session_id=session)

    # ------------------------------------------------------------------ persisted turn

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse | ExtendedModelResponse:
        """Bound the turn before the model sees it; the cut results replace theirs in state."""
        update = self.turn_bound.update(request.messages) if self.turn_bound else None
        if update is None:
            return handler(request)
        response = handler(request.override(messages=_replaced(request.messages, update)))
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | ExtendedModelResponse:
        """:meth:`wrap_model_call` for async runs."""
        update = self.turn_bound.update(request.messages) if self.turn_bound else None
        if update is None:
            return await handler(request)
        response = await handler(request.override(messages=_replaced(request.messages, update)))
        return ExtendedModelResponse(model_response=response, command=Command(update=update))


def _replaced(messages: Sequence[Any], update: dict[str, Any]) -> list[Any]:
    by_id = {m.id: m for m in update["messages"]}
    return [by_id.get(getattr(m, "id", None), m) for m in messages]


def _config(request: ToolCallRequest) -> dict[str, Any]:
    return getattr(request.runtime, "config", None) or {}


def _thread_id(request: ToolCallRequest) -> str | None:
    thread = (_config(request).get("configurable") or {}).get("thread_id")
    return str(thread) if thread is not None else None


def _large(content: Any) -> bool:
    if isinstance(content, str):
        return len(content) >= _THREAD_BYTES // 4
    return isinstance(content, list) and sum(
        len(b.get("text", "")) if isinstance(b, dict) else len(str(b)) for b in content
    ) >= _THREAD_BYTES // 4
