"""Issue 11: failure blocks (not lone lines), rare line shapes, hints the MCP tool accepts.

Each test here fails on the digest before issue 11 (d72e402): it showed keyword lines one by
one, said "no error ... lines in the omitted range" for a lone 503 among 200s, and named
``byte_range=``/``json_pointer=`` in its MCP hints.
"""

from __future__ import annotations

import json
import re

import pytest

from ctxgate.archive import Archive
from ctxgate.firewall import DigestContext, FirewallPolicy, OutputScanner, build_digest, firewall
from ctxgate.firewall.render import GREP_MATTERS
from ctxgate.integrations.mcp.tools import EXPAND_SCHEMA, EXPAND_TOOL

CTX = DigestContext(tool="shell", archive_id="3fa9c2e1b2c4", expires_at=1_800_000_000.0,
                    command="make test", exit_code=1, tokens="9,000 tokens (o200k_base)")
N = 100_001
MIDDLE = 50_001


def digest_of(data: bytes, policy: FirewallPolicy | None = None):
    policy = policy or FirewallPolicy()
    sc = OutputScanner(long_line_bytes=policy.long_line_bytes,
                       line_max_bytes=policy.digest_line_max_bytes)
    for i in range(0, len(data), 65_536):
        sc.feed(data[i:i + 65_536])
    return build_digest(sc.close(), CTX, policy)


def _lines(make) -> bytes:
    return "".join(make(i) + "\n" for i in range(1, N + 1)).encode()


def _access(i: int) -> str:
    status = 503 if i == MIDDLE else 200
    return (f'10.1.{i % 256}.{i * 7 % 250} - - [01/Dec/2026:10:{i // 60 % 60:02d}:{i % 60:02d} '
            f'+0000] "GET /api/items/{i} HTTP/1.1" {status} {1000 + i * 37 % 90_000} "-" '
            '"curl/8.0"')


def _jsonlog(i: int) -> str:
    level = "error" if i == MIDDLE else "info"
    return json.dumps({"ts": f"2026-12-01T10:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z",
                       "level": level, "msg": "request done", "latency_ms": i * 13 % 997,
                       "req": f"{i * 2654435761 % 2**64:016x}"}, separators=(",", ":"))


def _listing(i: int) -> str:
    if i == MIDDLE:
        return "lrwxrwxrwx 1 root root 11 Dec  1 10:00 ./data/link -> /etc/passwd"
    return f"./data/part-{i:06d}.parquet"


@pytest.mark.parametrize("make", [_access, _jsonlog, _listing], ids=["access", "json", "listing"])
def test_one_anomalous_line_among_100k_of_one_shape_is_shown(make) -> None:
    data = _lines(make)
    d = digest_of(data)
    odd = make(MIDDLE)
    assert re.search(rf"^\s*{MIDDLE}\| ", d.text, re.M), d.text
    assert odd[:60] in d.text
    assert "no error, failure, exception or warning lines" not in d.text
    assert d.size_bytes <= FirewallPolicy().digest_max_bytes


def test_access_log_names_the_rare_value() -> None:
    d = digest_of(_lines(_access))
    assert "rare value 503 (1x; 200 in 100,000 lines)" in d.text


def test_uniform_output_says_what_the_shape_miner_saw() -> None:
    data = "".join(f"row {i:07d} ok\n" for i in range(1, 30_001)).encode()
    d = digest_of(data)
    assert "no error, failure, exception or warning keywords in the omitted range; " \
           "1 line shape(s), none rare" in d.text


def _java_log() -> bytes:
    head = [f"[INFO] Running com.example.T{i}Test" for i in range(1, 400)]
    fail = [
        "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.2 s <<< "
        "FAILURE! - in com.example.ParserTest",
        "[ERROR] testParse(com.example.ParserTest)  Time elapsed: 0.01 s  <<< FAILURE!",
        "java.lang.AssertionError: expected:<3> but was:<4>",
        "\tat org.junit.Assert.fail(Assert.java:88)",
        "\tat org.junit.Assert.failNotEquals(Assert.java:834)",
        "\tat org.junit.Assert.assertEquals(Assert.java:645)",
        "\tat com.example.ParserTest.testParse(ParserTest.java:42)",
        "\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)",
        "",
    ]
    summary = [f"[INFO] Running com.example.U{i}Test" for i in range(1, 200)] + [
        "[ERROR] Failures: ",
        "[ERROR]   ParserTest.testParse:42 expected:<3> but was:<4>",
        "[ERROR] Tests run: 812, Failures: 1, Errors: 0, Skipped: 2",
        "[INFO] BUILD FAILURE",
    ]
    trailer = ["Post job cleanup."] + [f"[command]/usr/bin/git config --local --unset-all x{i}"
                                       for i in range(12)] + ["Cleaning up orphan processes"]
    return ("\n".join(head + fail + summary + trailer) + "\n").encode()


