"""ToolGate.decide: the deny rule, fail-closed paths, configuration errors, escalation, approval."""

from __future__ import annotations

import asyncio
import json
import math
import time

import pytest

from ctxgate.errors import ConfigError, DecisionModelError, DecisionRefused, RequestTooLarge
from ctxgate.gate import GateCheck, GatePolicy, ToolCall, ToolGate, render_denial
from ctxgate.gate.backends.base import Answer, Capabilities, strictest
from ctxgate.gate.backends.function import FunctionDecisionModel

from .conftest import scripted


def decide(gate, call, **kw):
    kw.setdefault("user_request", "delete /tmp/scratch.txt")
    return asyncio.run(gate.decide(call, **kw))


def test_allows_a_destructive_call_the_user_asked_for(rm_call):
    model = scripted(0.95, 0.9)
    v = decide(ToolGate(model), rm_call)
    assert v.outcome == "allow" and v.code == "allowed"
    (state, questions), = model.calls
    assert state == {"user_request": "delete /tmp/scratch.txt",
                     "tool_call": {"tool": "rm", "arguments": {"path": "/tmp/scratch.txt"}}}
    assert [q.id for q in questions] == ["destructive", "requested"]
    assert questions[0].true_criteria and questions[0].false_criteria
    assert questions[1].true_criteria is None
    assert v.probabilities == {"destructive": 0.95, "requested": 0.9}
    json.dumps(v.to_dict())  # the record is JSON


def test_allows_a_harmless_call_even_when_unrequested(rm_call):
    assert decide(ToolGate(scripted(0.1, 0.1)), rm_call).allowed


def test_denies_a_destructive_unrequested_call(rm_call):
    v = decide(ToolGate(scripted(0.9, 0.2)), rm_call)
    assert v.outcome == "deny" and v.code == "destructive_unrequested"
    assert v.reason.startswith("Tool gate:") and "destructive" in v.reason
    assert "p=0.90" in v.reason and "p=0.20" in v.reason
    msg = render_denial(v, call_id="call_1")
    assert msg == {"role": "tool", "tool_call_id": "call_1", "content": f"Error: {v.reason}"}
    block = render_denial(v, call_id="tu_1", style="anthropic")
    assert block["is_error"] is True and block["content"][0]["text"] == v.reason
    with pytest.raises(ValueError):
        render_denial(decide(ToolGate(scripted(0.1, 0.1)), ToolCall(tool="rm")))


@pytest.mark.parametrize("d,r,allowed", [(0.5, 0.69, False), (0.5, 0.70, True), (0.4999, 0.0, True),
                                         (1.0, 1.0, True), (0.0, 0.0, True)])
def test_threshold_edges(rm_call, d, r, allowed):
    assert decide(ToolGate(scripted(d, r)), rm_call).allowed is allowed


def test_thresholds_and_checks_are_overridable(rm_call):
    assert not decide(ToolGate(scripted(0.9, 0.9), GatePolicy(requested_threshold=0.95)),
                      rm_call).allowed
    model = scripted(0.1, 0.9, secrets=0.8)
    gate = ToolGate(model, checks=[GateCheck(id="secrets", question="Does `tool_call` leak "
                                             "secrets?", deny_at_or_above=0.5)])
    v = decide(gate, rm_call)
    assert v.code == "check" and "`secrets`" in v.reason and "0.80" in v.reason
    assert [q.id for q in model.calls[0][1]] == ["destructive", "requested", "secrets"]
    below = ToolGate(scripted(0.1, 0.9, secrets=0.49),
                     GatePolicy(checks=(GateCheck(id="secrets", question="q?"),)))
    assert decide(below, rm_call).allowed


def _answers(**values):
    def fn(state, questions):
        return values["answers"]
    return FunctionDecisionModel(fn=fn, threaded=False)


