"""The reference's cases for bound_record(), plus what its fix got wrong."""

from __future__ import annotations

import copy
import re

import pytest

from ctxgate.bound import BoundPolicy, bound_record, emit, measure, parse_marker
from ctxgate.bound.marker import GAP_LINE, format_marker
from ctxgate.bound.measure import text_bytes
from ctxgate.errors import RecordBoundError, StoreUnavailable

from .helpers import MIB, turn


def results_of(record: dict) -> list:
    return [inv["result"] for inv in record["toolInvocations"]]


def assert_fits(result, bound: int = MIB) -> None:
    assert result.serialized_bytes <= bound
    assert len(emit(result.record).encode("utf-8")) == result.serialized_bytes


def test_two_mib_single_result_survives_with_exactly_one_marker() -> None:
    record = turn("x" * (2 * MIB))
    result = bound_record(record)
    assert_fits(result)
    marked = [r for r in results_of(result.record) if parse_marker(r)]
    assert len(marked) == 1 and len(result.cuts) == 1
    assert re.search(r"kept \d+ of 2097152 bytes", marked[0])
    assert result.record["toolInvocations"][0]["toolName"] == "webfetch"
    assert result.record["response"] == "done" and result.changed


def test_producer_four_mib_maximum_survives_and_keeps_99_percent() -> None:
    result = bound_record(turn("y" * (4 * MIB)))
    assert_fits(result)
    assert result.serialized_bytes >= 0.99 * MIB
    (cut,) = result.cuts
    assert cut.original_bytes == 4 * MIB and 0.98 * MIB < cut.kept_bytes < MIB


def test_two_results_that_each_fit_but_not_together_converge_equally() -> None:
    record = turn("a" * 600_000, "b" * 600_000)
    result = bound_record(record)
    assert_fits(result)
    assert len(result.cuts) == 2
    kept = [c.kept_bytes for c in result.cuts]
    assert abs(kept[0] - kept[1]) <= 2 and min(kept) > 500_000


def test_five_results_converge_with_none_emptied_under_level() -> None:
    record = turn(*[chr(ord("a") + i) * 900_000 for i in range(5)])
    result = bound_record(record)
    assert_fits(result)
    assert result.serialized_bytes >= 0.99 * MIB
    kept = [c.kept_bytes for c in result.cuts]
    assert len(kept) == 5 and min(kept) > 200_000 and max(kept) - min(kept) <= 5


def test_widest_strategy_empties_results_like_the_seed() -> None:
    record = turn(*[chr(ord("a") + i) * 900_000 for i in range(5)])
    result = bound_record(record, strategy="widest")
    assert_fits(result)
    kept = [c.kept_bytes for c in result.cuts]
    assert kept[:3] == [0, 0, 0] and kept[3] > 0
    assert results_of(result.record)[4] == "e" * 900_000  # survives whole


def test_level_leaves_small_results_whole_and_levels_large_ones() -> None:
    record = turn("s" * 1000, "m" * 400_000, "l" * 900_000, "h" * 1_500_000)
    result = bound_record(record)
    assert_fits(result)
    assert results_of(result.record)[0] == "s" * 1000
    assert [c.path for c in result.cuts] == [f"/toolInvocations/{i}/result" for i in (1, 2, 3)]
    levels = [measure(r) for r in results_of(result.record)[1:]]
    assert max(levels) - min(levels) <= 8


def test_every_tool_call_and_its_name_survive() -> None:
    record = turn(*["r" * 400_000 for _ in range(4)], tool="fetch")
    result = bound_record(record)
    for before, after in zip(record["toolInvocations"], result.record["toolInvocations"],
                             strict=True):
        assert {k: v for k, v in after.items() if k != "result"} == {
            k: v for k, v in before.items() if k != "result"}
    assert {k: v for k, v in result.record.items() if k != "toolInvocations"} == {
        k: v for k, v in record.items() if k != "toolInvocations"}


def test_two_mib_response_still_refuses_without_the_value() -> None:
    record = turn("small", response="q" * (2 * MIB))
    with pytest.raises(RecordBoundError) as info:
        bound_record(record)
    err = info.value
    assert (err.code, err.rule, err.path, err.unit) == ("record_too_large", "max_bytes",
                                                        "/response", "bytes")
    assert err.limit == MIB and err.observed == measure(record)
    assert "qqqq" not in str(err) and "qqqq" not in repr(err.to_dict())


