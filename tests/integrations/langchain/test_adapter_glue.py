"""The framework-free glue in ``ctxgate.integrations._adapter`` that the adapters share."""

from __future__ import annotations

import json

import pytest

from ctxgate.archive import Archive, EntryMeta
from ctxgate.bound import parse_marker
from ctxgate.errors import UsageError
from ctxgate.gate import Verdict
from ctxgate.integrations.langchain._glue import (
    ResultFirewall,
    bound_result,
    declined_text,
    denial_text,
    expand_view,
    result_text,
)

BIG = "\n".join(f"line {i} of the output" for i in range(1, 5001))


def test_result_text_joins_text_blocks_and_keeps_the_others():
    image = {"type": "image", "base64": "AAAA", "mime_type": "image/png"}
    assert result_text("plain") == ("plain", [])
    assert result_text([{"type": "text", "text": "a"}, image, "b"]) == ("a\nb", [image])
    assert result_text({"rows": [1, 2], "ok": True}) == ('{"rows": [1, 2], "ok": true}', [])
    assert result_text(b"caf\xc3\xa9 \xff") == ("café \ufffd", [])


def test_every_tool_is_firewalled_unless_restricted():
    archive = Archive()
    anything = ResultFirewall(archive=archive)
    assert anything.apply("fetch_page", BIG).reason == "digest"
    assert anything.apply("expand", BIG).reason == "not_firewalled"  # views are never redone
    only = ResultFirewall(archive=archive, tools=["build"])
    assert only.apply("fetch_page", BIG).reason == "not_firewallable"
    assert only.apply("build", BIG).digested
    # same input, same digest: deterministic
    assert anything.apply("fetch_page", BIG).text == anything.apply("fetch_page", BIG).text


def test_a_tool_cannot_be_both_a_protected_read_and_a_dataset():
    with pytest.raises(UsageError, match="both protected_reads and datasets"):
        ResultFirewall(archive=Archive(), protected_reads=["q"], datasets=["q"])


def test_bound_result_cuts_with_the_marker_and_archives_the_original():
    archive = Archive()
    assert bound_result("short", max_bytes=1000, archive=archive) == ("short", None)
    text, cut = bound_result(BIG, max_bytes=4096, archive=archive)
    assert len(json.dumps(text, ensure_ascii=False).encode()) <= 4096
    marker = parse_marker(text)
    assert marker is not None and marker.original_bytes == len(BIG.encode())
    assert archive.read(cut.archive_id) == BIG.encode()


def test_expand_view_maps_the_digest_arguments_and_refuses_unknown_ones():
    archive = Archive()
    entry = archive.put(BIG.encode(), EntryMeta(tool="x"))
    view = expand_view(archive, {"id": entry.short_id, "grep": "line 4242 ", "literal": True})
    assert "1 matching line\n4242: line 4242 of the output" in view
    with pytest.raises(UsageError, match="unknown argument.*'pages'"):
        expand_view(archive, {"id": entry.short_id, "pages": "1"})
    with pytest.raises(UsageError, match="'id' is required"):
        expand_view(archive, {"lines": "1:2"})


def test_refusal_texts():
    verdict = Verdict(outcome="deny", code="timeout", tool="rm",
                      reason="Tool gate: the decision model could not be consulted.")
    assert denial_text(verdict) == "Error: Tool gate: the decision model could not be consulted."
    assert "declined this call to `rm`" in declined_text("rm", "keep it")
    assert "keep it" in declined_text("rm", "keep it")
