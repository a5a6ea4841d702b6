"""OpenAI Agents SDK adapter ([openai-agents] extra): gate, firewall and bound an agent's tools.

``AgentGuard().agent(agent)`` returns a copy of ``agent`` whose function tools are judged by
the tool gate before they run (a denial is a tool input guardrail rejecting the call, an
``ask`` is the SDK's approval interruption), whose large results are archived and replaced by
a digest, and which has an ``expand`` tool to read any part back. ``AgentGuard().session(s)``
bounds what a session persists. See ``docs/openai-agents.md``.
"""

from __future__ import annotations

try:
    import agents  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the OpenAI Agents SDK adapter needs the openai-agents package: "
        "pip install 'ctxgate[openai-agents]'"
    ) from exc

from ctxgate.integrations.openai_agents.conversation import conversation_from_items
from ctxgate.integrations.openai_agents.gating import CallGating
from ctxgate.integrations.openai_agents.guard import AgentGuard
from ctxgate.integrations.openai_agents.session import BoundedSession, bound_items

__all__ = ["AgentGuard", "BoundedSession", "CallGating", "bound_items", "conversation_from_items"]
