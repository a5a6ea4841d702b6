"""bound_messages: a persisted history over its byte limit loses tool-result bytes, never a
turn; every cut ends with ctxgate's marker and the original is in the archive."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ctxgate.bound import emit_bytes, parse_marker
from ctxgate.errors import RecordBoundError
from ctxgate.integrations.pydantic_ai import Ctxgate, bound_messages

from .conftest import make_agent, scripted_gate, tool_returns


def _history(result_text: str, prompt: str = "read the logs") -> list:
    return [
        ModelRequest(parts=[UserPromptPart(prompt)]),
        ModelResponse(parts=[ToolCallPart("cat", {"path": "app.log"}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("cat", result_text, tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("The log ends with a timeout.")]),
    ]


def test_an_oversized_tool_result_is_trimmed_with_the_marker_and_no_turn_is_dropped(archive):
    text = "".join(f"line {i}: request served in {i % 97} ms\n" for i in range(60_000))
    messages = _history(text)
    bounded = bound_messages(messages, 65_536, archive=archive)
    assert len(bounded.json) <= 65_536 < len(ModelMessagesTypeAdapter.dump_json(messages))
    assert [type(m) for m in bounded.messages] == [type(m) for m in messages]
    [cut] = bounded.cuts
    assert cut.path == "/2/parts/0/content" and cut.original_bytes == len(text.encode())
    kept = bounded.messages[2].parts[0].content
    marker = parse_marker(kept)
    assert marker is not None and marker.original_bytes == len(text.encode())
    assert marker.bound_bytes == 65_536 and kept.startswith("line 0: ")
    assert archive.read(cut.archive_id) == text.encode()
    # what was measured is what loads back, and everything but the result is untouched
    reloaded = ModelMessagesTypeAdapter.validate_json(bounded.json)
    assert reloaded[2].parts[0].content == kept
    assert reloaded[0].parts[0].content == "read the logs"
    assert reloaded[3].parts[0].content == "The log ends with a timeout."
    assert emit_bytes(ModelMessagesTypeAdapter.dump_python(reloaded, mode="json")) == bounded.json


def test_a_history_that_fits_is_returned_as_is(archive):
    messages = _history("short")
    bounded = bound_messages(messages, 65_536, archive=archive)
    assert not bounded.changed and bounded.messages == messages
    assert ModelMessagesTypeAdapter.validate_json(bounded.json) == messages


def test_overflow_outside_tool_results_is_refused_not_dropped():
    messages = _history("short", prompt="x" * 100_000)
    with pytest.raises(RecordBoundError) as info:
        bound_messages(messages, 65_536)
    assert info.value.code == "record_too_large"
    assert info.value.path == "/0/parts/0/content"


def test_binary_items_of_a_result_are_never_cut_in_half():
    image = BinaryContent(data=b"\x89PNG" + b"\x00" * 40_000, media_type="image/png")
    text = "log line\n" * 20_000
    messages = _history("")
    messages[2] = ModelRequest(parts=[ToolReturnPart("shot", [text, image], tool_call_id="c1")])
    bounded = bound_messages(messages, 120_000)
    [cut] = bounded.cuts
    assert cut.path == "/2/parts/0/content/0"
    assert bounded.messages[2].parts[0].content[1].data == image.data


def test_a_real_run_s_history_is_bounded_after_the_firewall(archive):
    """The firewall already keeps big results out of the history; bound_messages catches
    what the firewall shows whole (a protected read) when the store's limit is smaller."""
    big = "".join(f"def f{i}(): return {i}\n" for i in range(20_000))

    def turn(messages, info):
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "gen.py"})])
        return ModelResponse(parts=[TextPart("read it")])

    agent = make_agent(turn, Ctxgate(gate=scripted_gate(), archive=archive,
                                     protected_reads=["read_file"]))
    agent.tool_plain(name="read_file")(lambda path: big)
    history = agent.run_sync("read gen.py").all_messages()
    assert tool_returns(history)[0].content == big  # a protected read is shown whole
    bounded = bound_messages(history, 100_000, archive=archive)
    assert len(bounded.json) <= 100_000 and len(bounded.messages) == len(history)
    assert bounded.cuts[0].original_bytes == len(big.encode())


def test_a_bounded_conversation_store_trims_each_stored_message_and_keeps_every_entry(archive):
    import asyncio

    from pydantic_ai.conversation_store import InMemoryConversationStore

    from ctxgate.integrations.pydantic_ai import BoundedConversationStore

    big = "".join(f"row {i}: {'x' * 40}\n" for i in range(5_000))

    def turn(messages, info):
        if not tool_returns(messages[-1:]):
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "rows.txt"})])
        return ModelResponse(parts=[TextPart("read it")])

    agent = make_agent(turn, Ctxgate(gate=scripted_gate(), archive=archive,
                                     protected_reads=["read_file"]))
    agent.tool_plain(name="read_file")(lambda path: big)
    store = BoundedConversationStore(InMemoryConversationStore(), 40_000, archive=archive)

    async def main():
        first = await agent.run("read rows.txt")
        await store.save(first)
        loaded = await store.load(first.conversation.conversation_id)
        second = await agent.run("read it again", conversation=loaded)
        await store.save(second)
        return first, await store.load(first.conversation.conversation_id)

    first, again = asyncio.run(main())
    assert len(again.messages) == 2 * len(first.all_messages())
    stored = [p.content for p in tool_returns(again.messages)]
    assert len(stored) == 2 and all(parse_marker(c) is not None for c in stored)
    for message in again.messages:
        record = ModelMessagesTypeAdapter.dump_python([message], mode="json")
        assert len(emit_bytes(record)) <= 40_000
    [(_, cut1), (_, cut2)] = store.cuts
    assert archive.read(cut1.archive_id) == big.encode() and cut2.original_bytes == len(big)
