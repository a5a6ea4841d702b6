"""measure() is the exact UTF-8 length of emit(); emit() is valid UTF-8 compact JSON."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.bound.measure import (
    emit,
    emit_bytes,
    escaped_size,
    measure,
    string_size,
    text_bytes,
)

# every code point, lone surrogates and controls included
any_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
scalars = (st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
           | st.floats(allow_nan=False, allow_infinity=False) | any_text)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(any_text, inner, max_size=5),
    max_leaves=30,
)


@given(json_values)
@settings(max_examples=400)
def test_measure_equals_length_of_emitted_utf8(value: object) -> None:
    assert measure(value) == len(emit(value).encode("utf-8")) == len(emit_bytes(value))


@given(json_values)
def test_emitted_bytes_are_valid_utf8_json(value: object) -> None:
    data = emit_bytes(value)
    text = data.decode("utf-8")  # strict: no raw surrogate survives
    json.loads(text)
    assert ", " not in emit([1, 2]) and ": " not in emit({"a": 1})


def test_string_sizes_by_class() -> None:
    assert string_size("x") == 3
    assert string_size("😀") == 6  # 4 UTF-8 bytes + quotes
    assert string_size("\u0000") == 8  # \u0000 + quotes
    assert string_size('"\\\n\r\t\b\f') == 2 + 14
    assert string_size("\ud800") == 8  # lone surrogate escaped, 6 bytes
    assert string_size("\x7f\u2028\u2029") == 2 + 1 + 3 + 3  # not escaped
    assert string_size("中") == 5
    assert emit("\ud83d") == '"\\ud83d"'


def test_escaped_size_is_additive_over_concatenation() -> None:
    pieces = ["ab", "\ud83d", "\ude00", "\n", "中", "😀", "\x01"]
    assert escaped_size("".join(pieces)) == sum(escaped_size(p) for p in pieces)


def test_text_bytes_counts_utf8_of_the_text_not_the_escapes() -> None:
    assert text_bytes("\u0000\n") == 2
    assert text_bytes("中😀") == 7
    assert text_bytes("\ud800") == 3


def test_scalars_and_containers() -> None:
    assert measure(None) == 4 and measure(True) == 4 and measure(False) == 5
    assert measure(1.5) == 3 and measure(-12) == 3
    assert measure({}) == 2 and measure([]) == 2
    assert measure({"a": [1, 2]}) == len('{"a":[1,2]}')
    assert measure((1, "x")) == len('[1,"x"]')
