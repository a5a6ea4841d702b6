"""Structural JSON previews: valid JSON, with values, for JSON, JSON Lines and JSON + noise."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.firewall import FirewallPolicy, firewall
from ctxgate.firewall.jsonpreview import json_preview


def pr_view() -> dict:
    return {"number": 1245, "title": "Fix the thing", "state": "MERGED", "draft": False,
            "body": "b" * 5_000, "files": [{"path": "a.rs", "additions": 3},
                                          {"path": "b.rs", "additions": 5}]}


def test_single_5000_char_json_line_gives_valid_preview() -> None:
    doc = json.dumps(pr_view())
    assert len(doc) > 5_000 and "\n" not in doc
    result = firewall("shell", doc, command="gh pr view 1245 --json body,files",
                      policy=FirewallPolicy(min_tokens=100, dataset_commands=()))
    assert result.reason == "digest"
    assert result.digest is not None and result.digest.form == "json"
    line = next(ln for ln in result.text.splitlines() if ln.startswith('{"preview"'))
    preview = json.loads(line)  # valid JSON, never a byte-cut of the document
    root = preview["root"]
    assert root["keys"] == 6
    assert root["fields"]["state"] == {"type": "string", "value": "MERGED"}
    assert root["fields"]["number"]["value"] == 1245
    assert root["fields"]["draft"]["value"] is False
    assert root["fields"]["body"]["chars"] == 5_000
    assert root["fields"]["body"]["preview"].endswith("…")
    assert root["fields"]["files"]["items"] == 2
    assert root["fields"]["files"]["sample"][1]["fields"]["path"]["value"] == "b.rs"
    assert "--json /body" in result.text and "--keys" in result.text


def test_field_cap_reports_omitted_keys() -> None:
    doc = {f"k{i}": i for i in range(40)}
    p = json.loads(json_preview(json.dumps(doc), max_bytes=100_000).text)
    assert len(p["root"]["fields"]) == 32 and p["root"]["omitted_keys"] == 8


def test_json_lines() -> None:
    text = "\n".join(json.dumps({"id": i, "name": f"n{i}"}) for i in range(500)) + "\n"
    p = json_preview(text, max_bytes=4_000)
    assert p is not None and p.format == "jsonl" and p.records == 500
    doc = json.loads(p.text)
    assert doc["keys"] == {"id": 500, "name": 500}
    assert doc["sample"][0]["fields"]["id"]["value"] == 0
    assert doc["sample"][-1]["fields"]["id"]["value"] == 499


def test_json_with_trailing_noise() -> None:
    p = json_preview(json.dumps({"a": [1, 2, 3]}) + "\n[exit:1]\n", max_bytes=4_000)
    assert p is not None and p.format == "json+trailing"
    doc = json.loads(p.text)
    assert doc["trailing"] == {"bytes": 8, "text": "[exit:1]"}
    assert doc["root"]["fields"]["a"]["items"] == 3


def test_not_json() -> None:
    assert json_preview("00001 compiling\n00002 compiling\n", max_bytes=4_000) is None
    assert json_preview("hello", max_bytes=4_000) is None
    assert json_preview('{"a": 1} and then a whole log ' + "x" * 50_000, max_bytes=4_000) is None


def test_nan_stays_valid_json() -> None:
    p = json_preview('{"a": NaN, "b": Infinity}', max_bytes=4_000)
    doc = json.loads(p.text)
    assert doc["root"]["fields"]["a"] == {"type": "number", "text": "nan"}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=12), inner,
                                                               max_size=8),
    max_leaves=60,
)


@settings(max_examples=80, deadline=None)
@given(value=_json, budget=st.integers(200, 6_000))
def test_preview_is_valid_json_within_budget(value, budget: int) -> None:
    p = json_preview(json.dumps(value), max_bytes=budget)
    if p is not None:
        assert len(p.text.encode()) <= budget
        json.loads(p.text)
        assert p == json_preview(json.dumps(value), max_bytes=budget)


def test_lone_surrogates_and_separators_are_escaped() -> None:
    doc = '{"a": "\\ud800 x", "b\\u2028": "\\u0085"}'
    p = json_preview(doc, max_bytes=4_000)
    p.text.encode("utf-8")  # encodable: no lone surrogate left raw
    assert "\n" not in p.text and len(p.text.splitlines()) == 1
    assert json.loads(p.text)["root"]["fields"]["a"]["value"] == "\ud800 x"
    result = firewall("shell", doc * 300, policy=FirewallPolicy(min_tokens=10))
    result.text.encode("utf-8")