def test_java_stack_trace_is_one_labelled_block_with_its_test() -> None:
    log = _java_log()
    d = digest_of(log)
    lines = log.decode().split("\n")
    first = lines.index(next(x for x in lines if "<<< FAILURE! - in" in x)) + 1
    # the block starts at the failure (or at the "Running …" line of the test above it)
    assert re.search(rf"--- failure block: lines (?:{first - 1}|{first})–{first + 7} "
                     r"\(java stack trace", d.text), d.text
    for n in range(first, first + 8):  # every line of the block, frames included
        assert re.search(rf"^\s*{n}\| ", d.text, re.M), n
    assert "ParserTest.java:42" in d.text


def test_summary_before_trailing_boilerplate_is_shown() -> None:
    log = _java_log()
    d = digest_of(log)
    lines = log.decode().split("\n")
    for needle in ("[ERROR] Tests run: 812, Failures: 1", "[INFO] BUILD FAILURE",
                   "ParserTest.testParse:42 expected:<3> but was:<4>"):
        n = lines.index(next(x for x in lines if needle in x)) + 1
        assert re.search(rf"^\s*{n}\| ", d.text, re.M), needle


def test_python_traceback_block_label() -> None:
    body = [f"collected item {i}" for i in range(1, 600)] + [
        "Traceback (most recent call last):",
        '  File "/app/main.py", line 10, in <module>',
        "    main()",
        '  File "/app/main.py", line 6, in main',
        "    return 1 / 0",
        "ZeroDivisionError: division by zero",
    ] + [f"cleanup {i}" for i in range(1, 40)]
    d = digest_of(("\n".join(body) + "\n").encode())
    assert "--- failure block: lines 600–605 (python traceback" in d.text
    assert " 605| ZeroDivisionError: division by zero" in d.text


def test_digest_is_byte_identical_for_identical_input() -> None:
    log = _java_log() + _lines(_access)[:400_000]
    texts = {digest_of(log).text for _ in range(3)}
    assert len(texts) == 1


_ARGS = r'((?:, \w+=(?:"[^"]*"|<[^>]*>|\w+))*)\)'


def _mcp_hint_params(text: str) -> set[str]:
    """Parameter names of every MCP call a digest names: ``expand(id="…", …)`` and the
    ``(…, …)`` ones after it on the same line that reuse its tool and id."""
    out: set[str] = set()
    calls = re.findall(rf'\b{EXPAND_TOOL}\(id="[^"]*"' + _ARGS, text)
    calls += re.findall(r"\(…" + _ARGS, text)
    for call in calls:
        out |= set(re.findall(r", (\w+)=", call))
    return out


def test_the_mcp_drill_down_line_does_not_repeat_the_id_or_the_keyword_pattern() -> None:
    # issue 11: the MCP line repeated the tool, the id and the keyword pattern of the CLI
    # lines above it (~55 tokens of a ~1,000-token digest); now the tool and id are written
    # once and the pattern is named.
    d = digest_of(_java_log())
    drill = d.text[d.text.index("--- drill down ---"):]
    mcp = next(ln for ln in drill.splitlines() if ln.startswith("MCP: "))
    assert drill.count(GREP_MATTERS) == 1, drill
    assert mcp.count(f'{EXPAND_TOOL}(id="') == 1, mcp
    assert "grep=<the --grep pattern above>, ignore_case=true" in mcp
    assert {"lines", "grep", "ignore_case", "context"} <= _mcp_hint_params(mcp)


