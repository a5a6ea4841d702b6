"""Every selector and every selector error, through Archive.expand."""

from __future__ import annotations

import json

import pytest

from ctxgate.archive import Archive
from ctxgate.archive.selectors import parse_line_range, resolve_lines
from ctxgate.errors import UsageError

LINES = b"".join(b"line %d%s\n" % (i, b" ERROR" if i % 10 == 0 else b"") for i in range(1, 101))


@pytest.fixture
def eid(archive: Archive) -> str:
    return archive.put(LINES).short_id


def _body(view) -> list[str]:
    return [ln for ln in view.text.splitlines()[1:] if not ln.startswith(("note:", "next:"))]


@pytest.mark.parametrize(("spec", "total", "want"), [
    ("1:5", 100, (1, 5)), ("-3:-1", 100, (98, 100)), ("95:200", 100, (95, 100)),
    ("-500:2", 100, (1, 2)), ("7", 100, (7, 7)), ("90:", 100, (90, 100)), (":3", 100, (1, 3)),
    ("200:300", 100, (200, 100)),
])
def test_line_ranges_clamp_and_count_from_end(spec: str, total: int, want) -> None:
    assert resolve_lines(parse_line_range(spec), total) == want


@pytest.mark.parametrize("spec", ["0:5", "a:b", "10:5", "3:0"])
def test_bad_line_ranges(spec: str) -> None:
    with pytest.raises(UsageError):
        resolve_lines(parse_line_range(spec), 100)


def test_lines_view_has_gutter_and_exact_lines(archive: Archive, eid: str) -> None:
    v = archive.expand(eid, lines="9:11")
    assert _body(v) == [" 9| line 9", "10| line 10 ERROR", "11| line 11"]
    assert v.line_range == (9, 11) and v.next_hint is None
    assert v.text.startswith(f"[{eid}] lines 9-11 of 100")


def test_head_tail_and_out_of_range(archive: Archive, eid: str) -> None:
    assert _body(archive.expand(eid, head=2)) == ["1| line 1", "2| line 2"]
    assert _body(archive.expand(eid, tail=1)) == ["100| line 100 ERROR"]
    assert "no lines selected" in archive.expand(eid, lines="200:300").text


def test_budget_pages_with_exact_next_hint(archive: Archive, eid: str) -> None:
    v = archive.expand(eid, max_tokens=100)
    assert v.truncated and v.text.rstrip().endswith(f"next: {v.next_hint}")
    a, b = v.line_range
    assert a == 1 and v.next_hint == f"--lines {b + 1}:100"


def test_grep_counts_all_shows_some(archive: Archive, eid: str) -> None:
    v = archive.expand(eid, grep="error", ignore_case=True, max_matches=3)
    assert v.matches == 10 and v.shown_matches == 3
    assert _body(v) == ["10: line 10 ERROR", "20: line 20 ERROR", "30: line 30 ERROR"]
    assert v.next_hint == "--grep error -i --max-matches 3 --lines 31:"
    assert "10 matching lines, showing 3" in v.text


def test_grep_context_and_range(archive: Archive, eid: str) -> None:
    v = archive.expand(eid, grep="ERROR", lines="15:35", context=1)
    assert v.matches == 2
    assert _body(v) == ["19- line 19", "20: line 20 ERROR", "21- line 21", "--",
                        "29- line 29", "30: line 30 ERROR", "31- line 31"]
    v = archive.expand(eid, grep="ERROR", head=25, after=1, before=0)
    assert _body(v) == ["10: line 10 ERROR", "11- line 11", "--", "20: line 20 ERROR",
                        "21- line 21"]
    assert archive.expand(eid, grep="ERROR", tail=5).matches == 1


def test_grep_cross_line_pattern_is_per_line(archive: Archive) -> None:
    e = archive.put(b"ab\ncd\nab cd\n")
    v = archive.expand(e.id, grep=r"ab\s+cd")
    assert v.matches == 1 and _body(v) == ["3: ab cd"]
    assert archive.expand(e.id, grep=r"^cd$").matches == 1


