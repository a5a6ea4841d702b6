"""Failure reports of real tools that the digest missed, found on the polyglot development
corpus (``scripts/digest_dev/polyglot_logs.py``): Python ``unittest``'s ``FAIL: test (…)``
reports, ``cargo test -- --show-output``, which prints every *passing* test's output under
the same ``---- t stdout ----`` header as a failure, and node's spec reporter (``✖ name``,
``AssertionError [ERR_ASSERTION]: …``). Each test fails on the digest before this change
(d3c45cf)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgate.archive import Archive
from ctxgate.firewall import FirewallPolicy, firewall

from .helpers import cargo_test

POLICY = FirewallPolicy(min_tokens=0)


def _digest(text: str) -> str:
    return firewall("shell", text.encode(), archive=Archive(), policy=POLICY).text


def _shown(digest: str) -> set[int]:
    return {int(m) for m in re.findall(r"^\s*(\d+)\| ", digest, re.M)}


def _numbers(text: str, pattern: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), start=1) if re.search(pattern, line)]


def test_a_unittest_failure_report_is_shown_before_a_handled_traceback(tmp_path: Path) -> None:
    """Real ``python -m unittest -v``: a passing test logs the traceback of an exception it
    handled; one test fails. The handled traceback was shown and the ``FAIL: …`` report with
    its assertion was left out (``FAIL: name (…)`` headed no report)."""
    body = ["import logging, unittest", "log = logging.getLogger('svc')",
            "def step_0():", "    raise ConnectionError('upstream refused')"]
    body += [f"def step_{k}():\n    return step_{k - 1}()" for k in range(1, 40)]
    body += ["class T(unittest.TestCase):",
             "    def test_a_retry(self):",  # runs first: its handled traceback leads the log
             "        try:", "            step_39()",
             "        except ConnectionError:",
             "            log.exception('upstream call failed, retrying in 2s')"]
    body += [f"    def test_case_{i}(self):\n        self.assertEqual({i} + 1, {i + 1})"
             for i in range(300)]
    body += ["    def test_series(self):",
             "        self.assertListEqual([27, 30, 33, 36], [27, 30, 38, 36])"]
    (tmp_path / "test_svc.py").write_text("\n".join(body) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_svc"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out
    text = out.stderr + "".join(f"post-failure listing {i}\n" for i in range(30)) + \
        'The command "python -m unittest -v" exited with 1.\n'
    d = _digest(text)
    fail = _numbers(text, r"^FAIL: test_series ")
    assert len(fail) == 1 and fail[0] in _shown(d), d
    assert set(_numbers(text, r"^AssertionError: Lists differ")) <= _shown(d), d


def test_cargo_show_output_passing_tests_are_not_failure_reports(tmp_path: Path) -> None:
    """Real ``cargo test -- --show-output``: every passing test's output is printed under
    ``---- t stdout ----``, the header of a failure report too. The failing test's report
    was in the omitted middle; the digest showed passing tests' output instead."""
    tests = [f"    #[test] fn case_{i}() {{ println!(\"ERROR [worker-{i % 3}] lock busy, "
             f"will retry\"); for k in 0..8 {{ println!(\"INFO  [worker] batch {{k}}\"); }} "
             f"assert_eq!(label({i}), \"auth-{i:03}\"); }}" for i in range(40)]
    lib_rs = ("pub fn label(n: u32) -> String { format!(\"auth-{:03}\", n) }\n#[cfg(test)]\n"
              "mod tests {\n    use super::*;\n" + "\n".join(tests) +
              '\n    #[test] fn rejects_cache() { assert_eq!(label(60), "auth-068", "label for '
              'entry 60"); }\n}\n')
    out = cargo_test(tmp_path, lib_rs, "--show-output", "--test-threads=1")
    assert out.returncode != 0 and "successes:" in out.stdout, out
    text = out.stdout + out.stderr
    d = _digest(text)
    shown = _shown(d)
    assert set(_numbers(text, r"^---- tests::rejects_cache stdout ----|label for entry 60|"
                              r"^\s+left: |^\s+right: ")) <= shown, d
    passing = _numbers(text, r"^---- tests::case_\d+ stdout ----")
    # (the first one may be shown with the `--- FAILED` progress line just above it)
    assert len(passing) == 40 and not set(passing[1:]) & shown, d


