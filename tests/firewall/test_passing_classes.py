"""Output of Maven Surefire test classes that passed (issue 11, "show the failure"): a passing
test prints the stack trace of an exception it handled, and that block was shown before the
failure's own report, taking its room. Surefire's per-class summary says which classes passed
(``Tests run: 4, Failures: 0, Errors: 0 … -- in Class``): the scanner records those classes and
their lines, and blocks printed there are shown after every other block, never while a
failure is shown only in part. The excerpt is written in Surefire 3.x's format for this test
(the own Maven corpus of ``scripts/digest_dev/maven_logs.py`` has the real thing; it needs
Maven plugins offline, which a test cannot assume)."""

from __future__ import annotations

import re

from ctxgate.archive import Archive
from ctxgate.firewall import FirewallPolicy, OutputScanner, firewall


def _trace(exc: str, n: int) -> list[str]:
    return [exc] + [f"\tat com.acme.core.Step{k}.run(Step{k}.java:{10 + k})" for k in range(n)]


def _log() -> str:
    lines = ["[INFO] Scanning for projects..."]
    lines += [f"[INFO] Downloaded from central: org/acme/lib{i}/1.0/lib{i}-1.0.pom"
              for i in range(200)]
    lines += ["[INFO] -------------------------------------------------------",
              "[INFO]  T E S T S", "[INFO] -------------------------------------------------------",
              "[INFO] Running com.acme.core.ImportTest",
              "2023-11-24T13:11:35.006Z  WARN 4711 --- [worker-3] c.a.RetryPolicy : Exception "
              "handled while talking to ledger-db, continuing with cached data"]
    lines += _trace("java.io.UncheckedIOException: failed to connect", 45)
    lines += [f"2023-11-24T13:11:36.{i:03d}Z  INFO 4711 --- [main] c.a.Import : row {i} ok"
              for i in range(400)]
    lines += ["[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.3 s -- "
              "in com.acme.core.ImportTest",
              "[INFO] Running com.acme.core.PipelineTest"]
    lines += [f"2023-11-24T13:11:37.{i:03d}Z  INFO 4711 --- [main] c.a.Pipe : step {i}"
              for i in range(300)]
    lines += ["[ERROR] Tests run: 9, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0.07 s <<< "
              "FAILURE! -- in com.acme.core.PipelineTest",
              "[ERROR] com.acme.core.PipelineTest.formatsEmptyInput -- Time elapsed: 0.029 s <<< "
              "ERROR!"]
    lines += _trace('java.lang.NullPointerException: Cannot invoke "String.length()" because '
                    '"raw" is null', 120)
    lines += ["", "[INFO] ", "[INFO] Results:", "[INFO] ",
              "[ERROR] Errors: ",
              "[ERROR]   PipelineTest.formatsEmptyInput:40 » NullPointer Cannot invoke",
              "[INFO] ", "[ERROR] Tests run: 13, Failures: 0, Errors: 1, Skipped: 0",
              "[INFO] BUILD FAILURE",
              "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:"
              "3.2.5:test (default-test) on project core: There are test failures.",
              "Build step 'mvn' exited with code 1", "Finished: FAILURE"]
    return "\n".join(lines) + "\n"


def test_the_scanner_records_the_classes_that_passed() -> None:
    sc = OutputScanner()
    sc.feed(_log().encode())
    r = sc.close()
    assert r.passing_classes == {"com.acme.core.ImportTest"}
    text = _log().splitlines()
    end = next(n for n, t in enumerate(text, 1) if "-- in com.acme.core.ImportTest" in t)
    assert r.passing_ranges == ((end, end),)  # the first class: from its summary line only


def test_a_handled_trace_of_a_passing_class_does_not_take_the_failures_room() -> None:
    text = _log()
    d = firewall("shell", text.encode(), archive=Archive(),
                 policy=FirewallPolicy(min_tokens=0)).text
    shown = {int(m) for m in re.findall(r"^\s*(\d+)\| ", d, re.M)}
    numbered = list(enumerate(text.splitlines(), 1))
    handled = next(n for n, t in numbered if t.startswith("java.io.UncheckedIOException"))
    report = next(n for n, t in numbered if t.endswith("<<< ERROR!"))
    blocks = [tuple(int(x.replace(",", "")) for x in m.groups())
              for m in re.finditer(r"--- failure block: lines ([\d,]+)–([\d,]+)", d)]
    assert not any(lo <= handled <= hi for lo, hi in blocks), d  # (a rare line may show it)
    assert set(range(report - 1, report + 12)) <= shown, d  # the report's top


def test_blocks_below_a_passing_class_are_weak_and_a_failing_class_keeps_its_own() -> None:
    from ctxgate.firewall.blocks import KnownLine, find_blocks, in_passing_tests

    text = ["[INFO] Running com.acme.A", "WARN handled, continuing"]
    text += _trace("java.io.UncheckedIOException: failed to connect", 6)
    text += [f"2023-11-24T13:11:37.{i:03d}Z  INFO 4711 --- [main] c.a.Pipe : step {i}"
             for i in range(10)]
    text += ["[INFO] Running com.acme.B", "WARN handled, continuing"]
    text += _trace("java.lang.IllegalStateException: broken", 6)
    known = [KnownLine(number=n, raw=t.encode(), length=len(t)) for n, t in enumerate(text, 1)]
    blocks = in_passing_tests(find_blocks(known), known, (), {"com.acme.A"})
    by_first = {b.first: b.strong for b in blocks}
    assert by_first[3] is False and by_first[22] is True, blocks  # A passed; B did not
    # inside a passing class's recorded lines, without its Running line in view
    blocks = in_passing_tests(find_blocks(known[2:9]), known[2:9], ((1, 10),), set())
    assert [b.strong for b in blocks] == [False], blocks