def test_every_mcp_hint_uses_the_expand_schema_parameter_names() -> None:
    allowed = set(EXPAND_SCHEMA["properties"])
    outputs = {
        "lines": _java_log(),
        "blocks+long": _java_log() + b"x" * 9_000 + b"\n",
        "chars": b"y" * 300_000,
        "json": json.dumps({"items": [{"k": i, "v": "z" * 20} for i in range(3_000)]}).encode(),
        "jsonl": b"".join(json.dumps({"i": i}).encode() + b"\n" for i in range(3_000)),
        "binary": bytes(range(256)) * 100,
        "plain": "".join(f"line {i}\n" for i in range(3_000)).encode(),
    }
    seen: set[str] = set()
    archive = Archive()
    for name, data in outputs.items():
        res = firewall("shell", data, archive=archive, policy=FirewallPolicy(min_tokens=0))
        assert res.digested, name
        params = _mcp_hint_params(res.text)
        assert params, (name, res.text)
        assert params <= allowed, (name, params - allowed)
        seen |= params
    assert {"lines", "grep", "bytes", "json", "keys"} <= seen


def test_drill_down_header_and_long_line_warning_are_short() -> None:
    # issue 11 (tokens): the drill-down header repeated the archive id of the header and
    # of every command; the long-line warning spent ~45 tokens on one hint
    d = digest_of(_java_log() + b"x" * 9_000 + b"\n")
    assert "\n--- drill down ---\n" in d.text
    warning = next(ln for ln in d.text.splitlines() if ln.startswith("! longest line: "))
    assert "read them with --bytes OFFSET:LENGTH (JSON: --json POINTER, --keys)" in warning
    assert len(warning.encode()) <= 140, warning  # was 166 bytes


def test_a_rare_value_seen_twice_is_shown_at_both_lines() -> None:
    # issue 11: the shapes list named a rare value once, at its first line; the second 503
    # (as rare, and as likely to be the one that matters) was not shown. Fails on c3bc371.
    second = 80_001

    def make(i: int) -> str:
        return _access(i).replace('" 200 ', '" 503 ') if i == second else _access(i)

    d = digest_of(_lines(make))
    for n in (MIDDLE, second):
        assert re.search(rf"^\s*{n}\| .*\" 503 .*rare value 503 \(2x; 200 in 99,999 lines\)",
                         d.text, re.M), d.text
    assert d.size_bytes <= FirewallPolicy().digest_max_bytes


def _interleaved(i: int) -> str:
    if i == 77_777:
        return "2026-12-01T10:00:00Z worker-3 processed batch 77777 in 12 ms; checksum mismatch"
    if i % 2:
        return _access(i)
    return f"2026-12-01T10:00:{i % 60:02d}Z worker-{i % 7} processed batch {i} in {i % 97} ms"


def test_one_odd_line_among_two_interleaved_shapes_is_shown() -> None:
    # issue 11: an access log interleaved with an app log has no single dominant shape; the
    # miner sampled one block in 16 and the digest said "outliers elsewhere are not ruled
    # out". Now the two shapes are checked together at C speed. Fails on c3bc371.
    d = digest_of(_lines(_interleaved))
    assert re.search(r"^\s*77777\| .*checksum mismatch.*rare shape \(1x\)", d.text, re.M), d.text
    assert "sampled" not in d.text
    assert d.size_bytes <= FirewallPolicy().digest_max_bytes


def test_a_503_among_interleaved_shapes_is_a_rare_value() -> None:
    def make(i: int) -> str:
        line = _interleaved(i) if i != 77_777 else _access(i)
        return line.replace('" 200 ', '" 503 ') if i == 60_001 else line

    d = digest_of(_lines(make))
    assert re.search(r"^\s*60001\| .*\" 503 .*rare value 503", d.text, re.M), d.text


def test_rare_lines_prefer_lines_that_matter_and_never_repeat_a_shown_line(tmp_path) -> None:
    """A real ``pytest -v`` run: 900 PASSED progress lines and two FAILED ones. The rare-line
    slots used to go to the session header (lines 1-6, the first two shown in the head
    already); the FAILED progress lines were left out."""
    import os
    import subprocess
    import sys

    body = ["def deep(d, n):\n    return d['missing'] if n == 0 else deep(d, n - 1)\n"]
    body += [f"def test_case_{i}():\n    assert {i} + 1 == {i + 1}\n" for i in range(450)]
    body += ["def test_parse_config():\n    assert deep({'a': 1}, 5) == 1\n",
             "def test_totals():\n    assert {'b': 5} == {'b': 2}\n"]
    body += [f"def test_more_{i}():\n    assert True\n" for i in range(450)]
    (tmp_path / "test_many.py").write_text("".join(body), encoding="utf-8")
    # pytest prints whole assertion diffs when it sees CI or BUILD_NUMBER in the environment;
    # the longer failure block then leaves no room for rare lines, so both are unset here
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                          "-p", "no:randomly", "test_many.py"], cwd=tmp_path, env=env,
                         capture_output=True, timeout=300).stdout
    assert b"2 failed, 900 passed" in out, out[-2000:]
    res = firewall("shell", out, archive=Archive(), policy=FirewallPolicy(min_tokens=0))
    failed = [n for n, line in enumerate(out.decode().splitlines(), start=1)
              if line.endswith("]") and " FAILED " in line]
    assert len(failed) == 2
    numbers = [int(m) for m in re.findall(r"^\s*(\d+)\| ", res.text, re.M)]
    assert set(failed) <= set(numbers), res.text
    assert len(numbers) == len(set(numbers)), res.text  # no line shown twice


