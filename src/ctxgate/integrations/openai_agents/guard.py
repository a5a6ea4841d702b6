"""AgentGuard: one object that gates, firewalls and bounds an Agents SDK agent.

``AgentGuard()`` with no arguments uses ctxgate's configuration (``load_config()``): the
gate ``ctxgate.App`` builds (``[gate] backend``, default the offline local model; its
audit log), the archive in the ctxgate home, the ``[firewall]`` and ``[bound]`` policies.
``guard.agent(agent)`` returns a copy of the agent (``Agent.clone``) with every function tool
wrapped (:mod:`~ctxgate.integrations.openai_agents.tools`) and the ``expand`` tool added;
agents it hands off to (``Agent`` entries, and the receiver a ``Handoff`` returns when the run
takes it) are wrapped the same way. Tools the adapter cannot gate (hosted
tools, shell / computer / apply-patch tools, MCP servers) are refused with a
``ConfigError`` unless named in ``ungated``, so nothing runs ungated by accident.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any

from agents import Agent, FunctionTool, Handoff, handoff
from agents.memory import Session
from agents.run_context import RunContextWrapper

from ctxgate.errors import ConfigError
from ctxgate.integrations._adapter import ResultFirewall
from ctxgate.integrations._adapter.defaults import configured
from ctxgate.integrations.openai_agents.gating import CallGating, OnDeny
from ctxgate.integrations.openai_agents.session import BoundedSession
from ctxgate.integrations.openai_agents.tools import expand_tool, wrap_tool

__all__ = ["AgentGuard"]


class AgentGuard:
    """Gate, firewall and bound an agent's tools.

    Args:
        gate: a :class:`~ctxgate.gate.gate.ToolGate`; default ``ctxgate.App(config).gate``.
            ``False`` turns gating off (firewall and bound only).
        archive: where large results and cut originals go; default the home's archive
            (an archive that cannot be opened still lets every call run: results are then
            marked not archived).
        protected_reads: tool names that are explicit file reads: never digested.
        datasets: tool names whose results are datasets: verbatim up to
            ``verbatim_max_tokens``.
        firewalled: tool names whose large results are digested (default ``None``: every
            tool).
        on_deny: ``"reject"`` (the model gets the denial, the run goes on) or ``"raise"``.
        firewall: ``False`` turns the firewall off (and with it the ``expand`` tool).
        ungated: names of non-function tools (or MCP servers) allowed to run ungated.
        config: a :class:`ctxgate.settings.Config`; default ``load_config()``.
    """

    def __init__(
        self,
        *,
        gate: Any = None,
        archive: Any = None,
        protected_reads: Collection[str] = (),
        datasets: Collection[str] = (),
        firewalled: Collection[str] | None = None,
        on_deny: OnDeny = "reject",
        firewall: bool = True,
        ungated: Collection[str] = (),
        config: Any = None,
    ) -> None:
        given = configured(gate=gate, archive=archive, config=config, load=True)
        self.config = config = given.config
        gate, archive = given.gate, given.archive
        self.gating = CallGating(gate, on_deny=on_deny) if gate is not False else None
        self.archive = archive
        self.firewall = ResultFirewall(archive=archive, policy=given.firewall_policy,
                                       protected_reads=protected_reads, datasets=datasets,
                                       firewalled=firewalled) if firewall else None
        self.ungated = frozenset(ungated)
        self._wrapped: dict[int, tuple[Agent[Any], Agent[Any]]] = {}
        """``id(original)`` and ``id(wrapped)`` → ``(original, wrapped)``: each agent is
        wrapped once (handoff cycles, and handoff targets the run reaches later, get the same
        copy; a wrapped copy is never wrapped again)."""

    @property
    def gate(self) -> Any:
        """The tool gate (``None`` when gating is off)."""
        return self.gating.gate if self.gating is not None else None

    def tool(self, tool: FunctionTool) -> FunctionTool:
        """A gated, firewalled copy of one function tool."""
        return wrap_tool(tool, self.gating, self.firewall)

    def expand_tool(self) -> FunctionTool | None:
        """The ``expand`` tool over this guard's archive (``None`` without the firewall)."""
        return expand_tool(self.firewall) if self.firewall is not None else None

    def agent(self, agent: Agent[Any]) -> Agent[Any]:
        """A copy of ``agent`` (and of the agents it hands off to) with its tools wrapped.

        Raises:
            ConfigError: a tool or MCP server the adapter cannot gate and ``ungated`` does
                not name; a tool already named ``expand``.
        """
        return self._agent(agent)

    def _agent(self, agent: Agent[Any]) -> Agent[Any]:
        found = self._wrapped.get(id(agent))
        if found is not None and (found[0] is agent or found[1] is agent):
            return found[1]  # the original again, or already a wrapped copy
        tools: list[Any] = []
        refused: list[str] = []
        for tool in agent.tools:
            name = getattr(tool, "name", type(tool).__name__)
            if isinstance(tool, FunctionTool):
                if self.firewall is not None and name == self.firewall.expand_tool:
                    raise ConfigError(
                        f"agent {agent.name!r} already has a tool named {name!r}; ctxgate adds "
                        "its own expand tool: rename yours")
                tools.append(self.tool(tool))
            elif self.gating is None or name in self.ungated:
                tools.append(tool)
            else:
                refused.append(name)
        servers = [getattr(s, "name", repr(s)) for s in agent.mcp_servers]
        refused += [s for s in servers if self.gating is not None and s not in self.ungated]
        if refused:
            raise ConfigError(
                f"agent {agent.name!r} has tools ctxgate cannot gate: {sorted(refused)} (hosted, "
                "shell, computer or apply-patch tools, or MCP servers). Put MCP servers behind "
                "`ctxgate mcp proxy`, or name these in AgentGuard(ungated=...) to run them "
                "ungated")
        expand = self.expand_tool()
        if expand is not None:
            tools.append(expand)
        clone = agent.clone(tools=tools)
        # registered before the handoffs are wrapped: they may cycle back to this agent
        self._wrapped[id(agent)] = self._wrapped[id(clone)] = (agent, clone)
        if agent.handoffs:
            clone.handoffs = [self._handoff(h) for h in agent.handoffs]
        return clone

    def _handoff(self, target: Any) -> Any:
        """The handoff as a ``Handoff`` whose receiving agent is wrapped too, and which keeps
        the run's user request for the receiver (its input may hold it only inside an
        assistant summary: ``nest_handoff_history``)."""
        if isinstance(target, Agent):
            target = handoff(self._agent(target))
        if not isinstance(target, Handoff):
            return target
        invoke = target.on_invoke_handoff

        async def on_invoke_handoff(ctx: RunContextWrapper[Any], arguments: str) -> Any:
            if self.gating is not None:
                self.gating.remember_request(ctx)
            receiver = await invoke(ctx, arguments)
            return self._agent(receiver) if isinstance(receiver, Agent) else receiver

        return dataclasses.replace(target, on_invoke_handoff=on_invoke_handoff)

    def session(self, inner: Session, *, max_bytes: int | None = None) -> BoundedSession:
        """``inner`` with every stored batch bounded (originals of cuts in this archive)."""
        return BoundedSession(inner, max_bytes=max_bytes, archive=self.archive,
                              policy=self.config.bound)