def test_a_node_spec_report_in_the_middle_of_a_long_log_is_kept(tmp_path: Path) -> None:
    """Real ``node --test --test-reporter=spec``: 1,200 passing tests that warn (every 60th
    logs an ``ERROR … retrying``), one failing
    ``assert.throws`` in the middle. Its ``AssertionError [ERR_ASSERTION]: …`` line was not a
    line that matters (the bracketed code) and ``✖ name`` headed no report, so the window was
    dropped while the scan kept the latest ones, and the report was neither shown nor named."""
    if shutil.which("node") is None:
        pytest.fail("node is needed")
    lines = ["const test = require('node:test');", "const assert = require('node:assert');"]
    for i in range(1200):
        if i == 600:
            lines.append("test('formats timeout', () => { assert.throws(() => 1, RangeError); });")
        noise = "ERROR [worker] upstream call failed, retrying" if i % 60 == 0 else \
            f"WARN deprecated key pool.size used ({i})"  # passing tests log errors too
        lines.append(f"test('case {i}', () => {{ console.log('{noise}'); "
                     f"assert.strictEqual({i} + 1, {i + 1}); }});")
    (tmp_path / "a.test.js").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = subprocess.run(["node", "--test", "--test-reporter=spec", "a.test.js"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out
    text = out.stdout + out.stderr
    report = _numbers(text, r"ERR_ASSERTION\]: Missing expected exception")
    assert len(report) >= 1, text[-3000:]
    d = _digest(text)
    assert report[0] in _shown(d), d


def test_pytest_passes_section_is_not_joined_to_the_failure_report(tmp_path: Path) -> None:
    """Real ``pytest -rA``: the passing tests' captured output (``=== PASSES ===``, one
    ``___ test_x ___`` section per test, with the tracebacks of exceptions they handled) comes
    right after the failure report. It was joined to the report as one block, which then did
    not fit and was shown from its ends: the report's ``E`` lines and the summary were cut."""
    body = ["import logging", "log = logging.getLogger('svc')",
            "def connect(n):", "    if n: return connect(n - 1)",
            "    raise ConnectionError('upstream refused')",
            "def compute(a, b):", "    return a * 12 + b"]
    for i in range(12):
        body += [f"def test_retry_{i}():", "    print('ERROR [queue] upstream unavailable')",
                 "    try:", "        connect(6)", "    except ConnectionError:",
                 "        log.exception('upstream call failed, retrying in 2s')"]
    body += [f"def test_case_{i}():\n    assert compute({i}, 1) == {i * 12 + 1}"
             for i in range(150)]
    body += ["def test_reports_checkpoint():", "    assert compute(37, 17) == 474"]
    (tmp_path / "test_svc.py").write_text("\n".join(body) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                          "-p", "no:randomly", "test_svc.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "= PASSES =" in out.stdout, out.stdout[-2000:]
    text = out.stdout
    d = _digest(text)
    want = _numbers(text, r"^_+ test_reports_checkpoint _+$|^E\s+assert 461 == 474|"
                          r"^FAILED test_svc.py::test_reports_checkpoint|1 failed, 162 passed")
    assert len(want) == 4 and set(want) <= _shown(d), (want, d)
    passes = _numbers(text, r"^=+ PASSES =+$")[0]
    for m in re.finditer(r"--- failure block: lines ([\d,]+)–([\d,]+)", d):
        lo, hi = (int(x.replace(",", "")) for x in m.groups())
        assert not lo <= want[0] <= hi or hi < passes, d  # the report's block stops before
