"""Structural limits refuse with rule, path, observed and limit; 0 disables each."""

from __future__ import annotations

import pytest

from ctxgate.bound import BoundPolicy, bound_record
from ctxgate.bound.limits import HARD_MAX_DEPTH, json_pointer
from ctxgate.errors import RecordBoundError


def refusal(record: object, **policy: int) -> RecordBoundError:
    with pytest.raises(RecordBoundError) as info:
        bound_record(record, policy=BoundPolicy(**policy))
    return info.value


def nested(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_node_limit() -> None:
    record = {"a": list(range(1000)), "b": [list(range(1000)) for _ in range(8)]}
    err = refusal(record)
    assert (err.code, err.rule, err.unit, err.limit) == (
        "record_limit_exceeded", "max_nodes", "nodes", 8192)
    assert err.observed == 8193 and err.path.startswith("/b/")
    assert bound_record(record, policy=BoundPolicy(max_nodes=0)).changed is False


def test_depth_limit_allows_sixteen_levels_and_refuses_seventeen() -> None:
    assert bound_record(nested(16)).changed is False
    err = refusal({"x": nested(16)})
    assert (err.rule, err.observed, err.limit, err.unit) == ("max_depth", 17, 16, "levels")
    assert err.path == "/x" + "/0" * 15
    assert bound_record(nested(40), policy=BoundPolicy(max_depth=0)).changed is False


def test_cycle_and_hard_depth_cap_are_refused_with_depth_disabled() -> None:
    loop: list = []
    loop.append(loop)
    err = refusal({"l": loop}, max_depth=0)
    assert (err.rule, err.path) == ("json_value", "/l/0") and "cycle" in str(err)
    err = refusal(nested(HARD_MAX_DEPTH + 1), max_depth=0)
    assert err.rule == "max_depth" and err.limit == HARD_MAX_DEPTH


def test_array_length_limit() -> None:
    err = refusal({"toolInvocations": [{"result": list(range(1025))}]})
    assert (err.rule, err.path, err.observed, err.limit, err.unit) == (
        "max_array_length", "/toolInvocations/0/result", 1025, 1024, "elements")
    assert bound_record(list(range(1024))).changed is False


def test_object_entries_limit() -> None:
    err = refusal({"m": {f"k{i}": i for i in range(257)}})
    assert (err.rule, err.path, err.observed, err.limit) == ("max_object_entries", "/m", 257, 256)
    assert not bound_record({"m": {f"k{i}": i for i in range(257)}},
                            policy=BoundPolicy(max_object_entries=0)).changed


def test_key_length_limit_in_code_points() -> None:
    key = "😀" * 513
    err = refusal({"a": {key: 1}})
    assert (err.rule, err.observed, err.limit, err.unit) == (
        "max_key_length", 513, 512, "code points")
    assert err.path == "/a/" + key  # the key is the path, never a value
    assert not bound_record({"😀" * 512: 1}).changed


def test_non_json_values_are_refused_with_their_path() -> None:
    for value, what in ((float("nan"), "non-finite"), ({1, 2}, "set"), (b"x", "bytes")):
        err = refusal({"usage": {"cost": value}})
        assert (err.code, err.rule, err.path) == ("record_not_json", "json_value", "/usage/cost")
        assert what in str(err)
    err = refusal({"d": {1: "x"}})
    assert err.path == "/d" and "int key" in str(err)


def test_json_pointer_escapes() -> None:
    assert json_pointer(["a/b", "c~d", 3]) == "/a~1b/c~0d/3"
    assert json_pointer([]) == ""