@pytest.mark.parametrize("answers", [
    [Answer(question_id="destructive", p=math.nan), Answer(question_id="requested", p=0.9)],
    [Answer(question_id="destructive", p=-0.1), Answer(question_id="requested", p=0.9)],
    [Answer(question_id="destructive", p=1.5), Answer(question_id="requested", p=0.9)],
    [Answer(question_id="destructive", p=math.inf), Answer(question_id="requested", p=0.9)],
    [Answer(question_id="destructive", p="0.1"), Answer(question_id="requested", p=0.9)],
    [Answer(question_id="destructive", p=True), Answer(question_id="requested", p=0.9)],
    [Answer(question_id="destructive", p=0.1)],
    [Answer(question_id="destructive", p=0.1), Answer(question_id="destructive", p=0.1),
     Answer(question_id="requested", p=0.9)],
    [{"question_id": "destructive", "p": 0.1}],
    None,
    {"destructive": 0.1},
])
def test_malformed_answers_deny(rm_call, answers):
    v = decide(ToolGate(_answers(answers=answers)), rm_call)
    assert v.outcome == "deny" and v.code == "malformed_answer"
    assert "could not be consulted" in v.reason and "fails closed" in v.reason


def test_well_formed_control_and_smuggled_answers_are_dropped(rm_call):
    ok = [Answer(question_id="destructive", p=0.1), Answer(question_id="requested", p=0.9),
          Answer(question_id="unasked", p=math.nan)]
    assert decide(ToolGate(_answers(answers=ok)), rm_call).allowed


@pytest.mark.parametrize("exc,code", [
    (DecisionModelError("HTTP 503 from http://127.0.0.1:9/v1"), "backend_error"),
    (RequestTooLarge("about 70000 tokens exceeds 64000"), "request_too_large"),
    (RuntimeError("bug in a backend"), "backend_error"),
    (ConnectionResetError("peer reset"), "backend_error"),
    (DecisionRefused("content filter"), "refused"),
])
def test_backend_failures_deny(rm_call, exc, code):
    def fn(state, questions):
        raise exc

    v = decide(ToolGate(FunctionDecisionModel(fn=fn, threaded=False)), rm_call)
    assert v.outcome == "deny" and v.code == code
    assert "fails closed" in v.reason
    assert ("could not be consulted" in v.reason) is (code != "refused")


def test_a_hanging_backend_times_out_fast(rm_call):
    async def hang(state, questions):
        await asyncio.sleep(30)

    gate = ToolGate(FunctionDecisionModel(fn=hang), GatePolicy(timeout_seconds=0.05))
    started = time.monotonic()
    v = decide(gate, rm_call)
    assert time.monotonic() - started < 2.0
    assert v.code == "timeout" and "timed out after 0.05 s" in v.reason


def test_a_blocking_sync_backend_times_out_fast(rm_call):
    def block(state, questions):
        time.sleep(3)
        return {"destructive": 0.0, "requested": 1.0}

    gate = ToolGate(FunctionDecisionModel(fn=block), GatePolicy(timeout_seconds=0.05))
    started = time.monotonic()
    v = decide(gate, rm_call)
    assert time.monotonic() - started < 2.0
    assert v.code == "timeout"


def test_no_user_request_denies_without_asking(rm_call):
    model = scripted()
    v = asyncio.run(ToolGate(model).decide(rm_call, conversation=[]))
    assert v.code == "no_user_request" and "restate the request" in v.reason
    assert model.calls == []


def test_too_large_and_full_view_deny_without_asking():
    model = scripted()
    gate = ToolGate(model, GatePolicy(arg_budget_chars=3_000))
    big = ToolCall(tool="write", arguments={f"f{i}": "x" * 5_000 for i in range(10)})
    v = decide(gate, big)
    assert v.code == "too_large" and "too large to evaluate" in v.reason and "3000" in v.reason
    script = ToolCall(tool="bash", arguments={"command": "python - <<EOF\n" + "x = 1\n" * 2_000})
    v = decide(gate, script)
    assert v.code == "full_view_unfit"
    assert "`bash`'s `/command` argument is" in v.reason and "review in full" in v.reason
    assert model.calls == []


