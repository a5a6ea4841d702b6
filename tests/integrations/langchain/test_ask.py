"""An ``ask`` verdict pauses the run (a LangGraph interrupt) and resumes with the answer."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import ValidationError

from ctxgate.integrations.langchain import CtxgateMiddleware

from .conftest import ScriptedChatModel, call, scripted_gate, steps, tool_messages

RAN: list[str] = []


@tool
def delete_branch(name: str) -> str:
    """Delete a git branch."""
    RAN.append(name)
    return f"deleted {name}"


def grey(state):
    """Destructive, possibly requested: the gate asks a person."""
    return {"destructive": 0.9, "requested": 0.5}


def _agent(checkpointer, archive, *calls):
    gate, fn = scripted_gate(grey)
    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=list(calls)),
                                           AIMessage(content="all done")))
    agent = create_agent(model, [delete_branch], checkpointer=checkpointer,
                         middleware=[CtxgateMiddleware(gate, archive=archive)])
    return agent, fn


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request, tmp_path):
    if request.param == "memory":
        yield InMemorySaver()
        return
    # langgraph-checkpoint-sqlite is installed by scripts/install-test-deps
    sqlite_saver = pytest.importorskip("langgraph.checkpoint.sqlite")
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    yield sqlite_saver.SqliteSaver(conn)
    conn.close()


def test_ask_pauses_and_resumes_with_approval(checkpointer, archive):
    RAN.clear()
    agent, _ = _agent(checkpointer, archive, call("delete_branch", name="old-feature"))
    config = {"configurable": {"thread_id": "t1"}}
    paused = agent.invoke({"messages": [HumanMessage("tidy up the branches")]}, config)
    assert RAN == []
    (pending,) = paused["__interrupt__"]
    assert pending.value["type"] == "tool_approval" and pending.value["source"] == "ctxgate"
    assert pending.value["name"] == "delete_branch"
    assert pending.value["args"] == {"name": "old-feature"}
    assert "Tool gate:" in pending.value["description"]
    assert agent.get_state(config).next  # the run waits in the checkpoint

    done = agent.invoke(Command(resume={"type": "approve"}), config)
    assert RAN == ["old-feature"]
    (msg,) = tool_messages(done["messages"])
    assert msg.status == "success" and msg.content == "deleted old-feature"
    assert done["messages"][-1].content == "all done"


def test_ask_resumed_with_a_rejection_is_refused(checkpointer, archive):
    RAN.clear()
    agent, _ = _agent(checkpointer, archive, call("delete_branch", name="main"))
    config = {"configurable": {"thread_id": "t2"}}
    agent.invoke({"messages": [HumanMessage("tidy up the branches")]}, config)
    done = agent.invoke(Command(resume={"type": "reject", "message": "main stays"}), config)
    assert RAN == []
    (msg,) = tool_messages(done["messages"])
    assert msg.status == "error" and "declined" in msg.content and "main stays" in msg.content
    assert msg.response_metadata["ctxgate"]["gate"] == "declined"
    assert done["messages"][-1].content == "all done"


def test_parallel_asks_resume_by_interrupt_id(archive):
    RAN.clear()
    call_a, call_b = call("delete_branch", name="a"), call("delete_branch", name="b")
    agent, _ = _agent(InMemorySaver(), archive, call_a, call_b)
    config = {"configurable": {"thread_id": "t3"}}
    paused = agent.invoke({"messages": [HumanMessage("tidy up the branches")]}, config)
    pending = {i.value["args"]["name"]: i.id for i in paused["__interrupt__"]}
    assert sorted(pending) == ["a", "b"] and RAN == []
    done = agent.invoke(Command(resume={pending["a"]: {"type": "approve"},
                                        pending["b"]: {"type": "reject"}}), config)
    assert RAN == ["a"]
    by_id = {m.tool_call_id: m for m in tool_messages(done["messages"])}
    assert by_id[call_a["id"]].content == "deleted a" and by_id[call_a["id"]].status == "success"
    assert by_id[call_b["id"]].status == "error" and "declined" in by_id[call_b["id"]].content


def test_an_invalid_resume_value_is_rejected_by_the_schema(archive):
    agent, _ = _agent(InMemorySaver(), archive, call("delete_branch", name="x"))
    config = {"configurable": {"thread_id": "t4"}}
    agent.invoke({"messages": [HumanMessage("tidy up")]}, config)
    RAN.clear()
    with pytest.raises(ValidationError, match="approve"):
        agent.invoke(Command(resume={"type": "maybe"}), config)
    assert RAN == []
    done = agent.invoke(Command(resume={"type": "approve"}), config)  # answered again
    assert RAN == ["x"] and tool_messages(done["messages"])[0].content == "deleted x"


def test_ask_in_async_streaming_pauses_and_resumes(archive):
    RAN.clear()
    agent, _ = _agent(InMemorySaver(), archive, call("delete_branch", name="stale"))
    config = {"configurable": {"thread_id": "t5"}}

    async def run():
        paused = [u async for u in agent.astream(
            {"messages": [HumanMessage("tidy up the branches")]}, config, stream_mode="updates")]
        resumed = [u async for u in agent.astream(
            Command(resume={"type": "approve"}), config, stream_mode="updates")]
        return paused, resumed

    paused, resumed = asyncio.run(run())
    interrupts = [u["__interrupt__"] for u in paused if "__interrupt__" in u]
    assert len(interrupts) == 1 and interrupts[0][0].value["name"] == "delete_branch"
    assert RAN == ["stale"]
    tools = [m for u in resumed if "tools" in u for m in u["tools"]["messages"]]
    assert [m.content for m in tools] == ["deleted stale"]


def test_async_backend_failures_deny(archive):
    def broken(state):
        raise RuntimeError("no answer")

    gate, _ = scripted_gate(broken)
    model = ScriptedChatModel(script=steps(
        AIMessage(content="", tool_calls=[call("delete_branch", name="x")]), AIMessage("ok")))
    agent = create_agent(model, [delete_branch], middleware=[CtxgateMiddleware(gate,
                                                                               archive=archive)])
    RAN.clear()
    result = asyncio.run(agent.ainvoke({"messages": [HumanMessage("delete branch x")]}))
    (msg,) = tool_messages(result["messages"])
    assert RAN == [] and msg.status == "error"
    assert msg.response_metadata["ctxgate"]["gate"] == "backend_error"


def test_without_a_checkpointer_an_ask_is_refused_and_the_run_goes_on(archive):
    RAN.clear()
    agent, _ = _agent(None, archive, call("delete_branch", name="x"))
    result = agent.invoke({"messages": [HumanMessage("tidy up the branches")]})
    assert "__interrupt__" not in result and RAN == []
    (msg,) = tool_messages(result["messages"])
    assert msg.status == "error" and msg.response_metadata["ctxgate"]["gate"] == "ask"
    assert "a person must decide" in msg.content and "ctxgate gate approve" in msg.content
    assert result["messages"][-1].content == "all done"


def test_with_human_in_the_loop_the_gate_judges_the_edited_call(archive):
    """HumanInTheLoopMiddleware listed first, ctxgate last: a person's edit is what the gate
    judges, and both pauses are answered the same way (``tool_approval`` interrupts)."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    def main_is_destructive(state):
        name = state["tool_call"]["arguments"]["name"]
        return {"destructive": 0.95 if name == "main" else 0.0, "requested": 0.05}

    gate, fn = scripted_gate(main_is_destructive)
    RAN.clear()
    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=[
        call("delete_branch", name="old")]), AIMessage(content="all done")))
    agent = create_agent(model, [delete_branch], checkpointer=InMemorySaver(), middleware=[
        HumanInTheLoopMiddleware(interrupt_on={"delete_branch": True}, interrupt_mode="per_call"),
        CtxgateMiddleware(gate, archive=archive)])
    config = {"configurable": {"thread_id": "hitl"}}
    paused = agent.invoke({"messages": [HumanMessage("clean up old branches")]}, config)
    (pending,) = paused["__interrupt__"]
    assert pending.value["type"] == "tool_approval" and "source" not in pending.value  # HITL's
    edit = {"type": "edit", "edited_action": {"name": "delete_branch", "args": {"name": "main"}}}
    done = agent.invoke(Command(resume=edit), config)
    assert RAN == []  # the edited call deletes main: the gate refused it
    assert fn.calls[-1][0]["tool_call"]["arguments"] == {"name": "main"}
    (msg,) = tool_messages(done["messages"])
    assert msg.status == "error" and msg.response_metadata["ctxgate"]["gate"] == \
        "destructive_unrequested"


def test_calls_that_ran_beside_an_ask_do_not_run_again_on_resume(archive):
    @tool
    def list_branches() -> str:
        """List the git branches."""
        RAN.append("list")
        return "main old"

    def ask_for_deletes(state):
        if state["tool_call"]["tool"] == "delete_branch":
            return {"destructive": 0.9, "requested": 0.5}
        return {"destructive": 0.0, "requested": 1.0}

    gate, _ = scripted_gate(ask_for_deletes)
    RAN.clear()
    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=[
        call("list_branches"), call("delete_branch", name="old")]), AIMessage(content="ok")))
    agent = create_agent(model, [list_branches, delete_branch], checkpointer=InMemorySaver(),
                         middleware=[CtxgateMiddleware(gate, archive=archive)])
    config = {"configurable": {"thread_id": "side"}}
    paused = agent.invoke({"messages": [HumanMessage("tidy up")]}, config)
    assert len(paused["__interrupt__"]) == 1 and RAN == ["list"]
    done = agent.invoke(Command(resume={"type": "approve"}), config)
    assert RAN == ["list", "old"]  # the listing ran once, before the pause
    assert sorted(m.content for m in tool_messages(done["messages"])) == ["deleted old",
                                                                          "main old"]
