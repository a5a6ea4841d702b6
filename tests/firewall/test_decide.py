"""The one decision: every reason, its order, thresholds inclusive, and cheap threshold checks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.errors import ConfigError
from ctxgate.firewall import (
    REASONS,
    FirewallPolicy,
    firewall,
    is_firewallable_tool,
    is_protected_read,
    should_inline,
)
from ctxgate.firewall.decide import decide
from ctxgate.firewall.meter import TokenMeter

from .helpers import text_of_tokens

POLICY = FirewallPolicy()


def gauge_of(text: str, limit: int = 100_000) -> TokenMeter:
    m = TokenMeter("o200k_base", limit)
    m.feed(text.encode())
    return m.close()


def decide_text(text: str, **kw):
    kw.setdefault("tool", "shell")
    kw.setdefault("policy", POLICY)
    return decide(output_bytes=len(text.encode()), gauge=gauge_of(text), **kw)


def test_reasons_are_the_documented_set() -> None:
    assert REASONS == ("protected_read", "explicit_raw", "disabled", "not_firewallable",
                       "dataset", "inline", "below_threshold", "digest")


@pytest.mark.parametrize(("kwargs", "reason", "digest"), [
    ({"tool": "read_file"}, "protected_read", False),
    ({"tool": "read_file", "raw": True}, "protected_read", False),
    ({"raw": True}, "explicit_raw", False),
    ({"raw": True, "command": "psql -c x"}, "explicit_raw", False),
    ({"tool": "my_custom_tool"}, "not_firewallable", False),
    ({"command": "sqlite3 db 'select * from t'"}, "dataset", False),
    ({"command": "cargo test"}, "digest", True),
    ({"inline": True}, "digest", True),  # 40,000 bytes: over inline_max_bytes
    ({"tool": "mcp__github__search_issues"}, "digest", True),
    ({"tool": "SHELL"}, "digest", True),
])
def test_reason_table(kwargs: dict, reason: str, digest: bool) -> None:
    text = text_of_tokens(3_000) if not kwargs.get("inline") else "x " * 20_000
    d = decide_text(text, **kwargs)
    assert (d.reason, d.digest) == (reason, digest)
    assert d.detail


def test_inline_within_cap_is_verbatim() -> None:
    text = text_of_tokens(3_000)  # 5,999 bytes <= 32 KiB
    d = decide_text(text, inline=True)
    assert (d.reason, d.digest) == ("inline", False)


def test_inline_over_cap_falls_back_to_threshold_and_says_so() -> None:
    text = "x " * 20_000  # 40,000 bytes > 32,768
    d = decide_text(text, inline=True)
    assert d.reason == "digest" and "inline_max_bytes" in d.detail


def test_disabled_is_still_a_reason() -> None:
    d = decide_text(text_of_tokens(3_000), policy=FirewallPolicy(enabled=False))
    assert (d.reason, d.digest) == ("disabled", False)


def test_min_tokens_is_inclusive() -> None:
    assert decide_text(text_of_tokens(2_000)).reason == "digest"
    assert decide_text(text_of_tokens(1_999)).reason == "below_threshold"


def test_min_tokens_from_policy() -> None:
    policy = FirewallPolicy(min_tokens=500)
    assert decide_text(text_of_tokens(500), policy=policy).reason == "digest"
    assert decide_text(text_of_tokens(499), policy=policy).reason == "below_threshold"


def test_verbatim_ceiling_applies_to_dataset_and_inline_only() -> None:
    policy = FirewallPolicy(verbatim_max_tokens=10_000, inline_max_bytes=1_000_000)
    at = text_of_tokens(10_000)
    below = text_of_tokens(9_999)
    assert decide_text(at, policy=policy, command="psql -c x").reason == "digest"
    assert "verbatim_max_tokens" in decide_text(at, policy=policy, command="psql -c x").detail
    assert decide_text(below, policy=policy, command="psql -c x").reason == "dataset"
    assert decide_text(at, policy=policy, inline=True).reason == "digest"
    assert decide_text(below, policy=policy, inline=True).reason == "inline"
    # explicit raw and protected reads are never capped
    assert decide_text(at, policy=policy, raw=True).reason == "explicit_raw"
    assert decide_text(at, policy=policy, tool="read").reason == "protected_read"


def test_verbatim_ceiling_zero_disables_it() -> None:
    policy = FirewallPolicy(verbatim_max_tokens=0)
    assert decide_text(text_of_tokens(5_000), policy=policy,
                       command="jq . x.json").reason == "dataset"


def test_tool_classes_are_single_source_of_truth() -> None:
    for tool in ("read", "read_file", "view", "cat_file", "Read_File"):
        assert is_protected_read(tool, POLICY)
        assert not is_firewallable_tool(tool, POLICY)
    for tool in ("shell", "bash", "execute", "search", "tree", "mcp__srv__tool"):
        assert is_firewallable_tool(tool, POLICY)
        assert not is_protected_read(tool, POLICY)
    custom = FirewallPolicy(protected_read_tools=("shell",))
    assert not is_firewallable_tool("shell", custom)


def test_should_inline_boundary() -> None:
    policy = FirewallPolicy(inline_max_bytes=1024)
    assert should_inline(True, 1024, policy)
    assert should_inline(True, 0, policy)
    assert not should_inline(True, 1025, policy)
    assert not should_inline(False, 10, policy)


@settings(max_examples=25, deadline=None)
@given(size=st.integers(min_value=0, max_value=3_000_000),
       tool=st.sampled_from(["read", "read_file", "view", "cat_file"]),
       raw=st.booleans(), inline=st.booleans())
def test_protected_reads_never_digested_at_any_size(size: int, tool: str, raw: bool,
                                                    inline: bool) -> None:
    text = ("line of file content\n" * (size // 21 + 1))[:size]
    for policy in (POLICY, FirewallPolicy(min_tokens=0, verbatim_max_tokens=1)):
        result = firewall(tool, text, policy=policy, raw=raw, inline=inline)
        assert result.reason == "protected_read"
        assert result.text == text  # the content itself, never a stub


def test_threshold_decided_without_tokenizing_everything() -> None:
    # 40 MB of text: the meter must stop once min_tokens is reached
    meter = TokenMeter("o200k_base", POLICY.min_tokens)
    chunk = ("word " * 200_000).encode()  # 1 MB
    for _ in range(40):
        meter.feed(chunk)
    meter.close()
    assert meter.counted_bytes <= len(chunk)  # stopped inside the first chunk
    assert meter.reaches(2_000)
    assert not meter.exact
    assert meter.count().tokenizer == "estimate"
    assert ">=" in meter.describe() and "(estimate)" in meter.describe()


def test_byte_bounds_answer_without_a_tokenizer() -> None:
    meter = TokenMeter("estimate", 0)
    meter.feed(b"x" * 1000)
    meter.close()
    assert not meter.reaches(1001)  # tokens <= bytes
    assert meter.count().tokenizer == "estimate"


def test_policy_validation_is_actionable() -> None:
    with pytest.raises(ConfigError, match="digest_max_bytes=10"):
        FirewallPolicy(digest_max_bytes=10)
    with pytest.raises(ConfigError, match="min_tokens=-1"):
        FirewallPolicy(min_tokens=-1)


@pytest.mark.parametrize(("tool", "protected"), [
    ("mcp__fs__read_text_file", True),
    ("mcp__filesystem__read_multiple_files", True),
    ("MCP__fs__Read_File", True),
    ("mcp__fs__directory_tree", False),
    ("mcp__fs__read_text_file_and_more", False),
    ("read_text_file", True),
])
def test_mcp_read_tools_are_protected_reads(tool: str, protected: bool) -> None:
    policy = FirewallPolicy()
    assert is_protected_read(tool, policy) is protected
    if protected:
        assert not is_firewallable_tool(tool, policy)
