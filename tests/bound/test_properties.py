"""Properties of bound_record() over arbitrary records and bounds (hypothesis)."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxgate.bound import DEFAULT_BOUND_POLICY, bound_record, emit, measure, parse_marker
from ctxgate.bound.limits import Limits
from ctxgate.bound.marker import marker_block
from ctxgate.bound.measure import escaped_size, text_bytes
from ctxgate.bound.scan import scan
from ctxgate.bound.selectors import parse_selectors
from ctxgate.errors import RecordBoundError

# mostly ASCII, but every code point can appear (controls, CJK, emoji, lone surrogates)
chars = st.characters(max_codepoint=127) | st.characters(min_codepoint=0, max_codepoint=0x10FFFF)
small_text = st.text(chars, max_size=30)
# long outputs: a random piece repeated, with newlines sometimes
long_text = st.builds(lambda piece, n: piece * n, st.text(chars, min_size=1, max_size=12),
                      st.integers(min_value=1, max_value=2_000))
output = small_text | long_text | long_text
parts = st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": output}), max_size=3)
structured = st.fixed_dictionaries({"stdout": output, "exitCode": st.integers(0, 255)})
invocation = st.fixed_dictionaries({
    "toolCallId": small_text, "toolName": small_text,
    "args": st.dictionaries(small_text, small_text | st.integers(), max_size=2),
    "result": output | parts | structured,
})
records = st.fixed_dictionaries(
    {"response": small_text, "toolInvocations": st.lists(invocation, max_size=5)},
    optional={"content": parts, "note": small_text, "usage": st.fixed_dictionaries({"inputTokens": st.integers(0)})},
)


@st.composite
def cases(draw) -> tuple[dict, int]:
    """A record and a bound: mostly a fraction of its size (so cuts happen), sometimes tiny."""
    record = draw(records)
    fraction = draw(st.floats(min_value=0.2, max_value=1.2))
    bound = max(64, int(measure(record) * fraction))
    return record, draw(st.sampled_from([bound, bound, bound, draw(st.integers(64, 2_000))]))


strategies = st.sampled_from(["level", "widest"])
PROFILE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, (*path, i))
    else:
        yield path, value


def pointer(path) -> str:
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in path)


def candidate_paths(record) -> dict[str, object]:
    found = scan(record, Limits(), parse_selectors(DEFAULT_BOUND_POLICY.selectors))
    return {c.path: c for c in found.candidates}


@given(cases(), strategies)
@PROFILE
def test_output_fits_or_the_cause_cannot_be_cut(case, strategy) -> None:
    record, bound = case
    snapshot = copy.deepcopy(record)
    try:
        result = bound_record(record, max_bytes=bound, strategy=strategy)
    except RecordBoundError as err:
        assert record == snapshot
        assert (err.code, err.rule, err.unit, err.limit) == (
            "record_too_large", "max_bytes", "bytes", bound)
        assert err.observed == measure(record)
        cands = candidate_paths(record)
        assert err.path not in cands
        floor = measure(record) - sum(c.size for c in cands.values()) + sum(
            min(c.size, 2 + escaped_size(marker_block(
                kept_bytes=text_bytes(c.text), original_bytes=text_bytes(c.text),
                bound_bytes=bound, keep=c.keep, archive_id=None)))
            for c in cands.values())
        assert floor > bound
        return
    assert record == snapshot  # the input is never mutated
    assert result.serialized_bytes == len(emit(result.record).encode("utf-8")) <= bound
    assert result.original_bytes == measure(record)
    if not result.changed:
        assert result.record is record


@given(cases(), strategies)
@PROFILE
def test_only_truncatable_strings_change_and_their_markers_parse(case, strategy) -> None:
    record, bound = case
    try:
        result = bound_record(record, max_bytes=bound, strategy=strategy)
    except RecordBoundError:
        return
    cands = candidate_paths(record)
    before = dict(leaves(record))
    after = dict(leaves(result.record))
    assert before.keys() == after.keys()  # same shape: every call, key and element survives
    changed = {pointer(p) for p in before if before[p] != after[p]}
    cuts = {c.path: c for c in result.cuts}
    assert changed <= set(cuts) <= set(cands)
    for path, cut in cuts.items():
        text = after[next(p for p in after if pointer(p) == path)]
        marker = parse_marker(text)
        assert marker is not None
        assert (marker.kept_bytes, marker.original_bytes, marker.bound_bytes) == (
            cut.kept_bytes, cut.original_bytes, bound)
        assert cut.original_bytes == text_bytes(cands[path].text)
        assert cut.kept_bytes < cut.original_bytes


@given(cases(), strategies)
@PROFILE
def test_bounding_a_bounded_record_is_a_no_op(case, strategy) -> None:
    record, bound = case
    try:
        first = bound_record(record, max_bytes=bound, strategy=strategy)
    except RecordBoundError:
        return
    again = bound_record(first.record, max_bytes=bound, strategy=strategy)
    assert again.record is first.record and not again.changed
    assert emit(again.record) == emit(first.record)


@given(cases())
@PROFILE
def test_level_never_empties_a_result_while_a_larger_one_survives_whole(case) -> None:
    record, bound = case
    try:
        result = bound_record(record, max_bytes=bound)
    except RecordBoundError:
        return
    cands = candidate_paths(record)
    cut_paths = {c.path for c in result.cuts}
    after = {pointer(p): v for p, v in leaves(result.record)}
    finals = [measure(after[p]) for p in cut_paths]
    if not finals:
        return
    lowest = min(finals)
    for path, cand in cands.items():
        if path not in cut_paths:
            assert cand.size <= lowest + 32 + lowest // 100


@given(cases(), strategies)
@PROFILE
def test_deterministic(case, strategy) -> None:
    record, bound = case
    try:
        one = bound_record(record, max_bytes=bound, strategy=strategy)
    except RecordBoundError as err:
        one = err.to_dict()
    try:
        two = bound_record(copy.deepcopy(record), max_bytes=bound, strategy=strategy)
    except RecordBoundError as err:
        two = err.to_dict()
    if isinstance(one, dict):
        assert one == two
    else:
        assert emit(one.record) == emit(two.record) and one.cuts == two.cuts
