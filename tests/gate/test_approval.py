"""The terminal approval hook of the ask outcome."""

from __future__ import annotations

import asyncio
import io

from ctxgate.gate import GatePolicy, ToolCall, ToolGate, prompt_approver

from .conftest import scripted


def gate_with(answer: str | None, interactive: bool = True, out: io.StringIO | None = None):
    def read(prompt: str) -> str:
        if answer is None:
            raise EOFError
        return answer

    approver = prompt_approver(input_fn=read, stream=out or io.StringIO(),
                               interactive=lambda: interactive)
    return ToolGate(scripted(0.9, 0.1), GatePolicy(cache_ttl_seconds=0), approver=approver)


CALL = ToolCall(tool="rm", arguments={"path": "/srv/data"})


def decide(gate):
    return asyncio.run(gate.decide(CALL, user_request="look at the data"))


def test_yes_runs_the_call_once_and_shows_what_it_approves():
    out = io.StringIO()
    v = decide(gate_with("y", out=out))
    assert v.allowed and v.approved
    shown = out.getvalue()
    assert '"path": "/srv/data"' in shown and "looks destructive" in shown
    assert v.args_sha256 in shown


def test_no_eof_and_non_interactive():
    assert decide(gate_with("n")).code == "declined"
    assert decide(gate_with(None)).code == "declined"
    v = decide(gate_with("y", interactive=False))
    assert v.outcome == "ask" and not v.allowed
