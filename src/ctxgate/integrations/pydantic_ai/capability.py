"""Ctxgate: the pydantic-ai capability that puts the gate and the firewall on an agent's tools.

``Agent(model, capabilities=[Ctxgate()])`` is the whole setup. Per run it

* wraps the agent's assembled (non-output) toolset in a :class:`.toolset.GatedToolset`
  (``get_wrapper_toolset``): every call of a function tool or of any other toolset (MCP
  toolsets included) is gated before it runs
  and its result firewalled; output tools (the run's final answer) are not tool calls and
  are left alone;
* adds the ``expand`` tool (``get_toolset``), so the model can read any archived output back;
* starts the gate's denial counters afresh (``before_run``).

With no arguments it uses ctxgate's configuration (``CTXGATE_HOME``, the config file): the
gate :class:`ctxgate.App` builds (the offline local model by default, loaded on the first
call that needs it, with the audit log), and the archive in the
home. Pass ``gate=``/``archive=`` to use your own. List it last among the capabilities so
that it wraps innermost and judges the arguments that will really run.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.toolsets import AbstractToolset

from ctxgate.archive import Archive
from ctxgate.firewall import FirewallPolicy
from ctxgate.gate import ToolGate, Verdict
from ctxgate.integrations._adapter import EXPAND_TOOL, ResultFirewall, denial_text
from ctxgate.integrations._adapter.defaults import configured
from ctxgate.integrations.pydantic_ai.expand import ExpandToolset, expand_toolset
from ctxgate.integrations.pydantic_ai.toolset import DenyMode, GatedToolset

__all__ = ["Ctxgate"]


@dataclass
class Ctxgate(AbstractCapability[Any]):
    """Gate, firewall and ``expand`` for every tool of a pydantic-ai agent.

    Args:
        gate: the tool gate (default: built from ctxgate's configuration).
        archive: where large results are archived (default: the home's archive).
        firewall_policy: thresholds and digest budget (default: the configuration's).
        protected_reads: tool names whose output is never digested (explicit file reads).
        datasets: tool names whose output is verbatim up to ``verbatim_max_tokens``.
        firewalled: tool names digested when large (default ``None``: every other tool).
        on_deny: ``"tool_failed"`` (a failed tool result; the run goes on), ``"retry"`` (a
            retry prompt, spending the tool's retries) or ``"raise"`` (``ToolDenied``).
        deadline: seconds for a whole gate decision, model loading included (``None``: the
            gate's own backend timeout, ``[gate] timeout_seconds``); past it the call is denied
            (a blocking step such as loading the local model is not interrupted: the deny
            comes when it ends).
        expand_tool: the name of the added expand tool.
        on_ask: ``"auto"`` (default): an ``ask`` pauses the run with ``DeferredToolRequests``
            when the agent's output types include it, and is otherwise denied with the gate's
            reason (the run goes on; an agent that cannot pause would fail with a
            ``UserError``); ``"defer"``: always pause; ``"deny"``: never pause.
    """

    gate: ToolGate | None = None
    archive: Archive | None = None
    firewall_policy: FirewallPolicy | None = None
    protected_reads: Collection[str] = ()
    datasets: Collection[str] = ()
    firewalled: Collection[str] | None = None
    on_deny: DenyMode = "tool_failed"
    deadline: float | None = None
    expand_tool: str = EXPAND_TOOL
    on_ask: Literal["auto", "defer", "deny"] = "auto"
    _expand: ExpandToolset = field(init=False, repr=False)
    _firewall: ResultFirewall = field(init=False, repr=False)

    def __post_init__(self) -> None:
        given = configured(gate=self.gate, archive=self.archive,
                           firewall_policy=self.firewall_policy)
        self.gate, self.archive = given.gate, given.archive
        self.firewall_policy = given.firewall_policy
        self._firewall = ResultFirewall(
            archive=self.archive, policy=self.firewall_policy,
            protected_reads=self.protected_reads, datasets=self.datasets,
            firewalled=self.firewalled, expand_tool=self.expand_tool)
        self._expand = expand_toolset(self.archive, name=self.expand_tool)
        GatedToolset(self._expand, gate=self.gate, on_deny=self.on_deny)  # validates the options
        if self.on_ask not in ("auto", "defer", "deny"):
            raise ValueError(f"on_ask={self.on_ask!r}; use 'auto', 'defer' or 'deny'")

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a gate and an archive: not spec-serializable

    def get_toolset(self) -> AbstractToolset[Any]:
        return self._expand

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        assert self.gate is not None and self.archive is not None
        assert self.firewall_policy is not None
        return GatedToolset(toolset, gate=self.gate, firewall=self._firewall,
                            on_deny=self.on_deny, deadline=self.deadline)

    async def before_run(self, ctx: RunContext[Any]) -> None:
        assert self.gate is not None
        self.gate.new_run()

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests,
    ) -> DeferredToolResults | None:
        """The gate's asks this run cannot pause for, denied with the gate's reason."""
        ours = {c.tool_call_id: requests.metadata[c.tool_call_id]["ctxgate"]
                for c in requests.approvals
                if "ctxgate" in (requests.metadata.get(c.tool_call_id) or {})}
        if not ours or self.on_ask == "defer" or (self.on_ask == "auto" and _can_pause(ctx)):
            return None
        return requests.build_results(approvals={
            call_id: ToolDenied(denial_text(Verdict(
                outcome="ask", code=str(info.get("code") or "ask"), tool=str(info.get("tool")),
                reason=str(info.get("reason") or _CANNOT_PAUSE))))
            for call_id, info in ours.items()})


_CANNOT_PAUSE = "Tool gate: this call needs a person's approval, and this run cannot ask for it."


def _can_pause(ctx: RunContext[Any]) -> bool:
    """Whether the agent's output types include ``DeferredToolRequests``."""
    output = getattr(ctx.agent, "output_type", None)
    types = output if isinstance(output, Sequence) and not isinstance(output, str) else [output]
    return any(t is DeferredToolRequests for t in types)
