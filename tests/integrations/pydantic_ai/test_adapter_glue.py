"""The framework-independent glue in ctxgate.integrations._adapter (judge, screen,
result_text, expand_view, ToolClasses), without pydantic-ai."""

from __future__ import annotations

import asyncio

import pytest

from ctxgate.errors import EntryNotFound, UsageError
from ctxgate.firewall import DEFAULT_FIREWALL_POLICY, FirewallPolicy
from ctxgate.gate import GatePolicy, ToolCall, ToolGate
from ctxgate.integrations._adapter import ToolClasses, expand_view, judge, result_text, screen

from .conftest import build_log, scripted_gate


def test_judge_turns_any_exception_into_a_deny_and_never_raises():
    class Broken(ToolGate):
        async def decide(self, call, **kwargs):
            raise RuntimeError("bug in a gate subclass")

    gate = Broken(lambda: None, GatePolicy())
    verdict = asyncio.run(judge(gate, ToolCall(tool="rm", arguments={})))
    assert verdict.outcome == "deny" and verdict.code == "backend_error"
    assert "RuntimeError: bug in a gate subclass" in verdict.reason
    assert "fails closed" in verdict.reason


def test_judge_passes_the_conversation_and_returns_the_gate_s_verdict():
    gate = scripted_gate({"rm": (0.9, 0.1)})
    conv = [{"role": "user", "content": "list the files"}]
    verdict = asyncio.run(judge(gate, ToolCall(tool="rm", arguments={"p": "x"}),
                                conversation=conv))
    assert verdict.code == "destructive_unrequested" and verdict.user_request == "list the files"
    verdict = asyncio.run(judge(gate, ToolCall(tool="rm", arguments={"p": "x"}),
                                run_prompts=["remove x"]))
    assert verdict.user_request == "remove x" and verdict.user_request_source == "run_prompts"


def test_result_text():
    assert result_text("abc") == "abc"
    assert result_text(b"\x00\x01") is None
    assert result_text({"é": [1, 2.5, None]}) == '{"é": [1, 2.5, null]}'
    from dataclasses import dataclass

    @dataclass
    class Row:
        id: int

    assert result_text([Row(1)]) == '[{"id": 1}]'


def test_screen_small_outputs_skip_the_archive_but_take_the_same_decision(archive):
    classes = ToolClasses(protected_reads={"read_file"})
    small = screen("read_file", "hello", archive=archive, policy=DEFAULT_FIREWALL_POLICY,
                   classes=classes)
    assert (small.text, small.reason, small.digested) == ("hello", "protected_read", False)
    other = screen("anything", "hello", archive=archive, policy=DEFAULT_FIREWALL_POLICY,
                   classes=classes)
    assert other.reason == "below_threshold" and archive.list() == []
    big = screen("anything", build_log(), archive=archive, policy=DEFAULT_FIREWALL_POLICY,
                 classes=classes)
    assert big.digested and big.archive_id and len(archive.list()) == 1


def test_screen_is_deterministic(archive):
    text = build_log()
    one = screen("t", text, archive=archive, policy=DEFAULT_FIREWALL_POLICY, classes=ToolClasses())
    two = screen("t", text, archive=archive, policy=DEFAULT_FIREWALL_POLICY, classes=ToolClasses())
    assert one == two


def test_tool_classes_keep_the_policy_s_own_lists_and_cache_per_policy():
    classes = ToolClasses(datasets={"run_sql"}, firewalled={"build"})
    policy = FirewallPolicy(protected_read_tools=("cat_file",))
    tuned, command = classes.policy_for("run_sql", policy)
    assert command == "run_sql" and tuned.dataset_commands == ("run_sql",)
    assert classes.policy_for("run_sql", policy)[0] is tuned
    assert classes.policy_for("fetch", policy) == (policy, None)  # not in firewalled
    assert "build" in classes.policy_for("build", policy)[0].firewallable_tools
    assert classes.policy_for("build", DEFAULT_FIREWALL_POLICY)[0].protected_read_tools == \
        DEFAULT_FIREWALL_POLICY.protected_read_tools


def test_expand_view_errors_say_what_to_do(archive):
    entry = screen("t", build_log(), archive=archive, policy=DEFAULT_FIREWALL_POLICY,
                   classes=ToolClasses())
    assert "1713| module_1712.c" in expand_view(archive, {"id": entry.archive_id,
                                                         "lines": "1713:1713"})
    with pytest.raises(UsageError, match="unknown argument.*'colour'"):
        expand_view(archive, {"id": entry.archive_id, "colour": "red"})
    with pytest.raises(UsageError, match="'id' is required"):
        expand_view(archive, {"lines": "1:2"})
    with pytest.raises(EntryNotFound):
        expand_view(archive, {"id": "ffffffffffff"})


def test_judge_denies_a_timeout_raised_inside_the_gate_without_a_deadline():
    class Slow(ToolGate):
        async def decide(self, call, **kwargs):
            raise TimeoutError

    verdict = asyncio.run(judge(Slow(lambda: None, GatePolicy()), ToolCall(tool="rm")))
    assert verdict.code == "timeout" and "timed out" in verdict.reason
