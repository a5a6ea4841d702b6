"""The gate on every function-tool call, mapped onto the SDK's own seams.

Per call the SDK first asks the tool's ``needs_approval`` policy, then runs its tool input
guardrails, then the tool. :class:`CallGating` puts the gate on both:

* ``needs_approval(ctx, params, call_id)`` judges the call (the arguments as the model sent
  them, the user request from ``ctx.turn_input``) and keeps the verdict for the guardrail.
  ``ask`` returns ``True``: the run stops with a ``ToolApprovalItem`` in
  ``result.interruptions``; ``state.approve(item)`` / ``state.reject(item)`` and
  ``Runner.run(agent, state)`` resume it. A policy the tool already had is kept: when it
  asks for approval, the call is interrupted too.
* the tool input guardrail applies the verdict: ``allow`` runs the tool; ``deny`` rejects
  the content — the model gets the denial as the call's output and the run goes on
  (``on_deny="raise"`` raises ``ToolInputGuardrailTripwireTriggered`` instead). After a
  person approved the call in the run state, the guardrail tells the gate
  (``gate.approve``) and the gate records an ``approved`` decision. A call the guardrail
  sees without a verdict (the SDK did not ask the policy) is judged there; an ``ask`` it
  cannot turn into an interruption is a denial.

Anything that goes wrong while judging denies (:func:`ctxgate.integrations._adapter.judge`).
"""

from __future__ import annotations

import inspect
import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Literal

from agents import ToolGuardrailFunctionOutput, ToolInputGuardrail, ToolInputGuardrailData
from agents.run_context import RunContextWrapper

from ctxgate.gate.call import ToolCall, args_sha256
from ctxgate.gate.gate import ToolGate
from ctxgate.gate.verdict import Verdict
from ctxgate.integrations._adapter import denial_text, judge
from ctxgate.integrations.openai_agents.conversation import conversation_from_items

__all__ = ["CallGating", "NeedsApproval", "OnDeny"]

OnDeny = Literal["reject", "raise"]
NeedsApproval = Callable[[RunContextWrapper[Any], dict[str, Any], str], Any]
"""The SDK's ``needs_approval`` callable: ``(run context, parsed arguments, call id)``."""

_KEPT_VERDICTS = 4096
"""Verdicts waiting for their guardrail (a rejected approval never collects its own)."""


