"""The gate on Agents SDK tool calls: deny reaches the model and the run goes on, a requested
call runs, ask is the SDK's approval interruption, backend failures deny, parallel calls and
streaming are judged one by one. Real SDK, real HTTP against a local scripted server."""

from __future__ import annotations

import asyncio
import time

import pytest
from agents import Agent, Runner, SQLiteSession, function_tool
from agents.exceptions import ToolInputGuardrailTripwireTriggered

from ctxgate.gate import AuditLog, GatePolicy, ToolGate
from ctxgate.gate.backends.function import FunctionDecisionModel
from ctxgate.integrations.openai_agents import AgentGuard

from .conftest import keyword_judge, model_for, scripted_gate
from .responses_server import ResponsesServer, call, function_outputs, text


def make_agent(server, ran: list[str], api: str = "responses") -> Agent:
    @function_tool
    def delete_path(path: str) -> str:
        """Delete a file or directory."""
        ran.append(f"delete_path {path}")
        return f"deleted {path}"

    @function_tool
    def read_log(name: str) -> str:
        """Read a log file."""
        ran.append(f"read_log {name}")
        return f"log {name}: all good"

    return Agent(name="ops", instructions="You run ops tasks.", model=model_for(server, api),
                 tools=[delete_path, read_log])


def guard(gate, archive, **kw) -> AgentGuard:
    return AgentGuard(gate=gate, archive=archive, **kw)


def test_unrequested_destructive_call_is_refused_and_the_run_goes_on(gate, archive) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "/srv/data"}, "c1")],
                          [text("I did not delete anything.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))
        result = Runner.run_sync(agent, "summarise the logs")
    assert ran == []
    assert result.final_output == "I did not delete anything."
    seen = function_outputs(server.requests[1])["c1"]
    assert seen.startswith("Error: Tool gate:")
    assert "not clearly what the user asked for" in seen
    [gr] = result.tool_input_guardrail_results
    assert gr.output.behavior["type"] == "reject_content"
    assert gr.output.output_info.code == "destructive_unrequested"


def test_requested_destructive_call_runs(gate, archive) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "build/"}, "c1")],
                          [text("Deleted.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))
        result = Runner.run_sync(agent, "delete the build directory")
    assert ran == ["delete_path build/"]
    assert function_outputs(server.requests[1])["c1"] == "deleted build/"
    assert result.final_output == "Deleted."


def test_on_deny_raise_stops_the_run(gate, archive) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "/srv"}, "c1")]]) as server:
        agent = guard(gate, archive, on_deny="raise").agent(make_agent(server, ran))
        with pytest.raises(ToolInputGuardrailTripwireTriggered):
            Runner.run_sync(agent, "summarise the logs")
    assert ran == []


def test_ask_interrupts_and_resumes_with_approval(archive, tmp_path) -> None:
    audit = AuditLog.in_home(tmp_path)
    gate = scripted_gate(keyword_judge, audit=audit)
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "tmp/"}, "c1")],
                          [text("Done after approval.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))

        async def go():
            first = await Runner.run(agent, "maybe tidy up tmp")
            assert ran == []  # paused before the tool ran
            [item] = first.interruptions
            assert item.tool_name == "delete_path"
            state = first.to_state()
            state.approve(item)
            return await Runner.run(agent, state)

        result = asyncio.run(go())
    assert ran == ["delete_path tmp/"]
    assert result.final_output == "Done after approval."
    assert function_outputs(server.requests[1])["c1"] == "deleted tmp/"
    rows = audit.query(tool="delete_path")
    assert sorted(r.code for r in rows) == ["approved", "ask"]


def test_ask_rejected_does_not_run(gate, archive) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "tmp/"}, "c1")],
                          [text("Understood, left it.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))

        async def go():
            first = await Runner.run(agent, "maybe tidy up tmp")
            state = first.to_state()
            state.reject(first.interruptions[0], rejection_message="The user said no.")
            return await Runner.run(agent, state)

        result = asyncio.run(go())
    assert ran == []
    assert result.final_output == "Understood, left it."
    assert function_outputs(server.requests[1])["c1"] == "The user said no."


def _failing_gate(fn, timeout: float = 5.0) -> ToolGate:
    return ToolGate(FunctionDecisionModel(fn=fn, model_id="failing"),
                    GatePolicy(cache_ttl_seconds=0, effects=False, timeout_seconds=timeout))


def _raises(state, questions):
    raise RuntimeError("decision service exploded")


async def _hangs_async(state, questions):
    await asyncio.sleep(60)


def _hangs_blocking(state, questions):
    time.sleep(30)  # holds its thread; the gate abandons it at the deadline


@pytest.mark.parametrize(("fn", "code"), [(_raises, "backend_error"),
                                          (_hangs_async, "timeout"),
                                          (_hangs_blocking, "timeout")])
def test_backend_failure_denies(fn, code, archive) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "build/"}, "c1")],
                          [text("Could not run it.")]]) as server:
        agent = guard(_failing_gate(fn, timeout=0.3), archive).agent(make_agent(server, ran))
        started = time.monotonic()
        result = Runner.run_sync(agent, "delete the build directory")
        elapsed = time.monotonic() - started
    assert ran == []
    assert elapsed < 10
    seen = function_outputs(server.requests[1])["c1"]
    assert seen.startswith("Error: Tool gate:") and "fails closed" in seen
    assert result.tool_input_guardrail_results[0].output.output_info.code == code
    assert result.final_output == "Could not run it."


