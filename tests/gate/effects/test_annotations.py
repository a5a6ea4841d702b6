"""MCP annotations: the store (atomic, across processes) and what they may say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxgate.gate.effects.annotations import (
    AnnotationStore,
    annotation_effect,
    split_mcp_name,
)
from ctxgate.gate.effects.model import EffectClass

RO, R, IRR, X = (EffectClass.READ_ONLY, EffectClass.LOCAL_RECOVERABLE,
               EffectClass.LOCAL_IRREVERSIBLE, EffectClass.EXTERNAL)


def info(**hints):
    return {"annotations": hints, "description": "d", "input_schema": None}


@pytest.mark.parametrize(("hints", "trusted", "expected"), [
    ({"readOnlyHint": True}, True, RO),
    ({"readOnlyHint": True}, False, None),  # a claim that lowers caution: trusted servers only
    ({"readOnlyHint": False}, False, X),  # spec defaults: destructive, open world
    ({"readOnlyHint": False, "openWorldHint": False}, False, IRR),
    ({"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}, True, IRR),
    ({"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True}, False, X),
    ({"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}, True, R),
    ({"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}, False, None),
    ({}, True, None),  # no annotations: no evidence
])
def test_annotation_rules(hints, trusted, expected) -> None:
    e = annotation_effect("srv", "tool", info(**hints), trusted=trusted)
    assert (e.effect if e else None) is expected


def test_store_round_trip_and_atomic_replace(tmp_path: Path) -> None:
    tmp_path = tmp_path / "home"
    store = AnnotationStore.in_home(tmp_path)
    assert store.lookup("fs", "write_file") is None
    store.record("fs", [{"name": "write_file", "description": "Write a file",
                         "annotations": {"readOnlyHint": False, "destructive_hint": True},
                         "inputSchema": {"type": "object"}}])
    store.record("gh", [{"name": "create_issue", "annotations": None}])
    fresh = AnnotationStore.in_home(tmp_path)  # another process reads the file
    got = fresh.lookup("FS", "Write_File")
    assert got["annotations"] == {"readOnlyHint": False, "destructiveHint": True}
    assert got["description"] == "Write a file" and got["input_schema"] == {"type": "object"}
    assert fresh.lookup("gh", "create_issue")["annotations"] is None
    store.record("fs", [{"name": "read_file", "annotations": {"readOnlyHint": True}}])
    data = json.loads((tmp_path / "mcp-tools.json").read_text())
    assert set(data["servers"]) == {"fs", "gh"} and set(data["servers"]["fs"]) == {"read_file"}
    assert [p.name for p in tmp_path.iterdir()] == ["mcp-tools.json"]  # no temp files left


def test_a_corrupt_store_knows_nothing(tmp_path: Path) -> None:
    (tmp_path / "mcp-tools.json").write_text("{not json")
    assert AnnotationStore.in_home(tmp_path).lookup("fs", "x") is None


def test_mcp_names() -> None:
    assert split_mcp_name("mcp__github__create_issue") == ("github", "create_issue")
    assert split_mcp_name("mcp__a__b__c") == ("a", "b__c")
    assert split_mcp_name("Bash") is None and split_mcp_name("mcp__only") is None
