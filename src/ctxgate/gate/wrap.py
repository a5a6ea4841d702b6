"""Gate any Python callable tool: the gate runs last, on the arguments that will really run.

``@gated(gate)`` binds the call's arguments by the function's signature (defaults applied), lets
earlier middleware (``rewriters``) rewrite them, judges the result, and runs the function with
exactly the arguments judged. Hooks that run after approval (``after_approval``, e.g. a sandbox
path rewrite) may change them again; then the gate judges again, and a deny wins. A denial
raises :class:`~ctxgate.errors.ToolDenied` whose message is the reason for the model (see
:func:`~ctxgate.gate.verdict.render_denial` for an error tool result).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxgate.errors import ToolDenied
from ctxgate.gate.call import run_sync
from ctxgate.gate.gate import ToolCall, ToolGate, args_sha256

__all__ = ["ArgsHook", "gated"]

ArgsHook = Callable[[str, dict[str, Any]], dict[str, Any]]
"""``hook(tool, arguments)`` → the (possibly rewritten) arguments."""

def _value(source: Any) -> Any:
    return source() if callable(source) else source


def gated(
    gate: ToolGate,
    *,
    name: str | None = None,
    user_request: str | Callable[[], str | None] | None = None,
    conversation: Sequence[Mapping[str, Any]] | Callable[[], Sequence[Mapping[str, Any]]] | None = None,
    run_prompts: Sequence[str] = (),
    rewriters: Sequence[ArgsHook] = (),
    after_approval: Sequence[ArgsHook] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a sync or async function so every call passes the gate first.

    Args:
        gate: the tool gate.
        name: the tool name the gate sees (default the function's name).
        user_request: the request text, or a function returning it at call time.
        conversation: the messages, or a function returning them at call time.
        run_prompts: the run's own prompts.
        rewriters: middleware that may rewrite the arguments; all run before the gate.
        after_approval: hooks that run after the gate approved; a rewrite is judged again.

    Raises:
        ToolDenied: (from the wrapped function) the gate denied the call or it awaits approval.
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        tool = name or fn.__name__

        async def judge(args: dict[str, Any]) -> None:
            verdict = await gate.decide(
                ToolCall(tool=tool, arguments=args), user_request=_value(user_request),
                conversation=_value(conversation), run_prompts=run_prompts)
            if not verdict.allowed:
                raise ToolDenied(verdict.reason, verdict=verdict)

        async def judged(args: dict[str, Any]) -> dict[str, Any]:
            for hook in rewriters:
                args = hook(tool, copy.deepcopy(args))
            await judge(args)
            final = copy.deepcopy(args)
            for hook in after_approval:
                final = hook(tool, final)
            if args_sha256(final) != args_sha256(args):
                await judge(final)  # rewritten after approval: judge what will really run
            return final

        def bind(args: tuple, kwargs: dict) -> dict[str, Any]:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            return dict(bound.arguments)

        def call(fn_args: dict[str, Any]) -> Any:
            bound = inspect.BoundArguments(sig, fn_args)  # type: ignore[arg-type]
            return fn(*bound.args, **bound.kwargs)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                final = await judged(bind(args, kwargs))
                return await call(final)

            return async_wrapper

        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            final = run_sync(judged(bind(args, kwargs)))
            return call(final)

        return sync_wrapper

    return decorate