def test_a_long_call_is_judged_on_a_declared_partial_view():
    model = scripted(0.1, 0.9)
    content = "head\n" + "filler line\n" * 10_000 + "rm -rf /srv/data\n"
    call = ToolCall(tool="write_file", arguments={"path": "run.sh", "content": content})
    v = decide(ToolGate(model), call)
    assert v.allowed and call.arguments["content"] == content  # the tool runs the full args
    state = model.calls[0][0]
    shown = state["tool_call"]["arguments"]["content"]
    assert shown.startswith("head\n") and shown.endswith("rm -rf /srv/data\n")
    assert "[truncated " in shown
    assert state["tool_call"]["omitted"] == [{"argument": "/content",
                                             "chars": v.omitted[0].chars}]
    assert state["tool_call"]["arguments"]["path"] == "run.sh"


def test_the_state_fits_the_strictest_backend_of_a_chain():
    caps = strictest([Capabilities(model_id="a", max_request_tokens=64_000),
                      Capabilities(model_id="b", max_request_tokens=2_000)])
    assert caps.max_request_tokens == 2_000 and caps.model_id == "a -> b"
    seen = []

    def fn(state, questions):
        seen.append(len(json.dumps(state, ensure_ascii=False,
                                   separators=(",", ":")).encode()))
        return {"destructive": 0.1, "requested": 0.9}

    gate = ToolGate(FunctionDecisionModel(fn=fn, capabilities=caps, threaded=False))
    v = decide(gate, ToolCall(tool="write", arguments={"content": "y" * 50_000}))
    assert v.allowed and v.omitted
    longest_question = max(len(json.dumps([q.text, q.true_criteria, q.false_criteria]))
                           for q in gate.questions)
    assert seen[0] <= 2_000 * 4 - longest_question


def test_unserializable_arguments_deny(rm_call):
    v = decide(ToolGate(scripted()), ToolCall(tool="x", arguments={"n": float("nan")}))
    assert v.code == "unserializable" and "not valid JSON" in v.reason


@pytest.mark.parametrize("build", [
    lambda: GatePolicy(destructive_threshold=1.5),
    lambda: GatePolicy(requested_threshold=math.nan),
    lambda: GatePolicy(destructive_threshold=-0.01),
    lambda: GatePolicy(arg_budget_chars=0),
    lambda: GatePolicy(full_views={"bash": ("command",)}),
    lambda: GatePolicy(full_views={"bash": ("/a~2b",)}),
    lambda: GatePolicy(timeout_seconds=0),
    lambda: GateCheck(id="", question="q?"),
    lambda: GateCheck(id="destructive", question="q?"),
    lambda: GateCheck(id="requested", question="q?"),
    lambda: GateCheck(id="x", question="q?", deny_at_or_above=1.5),
    lambda: GateCheck(id="x", question="q?", deny_at_or_above=math.nan),
    lambda: ToolGate(scripted(), checks=[GateCheck(id="x", question="q?"),
                                         GateCheck(id="x", question="q2?")]),
])
def test_invalid_settings_raise_at_configuration_time(build):
    with pytest.raises(ConfigError):
        build()


def test_a_check_the_backend_cannot_answer_is_rejected_at_startup():
    caps = Capabilities(model_id="heads", question_ids=frozenset({"destructive", "requested"}))
    model = FunctionDecisionModel(fn=lambda s, q: {}, capabilities=caps)
    ToolGate(model)  # the built-ins are fine
    with pytest.raises(ConfigError, match="custom checks"):
        ToolGate(model, checks=[GateCheck(id="secrets", question="leaks?")])


