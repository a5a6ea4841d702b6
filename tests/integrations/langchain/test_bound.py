"""What the graph persists is bounded: oversized results are cut with the marker, the turn
is kept."""

from __future__ import annotations

import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from ctxgate.bound import parse_marker
from ctxgate.errors import ConfigError
from ctxgate.integrations.langchain import CtxgateMiddleware

from .conftest import ScriptedChatModel, call, scripted_gate, steps, tool_messages


def _file(size_lines: int, tag: str) -> str:
    return "".join(f"{tag} line {i:06d} ééé\n" for i in range(1, size_lines + 1))


HUGE = _file(150_000, "huge")  # ~3.6 MB, a protected read: never digested


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return HUGE if path == "huge.txt" else _file(2_000, path)


def _agent(archive, calls, **kwargs):
    gate, _ = scripted_gate({"destructive": 0.0, "requested": 1.0})
    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=calls),
                                           AIMessage(content="read them")))
    agent = create_agent(model, [read_file], checkpointer=InMemorySaver(), middleware=[
        CtxgateMiddleware(gate, archive=archive, **kwargs)])
    return agent, model


def test_an_oversized_result_is_cut_with_the_marker_and_the_turn_kept(archive):
    agent, model = _agent(archive, [call("read_file", path="huge.txt")],
                          max_result_bytes=65_536)
    config = {"configurable": {"thread_id": "b1"}}
    result = agent.invoke({"messages": [HumanMessage("read huge.txt")]}, config)
    (msg,) = tool_messages(result["messages"])
    assert msg.response_metadata["ctxgate"]["firewall"] == "protected_read"
    assert len(json.dumps(msg.content, ensure_ascii=False).encode()) <= 65_536
    marker = parse_marker(msg.content)
    assert marker is not None and marker.original_bytes == len(HUGE.encode())
    assert marker.keep == "both" and marker.bound_bytes == 65_536 + 12
    assert msg.content.startswith("huge line 000001 ééé\n")
    assert "huge line 150000 ééé\n" in msg.content  # the tail is kept too
    # the full original is in the archive, and the marker names it
    assert archive.read(msg.response_metadata["ctxgate"]["bound"]["archive_id"]) == HUGE.encode()
    assert [type(m).__name__ for m in result["messages"]] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    # no checkpoint ever held the 3.6 MB result
    for snapshot in agent.get_state_history(config):
        for m in snapshot.values.get("messages", []):
            assert len(str(m.content)) < 70_000


def test_the_turn_is_levelled_across_results_before_the_next_model_call(archive):
    calls = [call("read_file", path=f"f{i}") for i in range(4)]  # ~50 KB each, 200 KB in all
    agent, model = _agent(archive, calls, max_result_bytes=65_536, max_turn_bytes=100_000)
    config = {"configurable": {"thread_id": "b2"}}
    result = agent.invoke({"messages": [HumanMessage("read f0 to f3")]}, config)
    results = tool_messages(result["messages"])
    assert len(results) == 4
    markers = [parse_marker(m.content) for m in results]
    assert all(mk is not None for mk in markers)
    kept = sorted(mk.kept_bytes for mk in markers)
    assert kept[-1] - kept[0] <= 256  # levelled: equal results are cut equally
    record = json.dumps({"turn": [m.content for m in result["messages"]]}, ensure_ascii=False)
    assert len(record.encode()) < 100_000
    # the model's second call already saw the bounded turn
    assert [parse_marker(m.content) is not None for m in tool_messages(model.seen[-1])] == \
        [True] * 4
    assert result["messages"][-1].content == "read them"
    assert all(m.response_metadata["ctxgate"]["turn_bound"][0]["archive_id"] for m in results)


def test_a_turn_over_its_bound_outside_tool_output_is_kept_whole(archive, caplog):
    agent, _ = _agent(archive, [call("read_file", path="f1")], max_result_bytes=65_536,
                      max_turn_bytes=30_000)
    request = "please read f1 " + "x" * 40_000
    result = agent.invoke({"messages": [HumanMessage(request)]},
                          {"configurable": {"thread_id": "b3"}})
    assert result["messages"][0].content == request
    (msg,) = tool_messages(result["messages"])
    assert msg.content == _file(2_000, "f1")  # refused, as the bound refuses: nothing cut
    assert result["messages"][-1].content == "read them"
    assert "over its 30000-byte bound outside tool output (record_too_large at /turn/0/content)" \
        in caplog.text


def test_bad_bounds_are_refused_at_construction(archive):
    gate, _ = scripted_gate({"destructive": 0.0, "requested": 1.0})
    for bad in ({"max_result_bytes": 10}, {"max_turn_bytes": -1}, {"max_result_bytes": 2.5}):
        with pytest.raises(ConfigError, match="use 0 \\(off\\) or a byte count of at least 1024"):
            CtxgateMiddleware(gate, archive=archive, **bad)
    with pytest.raises(ConfigError, match="on_deny must be 'message' or 'raise'"):
        CtxgateMiddleware(gate, archive=archive, on_deny="ignore")
    CtxgateMiddleware(gate, archive=archive, max_result_bytes=0, max_turn_bytes=0)  # off
