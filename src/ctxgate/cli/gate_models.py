"""`ctxgate gate calibrate` and `ctxgate gate eval` (decision-model tooling)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ctxgate.cli._options import JsonOption

ModelOption = Annotated[str | None, typer.Option(
    "--model", help="Decision backend: local, openai, structured, fallback, or module:factory "
                    "(default: [gate] backend).")]
DatasetOption = Annotated[Path, typer.Option(
    "--dataset", help="JSONL file: user_request, tool_call {tool, arguments}, and boolean "
                      "labels destructive / requested.")]
ModelNameOption = Annotated[str | None, typer.Option(
    "--model-name", help="Model name sent to a remote backend ([gate] model).")]
BaseUrlOption = Annotated[str | None, typer.Option(
    "--base-url", help="Endpoint of a remote backend ([gate] base_url).")]
TimeoutOption = Annotated[float | None, typer.Option(
    "--timeout-seconds", help="Deadline per decision, seconds ([gate] timeout_seconds).")]


def _policy(model: str | None, model_name: str | None, base_url: str | None,
            timeout: float | None):
    from ctxgate.cli._options import build_config

    return build_config(gate={"backend": model, "model": model_name, "base_url": base_url,
                              "timeout_seconds": timeout}).gate


def register_gate(gate_app: typer.Typer) -> None:
    """Add the decision-model commands to the ``gate`` sub-app."""

    @gate_app.command("calibrate")
    def calibrate(
        dataset: DatasetOption,
        model: ModelOption = None,
        model_name: ModelNameOption = None,
        base_url: BaseUrlOption = None,
        timeout_seconds: TimeoutOption = None,
        question: Annotated[str, typer.Option(
            "--question", help="Question id to measure: destructive, requested, or all.")] = "all",
        target_precision: Annotated[float, typer.Option(
            "--target-precision", help="Precision the reported threshold must reach.")] = 0.9,
        json_out: JsonOption = False,
    ) -> None:
        """Measure a decision model on labelled calls: accuracy, Brier, ECE, temperature, threshold.

        Example:
            ctxgate gate calibrate --model local --dataset calls.jsonl --target-precision 0.95
        """
        import asyncio
        import json

        from ctxgate.errors import UsageError
        from ctxgate.gate import calibrate as cal
        from ctxgate.gate.gate import ToolGate
        from ctxgate.gate.loader import load_decision_model

        policy = _policy(model, model_name, base_url, timeout_seconds)
        examples = cal.load_examples(dataset)
        backend = load_decision_model(policy.backend, policy)
        questions = ToolGate(backend, policy).questions
        chosen = [q for q in questions if question in ("all", q.id)]
        if not chosen:
            raise UsageError(f"--question {question!r} is not one of "
                             f"{['all'] + [q.id for q in questions]}")

        async def run_all():
            return [await cal.calibrate(backend, examples, q, target_precision=target_precision)
                    for q in chosen]

        reports = asyncio.run(run_all())
        if json_out:
            typer.echo(json.dumps([r.to_dict() for r in reports], ensure_ascii=False))
            return
        for r in reports:
            thr = ("unreachable" if r.threshold is None else
                   f"{r.threshold:.3f} (precision {r.precision_at_threshold:.3f}, "
                   f"recall {r.recall_at_threshold:.3f})")
            typer.echo(
                f"{r.question_id} [{r.model_id}]: n={r.n} errors={r.errors} skipped={r.skipped}\n"
                f"  accuracy {r.accuracy:.3f}  Brier {r.brier:.4f}  ECE(10 bins) {r.ece:.4f}  "
                f"AUROC {r.auroc:.3f}\n"
                f"  best temperature {r.temperature:g} -> Brier {r.brier_tempered:.4f}, "
                f"ECE {r.ece_tempered:.4f}\n"
                f"  threshold for precision {r.target_precision:g}: {thr}\n"
                f"  latency p50 {r.latency_ms_p50:.1f} ms")

    @gate_app.command("eval")
    def eval_(
        dataset: DatasetOption,
        model: ModelOption = None,
        model_name: ModelNameOption = None,
        base_url: BaseUrlOption = None,
        timeout_seconds: TimeoutOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Run labelled calls through the whole gate, fast path on and off; print error rates.

        Example:
            ctxgate gate eval --dataset tests/gate/backends/data/heldout.jsonl
        """
        import asyncio
        import json
        from dataclasses import replace

        from ctxgate.gate import calibrate as cal
        from ctxgate.gate.gate import ToolGate
        from ctxgate.gate.loader import load_decision_model

        policy = _policy(model, model_name, base_url, timeout_seconds)
        examples = cal.load_examples(dataset)
        backend = load_decision_model(policy.backend, policy)

        async def run_both():
            out = []
            for fast in (True, False):
                p = replace(policy, fast_path=fast, cache_ttl_seconds=0.0, audit=False)
                out.append(await cal.eval_gate(ToolGate(backend, p), examples))
            return out

        reports = asyncio.run(run_both())
        if json_out:
            typer.echo(json.dumps([r.to_dict() for r in reports], ensure_ascii=False))
            return
        typer.echo(f"backend {reports[0].model_id}, {reports[0].n} labelled calls")
        typer.echo("fast path | false allow (destr.+unreq.) | false deny (benign+req.) | "
                   "fast-path share | failures | p50 ms | p95 ms")
        for r in reports:
            typer.echo(
                f"{'on ' if r.fast_path else 'off'}       | {r.false_allow_rate:6.3f} "
                f"(n={r.n_destructive_unrequested:<4})        | {r.false_deny_rate:6.3f} "
                f"(n={r.n_benign_requested:<4})     | {r.fast_path_share:6.3f}          | "
                f"{r.failures:<8} | {r.latency_ms_p50:6.1f} | {r.latency_ms_p95:6.1f}")
