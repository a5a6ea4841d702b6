"""Issue 11: a test's failure report far above the failed step's end is shown in the digest.

CI logs of test runs print each failing test's report (its name, the assertion, the diff, the
frames) and only hundreds of lines later the summary and the runner's ``exited with 1``. The
digest used to spend its budget on the step's end and list the report, at best, among the
blocks not shown. The excerpts below are written for these tests in the shapes the runners
print (go test, ScalaTest, Maven Surefire, Gradle, PHPUnit, minitest, Mocha, pytest, cargo
test, Jest); each integration test fails on the digest before this change.
"""

from __future__ import annotations

import re

import pytest

from ctxgate.archive import Archive
from ctxgate.firewall import FirewallPolicy, firewall
from ctxgate.firewall.blocks import KnownLine, find_blocks, pick_blocks, report_owner
from ctxgate.tokens import count_tokens

POLICY = FirewallPolicy(min_tokens=0)

HEADERS = [
    ("--- FAIL: TestParseHeader (0.02s)", "TestParseHeader"),
    ("    --- FAIL: TestParseHeader/empty (0.00s)", "TestParseHeader/empty"),
    ("[info] - decodes a chunked body *** FAILED ***", "decodes a chunked body"),
    # Surefire 3.x: the class and method joined by a dot, " -- " before the time, [ERROR] first
    ("[ERROR] com.example.CodecTest.parsesEmptyBody -- Time elapsed: 0.011 s <<< ERROR!",
     "com.example.CodecTest.parsesEmptyBody"),
    ("not ok 401 - parses padded", "parses padded"),
    ("parsesEmptyBody(com.example.CodecTest)  Time elapsed: 0.031 sec  <<< FAILURE!",
     "parsesEmptyBody(com.example.CodecTest)"),
    ("com.example.CodecTest > parsesEmptyBody FAILED", "com.example.CodecTest > parsesEmptyBody"),
    ("1) App\\Tests\\CodecTest::testEmptyBody", "App\\Tests\\CodecTest::testEmptyBody"),
    ("CodecTest#test_empty_body [test/codec_test.rb:12]:", "CodecTest#test_empty_body"),
    ("  2) codec decodes an empty body:", "codec decodes an empty body"),
    ("______________________________ test_empty_body ______________________________",
     "test_empty_body"),
    ("FAILED tests/test_codec.py::test_empty_body - AssertionError", "tests/test_codec.py::test_empty_body"),
    ("---- codec::empty_body stdout ----", "codec::empty_body"),
    ("  ✕ decodes an empty body (12 ms)", "decodes an empty body (12 ms)"),
]


@pytest.mark.parametrize(("line", "owner"), HEADERS)
def test_report_headers_name_their_test(line: str, owner: str) -> None:
    assert report_owner(line) == owner


@pytest.mark.parametrize("line", [
    "1) install the dependencies", "[info] - decodes a chunked body", "ok  \texample.com/codec\t0.1s",
    "Tests run: 12, Failures: 0, Errors: 0", "  6) issue #6281: edits fail to validate ranges",
    "------------------------------------------------------------------------",
])
def test_other_lines_head_no_report(line: str) -> None:
    assert report_owner(line) is None