def test_a_traceback_block_ends_with_the_exception_it_raised() -> None:
    """``decimal.InvalidOperation: …`` says neither error nor exception: the block's own lines
    stopped at the last frame, so its header named lines that left out what was raised."""
    ok = [f"2026-12-05T08:{i // 60 % 60:02d}:{i % 60:02d} INFO app.http GET /items/{i} 200"
          for i in range(3000)]
    tb = ["2026-12-05T09:08:53 ERROR app.worker Unhandled exception in job 88213",
          "Traceback (most recent call last):",
          '  File "/srv/app/worker.py", line 212, in run_job',
          "    result = handler(job.payload)",
          "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]",
          "INFO: retrying", "Done"]
    log = "\n".join(ok[:2000] + tb + ok[2000:]) + "\n"
    res = firewall("shell", log.encode(), archive=Archive(), policy=FirewallPolicy(min_tokens=0))
    m = re.search(r"--- failure block: lines ([\d,]+)–([\d,]+) \(python traceback", res.text)
    assert m, res.text
    assert (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) == (2001, 2005)


def test_a_block_that_opens_with_application_log_noise_shows_its_report() -> None:
    """Passing tests log ``ERROR … failed to connect, retrying`` right above the failing test's
    Surefire report; merged into one block, the noise took the block's top third and the
    report fell in the omitted middle (the shape of an own Maven dev-corpus case)."""
    noise = [f"2023-12-17 06:45:{i % 60:02d}.{i:03d} [pool-1-thread-{i % 3}] "
             f"{('WARN ', 'INFO ', 'ERROR')[i % 3]} c.e.s.app.Repository - failed to connect to "
             f"cache-{i}:6379, retrying (attempt {i % 5}/5)" for i in range(40)]
    report = [
        "[ERROR] Tests run: 6, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.037 s <<< "
        "FAILURE! -- in com.example.ErrorHandlingTest",
        "[ERROR] com.example.ErrorHandlingTest.keepsBatch95 -- Time elapsed: 0.004 s <<< "
        "FAILURE!",
        "org.opentest4j.AssertionFailedError: depth sum of 10 ==> expected: <65> but was: <55>",
        *[f"\tat org.junit.jupiter.api.Frame{k}.call(Frame{k}.java:{100 + k})" for k in range(8)],
        "\tat com.example.ErrorHandlingTest.keepsBatch95(ErrorHandlingTest.java:47)",
        "", "[INFO] ", "[INFO] Results:", "[INFO] ", "[ERROR] Failures: ",
        "[ERROR]   ErrorHandlingTest.keepsBatch95:47 depth sum of 10 ==> expected: <65> but "
        "was: <55>",
        "[INFO] ", "[ERROR] Tests run: 32, Failures: 1, Errors: 0, Skipped: 0", "[INFO] ",
        "[INFO] BUILD FAILURE",
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:"
        "test (default-test) on project shipping-app: There are test failures.",
        *["[ERROR] Please refer to target/surefire-reports for the individual test results.",
          "[ERROR] -> [Help 1]", "[ERROR] ",
          "[ERROR] Re-run Maven using the -X switch to enable full debug logging."],
    ]
    earlier = [  # another test class's report, far above: the reports share the budget
        "[ERROR] Tests run: 9, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.2 s <<< "
        "FAILURE! -- in com.example.FailoverTest",
        "[ERROR] com.example.FailoverTest.validatesLabel -- Time elapsed: 0.030 s <<< FAILURE!",
        "org.opentest4j.AssertionFailedError: expected: <SHI-111> but was: <SHI-110>",
        *[f"\tat org.junit.jupiter.api.Frame{k}.call(Frame{k}.java:{100 + k})" for k in range(8)],
        ""]
    build = [f"[INFO] Running com.example.T{i}Test" for i in range(3000)]
    log = ("\n".join(build[:1500] + earlier + build[1500:] + noise + report +
                      ["Finished: FAILURE"]) + "\n").encode()
    d = digest_of(log)
    for needle in ("keepsBatch95 -- Time elapsed", "expected: <65> but was: <55>",
                   "ErrorHandlingTest.java:47", "[ERROR] Failures:",
                   "Tests run: 32, Failures: 1"):
        assert needle in d.text, (needle, d.text)


