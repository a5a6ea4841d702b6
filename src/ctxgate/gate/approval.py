"""Approval hooks for the ask outcome: a person may let one denied call run.

An approver receives an :class:`~ctxgate.gate.gate.ApprovalRequest` and returns ``True``
(run this exact call once), ``False`` (declined) or ``None`` (cannot ask now: the verdict is
``ask`` and the host should ask the user, then call :meth:`ToolGate.approve` and retry). An
approval binds to the sha256 of the canonical arguments, so a changed argument is judged anew.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from ctxgate.gate.gate import ApprovalRequest

__all__ = ["prompt_approver"]

_PREVIEW_CHARS = 2_000


def prompt_approver(
    *,
    input_fn: Callable[[str], str] = input,
    stream: TextIO | None = None,
    interactive: Callable[[], bool] | None = None,
) -> Callable[[ApprovalRequest], bool | None]:
    """An approver that asks on the terminal: ``Run this exact call once? [y/N]``.

    Args:
        input_fn: reads the answer (default :func:`input`).
        stream: where the call and the gate's reason are shown (default stderr).
        interactive: whether a person is there to ask (default: stdin is a TTY); when not,
            the approver returns ``None`` and the verdict stays ``ask``.
    """

    def approve(req: ApprovalRequest) -> bool | None:
        out = stream or sys.stderr
        is_tty = interactive() if interactive is not None else sys.stdin.isatty()
        if not is_tty:
            return None
        import json

        args = json.dumps(req.call.arguments, ensure_ascii=False, indent=2, default=repr)
        if len(args) > _PREVIEW_CHARS:
            args = args[:_PREVIEW_CHARS] + f"\n… ({len(args) - _PREVIEW_CHARS} more characters)"
        print(f"ctxgate: the gate stopped a call to {req.call.tool!r}:\n{args}\n"
              f"{req.verdict.reason}\nargs sha256 {req.args_sha256}", file=out)
        try:
            answer = input_fn("Run this exact call once? [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in ("y", "yes")

    return approve