def test_a_gate_that_cannot_be_built_denies(archive) -> None:
    def factory():
        raise ImportError("no module named 'sentence_transformers'")

    ran: list[str] = []
    gate = ToolGate(factory, GatePolicy(cache_ttl_seconds=0, effects=False))
    with ResponsesServer([[call("delete_path", {"path": "build/"}, "c1")],
                          [text("Blocked.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))
        Runner.run_sync(agent, "delete the build directory")
    assert ran == []
    seen = function_outputs(server.requests[1])["c1"]
    assert "could not judge it" in seen and "fails closed" in seen


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_parallel_calls_are_judged_each(gate, archive, api) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "/srv"}, "c1"),
                           call("read_log", {"name": "app"}, "c2")],
                          [text("Read the log; did not delete.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran, api))
        result = Runner.run_sync(agent, "summarise the app log")
    assert all(("messages" in body) == (api == "chat") for body in server.requests)
    assert ran == ["read_log app"]
    outputs = function_outputs(server.requests[1])
    assert outputs["c1"].startswith("Error: Tool gate:")
    assert outputs["c2"] == "log app: all good"
    assert result.final_output == "Read the log; did not delete."


def test_parallel_ask_and_allow_in_one_turn(gate, archive) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "tmp/"}, "c1"),
                           call("read_log", {"name": "app"}, "c2")],
                          [text("Both done.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))

        async def go():
            first = await Runner.run(agent, "maybe tidy up tmp and read the app log")
            assert [i.tool_name for i in first.interruptions] == ["delete_path"]
            state = first.to_state()
            state.approve(first.interruptions[0])
            return await Runner.run(agent, state)

        result = asyncio.run(go())
    assert sorted(ran) == ["delete_path tmp/", "read_log app"]
    outputs = function_outputs(server.requests[1])
    assert outputs == {"c1": "deleted tmp/", "c2": "log app: all good"}
    assert result.final_output == "Both done."


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_streaming_run_is_gated(gate, archive, api) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "/srv"}, "c1"),
                           call("read_log", {"name": "app"}, "c2")],
                          [text("Streamed answer: the log is fine.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran, api))

        async def go():
            result = Runner.run_streamed(agent, "summarise the app log")
            kinds = [event.type async for event in result.stream_events()]
            return result, kinds

        result, kinds = asyncio.run(go())
    assert all(body.get("stream") is True for body in server.requests)
    assert all(("messages" in body) == (api == "chat") for body in server.requests)
    assert "raw_response_event" in kinds and "run_item_stream_event" in kinds
    assert ran == ["read_log app"]
    outputs = function_outputs(server.requests[1])
    assert outputs["c1"].startswith("Error: Tool gate:")
    assert result.final_output == "Streamed answer: the log is fine."


def test_streaming_ask_resumes(gate, archive) -> None:
    ran: list[str] = []
    with ResponsesServer([[call("delete_path", {"path": "tmp/"}, "c1")],
                          [text("Tidied.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))

        async def go():
            first = Runner.run_streamed(agent, "maybe tidy up tmp")
            async for _ in first.stream_events():
                pass
            assert ran == [] and len(first.interruptions) == 1
            state = first.to_state()
            state.approve(first.interruptions[0])
            second = Runner.run_streamed(agent, state)
            async for _ in second.stream_events():
                pass
            return second

        result = asyncio.run(go())
    assert ran == ["delete_path tmp/"]
    assert result.final_output == "Tidied."


def test_the_request_comes_from_the_session_history(archive, tmp_path) -> None:
    """An earlier turn asked "shall I delete it?"; this run's input is only "yes"."""
    requests: list[str] = []

    def judge(tool_call, request):
        requests.append(request)
        return keyword_judge(tool_call, request)

    ran: list[str] = []
    session = SQLiteSession("s1", str(tmp_path / "session.db"))
    with ResponsesServer([[text("The cache is 3 GB. Shall I delete /tmp/cache?")],
                          [call("delete_path", {"path": "/tmp/cache"}, "c1")],
                          [text("Deleted.")]]) as server:
        agent = guard(scripted_gate(judge), archive).agent(make_agent(server, ran))
        Runner.run_sync(agent, "how big is the cache? I might delete it", session=session)
        Runner.run_sync(agent, "yes", session=session)
    assert ran == ["delete_path /tmp/cache"]
    [request] = requests
    assert request.startswith("Earlier user request: how big is the cache? I might delete it")
    assert request.endswith("Latest user message: yes")


def test_a_compaction_summary_hides_the_older_request(archive, tmp_path) -> None:
    ran: list[str] = []
    requests: list[str] = []

    def judge(tool_call, request):
        requests.append(request)
        return keyword_judge(tool_call, request)

    history = [{"role": "user", "content": "delete everything under /srv"},
               {"role": "user", "content": "[Summary] the user reviewed the logs."},
               {"role": "user", "content": "continue"}]
    with ResponsesServer([[call("delete_path", {"path": "/srv"}, "c1")],
                          [text("Not deleted.")]]) as server:
        agent = guard(scripted_gate(judge), archive).agent(make_agent(server, ran))
        Runner.run_sync(agent, history)
    assert ran == []
    assert requests == ["continue"]


def test_denial_escalation_counts_per_run(archive) -> None:
    gate = scripted_gate(keyword_judge, max_consecutive_denials=2)
    ran: list[str] = []
    script = [[call("delete_path", {"path": "/srv"}, "c1")], [text("no")],
              [call("delete_path", {"path": "/srv"}, "c2")], [text("no")]]
    with ResponsesServer(script) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))
        Runner.run_sync(agent, "summarise the logs")
        Runner.run_sync(agent, "summarise the logs again")
    for n in (1, 3):
        seen = next(iter(function_outputs(server.requests[n]).values()))
        assert seen.startswith("Error: Tool gate:")
        assert "stop calling tools" not in seen  # one denial per run: never escalated
    assert ran == []


def test_tools_that_cannot_be_gated_are_refused(gate, archive) -> None:
    from agents import WebSearchTool

    from ctxgate.errors import ConfigError

    agent = Agent(name="web", tools=[WebSearchTool()])
    with pytest.raises(ConfigError, match="cannot gate: \\['web_search'\\]"):
        guard(gate, archive).agent(agent)
    wrapped = guard(gate, archive, ungated={"web_search"}).agent(agent)
    assert [t.name for t in wrapped.tools] == ["web_search", "expand"]

    @function_tool
    def expand(id: str) -> str:  # noqa: A002 - the model's argument name
        """Someone else's expand."""
        return id

    with pytest.raises(ConfigError, match="already has a tool named 'expand'"):
        guard(gate, archive).agent(Agent(name="x", tools=[expand]))


def test_wrapping_leaves_the_original_agent_alone(gate, archive) -> None:
    with ResponsesServer([]) as server:
        original = make_agent(server, [])
        before = list(original.tools)
        wrapped = guard(gate, archive).agent(original)
    assert original.tools == before and all(not t.tool_input_guardrails for t in before)
    assert [g.get_name() for g in wrapped.tools[0].tool_input_guardrails] == ["ctxgate_gate"]


@pytest.mark.parametrize("as_handoff", [False, True])
def test_handoff_targets_are_gated_too(gate, archive, as_handoff) -> None:
    from agents import handoff

    ran: list[str] = []
    with ResponsesServer([[call("transfer_to_ops", {}, "h1")],
                          [call("delete_path", {"path": "/srv"}, "c1")],
                          [text("Handed off; nothing deleted.")]]) as server:
        ops = make_agent(server, ran)
        triage = Agent(name="triage", model=model_for(server),
                       handoffs=[handoff(ops) if as_handoff else ops])
        result = Runner.run_sync(guard(gate, archive).agent(triage), "summarise the logs")
    assert ran == []
    assert function_outputs(server.requests[2])["c1"].startswith("Error: Tool gate:")
    assert result.last_agent.name == "ops"
    assert "expand" in [t.name for t in result.last_agent.tools]


def test_malformed_arguments_interrupt_and_never_run(gate, archive) -> None:
    """The SDK asks a person when a policy cannot inspect the arguments; approved anyway,
    the guardrail refuses them as not JSON."""
    bad = call("read_log", {"name": "x"}, "c1")
    bad["arguments"] = "{not json"
    ran: list[str] = []
    with ResponsesServer([[bad], [text("I will resend valid JSON.")]]) as server:
        agent = guard(gate, archive).agent(make_agent(server, ran))

        async def go():
            first = await Runner.run(agent, "read the app log")
            [item] = first.interruptions
            state = first.to_state()
            state.approve(item)
            return await Runner.run(agent, state)

        result = asyncio.run(go())
    assert ran == []
    seen = function_outputs(server.requests[1])["c1"]
    assert seen.startswith("Error: Tool gate: this call's arguments are not valid JSON")
    assert result.final_output == "I will resend valid JSON."


def test_a_tools_own_needs_approval_is_kept(gate, archive) -> None:
    ran: list[str] = []

    @function_tool(needs_approval=True)
    def read_secret(name: str) -> str:
        """Read a secret from the vault."""
        ran.append(name)
        return "s3cr3t-value"

    with ResponsesServer([[call("read_secret", {"name": "db"}, "c1")],
                          [text("Read it.")]]) as server:
        agent = guard(gate, archive).agent(
            Agent(name="vault", model=model_for(server), tools=[read_secret]))

        async def go():
            first = await Runner.run(agent, "read the db secret")
            assert ran == [] and len(first.interruptions) == 1  # the tool's own policy asks
            state = first.to_state()
            state.approve(first.interruptions[0])
            return await Runner.run(agent, state)

        result = asyncio.run(go())
    assert ran == ["db"]
    assert result.final_output == "Read it."


@pytest.mark.parametrize(("request_text", "runs"), [("delete the build directory", True),
                                                    ("summarise the logs", False)])
def test_nested_handoff_history_keeps_the_request(gate, archive, request_text, runs) -> None:
    """With nest_handoff_history the receiver's input is one assistant summary; the request
    seen at the handoff is the run's prompt."""
    from agents import RunConfig

    ran: list[str] = []
    with ResponsesServer([[call("transfer_to_ops", {}, "h1")],
                          [call("delete_path", {"path": "build/"}, "c1")],
                          [text("ok")]]) as server:
        triage = Agent(name="triage", model=model_for(server),
                       handoffs=[make_agent(server, ran)])
        Runner.run_sync(guard(gate, archive).agent(triage), request_text,
                        run_config=RunConfig(nest_handoff_history=True))
    assert server.requests[2]["input"][0]["role"] == "assistant"  # the SDK's summary
    seen = function_outputs(server.requests[2])["c1"]
    if runs:
        assert ran == ["delete_path build/"] and seen == "deleted build/"
    else:
        assert ran == [] and "not clearly what the user asked for" in seen