@pytest.mark.parametrize("char", ["x", "😀", "\u0000"])
def test_exact_boundary_for_a_field_that_may_not_be_cut(char: str) -> None:
    envelope = measure({"response": ""})
    width = measure(char) - 2
    count, pad = divmod(MIB - envelope, width)
    exact = {"response": char * count + "x" * pad}
    assert measure(exact) == MIB
    assert bound_record(exact).record is exact
    over = {"response": exact["response"] + "x"}
    with pytest.raises(RecordBoundError) as info:
        bound_record(over)
    assert info.value.observed == MIB + 1 and info.value.path == "/response"


@pytest.mark.parametrize("char", ["x", "😀", "\u0000"])
def test_exact_boundary_for_tool_output(char: str) -> None:
    envelope = measure({"toolInvocations": [{"result": ""}]})
    width = measure(char) - 2
    count, pad = divmod(MIB - envelope, width)
    exact = {"toolInvocations": [{"result": char * count + "x" * pad}]}
    assert measure(exact) == MIB
    unchanged = bound_record(exact)
    assert unchanged.record is exact and not unchanged.changed
    over = {"toolInvocations": [{"result": "x" + exact["toolInvocations"][0]["result"]}]}
    trimmed = bound_record(over)
    assert_fits(trimmed)
    assert trimmed.changed and trimmed.serialized_bytes >= MIB - 400


