"""Whether a shell call already ran through ``ctxgate run``, decided with built-in modules only.

The pre-hook rewrites a shell call's output-producing parts into ``ctxgate run`` (see
:func:`ctxgate.integrations.hooks.handlers.wrap_shell_command`), which digests and archives
their output itself; the ``PostToolUse`` hook of such a call has nothing to do.
:func:`skip_post` answers that from the raw payload with the C JSON scanner (:mod:`ctxgate._jsonc`; no ``json``,
``re``, ``site``, settings or daemon round trip), so ``python -S …/_launch.py hook post``
ends within the interpreter's start-up for every wrapped call. Anything it cannot read, or
any other call, goes on to the full ``hook post``, which makes the same check again.
"""

from __future__ import annotations

__all__ = ["SHELL_TOOLS", "is_wrapped", "skip_post"]

SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell"})
"""Harness tool names (lowercased) whose ``command`` is a shell string (a test holds this
equal to ``handlers.SHELL_TOOLS``)."""

_MARKERS = (
    "/ctxgate/_launch.py run ",
    "/ctxgate/_launch.py' run ",
    "\\ctxgate\\_launch.py run ",
    "\\ctxgate\\_launch.py' run ",
    " -m ctxgate run ",
)


def is_wrapped(command: str) -> bool:
    """Whether ``command`` contains a ``ctxgate run`` that the pre-hook wrote (or starts with
    ``ctxgate run``)."""
    return command.lstrip().startswith("ctxgate run ") or any(m in command for m in _MARKERS)


def skip_post(raw: bytes) -> bool:
    """Whether the ``PostToolUse`` payload ``raw`` is a shell call that already ran wrapped."""
    if b"ctxgate" not in raw:
        return False
    try:
        from ctxgate._jsonc import loads

        data = loads(raw.decode("utf-8"))
    except Exception:  # noqa: BLE001 - malformed: the full hook reports it
        return False
    if not isinstance(data, dict) or data.get("hook_event_name") != "PostToolUse":
        return False
    tool = data.get("tool_name")
    tool_input = data.get("tool_input")
    if (
        not isinstance(tool, str)
        or tool.lower() not in SHELL_TOOLS
        or not isinstance(tool_input, dict)
    ):
        return False
    command = tool_input.get("command")
    return isinstance(command, str) and is_wrapped(command)
