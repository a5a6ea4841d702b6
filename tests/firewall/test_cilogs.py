"""Real failing CI logs: the digest shows their ground-truth error lines wherever they sit."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ctxgate.firewall import FirewallPolicy, firewall

DATA = Path(__file__).parent / "data" / "cidiff"
_spec = importlib.util.spec_from_file_location(
    "digest_recall", Path(__file__).parents[2] / "benchmarks" / "digest_recall.py")
recall = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recall)

CASES = sorted(p.name for p in DATA.iterdir() if p.is_dir())


def test_all_cases_present() -> None:
    assert CASES == ["astor_1278", "casper_1774", "cidiff_57", "commonscodec_2463",
                     "gumtreespoonastdiff_2017"]
    assert (DATA / "LICENSE").is_file() and (DATA / "NOTICE").is_file()


@pytest.mark.parametrize("case", CASES)
def test_digest_surfaces_ground_truth_errors(case: str) -> None:
    log = (DATA / case / "fail.log").read_bytes()
    ranges = [recall.to_newline_numbers(log, r)
              for r in recall.ground_truth_ranges(DATA / case / "groundtruth")]
    result = firewall("shell", log, policy=FirewallPolicy(min_tokens=0))
    assert result.digested
    shown = recall.shown_lines(result.text)
    touched = [bool(r & shown) for r in ranges]
    assert any(touched), (case, result.text)
    assert result.digest.size_bytes <= FirewallPolicy().digest_max_bytes


def test_middle_error_of_cidiff_57_is_shown() -> None:
    # a Gradle test failure in the middle of a 592-line GitHub Actions log
    log = (DATA / "cidiff_57" / "fail.log").read_bytes()
    result = firewall("shell", log, policy=FirewallPolicy(min_tokens=0))
    lines = log.decode().split("\n")
    failed = next(i for i, ln in enumerate(lines, 1) if "testClassicParsing() FAILED" in ln)
    assert 20 < failed < len(lines) - 10  # really in the middle
    assert f"{failed}| " in result.text and "testClassicParsing() FAILED" in result.text


def test_line_number_mapping_of_universal_newlines() -> None:
    log = b"a\rb\nc\r\nd\n"
    # universal lines: a=1, b=2, c=3, d=4; newline lines: "a\rb"=1, "c\r"=2, "d"=3
    assert recall.to_newline_numbers(log, {1, 2}) == {1}
    assert recall.to_newline_numbers(log, {3}) == {2}
    assert recall.to_newline_numbers(log, {4}) == {3}
