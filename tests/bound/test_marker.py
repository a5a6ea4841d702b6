"""The marker names true byte counts and parses back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxgate.bound.marker import format_marker, marker_block, parse_marker

counts = st.integers(min_value=0, max_value=10**12)


@given(counts, counts, counts, st.sampled_from(["head", "tail", "both", "drop"]),
       st.none() | st.from_regex(r"[0-9a-f]{12}", fullmatch=True))
def test_format_then_parse_round_trips(kept, original, bound, keep, archive_id) -> None:
    text = "before" + marker_block(kept_bytes=kept, original_bytes=original, bound_bytes=bound,
                                   keep=keep, archive_id=archive_id) + "after"
    marker = parse_marker(text)
    assert marker is not None
    assert (marker.kept_bytes, marker.original_bytes, marker.bound_bytes) == (kept, original, bound)
    assert marker.keep == keep and marker.archive_id == archive_id


def test_wording_carries_both_counts_the_bound_and_the_expand_command() -> None:
    text = format_marker(kept_bytes=1046528, original_bytes=4194304, bound_bytes=1048576,
                         keep="both", archive_id="3fa9c2e1ab12")
    assert text == (
        "[ctxgate: kept 1046528 of 4194304 bytes of this tool output (head and tail) to fit "
        "the 1048576-byte record bound; full original: ctxgate expand 3fa9c2e1ab12]"
    )
    assert format_marker(kept_bytes=0, original_bytes=9, bound_bytes=5, keep="drop",
                         archive_id=None).endswith("(none) to fit the 5-byte record bound; "
                                                   "the full original was not stored]")


def test_block_separates_marker_from_kept_text_by_newlines() -> None:
    kw = dict(kept_bytes=1, original_bytes=2, bound_bytes=3, archive_id=None)
    assert marker_block(keep="head", **kw).startswith("\n[")
    assert marker_block(keep="tail", **kw).endswith("]\n")
    assert marker_block(keep="both", **kw)[0] == marker_block(keep="both", **kw)[-1] == "\n"
    assert "\n" not in marker_block(keep="drop", **kw)


def test_text_without_marker_parses_to_none() -> None:
    assert parse_marker("kept 5 of 10 bytes") is None
    assert parse_marker("") is None