def test_a_report_among_many_windows_of_logged_errors_is_analysed() -> None:
    """Passing tests that log ERROR lines make hundreds of windows; the analysis keeps a
    bounded number of lines, and kept the first and the latest windows: the one failing
    test's report, in the middle, was never looked at."""
    lines: list[str] = []
    for i in range(4000):
        if i == 1500:
            lines += [
                "[ERROR] Tests run: 8, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0.1 s "
                "<<< FAILURE! -- in com.example.ReportingServiceTest",
                "[ERROR] com.example.ReportingServiceTest.acceptsEmptyInput -- Time elapsed: "
                "0.023 s <<< ERROR!",
                "java.lang.IllegalStateException: segment closed-61 is closed (state=CLOSED)",
                "\tat com.example.ReportingPipeline.resolve(ReportingPipeline.java:46)",
                "\tat com.example.ReportingServiceTest.acceptsEmptyInput(ReportingServiceTest"
                ".java:28)", ""]
        elif i % 15 == 0:
            lines.append(f"2023-12-23T01:18:{i % 60:02d}.083Z ERROR 4711 --- [main] c.e.Sched"
                         f" : upstream returned HTTP 503 (error), retry {i % 3}/3 scheduled")
        else:
            lines.append(f"2023-12-23T01:18:{i % 60:02d}.074Z  INFO 4711 --- [pool-1] c.e.Repo"
                         f" : request {i:05x} completed status=200")
    lines += ["[ERROR] Tests run: 30, Failures: 0, Errors: 1, Skipped: 1", "[INFO] BUILD FAILURE",
              "Build step 'mvn' exited with code 1"]
    d = digest_of(("\n".join(lines) + "\n").encode())
    # shown as the failure block it is (the rare-shape list showing its lines is not enough:
    # a log of varied lines has no rare shapes to list)
    assert re.search(r"^--- failure block: lines 1,50[01]–[\d,]+ \((?:java stack trace|test "
                     r"failure)", d.text, re.M), d.text
    assert "segment closed-61 is closed" in d.text, d.text


_WORDS = "copy resolve fetch index scan link pack sign verify upload note".split()


def _varied_info_lines(n: int) -> list[str]:
    """``n`` build lines of many shapes (1-6 words each): a log with no rare shapes to list."""
    return [" ".join(["[INFO]"] + [_WORDS[(i * k + k) % len(_WORDS)] for k in range(1, 2 + i % 6)])
            for i in range(n)]


def test_a_handled_exceptions_trace_above_a_report_does_not_hide_the_report() -> None:
    """A passing test prints the stack trace of an exception it handled, right above the
    failing test's report; one block, shown from its top, showed the handled trace and hid
    the report (an own Maven dev-corpus case: 1 of 77 labelled lines shown)."""
    junit = [f"\tat org.junit.platform.engine.support.hierarchical.Node{k}.execute(Node{k}.java:"
             f"{70 + k})" for k in range(40)]
    handled = ["java.lang.IllegalStateException: retry budget exhausted for orders",
               "\tat com.example.TestLog.connect(TestLog.java:56)", *junit, *[
                   f"\tat org.junit.jupiter.engine.execution.Invoker{k}.proceed(Invoker{k}.java:"
                   f"{30 + k})" for k in range(60)]]
    report = [
        "[ERROR] Tests run: 4, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< "
        "FAILURE! -- in com.example.PricingServiceTest",
        "[ERROR] com.example.PricingServiceTest.appliesDiscount -- Time elapsed: 0.02 s <<< "
        "FAILURE!",
        "org.opentest4j.AssertionFailedError: expected: <90> but was: <100>",
        "\tat com.example.PricingServiceTest.appliesDiscount(PricingServiceTest.java:31)",
        *junit, "", "[INFO] ", "[INFO] Results:", "[ERROR] Failures: ",
        "[ERROR]   PricingServiceTest.appliesDiscount:31 expected: <90> but was: <100>",
        "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0", "[INFO] BUILD FAILURE",
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:"
        "test (default-test) on project pricing-core: There are test failures."]
    build = _varied_info_lines(400)  # many line shapes: no rare-shape list shows the report
    d = digest_of(("\n".join(build + handled + report) + "\n").encode())
    assert "rare lines" not in d.text
    for needle in ("appliesDiscount -- Time elapsed", "expected: <90> but was: <100>",
                   "PricingServiceTest.java:31"):
        assert needle in d.text, (needle, d.text)


