"""One fail-closed gate decision for every adapter, and the texts a refused call shows.

:func:`judge` never raises: an exception anywhere in the decision (a decision model that
cannot even be built, a bug) is a ``deny`` with code ``backend_error``, and a hang past the
adapter's deadline one with code ``timeout``. The model reads :func:`denial_text` for a denied
(or asked and unanswered) call and :func:`declined_text` when a person declined it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxgate.gate import ToolCall, ToolGate, Verdict

__all__ = ["declined_text", "denial_text", "judge"]

log = logging.getLogger("ctxgate.integrations")
log.addHandler(logging.NullHandler())


async def judge(
    gate: ToolGate,
    call: ToolCall,
    *,
    conversation: Sequence[Mapping[str, Any]] | None = (),
    run_prompts: Sequence[str] = (),
    deadline: float | None = None,
) -> Verdict:
    """The gate's verdict on ``call``; never raises (fail closed).

    Args:
        gate: the tool gate.
        call: the tool and the JSON arguments that will run.
        conversation: OpenAI-shaped messages, oldest first (see :mod:`ctxgate.gate.request`).
        run_prompts: this run's own prompts.
        deadline: seconds for the whole decision, model loading included (``None``: only the
            gate's own backend timeout applies). Past it the call is denied (``timeout``); a
            step that blocks the event loop (loading the local model) is not interrupted, so
            the deny then comes when it ends.

    Returns:
        The verdict. ``ToolGate.decide`` already denies on backend errors, timeouts and
        unusable answers; an exception it raises (a backend that cannot be built, a bug) is a
        deny with code ``backend_error``, a timeout one with code ``timeout``.
    """
    from ctxgate.errors import DecisionTimeout
    from ctxgate.gate import reasons
    from ctxgate.gate.verdict import Verdict

    try:
        decision = gate.decide(call, conversation=conversation, run_prompts=run_prompts)
        if deadline is None:
            return await decision
        return await asyncio.wait_for(decision, deadline)
    except TimeoutError:
        after = f" after {deadline:g} s" if deadline is not None else ""
        code, reason = reasons.failure(DecisionTimeout(f"timed out{after}"))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - fail closed: never run a call that was not judged
        log.warning("tool gate could not judge a call to %s: %s", call.tool, exc)
        code, reason = "backend_error", (
            f"Tool gate: this call was not run because the gate could not judge it "
            f"({type(exc).__name__}: {exc}). The gate fails closed; ask the user how to "
            "proceed.")
    return Verdict(outcome="deny", code=code, reason=reason, tool=call.tool)


def denial_text(verdict: Verdict) -> str:
    """What the model reads for a denied (or asked, unanswered) call: ``Error: Tool gate: …``
    (the gate's reason, which says what would let the call run), as
    :func:`ctxgate.gate.render_denial` renders it."""
    from ctxgate.gate.verdict import render_denial

    return str(render_denial(verdict)["content"])


def declined_text(tool: str, message: str | None = None) -> str:
    """What the model reads when a person declined an asked call (with their reason)."""
    why = f" Their reason: {message}" if message else ""
    return (f"Error: Tool gate: a person declined this call to `{tool}`; it was not run.{why} "
            "Do not retry it; continue without it or ask the user what to do instead.")