@pytest.mark.parametrize("char", ["中", "😀", "é"])
def test_multibyte_text_is_cut_by_bytes_and_stays_valid(char: str) -> None:
    original = char * (1_300_000 // len(char.encode()))
    result = bound_record(turn(original))
    assert_fits(result)
    assert result.serialized_bytes >= 0.99 * MIB  # bytes, not code units: no 3x over-cut
    cut_text = results_of(result.record)[0]
    cut_text.encode("utf-8")  # strict: no split sequence, no lone surrogate
    marker = parse_marker(cut_text)
    head, gap, rest = cut_text.partition(f"\n{GAP_LINE}\n")
    assert gap and rest.endswith(format_marker(  # the marker is the last line
        kept_bytes=marker.kept_bytes, original_bytes=marker.original_bytes,
        bound_bytes=MIB, keep="both", archive_id=None))
    kept_text = head + rest.rpartition("\n")[0]
    assert set(kept_text) == {char}
    assert marker.kept_bytes == text_bytes(kept_text)
    assert marker.original_bytes == len(original.encode())


def test_surrogate_pair_held_as_two_code_points_is_not_split() -> None:
    text = "a" + "\ud83d\ude00" * 300_000
    result = bound_record({"toolInvocations": [{"result": text}]}, max_bytes=100_000)
    cut = result.record["toolInvocations"][0]["result"]
    head, _, tail = cut.partition("\n[ctxgate")
    assert not ("\ud800" <= head[-1] <= "\udbff")
    tail = tail.split("]\n", 1)[1]
    assert not ("\udc00" <= tail[0] <= "\udfff")


def test_content_part_arrays_are_trimmed() -> None:
    record = {
        "content": [{"type": "text", "text": "p" * 800_000}, {"type": "text", "text": "k" * 9}],
        "toolInvocations": [{"toolName": "mcp", "result": [
            {"type": "text", "text": "t" * 800_000},
            {"type": "image", "mimeType": "image/png", "data": "QUJD" * 100_000},
        ]}],
    }
    result = bound_record(record)
    assert_fits(result)
    paths = {c.path: c for c in result.cuts}
    assert set(paths) == {"/content/0/text", "/toolInvocations/0/result/0/text",
                          "/toolInvocations/0/result/1/data"}
    image = result.record["toolInvocations"][0]["result"][1]
    assert paths["/toolInvocations/0/result/1/data"].keep == "drop"
    assert parse_marker(image["data"]).kept_bytes == 0  # half a base64 payload is useless
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert result.record["content"][1]["text"] == "k" * 9
    assert result.record["content"][0]["type"] == "text"


def test_structured_results_have_their_strings_cut_and_other_values_kept() -> None:
    record = turn({"stdout": "o" * 900_000, "stderr": "e" * 900_000, "exitCode": 2})
    result = bound_record(record)
    assert_fits(result)
    out = results_of(result.record)[0]
    assert out["exitCode"] == 2 and parse_marker(out["stdout"]) and parse_marker(out["stderr"])


def test_keep_modes_per_selector_and_line_boundaries() -> None:
    lines = "".join(f"line {i:06d} {'-' * 80}\n" for i in range(30_000))
    record = turn(lines)
    head = bound_record(record, truncatable=["toolInvocations[*].result=head"])
    tail = bound_record(record, truncatable=["toolInvocations[*].result=tail"])
    both = bound_record(record)
    h, t, b = (results_of(r.record)[0] for r in (head, tail, both))
    assert h.startswith("line 000000") and h.endswith("original was not stored]")
    assert h.split("\n[ctxgate")[0].endswith("\n")  # cut at a line boundary
    t_body = t.rpartition("\n")[0]  # the marker is always the last line
    assert t.startswith(GAP_LINE + "\nline ") and t_body.endswith("line 029999 " + "-" * 80 + "\n")
    assert t.endswith("(tail) to fit the 1048576-byte record bound; the full original was not stored]")
    b_body = b.rpartition("\n")[0]
    assert b.startswith("line 000000") and b_body.endswith(lines[-50:])
    assert b_body.split(f"\n{GAP_LINE}\n")[0].endswith("\n")  # head cut at a line boundary
    for r in (head, tail, both):
        assert r.serialized_bytes >= 0.99 * MIB and r.serialized_bytes <= MIB


def test_nothing_outside_the_selectors_is_cut() -> None:
    record = turn("z" * 2 * MIB)
    with pytest.raises(RecordBoundError) as info:
        bound_record(record, truncatable=["content[*].text"])
    assert info.value.path == "/toolInvocations/0/result"


def test_archive_stores_full_originals_and_marker_names_the_id(recording_archive) -> None:
    original = "w" * (2 * MIB)
    result = bound_record(turn(original, tool="webfetch"), archive=recording_archive)
    assert_fits(result)
    (cut,) = result.cuts
    assert recording_archive.stored[cut.archive_id] == original.encode()
    marker = parse_marker(results_of(result.record)[0])
    assert marker.archive_id == cut.archive_id[:12]
    (meta,) = recording_archive.metas
    assert meta.tool == "webfetch" and meta.reason == "bound"
    assert meta.extra["path"] == "/toolInvocations/0/result"


def test_archive_failure_does_not_lose_the_turn() -> None:
    class Broken:
        def put(self, data, meta):
            raise StoreUnavailable("disk full")

    result = bound_record(turn("v" * (2 * MIB)), archive=Broken())
    assert_fits(result)
    (cut,) = result.cuts
    assert cut.archive_id is None and "disk full" in cut.archive_error
    assert parse_marker(results_of(result.record)[0]).archive_id is None


def test_input_is_never_mutated_and_untouched_parts_are_shared() -> None:
    record = turn("a" * 700_000, "b" * 700_000)
    snapshot = copy.deepcopy(record)
    result = bound_record(record)
    assert record == snapshot
    assert result.record["usage"] is record["usage"]
    assert result.record["toolInvocations"] is not record["toolInvocations"]


def test_bound_too_small_for_the_markers_refuses() -> None:
    with pytest.raises(RecordBoundError) as info:
        bound_record(turn("a" * 5000), max_bytes=200)
    assert info.value.rule == "max_bytes" and info.value.limit == 200


def test_policy_values_are_used_and_validated() -> None:
    policy = BoundPolicy(max_bytes=10_000, strategy="widest")
    result = bound_record(turn("a" * 20_000, "b" * 9000), policy=policy)
    assert result.serialized_bytes <= 10_000 and result.max_bytes == 10_000
    assert results_of(result.record)[1] == "b" * 9000 or result.cuts[0].kept_bytes == 0
    from ctxgate.errors import ConfigError

    with pytest.raises(ConfigError, match="strategy"):
        BoundPolicy(strategy="random")
    with pytest.raises(ConfigError, match="max_bytes"):
        BoundPolicy(max_bytes=0)
    with pytest.raises(ConfigError, match="keep mode"):
        BoundPolicy(selectors=("content[*].text=middle",))
