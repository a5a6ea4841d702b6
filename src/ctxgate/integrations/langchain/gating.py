"""The gate on one LangChain tool call, its verdict mapped onto LangGraph.

``allow`` → the call runs. ``deny`` → a ``ToolMessage`` with ``status="error"`` carrying the
gate's reason, so the run goes on (or :class:`~ctxgate.errors.ToolDenied` raised, when
configured). ``ask`` → a LangGraph ``interrupt`` whose value has the shape of LangChain's
per-call human-in-the-loop request (``{"type": "tool_approval", "tool_call_id", "name",
"args", "description"}``); resume with ``Command(resume={"type": "approve"})`` or
``{"type": "reject", "message": "…"}`` (keyed by the interrupt id when several are pending).
An approval lets this exact call run once (``ToolGate.approve``). A graph without a
checkpointer cannot resume, so there an ask is refused like a deny. Any failure of the gate
itself denies (:func:`ctxgate.integrations._adapter.judge`): the gate fails closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain.agents.middleware.human_in_the_loop import ApproveDecision, RejectDecision
from langchain_core.messages import ToolMessage
from langgraph.types import interrupt
from pydantic import Discriminator

from ctxgate.errors import ToolDenied
from ctxgate.gate import ToolCall, ToolGate, Verdict
from ctxgate.integrations._adapter import declined_text, denial_text, judge
from ctxgate.integrations.langchain.messages import gate_messages

__all__ = ["APPROVAL_SCHEMA", "REQUEST_KEY", "GateStep", "OnDeny", "approval_request", "refusal",
           "resumable"]

OnDeny = Literal["message", "raise"]
"""``"message"``: a denial is an error ``ToolMessage`` the model reads; ``"raise"``: it raises
:class:`~ctxgate.errors.ToolDenied` (the run stops)."""

APPROVAL_SCHEMA = Annotated[ApproveDecision | RejectDecision, Discriminator("type")]
"""The answers an ask interrupt accepts (LangGraph validates the resume value against it)."""

_CHECKPOINTER_KEY = "__pregel_checkpointer"
"""Where LangGraph puts the run's checkpointer in a task's config (``CONFIG_KEY_CHECKPOINTER``)."""

REQUEST_KEY = "ctxgate_request"
"""State key holding the run's user request, captured before the first model call."""


def refusal(text: str, call: Mapping[str, Any], code: str) -> ToolMessage:
    """The error ``ToolMessage`` a refused call returns instead of its result."""
    return ToolMessage(content=text, name=call.get("name"), tool_call_id=call.get("id") or "",
                       status="error", response_metadata={"ctxgate": {"gate": code}})


def approval_request(call: Mapping[str, Any], verdict: Verdict) -> dict[str, Any]:
    """The interrupt value of an asked call (LangChain's per-call approval request shape)."""
    return {"type": "tool_approval", "tool_call_id": call.get("id") or "",
            "name": call.get("name", ""), "args": dict(call.get("args") or {}),
            "description": verdict.reason, "source": "ctxgate",
            "args_sha256": verdict.args_sha256}


@dataclass(frozen=True, kw_only=True)
class GateStep:
    """Judge one call from the agent state; returns ``None`` (run it) or the refusal."""

    gate: ToolGate
    on_deny: OnDeny = "message"

    def conversation(self, state: Any) -> tuple[list[dict[str, Any]], list[str]]:
        """The state's messages for the gate, and the run's captured request."""
        messages: Sequence[Any] = ()
        captured = None
        if isinstance(state, Mapping):
            messages = state.get("messages") or ()
            captured = state.get(REQUEST_KEY)
        markers = self.gate.policy.compaction_markers
        marker = markers[0] if markers else "[Context compacted]"
        prompts = [captured] if isinstance(captured, str) and captured.strip() else []
        return gate_messages(messages, marker), prompts

    def _call(self, call: Mapping[str, Any]) -> ToolCall:
        return ToolCall(tool=str(call.get("name", "")), arguments=call.get("args") or {},
                        call_id=str(call.get("id") or ""))

    def judge(self, call: Mapping[str, Any], state: Any, *,
              resumable: bool = True) -> ToolMessage | None:
        """The synchronous gate step (``invoke``/``stream``).

        ``resumable``: the graph has a checkpointer, so an ask can pause it; without one an
        ask is refused like a deny (the reason says how a person can approve the call).
        """
        tool_call = self._call(call)
        conversation, prompts = self.conversation(state)
        verdict = _run(judge(self.gate, tool_call, conversation=conversation,
                             run_prompts=prompts))
        if verdict.outcome == "ask" and resumable:
            answer = self._asked(call, tool_call, verdict)
            if isinstance(answer, ToolMessage):
                return answer
            verdict = _run(judge(self.gate, tool_call, conversation=conversation,
                                 run_prompts=prompts))
        return self._verdict(verdict, call)

    async def ajudge(self, call: Mapping[str, Any], state: Any, *,
                     resumable: bool = True) -> ToolMessage | None:
        """The asynchronous gate step (``ainvoke``/``astream``); see :meth:`judge`."""
        tool_call = self._call(call)
        conversation, prompts = self.conversation(state)
        verdict = await judge(self.gate, tool_call, conversation=conversation,
                              run_prompts=prompts)
        if verdict.outcome == "ask" and resumable:
            answer = self._asked(call, tool_call, verdict)
            if isinstance(answer, ToolMessage):
                return answer
            verdict = await judge(self.gate, tool_call, conversation=conversation,
                                  run_prompts=prompts)
        return self._verdict(verdict, call)

    def _verdict(self, verdict: Verdict, call: Mapping[str, Any]) -> ToolMessage | None:
        if verdict.allowed:
            return None
        return self._refuse(denial_text(verdict), call, verdict.code, verdict)

    def _asked(self, call: Mapping[str, Any], tool_call: ToolCall,
               verdict: Verdict) -> Verdict | ToolMessage:
        """Pause for a person (first pass) or apply their answer (after the resume)."""
        decision = interrupt(approval_request(call, verdict), response_schema=APPROVAL_SCHEMA)
        if isinstance(decision, Mapping) and decision.get("type") == "approve":
            self.gate.approve(tool_call)  # this exact call, once; decided again by the caller
            return verdict
        message = decision.get("message") if isinstance(decision, Mapping) else None
        return self._refuse(declined_text(tool_call.tool, message), call, "declined", verdict)

    def _refuse(self, text: str, call: Mapping[str, Any], code: str,
                verdict: Verdict | None) -> ToolMessage:
        if self.on_deny == "raise":
            raise ToolDenied(text, verdict=verdict)
        return refusal(text, call, code)


def _run(coro: Coroutine[Any, Any, Verdict]) -> Verdict:
    """Run the gate's coroutine from synchronous code, on a loop of this thread's own.

    LangGraph runs each synchronous tool call in a worker thread without an event loop. A
    bare loop (no ``asyncio.run`` executor or async-generator shutdown) costs ~0.1 ms and no
    thread hand-off, which on a loaded machine costs more than the loop; parallel calls decide
    in their own threads. A thread that already runs a loop hands the coroutine to a worker
    thread instead (:func:`ctxgate.gate.call.run_sync`). The gate's own timeout bounds both.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(coro)
        finally:
            loop.close()
    from ctxgate.gate.call import run_sync

    return run_sync(coro)


def resumable(config: Mapping[str, Any] | None) -> bool:
    """Whether the run that ``config`` belongs to has a checkpointer (an interrupt can resume)."""
    configurable = (config or {}).get("configurable") or {}
    return configurable.get(_CHECKPOINTER_KEY) is not None
