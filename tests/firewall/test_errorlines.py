"""Lines that matter: classification of real-world log lines and fair selection."""

from __future__ import annotations

import pytest

from ctxgate.firewall.errorlines import Hit, classify_line, select_hits


@pytest.mark.parametrize(("line", "kind"), [
    ("[ERROR] Failed to execute goal org.apache.maven.plugins", "error"),
    ("error: cannot find symbol", "error"),
    ("src/x.c:3:1: error: expected ';' before '}' token", "error"),
    ("error[E0308]: mismatched types", "error"),
    ("make: *** [Makefile:12: all] Error 2", "error"),
    ("npm ERR! code ELIFECYCLE", "error"),
    ("bash: foo: command not found", "error"),
    ("FAILED tests/test_x.py::test_a - assert 1 == 2", "failure"),
    ("Tests run: 5, Failures: 1, Errors: 0, Skipped: 0", "failure"),
    ("Finished: FAILURE", "failure"),
    ("Traceback (most recent call last):", "traceback"),
    ("Caused by: java.io.IOException: boom", "traceback"),
    ("java.lang.NullPointerException", "exception"),
    ("ValueError: invalid literal for int()", "exception"),
    # Node's errors carry their code in brackets
    ("AssertionError [ERR_ASSERTION]: Missing expected exception (RangeError).", "exception"),
    ("    TypeError [Error]: Cannot read properties of undefined (reading 'amount')",
     "exception"),
    ("thread 'main' panicked at src/main.rs:3:5", "exception"),
    ("    at org.foo.Bar.baz(Bar.java:12)", "frame"),
    ('  File "x.py", line 3, in <module>', "frame"),
    ("Process exited with code 1", "exit"),
    ("subprocess returned non-zero exit status 2", "exit"),
    ("warning: unused variable `x`", "warning"),
    ("[WARNING] Using platform encoding", "warning"),
])
def test_lines_that_matter(line: str, kind: str) -> None:
    assert classify_line(line) == kind


@pytest.mark.parametrize("line", [
    "Tests run: 5, Failures: 0, Errors: 0, Skipped: 0",
    "0 errors, 0 warnings",
    "gcc -Werror -O2 -c x.c",
    "compiling error_log.c",
    "BUILD SUCCESS",
    "all good",
    "test result: ok. 12 passed; 0 failed",
])
def test_look_alikes_are_ignored(line: str) -> None:
    assert classify_line(line) is None


def hit(n: int, kind: str = "error") -> Hit:
    return Hit(number=n, text=f"line {n}", length=7, kind=kind)


def test_round_robin_over_clusters() -> None:
    trace = [hit(100, "exception")] + [hit(n, "frame") for n in range(101, 140)]
    second = [hit(500)]
    warn = [hit(300, "warning")]
    chosen = select_hits(trace + second + warn, limit=4)
    numbers = [h.number for h in chosen]
    assert 500 in numbers and 100 in numbers and 300 in numbers
    assert numbers == sorted(numbers)


def test_excluded_ranges_and_limit() -> None:
    hits = [hit(n) for n in (5, 50, 95)]
    assert [h.number for h in select_hits(hits, exclude=[range(1, 21)], limit=10)] == [50, 95]
    assert select_hits(hits, limit=0) == []