def test_a_report_cut_by_its_windows_size_cap_is_kept_whole() -> None:
    """The scan keeps windows of at most 240 lines around lines that matter. A report whose
    header fell near the end of a window in the middle of the log lost its message and frames:
    they were in the next window, which was dropped."""
    from ctxgate.firewall.blocks import BEFORE_LINES, WINDOW_MAX_LINES

    def noise(n: int, at: int = 0) -> list[str]:  # a line that matters every 10 lines
        return [f"2023-11-19 01:16:{i % 60:02d}.921 [main] ERROR c.e.Sched - failed to connect "
                f"to cache-{i % 7}, retrying" if i % 10 == 0 else
                f"2023-11-19 01:16:{i % 60:02d}.935 [main] INFO  c.e.Svc - job {i} ok"
                for i in range(at, at + n)]

    lines = _varied_info_lines(1000)
    first_hit = len(lines) + 1
    # windows then run back to back: [first_hit - 6 + 240k, first_hit + 233 + 240k]; the
    # report header goes 3 lines before the end of window 6 (past the 4 kept first ones)
    header_at = first_hit - BEFORE_LINES + WINDOW_MAX_LINES * 7 - 4
    lines += noise(header_at - first_hit)
    lines += ["[ERROR] com.example.IntegrationTest.computesRounding -- Time elapsed: 0.018 s <<< "
              "FAILURE!", "org.opentest4j.AssertionFailedError: compute ==> expected: <566> but "
              "was: <564>"]
    lines += [f"\tat org.junit.jupiter.api.AssertionFailureBuilder.step{k}(AssertionFailureBuilder"
              f".java:{151 + k})" for k in range(12)]
    lines += ["\tat com.example.IntegrationTest.computesRounding(IntegrationTest.java:77)", ""]
    lines += noise(3000, 7)  # many windows after it: the middle ones are dropped
    lines += ["[ERROR] Tests run: 30, Failures: 1, Errors: 0, Skipped: 0", "[INFO] BUILD FAILURE"]
    d = digest_of(("\n".join(lines) + "\n").encode())
    assert "computesRounding -- Time elapsed" in d.text, d.text
    assert "IntegrationTest.java:77" in d.text, d.text


def test_room_left_by_a_last_block_shown_in_part_goes_to_the_next_block() -> None:
    """The last failed step's block did not fit whole and was shown from its first strong
    line: a few lines, far under the soft target. The digest stopped there, and the compiler
    errors above it (the cause) were only named."""
    filler = _varied_info_lines(300)
    cause = ["[ERROR] COMPILATION ERROR : ",
             "[ERROR] /src/main/java/com/acme/Helper.java:[14,20] cannot find symbol",
             "[ERROR]   symbol:   method sqr(int)",
             "[ERROR]   location: class java.lang.Math",
             "[ERROR] /src/main/java/com/acme/Helper.java:[18,33] incompatible types: "
             "java.lang.String cannot be converted to int",
             "[INFO] 2 errors "]
    lead = [f"2023-12-17 06:45:{i:02d}.972 [main] WARN  c.e.App - failed to connect to cache-{i},"
            f" retrying" for i in range(60)]
    last = ["[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0"
            ":compile (default-compile) on project storage: Compilation failure",
            "Build step 'mvn' exited with code 1"]
    log = "\n".join(filler[:150] + cause + filler[150:] + lead + last) + "\n"
    d = digest_of(log.encode())
    assert "cannot find symbol" in d.text and "incompatible types" in d.text, d.text
    assert "Failed to execute goal" in d.text, d.text
