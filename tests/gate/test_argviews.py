"""Budgeted argument views: the seed's unit cases, then size invariants as properties."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxgate.gate.argviews import (
    MIN_KEPT_CHARS,
    ArgumentView,
    FullViewUnfit,
    TooLarge,
    build_state,
    cut_view,
    fit_arguments,
    truncate_middle,
)
from ctxgate.gate.backends.base import StateLimits, state_size
from ctxgate.gate.pointers import is_full_view, resolve


def dumps(v) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def size(v) -> tuple[int, int]:
    s = dumps(v)
    return len(s), len(s.encode("utf-8"))


# ---------------------------------------------------------------- the seed's cases


def test_full_views_match_whole_segments_only():
    assert is_full_view("/command", ["/command"])
    assert is_full_view("/edits/0/new", ["/edits"])
    assert not is_full_view("/commands", ["/command"])
    assert not is_full_view("/command", ["/commands"])
    assert is_full_view("/anything", [""])
    assert not is_full_view("/command", [])


def test_pointers_escape_tilde_and_slash():
    args = {"a/b": "x" * 1_000, "c~d": "y" * 1_000}
    view = cut_view(args, cap=MIN_KEPT_CHARS)
    assert sorted(o.argument for o in view.omitted) == ["/a~1b", "/c~0d"]
    protected = cut_view(args, full_views=["/a~1b"], cap=MIN_KEPT_CHARS)
    assert len(protected.omitted) == 1
    assert protected.arguments["a/b"] == args["a/b"]
    assert resolve(args, "/a~1b") == args["a/b"]


def test_fit_cuts_the_longest_strings_first():
    args = {"short": "s" * 900, "long": "l" * 10_000}
    view = fit_arguments(args, budget_chars=3_000)
    assert isinstance(view, ArgumentView)
    assert view.arguments["short"] == args["short"]
    assert [o.argument for o in view.omitted] == ["/long"]
    n = len(dumps(view.arguments))
    assert 2_900 <= n <= 3_000, n
    assert view.args_chars == n


def test_a_cut_never_grows_the_arguments():
    args = {
        "near": "n" * 401,
        "escaped": "\n" * 600,
        "cjk": "汉" * 450,
        "long": "l" * 5_000,
        "nested": [{"deep": "d" * 430}],
    }
    chars, nbytes = size(args)
    for cap in [MIN_KEPT_CHARS, 401, 420, 450, 1_000, 4_999]:
        view = cut_view(args, cap=cap)
        c, b = size(view.arguments)
        assert c <= chars, f"cap {cap}: chars grew"
        assert b <= nbytes, f"cap {cap}: bytes grew"
        for o in view.omitted:
            assert "[truncated " in resolve(view.arguments, o.argument), o.argument
    view = cut_view(args, cap=400)
    assert view.arguments["near"] == args["near"]
    assert all(o.argument != "/near" for o in view.omitted)


def test_a_state_rule_cut_never_grows_the_state():
    key = "键_long_non_ascii_key_键键键键键键"
    args = {"near": "n" * 450, key: "k" * 470, "long": "l" * 5_000, "cjk": "汉" * 600}
    chars, nbytes = state_size(build_state("go", "t", args))
    for cap in [MIN_KEPT_CHARS, 420, 460, 1_000, 4_999]:
        view = cut_view(args, cap=cap, rule="state", user_request="go", tool="t")
        c, b = state_size(build_state("go", "t", view))
        assert c <= chars and b <= nbytes, f"cap {cap}: ({c}, {b}) > ({chars}, {nbytes})"
    lean = cut_view(args, cap=MIN_KEPT_CHARS, rule="state")
    every = cut_view(args, cap=MIN_KEPT_CHARS, rule="arguments")
    assert any(o.argument == f"/{key}" for o in every.omitted)
    assert all(o.argument != f"/{key}" for o in lean.omitted)


def test_fit_blames_the_full_view_that_does_not_fit():
    args = {"command": "c" * 10_000, "note": "n" * 10_000}
    assert fit_arguments(args, full_views=["/command"], budget_chars=3_000) == FullViewUnfit(
        argument="/command", chars=10_000)
    # with room for nothing at all, it is simply too large
    assert isinstance(fit_arguments(args, full_views=["/command"], budget_chars=1), TooLarge)


# ---------------------------------------------------------------- further rules


def test_whole_when_it_fits_and_args_untouched():
    args = {"path": "/tmp/x", "content": "y" * 10_000}
    original = copy.deepcopy(args)
    view = fit_arguments(args, budget_chars=48_000)
    assert view.arguments is args and view.omitted == ()
    fit_arguments(args, budget_chars=2_000)
    assert args == original


def test_marker_counts_exactly_what_was_cut():
    text = "a" * 300 + "MIDDLE" + "z" * 300
    out = truncate_middle(text, 400)
    assert out.startswith("a" * 200) and out.endswith("z" * 200)
    assert "\n[truncated 206 chars]\n" in out
    assert truncate_middle("short", 400) == "short"
    view = fit_arguments({"s": text * 10}, budget_chars=1_000)
    (o,) = view.omitted
    shown = view.arguments["s"]
    assert o.chars == len(text * 10) - (len(shown) - len(f"\n[truncated {o.chars} chars]\n"))


def test_floor_is_400_chars_kept_else_too_large():
    args = {f"k{i}": "v" * 1_000 for i in range(10)}  # 10 strings, each ≥ 400 at the floor
    result = fit_arguments(args, budget_chars=3_000)
    assert isinstance(result, TooLarge)
    assert result.chars > 3_000  # the smallest view the gate may send, reported


def test_full_view_for_everything_is_never_cut():
    args = {"a": "x" * 5_000}
    result = fit_arguments(args, full_views=[""], budget_chars=1_000)
    assert result == FullViewUnfit(argument="/a", chars=5_000)


def test_backend_state_limits_bind_in_bytes():
    args = {"text": "汉" * 20_000}  # 3 bytes per character
    limits = StateLimits(max_bytes=12_000)
    view = fit_arguments(args, user_request="translate it", tool="t", limits=limits)
    assert isinstance(view, ArgumentView) and view.omitted
    c, b = state_size(build_state("translate it", "t", view))
    assert b <= 12_000 and (c, b) == (view.state_chars, view.state_bytes)
    assert b > 12_000 - 300  # the largest cap that fits, not just any


def test_non_json_arguments_are_rejected():
    import pytest

    with pytest.raises(ValueError):
        fit_arguments({"x": float("nan")})


# ---------------------------------------------------------------- properties

_text = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=50),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", "汉", "\n", '"', "é", "🙂", "\x01"]),
              st.integers(0, 3_000)),
)
_keys = st.text(alphabet=st.sampled_from(list("ab/~键_ é")), min_size=1, max_size=12)
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), _text),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=st.dictionaries(_keys, _json, min_size=1, max_size=5),
       budget=st.integers(50, 8_000),
       max_bytes=st.one_of(st.none(), st.integers(200, 20_000)),
       request=st.text(max_size=60))
def test_state_sent_never_exceeds_the_budget(args, budget, max_bytes, request):
    limits = StateLimits(max_bytes=max_bytes)
    result = fit_arguments(args, user_request=request, tool="t", budget_chars=budget, limits=limits)
    if isinstance(result, ArgumentView):
        a_chars, _ = size(result.arguments)
        s_chars, s_bytes = state_size(build_state(request, "t", result))
        assert a_chars <= budget
        assert max_bytes is None or s_bytes <= max_bytes
        assert (a_chars, s_chars, s_bytes) == (result.args_chars, result.state_chars,
                                               result.state_bytes)
        for o in result.omitted:
            shown = resolve(result.arguments, o.argument)
            assert f"[truncated {o.chars} chars]" in shown
            assert len(resolve(args, o.argument)) - o.chars == len(shown) - len(
                f"\n[truncated {o.chars} chars]\n")
    else:
        # refused only when even the floor does not fit under either rule
        for rule in ("state", "arguments"):
            floor = cut_view(args, cap=MIN_KEPT_CHARS, rule=rule, user_request=request, tool="t")
            a_chars, _ = size(floor.arguments)
            _, s_bytes = state_size(build_state(request, "t", floor))
            assert a_chars > budget or (max_bytes is not None and s_bytes > max_bytes)


@settings(max_examples=100, deadline=None)
@given(args=st.dictionaries(_keys, _json, min_size=1, max_size=5), cap=st.integers(400, 3_100))
def test_a_cut_never_grows_chars_or_bytes(args, cap):
    chars, nbytes = size(args)
    view = cut_view(args, cap=cap, rule="arguments")
    c, b = size(view.arguments)
    assert c <= chars and b <= nbytes
    whole = state_size(build_state("r", "t", args))
    lean = cut_view(args, cap=cap, rule="state", user_request="r", tool="t")
    sc, sb = state_size(build_state("r", "t", lean))
    assert sc <= whole[0] and sb <= whole[1]
