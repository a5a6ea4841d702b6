"""bound_items / BoundedSession on their own: only tool outputs are cut, with the marker and
the original archived; a batch that cannot be bounded is kept whole, never dropped."""

from __future__ import annotations

import asyncio
import json

from agents import SQLiteSession

from ctxgate.archive import Archive
from ctxgate.bound import parse_marker
from ctxgate.integrations.openai_agents import BoundedSession, bound_items


def size(items) -> int:
    return len(json.dumps({"items": items}, ensure_ascii=False, separators=(",", ":")).encode())


def turn(output: str, user: str = "run it") -> list[dict]:
    return [{"role": "user", "content": user},
            {"type": "function_call", "call_id": "c1", "name": "run", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": output},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "done", "annotations": []}]}]


def test_only_the_tool_output_is_cut_and_the_original_kept() -> None:
    archive = Archive()
    output = "".join(f"row {i}\n" for i in range(50_000))
    items, result = bound_items(turn(output), max_bytes=32_768, archive=archive)
    assert size(items) <= 32_768 and result is not None and result.changed
    assert [i.get("type", "message") for i in items] == ["message", "function_call",
                                                          "function_call_output", "message"]
    assert items[0] == turn("")[0] and items[3] == turn("")[3]
    marker = parse_marker(items[2]["output"])
    assert marker.original_bytes == len(output.encode()) and marker.keep == "both"
    assert archive.read(marker.archive_id).decode() == output
    [cut] = result.cuts
    assert cut.path == "/items/2/output"


def test_a_batch_that_fits_is_the_same_list() -> None:
    items = turn("short")
    same, result = bound_items(items, max_bytes=4096)
    assert same is items and result is not None and not result.changed


def test_overflow_outside_tool_output_keeps_the_batch_whole() -> None:
    items = turn("short", user="x" * 100_000)
    same, result = bound_items(items, max_bytes=4096)
    assert same is items and result is None  # logged, stored as it is, never dropped


def test_bounded_session_stores_the_bounded_batch(tmp_path) -> None:
    inner = SQLiteSession("s", str(tmp_path / "s.db"))
    session = BoundedSession(inner, max_bytes=16_384, archive=Archive())
    output = "y" * 100_000
    asyncio.run(session.add_items(turn(output)))
    stored = asyncio.run(session.get_items())
    assert len(stored) == 4 and size(stored) <= 16_384
    assert parse_marker(stored[2]["output"]).original_bytes == 100_000
    assert asyncio.run(session.pop_item())["role"] == "assistant"
    asyncio.run(session.clear_session())
    assert asyncio.run(inner.get_items()) == []
