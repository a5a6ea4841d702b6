"""Framework-independent glue that the three framework adapters (pydantic-ai, LangChain,
the OpenAI Agents SDK) share, so that each rule is computed in one place.

* :mod:`.judging` — one fail-closed gate decision (:func:`judge`, never raises) and the texts a
  refused call shows the model (:func:`denial_text`, :func:`declined_text`);
* :mod:`.results` — a tool's return value as the text the firewall reads, and the non-text
  parts (images, files) it keeps (:func:`result_parts`, :func:`result_text`);
* :mod:`.screening` — one per-tool firewall policy (protected reads, datasets, the tools that
  are firewalled) and the small-output rule (:class:`ResultFirewall`, :class:`Screened`);
* :mod:`.expand` — the ``expand`` tool's name, description, JSON schema and view;
* :mod:`.bounding` — one tool result cut to a byte bound with ctxgate's marker;
* :mod:`.defaults` — the gate, archive and firewall policy from the configuration when not given.

Nothing here imports a framework.
"""

from __future__ import annotations

from ctxgate.integrations._adapter.bounding import bound_result
from ctxgate.integrations._adapter.expand import (
    EXPAND_ARGUMENTS,
    EXPAND_DESCRIPTION,
    EXPAND_PARAMETERS,
    EXPAND_TOOL,
    expand_answer,
    expand_error,
    expand_view,
)
from ctxgate.integrations._adapter.judging import declined_text, denial_text, judge
from ctxgate.integrations._adapter.results import result_parts, result_text
from ctxgate.integrations._adapter.screening import THREAD_CHARS, ResultFirewall, Screened

__all__ = ["EXPAND_ARGUMENTS", "EXPAND_DESCRIPTION", "EXPAND_PARAMETERS", "EXPAND_TOOL",
           "THREAD_CHARS", "ResultFirewall", "Screened", "bound_result", "declined_text",
           "denial_text", "expand_answer", "expand_error", "expand_view", "judge", "result_parts", "result_text"]
