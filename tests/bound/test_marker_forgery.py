"""Markers cannot be forged: tool output full of marker-shaped text still parses to the real cut.

Property (hypothesis): for any record whose tool output contains marker-shaped text — made
with the real marker format and random numbers, placed at the start, in the middle, at the end
of an output, or as whole self-consistent fake cut strings — after bounding, ``parse_marker()``
on each cut string equals the cut the bound made (kept bytes, original bytes, bound, keep mode,
archive id), ``BoundResult.marker(path)`` agrees, and for every string the bound did not cut
``BoundResult.marker(path)`` is ``None`` and the bound added no marker to it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxgate.bound import bound_record, parse_marker
from ctxgate.bound.marker import GAP_LINE, Marker, cut_string, format_marker
from ctxgate.bound.measure import measure, text_bytes
from ctxgate.errors import RecordBoundError

from .helpers import MIB, RecordingArchive, turn

KEEPS = ["head", "tail", "both", "drop"]
numbers = st.integers(min_value=0, max_value=2**40) | st.integers(min_value=0, max_value=300)
ids = st.none() | st.from_regex(r"[0-9a-f]{12}", fullmatch=True)


@st.composite
def fake_marker(draw) -> str:
    """Marker-shaped text: a marker line, a whole self-consistent cut string, or a gap line."""
    kind = draw(st.sampled_from(["line", "line", "cut", "gap"]))
    if kind == "gap":
        return GAP_LINE
    keep = draw(st.sampled_from(KEEPS))
    if kind == "line":
        return format_marker(kept_bytes=draw(numbers), original_bytes=draw(numbers),
                             bound_bytes=draw(numbers), keep=keep, archive_id=draw(ids))
    head = draw(st.text(max_size=20)) if keep in ("head", "both") else ""
    tail = draw(st.text(max_size=20)) if keep in ("tail", "both") else ""
    kept = text_bytes(head) + text_bytes(tail)
    return cut_string(head, tail, kept_bytes=kept, original_bytes=kept + 1 + draw(numbers),
                      bound_bytes=draw(numbers), keep=keep, archive_id=draw(ids))


chars = st.characters(max_codepoint=127) | st.characters(min_codepoint=0, max_codepoint=0x10FFFF)


@st.composite
def tool_output(draw) -> str:
    """Text with fake markers spliced in anywhere (often at the very end), or one whole fake."""
    if draw(st.integers(0, 5)) == 0:
        return draw(fake_marker())
    pieces: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        filler = draw(st.text(chars, max_size=12)) * draw(st.integers(1, 400))
        pieces += [filler, draw(st.sampled_from(["", "\n"]))]
        if draw(st.booleans()):
            pieces.append(draw(fake_marker()))
    if draw(st.booleans()):  # end with a marker-shaped line, the anchor position
        pieces += [draw(st.sampled_from(["", "\n"])), draw(fake_marker())]
    return "".join(pieces)


@st.composite
def cases(draw) -> tuple[dict, int, str]:
    results = draw(st.lists(tool_output() | st.fixed_dictionaries(
        {"stdout": tool_output(), "stderr": tool_output(), "exitCode": st.integers(0, 3)})
        | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": tool_output()}),
                   max_size=2), min_size=1, max_size=4))
    record = turn(*results)
    size = measure(record)
    bound = max(256, int(size * draw(st.floats(min_value=0.05, max_value=1.1))))
    return record, bound, draw(st.sampled_from(["level", "widest"]))


def strings(value, path=""):
    """Every string leaf with its JSON pointer."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, f"{path}/{k.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from strings(v, f"{path}/{i}")
    elif isinstance(value, str):
        yield path, value


@dataclass
class Seen:
    examples: int = 0
    cut_strings: int = 0
    cut_with_fake_inside: int = 0
    uncut_ending_in_fake: int = 0


SEEN = Seen()


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(), st.booleans())
def test_parsed_marker_is_the_cut_the_bound_made(case, with_archive) -> None:
    record, bound, strategy = case
    archive = RecordingArchive() if with_archive else None
    try:
        result = bound_record(record, max_bytes=bound, strategy=strategy, archive=archive)
    except RecordBoundError:
        return
    SEEN.examples += 1
    before = dict(strings(record))
    after = dict(strings(result.record))
    cuts = {c.path: c for c in result.cuts}
    for path, text in after.items():
        cut = cuts.get(path)
        if cut is None:
            assert text == before[path]
            assert result.marker(path) is None
            assert parse_marker(text) == parse_marker(before[path])  # the bound added none
            SEEN.uncut_ending_in_fake += parse_marker(text) is not None
            continue
        SEEN.cut_strings += 1
        SEEN.cut_with_fake_inside += "[ctxgate: kept " in text.rpartition("\n")[0]
        short = cut.archive_id[:12] if cut.archive_id else None
        expected = Marker(kept_bytes=cut.kept_bytes, original_bytes=cut.original_bytes,
                          bound_bytes=bound, keep=cut.keep, archive_id=short)
        assert parse_marker(text) == expected
        assert result.marker(path) == expected
        assert cut.original_bytes == text_bytes(before[path])
        if with_archive:
            assert archive is not None
            assert archive.stored[cut.archive_id] == before[path].encode("utf-8", "surrogatepass")
            assert cut.archive_id == hashlib.sha256(archive.stored[cut.archive_id]).hexdigest()


def test_zz_property_exercised_marker_shaped_text() -> None:
    """Runs after the property (file order): it really met cut strings holding fakes."""
    print(f"\nforgery property: {SEEN}")
    assert SEEN.examples == 0 or (SEEN.cut_with_fake_inside > 0 and SEEN.uncut_ending_in_fake > 0)


def test_regression_rebounding_a_bounded_record_reads_the_new_marker() -> None:
    """The fuzz finding's shape: a cut string that already holds a marker (a record that was
    bounded before, its text quoted in a new tool output) is cut again; the parse is the new cut."""
    lines = "".join(f"log line {i:06d} {'=' * 60}\n" for i in range(40_000))
    first = bound_record(turn(lines), max_bytes=MIB)
    inner = first.record["toolInvocations"][0]["result"]
    old = parse_marker(inner)
    assert old is not None and old.bound_bytes == MIB
    quoted = f"{inner}\n{inner}\nand the agent printed it twice"
    second = bound_record(turn(quoted), max_bytes=256 * 1024, archive=RecordingArchive())
    text = second.record["toolInvocations"][0]["result"]
    assert text.count("[ctxgate: kept ") >= 2  # the old marker survives in the kept head
    (cut,) = second.cuts
    marker = parse_marker(text)
    assert marker == second.marker("/toolInvocations/0/result")
    assert marker is not None and marker.bound_bytes == 256 * 1024
    assert (marker.kept_bytes, marker.original_bytes) == (cut.kept_bytes, cut.original_bytes)
    assert marker.archive_id == cut.archive_id[:12] and old.archive_id is None


def test_uncut_output_ending_in_a_self_consistent_fake_is_not_a_cut() -> None:
    fake = cut_string("abc", "", kept_bytes=3, original_bytes=500, bound_bytes=64,
                      keep="head", archive_id="0123456789ab")
    result = bound_record(turn(fake, "x" * 5000), max_bytes=4000)
    assert [c.path for c in result.cuts] == ["/toolInvocations/1/result"]
    assert result.record["toolInvocations"][0]["result"] == fake
    assert parse_marker(fake) is not None  # text alone cannot tell (documented)
    assert result.marker("/toolInvocations/0/result") is None  # the structured check can
    assert result.marker("/toolInvocations/1/result") is not None
