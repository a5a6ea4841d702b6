"""Calibration metrics, the calibrate/eval library calls, and their CLI commands."""

from __future__ import annotations

import asyncio
import json
import math
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from ctxgate.cli import app
from ctxgate.errors import UsageError
from ctxgate.gate.backends.base import Question
from ctxgate.gate.backends.function import FunctionDecisionModel
from ctxgate.gate.calibrate import (
    auroc,
    best_temperature,
    brier,
    calibrate,
    ece,
    load_examples,
    temper,
    threshold_for_precision,
)

HELDOUT = Path(__file__).parent / "data" / "heldout.jsonl"


def test_metric_values_by_hand():
    ps, ys = [0.9, 0.8, 0.3, 0.1], [True, False, True, False]
    assert brier(ps, ys) == pytest.approx((0.01 + 0.64 + 0.49 + 0.01) / 4)
    assert auroc(ps, ys) == pytest.approx(0.75)
    assert auroc([0.5, 0.5], [True, False]) == pytest.approx(0.5)
    # bins: 0.1 → [0.1,0.2): |0.1-0|; 0.3 → |0.3-1|; 0.8 → |0.8-0|; 0.9 → |0.9-1|
    assert ece(ps, ys) == pytest.approx((0.1 + 0.7 + 0.8 + 0.1) / 4)
    assert threshold_for_precision(ps, ys, 1.0) == (0.9, 1.0, 0.5)
    assert threshold_for_precision(ps, ys, 0.6) == (0.3, pytest.approx(2 / 3), 1.0)
    assert threshold_for_precision([0.9], [False], 0.5) is None


def test_best_temperature_recovers_a_known_overconfidence():
    rng = random.Random(7)
    ps, ys = [], []
    for _ in range(4000):
        z = rng.gauss(0, 1.5)
        true_p = 1 / (1 + math.exp(-z))
        ys.append(rng.random() < true_p)
        ps.append(temper(true_p, 1 / 2.5))  # the model's logits are 2.5× too large
    t = best_temperature(ps, ys)
    assert 2.2 < t < 2.8
    assert ece([temper(p, t) for p in ps], ys) < ece(ps, ys)


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60))
def test_metrics_stay_in_range(rows):
    ps, ys = [r[0] for r in rows], [r[1] for r in rows]
    assert 0.0 <= brier(ps, ys) <= 1.0 and 0.0 <= ece(ps, ys) <= 1.0 + 1e-12
    a = auroc(ps, ys)
    assert math.isnan(a) or 0.0 <= a <= 1.0
    assert 0.0 <= temper(ps[0], best_temperature(ps, ys)) <= 1.0


def test_calibrate_counts_errors_and_skips():
    rows = [{"user_request": f"r{i}", "tool_call": {"tool": "bash", "arguments": {"command": "x"}},
             "destructive": i % 2 == 0} for i in range(10)]
    rows.append({"user_request": "n", "tool_call": {"tool": "t", "arguments": {}}})

    def fn(state, questions):
        if state["user_request"] == "r3":
            raise RuntimeError("backend down")
        return {"destructive": 0.8 if int(state["user_request"][1:]) % 2 == 0 else 0.3}

    from ctxgate.gate.calibrate import Example
    examples = [Example(user_request=r["user_request"], tool=r["tool_call"]["tool"],
                        arguments=r["tool_call"]["arguments"],
                        labels={k: v for k, v in r.items() if isinstance(v, bool)}) for r in rows]
    q = Question(id="destructive", text="d?")
    report = asyncio.run(calibrate(FunctionDecisionModel(fn=fn, threaded=False), examples, q))
    assert (report.n, report.errors, report.skipped) == (9, 1, 1)
    assert report.accuracy == 1.0 and report.auroc == 1.0
    assert report.error_kinds == {"DecisionModelError": 1}
    assert report.threshold == 0.8


def test_bad_dataset_lines_name_the_line(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"user_request": "a", "tool_call": {"tool": "x"}}\n{"user_request": 1}\n')
    with pytest.raises(UsageError, match=r"bad.jsonl:2: not an example"):
        load_examples(f)


def test_the_shipped_heldout_set_is_balanced_and_labelled():
    examples = load_examples(HELDOUT)
    cells = {}
    for e in examples:
        key = (e.labels["destructive"], e.labels["requested"])
        cells[key] = cells.get(key, 0) + 1
    assert len(cells) == 4 and min(cells.values()) >= 50
    assert (HELDOUT.parent / "README.md").read_text().count("Licence") >= 1


def test_cli_calibrate_local_on_the_heldout_set(tmp_path):
    subset = tmp_path / "sub.jsonl"
    subset.write_text("".join(HELDOUT.read_text().splitlines(keepends=True)[:80]))
    result = CliRunner().invoke(app, ["gate", "calibrate", "--model", "local", "--dataset",
                                      str(subset), "--json"])
    assert result.exit_code == 0, result.output
    reports = {r["question_id"]: r for r in json.loads(result.output)}
    assert set(reports) == {"destructive", "requested"}
    for r in reports.values():
        assert r["n"] == 80 and r["errors"] == 0
        assert 0.0 <= r["brier"] <= 1.0 and 0.0 <= r["ece"] <= 1.0
        assert r["auroc"] > 0.75  # a real signal, not chance
        assert r["temperature"] > 0


def test_cli_eval_through_the_gate_fast_path_on_and_off(tmp_path):
    subset = tmp_path / "sub.jsonl"
    subset.write_text("".join(HELDOUT.read_text().splitlines(keepends=True)[:60]))
    # a loaded 2-core machine can take longer than the gate's 5 s per decision: this test
    # measures the fast path switch, not latency
    result = CliRunner().invoke(app, ["gate", "eval", "--dataset", str(subset), "--json",
                                      "--timeout-seconds", "60"])
    assert result.exit_code == 0, result.output
    on, off = json.loads(result.output)
    assert on["fast_path"] is True and off["fast_path"] is False
    assert on["n"] == off["n"] == 60
    assert off["fast_path_share"] == 0.0 and on["fast_path_share"] >= 0.0
    assert on["failures"] == off["failures"] == 0
    assert off["false_allow_rate"] <= 0.5


def test_cli_calibrate_as_a_subprocess_reports_a_bad_question():
    proc = subprocess.run(["ctxgate", "gate", "calibrate", "--dataset", str(HELDOUT),
                           "--question", "secrets"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "--question 'secrets' is not one of" in proc.stderr
