"""pydantic-ai adapter: gate every tool call, firewall every result, bound the message history.

``Agent(model, capabilities=[Ctxgate()])`` (:mod:`.capability`) wraps the agent's toolset in
:class:`GatedToolset` (:mod:`.toolset`: deny → a failed tool result, ask → deferred approval)
and adds the ``expand`` tool (:mod:`.expand`); :func:`bound_messages` (:mod:`.history`) trims
oversized tool results in a history to persist, and :class:`BoundedConversationStore`
(:mod:`.store`) does it for every message a ``ConversationStore`` writes. The user request comes from the run's own
message history (:mod:`.messages`). Needs the ``pydantic-ai`` extra; see
``docs/pydantic-ai.md``.
"""

from __future__ import annotations

from ctxgate.integrations.pydantic_ai.capability import Ctxgate
from ctxgate.integrations.pydantic_ai.expand import ExpandToolset, expand_toolset
from ctxgate.integrations.pydantic_ai.history import BoundedMessages, bound_messages
from ctxgate.integrations.pydantic_ai.messages import gate_conversation
from ctxgate.integrations.pydantic_ai.store import BoundedConversationStore
from ctxgate.integrations.pydantic_ai.toolset import DenyMode, GatedToolset

__all__ = ["BoundedConversationStore", "BoundedMessages", "Ctxgate", "DenyMode", "ExpandToolset", "GatedToolset",
           "bound_messages", "expand_toolset", "gate_conversation"]
