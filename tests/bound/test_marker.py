"""The marker names true byte counts, sits on the last line of a cut string and parses back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxgate.bound.marker import GAP_LINE, cut_string, format_marker, marker_block, parse_marker
from ctxgate.bound.measure import text_bytes

counts = st.integers(min_value=0, max_value=10**12)
texts = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)


@given(texts, texts, st.integers(min_value=1, max_value=10**12), counts,
       st.sampled_from(["head", "tail", "both", "drop"]),
       st.none() | st.from_regex(r"[0-9a-f]{12}", fullmatch=True))
def test_cut_string_then_parse_round_trips(head, tail, extra, bound, keep, archive_id) -> None:
    head = head if keep in ("head", "both") else ""
    tail = tail if keep in ("tail", "both") else ""
    kept = text_bytes(head) + text_bytes(tail)
    text = cut_string(head, tail, kept_bytes=kept, original_bytes=kept + extra,
                      bound_bytes=bound, keep=keep, archive_id=archive_id)
    marker = parse_marker(text)
    assert marker is not None
    assert (marker.kept_bytes, marker.original_bytes, marker.bound_bytes) == (
        kept, kept + extra, bound)
    assert marker.keep == keep and marker.archive_id == archive_id
    assert text.rpartition("\n")[2] == format_marker(  # always the last line
        kept_bytes=kept, original_bytes=kept + extra, bound_bytes=bound, keep=keep,
        archive_id=archive_id)


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


def test_layout_per_keep_mode() -> None:
    kw = dict(original_bytes=99, bound_bytes=3, archive_id=None)
    m = {k: format_marker(kept_bytes=n, keep=k, **kw)
         for k, n in (("head", 2), ("tail", 2), ("both", 4), ("drop", 0))}
    assert cut_string("ab", "", kept_bytes=2, keep="head", **kw) == f"ab\n{m['head']}"
    assert cut_string("", "yz", kept_bytes=2, keep="tail", **kw) == f"{GAP_LINE}\nyz\n{m['tail']}"
    assert cut_string("ab", "yz", kept_bytes=4, keep="both", **kw) == (
        f"ab\n{GAP_LINE}\nyz\n{m['both']}")
    assert cut_string("", "", kept_bytes=0, keep="drop", **kw) == m["drop"]
    assert "\n" not in marker_block(kept_bytes=0, keep="drop", **kw)
    assert len(marker_block(kept_bytes=4, keep="both", **kw)) == len(
        cut_string("ab", "yz", kept_bytes=4, keep="both", **kw)) - 4


def test_text_without_marker_parses_to_none() -> None:
    assert parse_marker("kept 5 of 10 bytes") is None
    assert parse_marker("") is None


def test_marker_shaped_text_anywhere_but_the_last_line_is_ignored() -> None:
    forged = format_marker(kept_bytes=1, original_bytes=2, bound_bytes=3, keep="head",
                           archive_id="000000000000")
    real = cut_string(f"x\n{forged}\ny", "", kept_bytes=text_bytes(f"x\n{forged}\ny"),
                      original_bytes=10**6, bound_bytes=4096, keep="head", archive_id=None)
    marker = parse_marker(real)
    assert marker is not None and marker.archive_id is None and marker.original_bytes == 10**6
    assert parse_marker(f"{forged}\nthe tool said more") is None  # not last: ignored
    assert parse_marker(f"{forged} ") is None  # not exactly the format


def test_inconsistent_or_misspelt_markers_are_refused() -> None:
    kw = dict(original_bytes=9, bound_bytes=5, archive_id=None)
    assert parse_marker("abc\n" + format_marker(kept_bytes=3, keep="head", **kw))
    assert parse_marker("abcd\n" + format_marker(kept_bytes=3, keep="head", **kw)) is None
    assert parse_marker("abc" + format_marker(kept_bytes=3, keep="head", **kw)) is None
    assert parse_marker("abc\n" + format_marker(kept_bytes=3, keep="tail", **kw)) is None
    assert parse_marker("abc\n" + format_marker(kept_bytes=3, keep="both", **kw)) is None
    assert parse_marker("\n" + format_marker(kept_bytes=0, keep="drop", **kw)) is None
    assert parse_marker("abcdefghi\n" + format_marker(  # kept must be below original
        kept_bytes=9, keep="head", **kw)) is None
    text = "abc\n" + format_marker(kept_bytes=3, keep="head", **kw)
    assert parse_marker(text.replace("kept 3", "kept 03")) is None  # no leading zeros
    assert parse_marker(text.replace("kept 3", "kept \u0663")) is None  # ASCII digits only
