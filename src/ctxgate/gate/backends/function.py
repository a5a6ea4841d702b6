"""FunctionDecisionModel: a decision backend made from a Python function.

The test double shipped as a real backend: unit tests script answers with it, and users can
put their own rules behind the gate (a lookup table, a regex policy, a call to a service they
already have). The function receives the state and the questions and returns one
:class:`~ctxgate.gate.backends.base.Answer` per question — or, for brevity, a mapping
``{question_id: p}``. It may be a plain function or a coroutine function.

A plain function runs in a worker thread, so the gate's timeout still bounds it when it
blocks (the thread itself cannot be killed; it is abandoned). Whatever the function raises
becomes a :class:`~ctxgate.errors.DecisionModelError`, which the gate turns into a deny.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxgate.errors import DecisionModelError
from ctxgate.gate.backends.base import Answer, Capabilities, Question

__all__ = ["AnswerFunction", "FunctionDecisionModel"]

AnswerFunction = Callable[[Mapping[str, Any], Sequence[Question]], Any]
"""``fn(state, questions)`` → answers (a sequence of ``Answer`` or ``{id: p}``), maybe awaitable."""


async def _in_daemon_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn`` in a daemon thread: a timed-out call is abandoned, and nothing (not even
    ``asyncio.run``'s executor shutdown) waits for it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def run() -> None:
        try:
            value, ok = fn(*args), True
        except BaseException as exc:  # handed to the awaiting coroutine
            value, ok = exc, False
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    threading.Thread(target=run, name="ctxgate-decision-fn", daemon=True).start()
    return await future


@dataclass(kw_only=True)
class FunctionDecisionModel:
    """A :class:`~ctxgate.gate.backends.base.DecisionModel` that calls ``fn``.

    Args:
        fn: ``fn(state, questions)`` returning a sequence of ``Answer`` or a mapping
            ``{question_id: probability}``; sync or async.
        model_id: the id recorded in the audit log.
        capabilities: what to declare; by default any noul question, no size limits.

    Attributes:
        calls: every ``(state, questions)`` it was asked, in order (for tests).
    """

    fn: AnswerFunction
    model_id: str = "function"
    capabilities: Capabilities = None  # type: ignore[assignment]
    threaded: bool = True
    """Run a plain (sync) ``fn`` in a worker thread so a timeout can abandon it."""
    calls: list[tuple[Mapping[str, Any], tuple[Question, ...]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.capabilities is None:
            self.capabilities = Capabilities(model_id=self.model_id)

    async def evaluate(
        self, state: Mapping[str, Any], questions: Sequence[Question]
    ) -> Sequence[Answer]:
        """Call ``fn`` and normalise what it returns into answers.

        Raises:
            DecisionModelError: ``fn`` raised (the original exception is chained).
        """
        qs = tuple(questions)
        self.calls.append((state, qs))
        try:
            if inspect.iscoroutinefunction(self.fn):
                result = await self.fn(state, qs)
            elif self.threaded:
                result = await _in_daemon_thread(self.fn, state, qs)
            else:
                result = self.fn(state, qs)
            if inspect.isawaitable(result):
                result = await result
        except DecisionModelError:
            raise
        except Exception as exc:
            raise DecisionModelError(
                f"decision function {self.model_id!r} raised {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(result, Mapping):
            return [
                Answer(question_id=str(k), p=v, model_id=self.model_id) for k, v in result.items()
            ]
        return result