class CallGating:
    """Judges function-tool calls for one :class:`~ctxgate.gate.gate.ToolGate`.

    Args:
        gate: the tool gate.
        on_deny: ``"reject"`` (default): a denial is the call's output and the run goes on;
            ``"raise"``: the guardrail trips and the run raises.
        conversation: turns the SDK's input items into the messages the gate reads.
    """

    def __init__(
        self,
        gate: ToolGate,
        *,
        on_deny: OnDeny = "reject",
        conversation: Callable[[Sequence[Any]], list[dict[str, Any]]] = conversation_from_items,
    ) -> None:
        if on_deny not in ("reject", "raise"):
            from ctxgate.errors import ConfigError

            raise ConfigError(f"on_deny is {on_deny!r}; use 'reject' or 'raise'")
        self.gate = gate
        self.on_deny: OnDeny = on_deny
        self.conversation = conversation
        self._verdicts: OrderedDict[tuple[int, str, str], tuple[str, Verdict]] = OrderedDict()
        self._run = 0
        self._prompts: OrderedDict[int, str] = OrderedDict()
        """The user request seen at a handoff, per run: the run's prompt when the receiving
        agent's input no longer holds it as a user message (``nest_handoff_history``)."""
        """``id()`` of the current run's ``Usage``: the run context and every ``ToolContext``
        made from it share that one object, so it tells runs (and concurrent runs) apart."""

    async def decide(self, ctx: RunContextWrapper[Any], tool: str, arguments: Any,
                     call_id: str) -> Verdict:
        """Judge one call against the user request in ``ctx.turn_input`` (fail closed).

        The first call of a new run resets the gate's denial counters (``gate.new_run()``),
        so escalation ("stop calling tools and ask") counts denials per run, not per process.
        """
        run = id(ctx.usage)
        if run != self._run:
            self._run = run
            self.gate.new_run()
        prompt = self._prompts.get(run)
        return await judge(self.gate, ToolCall(tool=tool, arguments=arguments, call_id=call_id),
                           conversation=self.conversation(ctx.turn_input),
                           run_prompts=[prompt] if prompt else [])

    def remember_request(self, ctx: RunContextWrapper[Any]) -> None:
        """Keep this run's user request as it stands now (called when a handoff is taken).

        A receiving agent may get the history as one assistant summary
        (``RunConfig(nest_handoff_history=True)``); the request kept here is then the run's
        prompt (the gate's rule 4: used only when its conversation holds no request).
        """
        from ctxgate.gate.request import extract_user_request

        p = self.gate.policy
        found = extract_user_request(self.conversation(ctx.turn_input),
                                     compaction_markers=p.compaction_markers,
                                     injected_prefixes=p.injected_prefixes,
                                     short_reply_chars=p.short_reply_chars)
        if found is None:
            return  # keep what an earlier handoff of this run saw
        run = id(ctx.usage)
        self._prompts.pop(run, None)
        self._prompts[run] = found.text
        while len(self._prompts) > _KEPT_VERDICTS:
            self._prompts.popitem(last=False)

    def needs_approval(self, tool: str, previous: bool | NeedsApproval = False) -> NeedsApproval:
        """The ``needs_approval`` policy of ``tool``: ``True`` when the gate's outcome is ask."""

        async def policy(ctx: RunContextWrapper[Any], params: dict[str, Any],
                         call_id: str) -> bool:
            if previous is True:
                return True
            if callable(previous):
                wanted = previous(ctx, params, call_id)
                if inspect.isawaitable(wanted):
                    wanted = await wanted
                if wanted:
                    return True
            verdict = await self.decide(ctx, tool, params, call_id)
            self._keep(ctx, tool, call_id, params, verdict)
            return verdict.outcome == "ask"

        return policy

    def guardrail(self, tool: str) -> ToolInputGuardrail[Any]:
        """The tool input guardrail of ``tool`` that applies (or makes) the verdict."""

        async def ctxgate_gate(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
            ctx = data.context
            call_id = ctx.tool_call_id
            try:
                arguments = json.loads(ctx.tool_arguments or "{}")
            except ValueError as exc:
                return self._refuse(Verdict(
                    outcome="deny", code="unserializable", tool=tool,
                    reason=(f"Tool gate: this call's arguments are not valid JSON ({exc}); "
                            "send the arguments as one JSON object.")))
            verdict = self._take(ctx, tool, call_id, arguments)
            if ctx.is_tool_approved(tool, call_id) is True:
                # a person approved this exact call in the run state: the gate records it
                self.gate.approve(ToolCall(tool=tool, arguments=arguments, call_id=call_id))
                verdict = None
            if verdict is None:
                verdict = await self.decide(ctx, tool, arguments, call_id)
            if verdict.allowed:
                return ToolGuardrailFunctionOutput.allow(output_info=verdict)
            return self._refuse(verdict)

        return ToolInputGuardrail(guardrail_function=ctxgate_gate, name="ctxgate_gate")

    def _refuse(self, verdict: Verdict) -> ToolGuardrailFunctionOutput:
        if self.on_deny == "raise":
            return ToolGuardrailFunctionOutput.raise_exception(output_info=verdict)
        return ToolGuardrailFunctionOutput.reject_content(denial_text(verdict),
                                                          output_info=verdict)

    def _keep(self, ctx: RunContextWrapper[Any], tool: str, call_id: str, arguments: Any,
              verdict: Verdict) -> None:
        key = (id(ctx.usage), tool, call_id)
        self._verdicts.pop(key, None)
        self._verdicts[key] = (_digest(arguments), verdict)
        while len(self._verdicts) > _KEPT_VERDICTS:
            self._verdicts.popitem(last=False)

    def _take(self, ctx: RunContextWrapper[Any], tool: str, call_id: str,
              arguments: Any) -> Verdict | None:
        """The verdict the policy made for this exact call in this run, if any (used once)."""
        kept = self._verdicts.pop((id(ctx.usage), tool, call_id), None)
        if kept is None or kept[0] != _digest(arguments):
            return None  # judged other arguments than the ones about to run: judge again
        return kept[1]


def _digest(arguments: Any) -> str:
    try:
        return args_sha256(arguments)
    except (TypeError, ValueError):
        return ""
