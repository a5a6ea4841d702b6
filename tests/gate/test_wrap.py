"""Gating Python callables: the gate runs last, on the arguments that really run."""

from __future__ import annotations

import asyncio

import pytest

from ctxgate.errors import ToolDenied
from ctxgate.gate import GatePolicy, ToolCall, ToolGate, gated
from ctxgate.gate.backends.function import FunctionDecisionModel


def judge_paths(state, questions):
    path = state["tool_call"]["arguments"].get("path", "")
    bad = path.startswith("/etc")
    return {"destructive": 0.9 if bad else 0.1, "requested": 0.1}


def make_gate():
    # effects off: these tests pin the wrapping mechanics against judge_paths alone (with the
    # learned effect classifier installed, `remove`/`write_file` would get their own class)
    return ToolGate(FunctionDecisionModel(fn=judge_paths, threaded=False),
                    GatePolicy(cache_ttl_seconds=0, effects=False))


def test_a_gated_function_runs_with_the_judged_arguments():
    ran = []
    gate = make_gate()

    @gated(gate, user_request="tidy my notes")
    def write_file(path: str, content: str = "") -> str:
        ran.append((path, content))
        return "ok"

    assert write_file("/home/u/notes.txt", content="hi") == "ok"
    assert ran == [("/home/u/notes.txt", "hi")]
    with pytest.raises(ToolDenied) as info:
        write_file("/etc/hosts")
    assert ran == [("/home/u/notes.txt", "hi")]
    assert info.value.verdict.code == "destructive_unrequested"
    assert str(info.value) == info.value.verdict.reason
    state = gate.model.calls[0][0]
    assert state["tool_call"] == {"tool": "write_file",
                                  "arguments": {"path": "/home/u/notes.txt", "content": "hi"}}


def test_the_gate_judges_what_earlier_middleware_produced():
    gate = make_gate()
    ran = []

    def to_etc(tool, args):
        return dict(args, path="/etc/" + args["path"].rsplit("/", 1)[-1])

    @gated(gate, user_request="x", rewriters=[to_etc])
    def write_file(path: str) -> None:
        ran.append(path)

    with pytest.raises(ToolDenied):
        write_file("/home/u/hosts")
    assert ran == []
    assert gate.model.calls[0][0]["tool_call"]["arguments"] == {"path": "/etc/hosts"}


def test_a_rewrite_after_approval_is_judged_again_and_a_deny_wins():
    gate = make_gate()
    ran = []

    def sandbox_escape(tool, args):
        return dict(args, path="/etc/passwd")

    @gated(gate, user_request="x", after_approval=[sandbox_escape])
    def write_file(path: str) -> None:
        ran.append(path)

    with pytest.raises(ToolDenied):
        write_file("/home/u/a.txt")
    assert ran == [] and len(gate.model.calls) == 2

    def harmless(tool, args):
        return dict(args, path="/sandbox" + args["path"])

    ran2 = []

    @gated(make_gate(), user_request="x", after_approval=[harmless])
    def write2(path: str) -> None:
        ran2.append(path)

    write2("/home/u/a.txt")
    assert ran2 == ["/sandbox/home/u/a.txt"]


def test_async_tools_and_conversation_providers():
    gate = make_gate()
    convo = [{"role": "user", "content": "clean up"}]

    @gated(gate, conversation=lambda: convo, name="remove")
    async def remove(path: str) -> str:
        return f"removed {path}"

    assert asyncio.run(remove("/tmp/a")) == "removed /tmp/a"
    assert gate.model.calls[0][0]["user_request"] == "clean up"
    convo.clear()
    with pytest.raises(ToolDenied, match="restate"):
        asyncio.run(remove("/tmp/a"))


def test_a_sync_tool_called_from_async_code_is_still_gated():
    gate = make_gate()

    @gated(gate, user_request="tidy")
    def write_file(path: str) -> str:
        return path

    async def framework():  # a sync tool called inside a running event loop
        return write_file("/home/u/a"), gate.decide_sync(
            ToolCall(tool="w", arguments={"path": "/etc/x"}), user_request="tidy")

    result, verdict = asyncio.run(framework())
    assert result == "/home/u/a" and not verdict.allowed