def test_denial_escalation_after_consecutive_and_total_denials(rm_call):
    gate = ToolGate(scripted(0.9, 0.1), GatePolicy(max_consecutive_denials=3, max_total_denials=5,
                                                   cache_ttl_seconds=0))
    reasons = [decide(gate, rm_call).reason for _ in range(3)]
    assert "stop calling tools and ask the user" not in reasons[1]
    assert "stop calling tools and ask the user" in reasons[2]
    gate.model.fn = lambda s, q: {"destructive": 0.1, "requested": 0.9}
    assert decide(gate, rm_call).allowed and gate.consecutive_denials == 0
    gate.model.fn = lambda s, q: {"destructive": 0.9, "requested": 0.1}
    v4 = decide(gate, rm_call)
    assert not v4.escalated  # 1 in a row, 4 in total
    v5 = decide(gate, rm_call)
    assert v5.escalated and "denial number 5" in v5.reason
    gate.new_run()
    assert not decide(gate, rm_call).escalated


def test_a_confirmation_after_a_denial_is_allowed(rm_call):
    def fn(state, questions):
        ur = state["user_request"]
        confirmed = "Shall I delete /tmp/scratch.txt?" in ur and "yes, go ahead" in ur
        return {"destructive": 0.95, "requested": 0.9 if confirmed else 0.2}

    gate = ToolGate(FunctionDecisionModel(fn=fn, threaded=False))
    convo = [{"role": "user", "content": "tidy up /tmp"}]
    first = asyncio.run(gate.decide(rm_call, conversation=convo))
    assert not first.allowed
    convo += [{"role": "assistant", "content": "Shall I delete /tmp/scratch.txt?"},
              {"role": "user", "content": "yes, go ahead"}]
    second = asyncio.run(gate.decide(rm_call, conversation=convo))
    assert second.allowed and second.user_request.startswith("Earlier user request: tidy up")


def test_approval_hook_outcomes(rm_call):
    asked = []

    def approver(req):
        asked.append(req.args_sha256)
        return answers.pop(0)

    answers = [True, False, None]
    gate = ToolGate(scripted(0.9, 0.1), GatePolicy(cache_ttl_seconds=0), approver=approver)
    v = decide(gate, rm_call)
    assert v.allowed and v.approved and v.code == "approved"
    v = decide(gate, rm_call)
    assert v.outcome == "deny" and v.code == "declined" and "declined" in v.reason
    v = decide(gate, rm_call)
    assert v.outcome == "ask" and not v.allowed and "approval" in v.reason
    assert len(set(asked)) == 1


def test_an_approval_binds_to_the_exact_arguments(rm_call):
    model = scripted(0.9, 0.1)
    gate = ToolGate(model, GatePolicy(cache_ttl_seconds=0))
    gate.approve(ToolCall(tool="rm", arguments={"path": "/tmp/scratch.txt"}))
    other = ToolCall(tool="rm", arguments={"path": "/tmp/other.txt"})
    assert not decide(gate, other).allowed
    v = decide(gate, rm_call)
    assert v.allowed and v.approved and len(model.calls) == 1  # no model call for it
    assert not decide(gate, rm_call).allowed  # once


def test_verdict_cache_reuses_model_verdicts_only(rm_call):
    now = [1000.0]
    model = scripted(0.9, 0.1)
    gate = ToolGate(model, GatePolicy(cache_ttl_seconds=60), clock=lambda: now[0])
    a, b = decide(gate, rm_call), decide(gate, rm_call)
    assert (a.cached, b.cached) == (False, True) and a.outcome == b.outcome == "deny"
    assert len(model.calls) == 1
    decide(gate, rm_call, user_request="something else")
    assert len(model.calls) == 2
    now[0] += 61
    assert not decide(gate, rm_call).cached and len(model.calls) == 3

    calls = []

    def failing(state, questions):
        calls.append(1)
        raise DecisionModelError("HTTP 500")

    gate = ToolGate(FunctionDecisionModel(fn=failing, threaded=False))
    assert decide(gate, rm_call).code == decide(gate, rm_call).code == "backend_error"
    assert len(calls) == 2  # an error is never cached