@pytest.mark.parametrize(("pattern", "message"), [
    ("(a", "not a valid regular expression"),
    ("(a+)+$", "refused"),
    ("(x*)*y", "refused"),
    (r"(a)\1", "backreferences"),
])
def test_bad_and_catastrophic_regex(archive: Archive, eid: str, pattern: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        archive.expand(eid, grep=pattern)


@pytest.mark.parametrize("kwargs", [
    {"lines": "1:2", "head": 3}, {"byte_range": "0:4", "lines": "1:2"},
    {"json_pointer": "/a", "grep": "x"}, {"context": 2}, {"head": 0}, {"grep": ""},
    {"grep": "x", "before": -1},
])
def test_conflicting_or_invalid_selectors(archive: Archive, eid: str, kwargs) -> None:
    with pytest.raises(UsageError):
        archive.expand(eid, **kwargs)


def test_bytes_cut_at_utf8_boundaries(archive: Archive) -> None:
    data = "héllo wörld €uro\n".encode()
    e = archive.put(data)
    v = archive.expand(e.id, byte_range="2:4")  # starts inside 'é'
    assert "start moved forward 1 byte" in v.text
    assert v.byte_range == (3, 6) and "llo" in v.text
    v = archive.expand(e.id, byte_range="0:2")  # ends inside 'é'
    assert "end moved back 1 byte" in v.text and v.byte_range == (0, 1)
    v = archive.expand(e.id, byte_range="-5:5")
    assert v.byte_range == (len(data) - 4, len(data))  # -5 falls inside '€'
    with pytest.raises(UsageError):
        archive.expand(e.id, byte_range="x:1")


def test_bytes_pages_a_single_giant_line(archive: Archive) -> None:
    data = b"x" * 100_000
    e = archive.put(data)
    v = archive.expand(e.id, lines="1:1", max_tokens=100)
    assert "line 1 is 100000 bytes" in v.text and v.next_hint.startswith("--bytes ")
    v2 = archive.expand(e.id, byte_range=v.next_hint.split()[1])
    assert v2.byte_range[0] == v.byte_range[1]


DOC = {"items": [{"id": i, "name": f"n{i}"} for i in range(5)], "total": 5, "a/b": {"~x": 1}}


def test_json_pointer_and_keys(archive: Archive) -> None:
    e = archive.put(json.dumps(DOC).encode())
    assert json.loads("\n".join(_body(archive.expand(e.id, json_pointer="/items/2")))) == \
        {"id": 2, "name": "n2"}
    assert _body(archive.expand(e.id, json_pointer="/a~1b/~0x")) == ["1"]
    keys = archive.expand(e.id, keys=True).text
    assert '"items": array[5] of object' in keys and '"total": int = 5' in keys
    sub = archive.expand(e.id, keys=True, json_pointer="/items").text
    assert '"id": int (5/5)  e.g. 0, 1, 2' in sub
    for bad, msg in (("/nope", "no member 'nope'"), ("/items/9", "out of range"),
                     ("/items/x", "not an array index"), ("items", "starts with '/'"),
                     ("/total/x", "is a int")):
        with pytest.raises(UsageError, match=msg):
            archive.expand(e.id, json_pointer=bad)


def test_jsonl_pointer_and_keys(archive: Archive) -> None:
    data = b"".join(json.dumps({"i": i, "lvl": "info" if i % 2 else "warn"}).encode() + b"\n"
                    for i in range(50))
    e = archive.put(data)
    assert _body(archive.expand(e.id, json_pointer="/41/i")) == ["41"]
    keys = archive.expand(e.id, keys=True).text
    assert "JSON Lines" in keys and '"lvl": str (50/50)  e.g. "warn", "info"' in keys
    with pytest.raises(UsageError, match="record index"):
        archive.expand(e.id, json_pointer="/x")


def test_not_json(archive: Archive, eid: str) -> None:
    with pytest.raises(UsageError, match="neither JSON nor JSON Lines"):
        archive.expand(eid, keys=True)


def test_grep_without_the_regex_package(archive: Archive, eid: str, monkeypatch) -> None:
    """`regex` is optional: without it the stdlib engine gives the same results."""
    import sys

    monkeypatch.setitem(sys.modules, "regex", None)  # import regex -> ImportError
    from ctxgate.archive.selectors import compile_line_counter, compile_regex

    assert type(compile_regex("x")).__module__ == "re"
    assert type(compile_line_counter("x")).__module__ == "re"
    v = archive.expand(eid, grep="error", ignore_case=True, max_matches=2)
    assert v.matches == 10 and v.shown_matches == 2
    with pytest.raises(UsageError, match="refused"):
        archive.expand(eid, grep="(a+)+")
