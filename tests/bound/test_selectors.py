"""Selector grammar, matching and keep-mode precedence."""

from __future__ import annotations

import pytest

from ctxgate.bound import bound_record, parse_marker
from ctxgate.bound.limits import Limits
from ctxgate.bound.scan import scan
from ctxgate.bound.selectors import ANY_INDEX, ANY_KEY, parse_selector, parse_selectors
from ctxgate.errors import ConfigError


def test_parse() -> None:
    sel = parse_selector("toolInvocations[*].result[0].text=head")
    assert sel.steps == ("toolInvocations", ANY_INDEX, "result", 0, "text")
    assert sel.keep == "head" and sel.text == "toolInvocations[*].result[0].text"
    assert parse_selector("*.x").steps == (ANY_KEY, "x")
    assert parse_selector("content[*].text").keep == "both"


@pytest.mark.parametrize("spec", ["", "=head", "a..b", "a[x]", "a=middle", "a[*"])
def test_bad_selectors_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError, match="bound selector"):
        parse_selector(spec)


def candidates(record: object, *specs: str) -> dict[str, str]:
    found = scan(record, Limits(), parse_selectors(specs))
    return {c.path: c.keep for c in found.candidates}


def test_subtree_semantics_and_specific_selector_wins() -> None:
    record = {"toolInvocations": [
        {"toolName": "t", "result": "plain", "args": {"q": "no"}},
        {"result": [{"type": "text", "text": "part"}, {"k": ["deep"]}]},
    ], "content": [{"text": "c"}], "response": "r"}
    got = candidates(record, "toolInvocations[*].result=both",
                     "toolInvocations[*].result[*].text=head", "content[*].text=tail")
    assert got == {
        "/toolInvocations/0/result": "both",
        "/toolInvocations/1/result/0/type": "both",
        "/toolInvocations/1/result/0/text": "head",
        "/toolInvocations/1/result/1/k/0": "both",
        "/content/0/text": "tail",
    }


def test_index_and_wildcard_key_steps() -> None:
    record = {"a": [{"x": "0"}, {"x": "1"}], "b": {"x": "2"}}
    assert set(candidates(record, "a[1].x")) == {"/a/1/x"}
    assert set(candidates(record, "*.x")) == {"/b/x"}
    assert candidates(record) == {}


def test_tiny_truncatable_strings_are_never_cut() -> None:
    record = {"toolInvocations": [{"result": [{"type": "text", "text": "y" * 5000}]}]}
    result = bound_record(record, max_bytes=1000)
    part = result.record["toolInvocations"][0]["result"][0]
    assert part["type"] == "text" and parse_marker(part["text"])
