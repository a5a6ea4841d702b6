"""The framework-independent glue all three adapters share (``ctxgate.integrations._adapter``):
one judge, one denial text, one result→text rule, one per-tool firewall policy with its
small-output rule, one expand schema and view, one result bound. No framework imported."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from ctxgate.archive import Archive, EntryMeta
from ctxgate.bound import parse_marker
from ctxgate.errors import ConfigError, EntryNotFound, UsageError
from ctxgate.firewall import FirewallPolicy, firewall
from ctxgate.gate import GatePolicy, ToolCall, ToolGate, Verdict
from ctxgate.integrations._adapter import (
    EXPAND_ARGUMENTS,
    EXPAND_PARAMETERS,
    ResultFirewall,
    bound_result,
    declined_text,
    denial_text,
    expand_answer,
    expand_view,
    judge,
    result_parts,
    result_text,
)

BIG = "\n".join(f"line {i} of the output" for i in range(1, 5001))
SMALL = [
    "",
    "ok",
    "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok\n",
    "password=hunter2hunter2\nsecond line\r\n",
    "naïve — 日本語 ✓ 🎉\n" * 20,
    "x" * 1999,
    json.dumps({"api_key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "n": 1}),
]


class _Broken(ToolGate):
    async def decide(self, call, **kwargs):
        raise RuntimeError("bug in a backend factory")


class _Slow(ToolGate):
    async def decide(self, call, **kwargs):
        raise TimeoutError


class _Hang(ToolGate):
    async def decide(self, call, **kwargs):
        await asyncio.sleep(30)


def test_judge_turns_any_exception_into_a_deny_and_never_raises():
    verdict = asyncio.run(judge(_Broken(lambda: None, GatePolicy()), ToolCall(tool="rm")))
    assert verdict.outcome == "deny" and verdict.code == "backend_error"
    text = denial_text(verdict)
    assert text.startswith("Error: Tool gate:") and "could not judge it" in text
    assert "RuntimeError: bug in a backend factory" in text and "fails closed" in text


def test_judge_denies_a_timeout_with_or_without_a_deadline():
    verdict = asyncio.run(judge(_Slow(lambda: None, GatePolicy()), ToolCall(tool="rm")))
    assert verdict.code == "timeout" and "timed out" in verdict.reason
    verdict = asyncio.run(judge(_Hang(lambda: None, GatePolicy()), ToolCall(tool="rm"),
                                deadline=0.05))
    assert verdict.code == "timeout" and "timed out after 0.05 s" in verdict.reason


def test_refusal_texts():
    verdict = Verdict(outcome="deny", code="timeout", tool="rm",
                      reason="Tool gate: the decision model could not be consulted.")
    assert denial_text(verdict) == "Error: Tool gate: the decision model could not be consulted."
    assert "declined this call to `rm`" in declined_text("rm", "keep it")
    assert "keep it" in declined_text("rm", "keep it")


def test_result_parts_and_text():
    @dataclass
    class Row:
        id: int

    image = {"type": "image", "base64": "AAAA", "mime_type": "image/png"}
    assert result_parts("plain") == ("plain", [])
    assert result_parts([{"type": "text", "text": "a"}, image, "b"]) == ("a\nb", [image])
    assert result_parts([image]) == (None, [image])
    assert result_parts(b"\x89PNG") == (None, [])  # binary: never text
    assert result_text({"rows": [1, 2], "ok": True}) == '{"rows": [1, 2], "ok": true}'
    assert result_text({"é": [1, 2.5, None]}) == '{"é": [1, 2.5, null]}'
    assert result_text({"type": "user", "id": 3}) == '{"type": "user", "id": 3}'  # data
    assert result_text({"type": "text", "text": "hi"}) == "hi"
    assert result_text([{"a": 1}, 2]) == '[{"a": 1}, 2]'
    assert result_text([Row(1)]) == '[{"id": 1}]'
    assert result_text({"type": "image", "image_url": "data:,"}) is None  # media
    assert result_text([{"type": "text", "text": "see"}, image]) is None  # has media


@pytest.mark.parametrize("text", SMALL)
@pytest.mark.parametrize("tool", ["run_build", "read_file", "query_db"])
def test_small_outputs_show_what_the_full_firewall_shows(tool, text):
    fw = ResultFirewall(archive=Archive(), protected_reads={"read_file"}, datasets={"query_db"})
    screened = fw.apply(tool, text)
    full = firewall(tool, text, archive=Archive(), policy=fw.policy_for(tool),
                    command=fw.command_for(tool))
    assert screened.text == full.text and screened.reason == full.reason
    assert not screened.digested and not full.digested
    assert fw.archive.list() == []  # shown whole: nothing archived


def test_every_tool_is_firewalled_unless_restricted_and_expand_views_never_are():
    archive = Archive()
    anything = ResultFirewall(archive=archive)
    big = anything.apply("fetch_page", BIG)
    assert big.digested and big.changed and archive.read(big.archive_id) == BIG.encode()
    assert anything.apply("expand", BIG).reason == "not_firewalled"
    only = ResultFirewall(archive=archive, firewalled=["build"])
    assert only.apply("fetch_page", BIG).reason == "not_firewallable"
    assert only.apply("shell", BIG).reason == "not_firewallable"  # named list: only those
    assert only.apply("build", BIG).digested
    assert anything.apply("fetch_page", BIG) == anything.apply("fetch_page", BIG)  # deterministic


def test_datasets_and_protected_reads_keep_the_policy_s_own_lists():
    policy = FirewallPolicy(protected_read_tools=("cat_file",))
    fw = ResultFirewall(archive=Archive(), policy=policy, datasets={"run_sql"},
                        protected_reads={"get_doc"}, firewalled={"build"})
    tuned = fw.policy_for("run_sql")
    assert fw.command_for("run_sql") == "run_sql"
    assert tuned.dataset_commands == (*policy.dataset_commands, "run_sql")
    assert fw.policy_for("run_sql") is tuned  # cached per tool
    assert fw.policy_for("get_doc").protected_read_tools == ("cat_file", "get_doc")
    assert fw.apply("get_doc", BIG).reason == "protected_read"
    rows = json.dumps([{"id": i, "name": f"row {i}"} for i in range(400)])
    assert not fw.apply("run_sql", rows).digested  # a dataset under verbatim_max_tokens
    assert fw.policy_for("build").protected_read_tools == ("cat_file",)


def test_a_tool_cannot_be_both_a_protected_read_and_a_dataset():
    with pytest.raises(ConfigError, match="both protected_reads and datasets"):
        ResultFirewall(archive=Archive(), protected_reads=["q"], datasets=["q"])


def test_screen_from_async_code_gives_the_same_answer():
    fw = ResultFirewall(archive=Archive())
    huge = BIG * 2
    assert asyncio.run(fw.screen("t", huge)) == fw.apply("t", huge)
    assert asyncio.run(fw.screen("t", "ok")) == fw.apply("t", "ok")


def test_expand_schema_names_every_argument():
    assert set(EXPAND_PARAMETERS["properties"]) == {"id", *EXPAND_ARGUMENTS}


def test_expand_view_maps_the_digest_arguments_and_refuses_unknown_ones():
    archive = Archive()
    entry = archive.put(BIG.encode(), EntryMeta(tool="x"))
    view = expand_view(archive, {"id": entry.short_id, "grep": "line 4242 ", "literal": True})
    assert "1 matching line\n4242: line 4242 of the output" in view
    with pytest.raises(UsageError, match="unknown argument.*'pages'"):
        expand_view(archive, {"id": entry.short_id, "pages": "1"})
    with pytest.raises(UsageError, match="'id' is required"):
        expand_view(archive, {"lines": "1:2"})
    with pytest.raises(EntryNotFound):
        expand_view(archive, {"id": "ffffffffffff"})


def test_expand_answer_errors_are_text():
    archive = Archive()
    entry = archive.put(b"one\ntwo\nthree\n")
    assert "2| two" in expand_answer(archive, {"id": entry.short_id, "lines": "2:2"})
    assert expand_answer(archive, {"lines": "1:2"}).startswith("Error: UsageError: expand: 'id'")
    assert expand_answer(archive, {"id": entry.short_id, "bogus": 1}).startswith(
        "Error: UsageError: expand: unknown argument(s) ['bogus']")
    assert expand_answer(archive, {"id": "ffffffffffff"}).startswith("Error: EntryNotFound:")
    assert expand_answer(archive, {"id": entry.short_id, "grep": "(a+)+"}).startswith(
        "Error: UsageError:")


def test_bound_result_cuts_with_the_marker_and_archives_the_original():
    archive = Archive()
    assert bound_result("short", max_bytes=1000, archive=archive) == ("short", None)
    text, cut = bound_result(BIG, max_bytes=4096, archive=archive)
    assert len(json.dumps(text, ensure_ascii=False).encode()) <= 4096
    marker = parse_marker(text)
    assert marker is not None and marker.original_bytes == len(BIG.encode())
    assert archive.read(cut.archive_id) == BIG.encode()


def test_configured_reads_the_configuration_only_for_what_is_missing(tmp_path, monkeypatch):
    from ctxgate.integrations._adapter.defaults import configured

    gate, archive = ToolGate(lambda: None, GatePolicy()), Archive()
    policy = FirewallPolicy(min_tokens=500)
    given = configured(gate=gate, archive=archive, firewall_policy=policy)
    assert (given.gate, given.archive, given.firewall_policy, given.config) == \
        (gate, archive, policy, None)
    monkeypatch.setenv("CTXGATE_HOME", str(tmp_path / "home"))
    filled = configured(gate=False, archive=archive)  # gating off stays off
    assert filled.gate is False and filled.archive is archive
    assert filled.config is not None and filled.firewall_policy == filled.config.firewall
