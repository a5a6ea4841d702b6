"""The framework-free glue (``ctxgate.integrations._adapter``): the small-output shortcut
shows exactly what the full firewall shows, results become text, expand answers as text."""

from __future__ import annotations

import asyncio
import json

import pytest

from ctxgate.archive import Archive
from ctxgate.firewall import firewall
from ctxgate.gate import GatePolicy, ToolCall, ToolGate
from ctxgate.integrations.openai_agents._glue import (
    ResultFirewall,
    denial_text,
    expand_view,
    judge,
    result_text,
)

SMALL = [
    "",
    "ok",
    "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok\n",
    "password=hunter2hunter2\nsecond line\r\n",
    "naïve — 日本語 ✓ 🎉\n" * 20,
    "x" * 1999,
    json.dumps({"api_key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "n": 1}),
]


@pytest.mark.parametrize("text", SMALL)
@pytest.mark.parametrize("tool", ["run_build", "read_file", "query_db"])
def test_small_outputs_show_what_the_full_firewall_shows(tool: str, text: str) -> None:
    fw = ResultFirewall(archive=Archive(), protected_reads={"read_file"}, datasets={"query_db"})
    screened = fw.apply(tool, text)
    full = firewall(tool, text, archive=Archive(), policy=fw._policy(tool),
                    command=tool if tool == "query_db" else None)
    assert screened.text == full.text
    assert not screened.digested and not full.digested
    assert fw.archive.list() == []  # shown whole: nothing archived


def test_large_outputs_are_archived_and_digested() -> None:
    fw = ResultFirewall(archive=Archive())
    text = "".join(f"[INFO] step {i}\n" for i in range(4000))
    screened = fw.apply("run_build", text)
    assert screened.digested and screened.archive_id
    assert fw.archive.read(screened.archive_id).decode() == text


def test_a_tool_cannot_be_both_protected_read_and_dataset() -> None:
    from ctxgate.errors import ConfigError

    with pytest.raises(ConfigError, match="both protected reads and datasets"):
        ResultFirewall(archive=Archive(), protected_reads={"q"}, datasets={"q"})


def test_result_text() -> None:
    from agents import ToolOutputImage, ToolOutputText
    from pydantic import BaseModel

    class Row(BaseModel):
        id: int
        name: str

    image = "data:image/png;base64," + "A" * 50_000
    assert result_text("a") == "a"
    assert result_text(b"\x89PNG") is None  # binary: untouched
    assert result_text({"a": [1, "é"]}) == '{"a": [1, "é"]}'
    assert result_text([{"a": 1}, 2]) == '[{"a": 1}, 2]'
    assert result_text(Row(id=1, name="x")) == '{"id":1,"name":"x"}'
    assert result_text(ToolOutputText(text="hi")) == "hi"
    assert result_text({"type": "text", "text": "hi"}) == "hi"
    assert result_text(ToolOutputImage(image_url=image)) is None  # media is never digested
    assert result_text({"type": "image", "image_url": image}) is None
    assert result_text([ToolOutputText(text="see"), ToolOutputImage(image_url=image)]) is None
    assert result_text(object()) is None


def test_expand_view_errors_are_text() -> None:
    archive = Archive()
    entry = archive.put(b"one\ntwo\nthree\n")
    assert "2| two" in expand_view(archive, {"id": entry.short_id, "lines": "2:2"})
    assert expand_view(archive, {"lines": "1:2"}).startswith("Error: expand needs 'id'")
    assert expand_view(archive, {"id": entry.short_id, "bogus": 1}).startswith(
        "Error: expand got unknown argument(s) ['bogus']")
    assert expand_view(archive, {"id": "ffffffffffff"}).startswith("Error: EntryNotFound:")
    assert expand_view(archive, {"id": entry.short_id, "grep": "(a+)+"}).startswith(
        "Error: UsageError:")


def test_judge_turns_any_exception_into_a_deny() -> None:
    class Broken(ToolGate):
        async def decide(self, call, **kwargs):
            raise RuntimeError("bug in a backend factory")

    gate = Broken(lambda: None, GatePolicy())
    verdict = asyncio.run(judge(gate, ToolCall(tool="rm", arguments={})))
    assert verdict.outcome == "deny" and verdict.code == "backend_error"
    text = denial_text(verdict)
    assert text.startswith("Error: Tool gate:") and "RuntimeError: bug in a backend factory" in text
