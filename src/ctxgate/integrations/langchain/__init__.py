"""LangChain v1 / LangGraph adapter: gate, firewall and bound as agent middleware.

``create_agent(model, tools, middleware=[CtxgateMiddleware()], checkpointer=InMemorySaver())``
gates every tool call against the run's user request (deny → an error ``ToolMessage``; ask →
a LangGraph ``interrupt`` resumed with ``Command(resume={"type": "approve"})``), digests large
results (the added ``expand`` tool reads them back) and bounds what the graph persists. Needs
the ``langchain`` extra; see ``docs/langchain.md``.
"""

from __future__ import annotations

from ctxgate.integrations.langchain.expand import EXPAND_SCHEMA, expand_tool
from ctxgate.integrations.langchain.gating import APPROVAL_SCHEMA, approval_request
from ctxgate.integrations.langchain.middleware import CtxgateMiddleware, CtxgateState

__all__ = ["APPROVAL_SCHEMA", "EXPAND_SCHEMA", "CtxgateMiddleware", "CtxgateState",
           "approval_request", "expand_tool"]
