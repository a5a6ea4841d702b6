"""The planners and the code-point-safe cut helpers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxgate.bound.measure import escaped_size
from ctxgate.bound.trim import cut_text, plan_level, plan_widest, prefix_fit, suffix_fit

texts = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=200)


@given(texts, st.integers(min_value=0, max_value=1300))
def test_prefix_fit_is_the_longest_fitting_prefix(text: str, budget: int) -> None:
    j, size = prefix_fit(text, budget)
    assert size == escaped_size(text[:j]) <= budget
    if j < len(text):
        longer = escaped_size(text[:j + 1])
        pair = "\ud800" <= text[j] <= "\udbff" and j + 1 < len(text) and "\udc00" <= text[j + 1] <= "\udfff"
        assert longer > budget or pair or (j and "\ud800" <= text[j - 1] <= "\udbff")


@given(texts, st.integers(min_value=0, max_value=1300))
def test_suffix_fit_is_the_longest_fitting_suffix(text: str, budget: int) -> None:
    j, size = suffix_fit(text, budget)
    assert size == escaped_size(text[j:]) <= budget
    if j > 0 and not ("\udc00" <= text[j - 1] <= "\udfff"):
        assert escaped_size(text[j - 1:]) > budget


@given(texts, st.integers(min_value=0, max_value=1300), st.sampled_from(["head", "tail", "both"]),
       st.integers(min_value=0, max_value=64))
def test_cut_text_fits_and_keeps_ends(text, budget, keep, snap) -> None:
    head, tail, kept = cut_text(text, budget, keep, snap)
    assert escaped_size(head) + escaped_size(tail) <= budget
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + len(tail) <= len(text)
    assert kept == len((head + tail).encode("utf-8", "surrogatepass"))


def test_line_snap_moves_to_a_near_newline_only() -> None:
    text = ("abcdefghi\n" * 10_000)
    j, size = prefix_fit(text, 50_005, snap=200)
    assert text[:j].endswith("\n") and 50_005 - 11 <= size <= 50_005  # "\n" takes 2 bytes
    j, _ = prefix_fit("x" * 100_000, 50_005, snap=200)
    assert j == 50_005


def test_plan_level_water_fills() -> None:
    sizes = [100, 5_000, 10_000, 40_000]
    floors = [200, 200, 200, 200]
    targets = plan_level(sizes, floors, [False] * 4, 20_000)
    assert targets[0] == 100 and targets[1] == 5_000
    assert targets[2] == targets[3] and sum(targets) <= 20_000 and sum(targets) >= 19_998
    assert plan_level(sizes, floors, [False] * 4, 500) is None


def test_plan_level_drops_atomic_parts_whole() -> None:
    targets = plan_level([10_000, 10_000], [200, 200], [True, False], 12_000)
    assert targets[0] in (200, 10_000) and sum(targets) <= 12_000
    assert targets == [200, 10_000]


def test_plan_widest_charges_the_widest_first() -> None:
    targets = plan_widest([1_000, 9_000, 9_000], [100, 100, 100], [False] * 3, 12_000)
    assert targets == [1_000, 2_000, 9_000]
    assert plan_widest([1_000, 1_000], [100, 100], [False] * 2, 150) is None