# (framework, report lines, a line of the report's message that must be shown)
REPORTS = [
    ("go", ["=== RUN   TestParseHeader", "--- FAIL: TestParseHeader (0.02s)",
            "    header_test.go:41: got \"a\", want \"b\""], "header_test.go:41"),
    ("scalatest", ["[info] CodecSpec:", "[info] - decodes a chunked body *** FAILED ***",
                   "[info]   \"abc\" did not equal \"abd\" (CodecSpec.scala:27)"], "did not equal"),
    ("surefire", ["Running com.example.CodecTest",
                  "Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.2 sec <<< "
                  "FAILURE! - in com.example.CodecTest",
                  "parsesEmptyBody(com.example.CodecTest)  Time elapsed: 0.031 sec  <<< FAILURE!",
                  "java.lang.AssertionError: expected:<0> but was:<3>",
                  "\tat org.junit.Assert.fail(Assert.java:88)",
                  "\tat com.example.CodecTest.parsesEmptyBody(CodecTest.java:19)"],
     "expected:<0> but was:<3>"),
    ("phpunit", ["There was 1 failure:", "", "1) App\\Tests\\CodecTest::testEmptyBody",
                 "Failed asserting that 3 matches expected 0.", "",
                 "/home/ci/app/tests/CodecTest.php:19"], "Failed asserting that 3"),
    ("minitest", ["Failure:", "CodecTest#test_empty_body [test/codec_test.rb:12]:",
                  "Expected: 0", "  Actual: 3"], "Actual: 3"),
    ("mocha", ["  1) codec decodes an empty body:", "",
               "      AssertionError: expected 3 to equal 0",
               "      at Context.<anonymous> (test/codec.test.js:12:14)"],
     "expected 3 to equal 0"),
    ("pytest", ["=================================== FAILURES ===================================",
                "_______________________________ test_empty_body ________________________________",
                "", "    def test_empty_body():", ">       assert decode(b'') == 0",
                "E       assert 3 == 0", "", "tests/test_codec.py:12: AssertionError"],
     "E       assert 3 == 0"),
    ("cargo", ["failures:", "", "---- codec::empty_body stdout ----",
               "thread 'codec::empty_body' panicked at 'assertion failed: `(left == right)`",
               "  left: `3`,", " right: `0`', src/codec.rs:12:9"], "left: `3`"),
    ("jest", [" FAIL  test/codec.test.js", "  codec", "    ✕ decodes an empty body (12 ms)", "",
              "  ● codec › decodes an empty body", "",
              "    expect(received).toBe(expected)", "    Expected: 0", "    Received: 3"],
     "Received: 3"),
]


def _log(report: list[str]) -> list[str]:
    """A Travis-like job: setup, the report, 400 lines of the run going on, a long step end."""
    lines = ["Worker information", "hostname: 0a1b2c3d@1.worker-org-gce-7", "$ ./ci/test.sh"]
    lines += [f"  compiling module_{i} ({i % 9} files)" for i in range(150)]
    lines += report
    lines += [f"  checking fixture_{i}.json ... done" for i in range(400)]
    lines += [f"  step output {i}: cleaning workspace/build_{i}/intermediate files" for i in range(30)]
    lines += ["make: *** [test] Error 1",
              'The command "./ci/test.sh" exited with 2.', "", "Done. Your build exited with 1."]
    return lines


@pytest.mark.parametrize(("name", "report", "needle"), REPORTS, ids=[r[0] for r in REPORTS])
def test_a_report_far_above_the_steps_end_is_shown(name: str, report: list[str],
                                                   needle: str) -> None:
    lines = _log(report)
    res = firewall("shell", ("\n".join(lines) + "\n").encode(), archive=Archive(), policy=POLICY)
    assert res.digested
    shown = {int(m) for m in re.findall(r"^\s*(\d+)\| ", res.text, re.M)}
    want = next(i for i, x in enumerate(lines, 1) if needle in x)
    assert want in shown, res.text
    assert _number_of(lines, "exited with 2") in shown, res.text  # the step's end too
    assert count_tokens(res.text).count <= 1_800


def _number_of(lines: list[str], needle: str) -> int:
    return next(i for i, x in enumerate(lines, 1) if needle in x)


def test_reports_come_before_the_first_failed_steps_end() -> None:
    report = REPORTS[0][1]
    lines = _log(report)
    known = [KnownLine(number=i, raw=x.encode(), length=len(x.encode()))
             for i, x in enumerate(lines, 1)]
    order = pick_blocks(find_blocks(known), len(lines))
    assert order[0].ends_step
    assert order[1].owner == "TestParseHeader"


def test_a_report_in_the_middle_of_a_long_log_survives_the_scan() -> None:
    """Many later error windows would push the report's window out of the scanner's kept
    windows; a report window is kept in their place (constant memory: at most four)."""
    lines = ["Worker information", "$ ./ci/test.sh"]
    lines += [f"  compiling module_{i}" for i in range(300)]
    lines += REPORTS[6][1]  # pytest
    for k in range(40):  # later noise with error words, each its own window
        lines += [f"  step {k} line {i}" for i in range(80)]
        lines += [f"WARNING:retry: error contacting mirror {k}, retrying"]
        lines += [f"ERROR: mirror {k} unreachable"]
    lines += ['The command "./ci/test.sh" exited with 1.']
    res = firewall("shell", ("\n".join(lines) + "\n").encode(), archive=Archive(), policy=POLICY)
    want = _number_of(lines, "E       assert 3 == 0")
    shown = {int(m) for m in re.findall(r"^\s*(\d+)\| ", res.text, re.M)}
    named = [(int(a), int(b)) for a, b in re.findall(r"--lines (\d+):(\d+)", res.text)]
    assert want in shown or any(a <= want <= b for a, b in named), res.text
