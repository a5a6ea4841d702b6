"""The one table from a ctxgate error to what each front end shows: an exit code for the CLI,
a result for MCP and the framework adapters.

:data:`ERROR_TABLE` holds one row per error class that differs from its parent; a class not
in it takes its nearest listed ancestor's row. The CLI (typer and the argparse fast paths)
prints :func:`cli_message` and exits :func:`exit_code`; an MCP tool call answers an error
result with :func:`mcp_error` (text and reason); a framework adapter returns
:func:`tool_error_text`. ``CtxgateError.exit_code`` reads the same table.

Standard library only (imported by the argparse fast paths).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxgate.errors import AmbiguousId, CtxgateError, EntryNotFound, GateError, UsageError

__all__ = [
    "ERROR_TABLE",
    "GATE_FAILED",
    "VERDICT_EXIT",
    "ErrorRow",
    "cli_message",
    "exit_code",
    "mcp_error",
    "report",
    "row",
    "tool_error_text",
]


@dataclass(frozen=True)
class ErrorRow:
    """What one kind of error becomes: ``exit_code`` for the CLI; for MCP an error result
    whose text is ``ErrorType: message`` and whose reason tag is ``mcp_reason``."""

    exit_code: int
    mcp_reason: str = "error"


ERROR_TABLE: dict[type[CtxgateError], ErrorRow] = {
    CtxgateError: ErrorRow(1),
    UsageError: ErrorRow(2),  # bad selector, regex, option value or configuration
    EntryNotFound: ErrorRow(2),  # unknown, expired or purged id: a caller mistake
    AmbiguousId: ErrorRow(2),
    GateError: ErrorRow(1, mcp_reason="gate_unavailable"),  # the call is never run
}
"""Error class → :class:`ErrorRow`; the nearest listed ancestor decides."""

GATE_FAILED = "Tool gate: this call was not run"
"""What an MCP result says before the error when the gate could not judge the call."""

VERDICT_EXIT = {"allow": 0, "deny": 1, "ask": 3}
"""``gate check``'s exit status per verdict outcome (2 stays the usage error)."""


def row(exc: BaseException | type[BaseException]) -> ErrorRow:
    """The table row for ``exc`` (an instance or a class): its nearest listed ancestor."""
    kind = exc if isinstance(exc, type) else type(exc)
    for klass in kind.__mro__:
        if klass in ERROR_TABLE:
            return ERROR_TABLE[klass]  # type: ignore[index]
    return ERROR_TABLE[CtxgateError]


def exit_code(exc: BaseException | type[BaseException]) -> int:
    """The CLI exit status for ``exc``."""
    return row(exc).exit_code


def cli_message(exc: BaseException) -> str:
    """The CLI's one line on stderr: ``ctxgate: ErrorType: message``."""
    return f"ctxgate: {type(exc).__name__}: {exc}"


def report(exc: BaseException) -> int:
    """Print :func:`cli_message` on stderr and return :func:`exit_code` (the CLI's ending)."""
    import sys

    print(cli_message(exc), file=sys.stderr)
    return exit_code(exc)


def tool_error_text(exc: BaseException) -> str:
    """A failed tool call as a model reads it: ``ErrorType: message``."""
    return f"{type(exc).__name__}: {exc}"


def mcp_error(exc: BaseException, *, judging: bool = False) -> tuple[str, str]:
    """``(text, reason)`` of the MCP error result for ``exc``.

    ``judging``: the error came from the gate while it judged the call (the call was not
    run, whatever the error's kind), not from running or reading.
    """
    if judging:
        return f"{GATE_FAILED} ({exc})", ERROR_TABLE[GateError].mcp_reason
    return tool_error_text(exc), row(exc).mcp_reason