def test_fast_path_allows_read_only_shell_without_a_model_call():
    model = scripted(0.9, 0.1)
    gate = ToolGate(model)
    v = asyncio.run(gate.decide(ToolCall(tool="bash", arguments={"command": "git status && ls -la"}),
                                conversation=[]))
    assert v.allowed and v.fast_path and v.code == "fast_path" and model.calls == []
    assert v.effect is not None and v.effect.effect.value == "read_only"
    assert v.effect.source.value == "fast_path" and "git" in v.effect.evidence
    assert v.to_dict()["effect"]["source"] == "fast_path"  # what gate check --json and the log show
    v = decide(gate, ToolCall(tool="bash", arguments={"command": "rm -rf build"}))
    assert not v.allowed and len(model.calls) == 1
    off = ToolGate(model, GatePolicy(fast_path=False, effects=False))
    assert not decide(off, ToolCall(tool="bash", arguments={"command": "ls"})).allowed


def test_fast_path_reads_the_git_configuration_where_the_call_runs(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    model = scripted(0.1, 0.9)
    gate = ToolGate(model, GatePolicy(effects=False))
    call = ToolCall(tool="bash", arguments={"command": "git status"}, cwd=str(repo))
    assert decide(gate, call).fast_path
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", "./x"], check=True)
    v = decide(gate, call)
    assert not v.fast_path and len(model.calls) == 1


def test_a_lazy_model_is_loaded_only_when_needed():
    loads = []

    def factory():
        loads.append(1)
        return scripted(0.1, 0.9)

    gate = ToolGate(factory)
    assert decide(gate, ToolCall(tool="bash", arguments={"command": "ls"})).fast_path
    assert loads == []
    assert decide(gate, ToolCall(tool="bash", arguments={"command": "make"})).allowed
    assert loads == [1]


def test_the_user_request_sent_is_cut_to_8000_chars(rm_call):
    model = scripted(0.1, 0.9)
    request = "A" * 6_000 + "MIDDLE" + "Z" * 6_000
    v = decide(ToolGate(model), rm_call, user_request=request)
    sent = model.calls[0][0]["user_request"]
    assert sent == v.user_request
    assert sent.startswith("A" * 4_000) and sent.endswith("Z" * 4_000)
    assert "\n[truncated 4006 chars]\n" in sent and "MIDDLE" not in sent


def test_full_views_are_configurable_per_tool():
    policy = GatePolicy(full_views={"sql": ("",), "bash": ()}, arg_budget_chars=2_000)
    model = scripted(0.1, 0.9)
    gate = ToolGate(model, policy)
    v = decide(gate, ToolCall(tool="sql", arguments={"db": "prod", "query": "SELECT 1;" * 500}))
    assert v.code == "full_view_unfit" and "`sql`'s `/query`" in v.reason
    # bash's default full view was dropped: its command may now be shortened
    v = decide(gate, ToolCall(tool="bash", arguments={"command": "make " + "x" * 5_000}))
    assert v.allowed and v.omitted[0].argument == "/command"


def test_the_gate_follows_a_fallback_chain_and_bounds_it(rm_call):
    from ctxgate.gate.backends.fallback import FallbackDecisionModel

    def down(state, questions):
        raise DecisionModelError("HTTP 503")

    async def hang(state, questions):
        await asyncio.sleep(30)

    good = scripted(0.1, 0.9)
    chain = FallbackDecisionModel([FunctionDecisionModel(fn=down, model_id="a", threaded=False),
                                   good])
    assert decide(ToolGate(chain), rm_call).allowed and len(good.calls) == 1
    all_down = FallbackDecisionModel([FunctionDecisionModel(fn=down, model_id="a"),
                                      FunctionDecisionModel(fn=down, model_id="b")])
    v = decide(ToolGate(all_down), rm_call)
    assert v.code == "backend_error" and "could not be consulted" in v.reason
    slow = FallbackDecisionModel([FunctionDecisionModel(fn=hang, model_id="slow"), good],
                                 timeout_seconds=30)
    started = time.monotonic()
    v = decide(ToolGate(slow, GatePolicy(timeout_seconds=0.1)), rm_call)
    assert v.code == "timeout" and time.monotonic() - started < 2.0
