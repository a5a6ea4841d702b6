"""The one error table: every ctxgate error's exit code and MCP result come from it."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from ctxgate import errors
from ctxgate.app.errors import (
    ERROR_TABLE,
    GATE_FAILED,
    cli_message,
    exit_code,
    mcp_error,
    report,
    tool_error_text,
)

ALL_ERRORS = sorted(
    (
        c
        for _, c in inspect.getmembers(errors, inspect.isclass)
        if issubclass(c, errors.CtxgateError)
    ),
    key=lambda c: c.__name__,
)

EXPECTED_EXIT = {"UsageError": 2, "ConfigError": 2, "EntryNotFound": 2, "AmbiguousId": 2}
"""The documented exit codes (errors.py's docstring, docs/cli.md): usage errors and unknown or
ambiguous ids exit 2, every other failure 1."""


@pytest.mark.parametrize("kind", ALL_ERRORS, ids=lambda c: c.__name__)
def test_every_error_has_the_documented_exit_code(kind: type[errors.CtxgateError]) -> None:
    assert exit_code(kind) == EXPECTED_EXIT.get(kind.__name__, 1)
    instance = kind.__new__(kind)
    Exception.__init__(instance, "boom")
    assert instance.exit_code == exit_code(kind)  # the attribute reads the same table


def test_the_table_lists_only_ctxgate_errors_and_its_root() -> None:
    assert errors.CtxgateError in ERROR_TABLE
    assert all(issubclass(k, errors.CtxgateError) for k in ERROR_TABLE)


def test_cli_and_mcp_renderings() -> None:
    exc = errors.EntryNotFound("no archive entry 0000aaaa")
    assert cli_message(exc) == "ctxgate: EntryNotFound: no archive entry 0000aaaa"
    assert tool_error_text(exc) == "EntryNotFound: no archive entry 0000aaaa"
    assert mcp_error(exc) == ("EntryNotFound: no archive entry 0000aaaa", "error")
    gate = errors.GateError("the backend 'x' is not available")
    assert mcp_error(gate) == ("GateError: the backend 'x' is not available", "gate_unavailable")
    assert mcp_error(errors.UsageError("bad"), judging=True) == (
        f"{GATE_FAILED} (bad)",
        "gate_unavailable",
    )


def test_report_prints_one_line_and_returns_the_code(capsys) -> None:
    assert report(errors.UsageError("--lines 0:1: lines are 1-based")) == 2
    assert capsys.readouterr().err == "ctxgate: UsageError: --lines 0:1: lines are 1-based\n"


@pytest.mark.parametrize(
    ("argv", "code", "kind"),
    [
        (["expand", "0000aaaa"], 2, "EntryNotFound"),  # the argparse fast path
        (["archive", "stat", "0000aaaa"], 2, "EntryNotFound"),  # typer, through cli.main
        (["gate", "log", "--verdict", "maybe"], 2, "UsageError"),
    ],
)
def test_both_cli_paths_exit_with_the_table_code(argv: list[str], code: int, kind: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxgate", *argv], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == code, out.stderr
    assert out.stderr.startswith(f"ctxgate: {kind}: ")


def test_the_cli_and_the_mcp_server_report_one_failure_alike(clean_environ, capsys) -> None:
    """The same bad expand call: the argparse CLI and the MCP tool name the same error kind
    and message (one ``ctxgate: `` prefix apart), from the one table."""
    import anyio

    from ctxgate.app import App
    from ctxgate.cli.fast import expand_main
    from ctxgate.integrations.mcp.server import expand_result

    assert expand_main(["0000aaaa", "--lines", "1:2"]) == 2
    cli = capsys.readouterr().err.strip()
    result = anyio.run(expand_result, App(), {"id": "0000aaaa", "lines": "1:2"})
    assert result.is_error
    assert cli == f"ctxgate: {result.content[0].text}"
    assert cli.startswith("ctxgate: EntryNotFound: no archive entry 0000aaaa")
