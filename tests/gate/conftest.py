"""Gate test fixtures: scripted decision models and calls (no network, no real model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ctxgate.gate.backends.base import Answer
from ctxgate.gate.backends.function import FunctionDecisionModel


def scripted(d: float = 0.1, r: float = 0.9, **checks: float) -> FunctionDecisionModel:
    """A model answering destructive=d, requested=r, and each check id given."""
    answers = {"destructive": d, "requested": r, **checks}

    def fn(state, questions):
        return [Answer(question_id=q.id, p=answers[q.id], model_id="scripted")
                for q in questions if q.id in answers]

    return FunctionDecisionModel(fn=fn, model_id="scripted", threaded=False)


@pytest.fixture(autouse=True)
def outside_any_repository(tmp_path, monkeypatch) -> None:
    """Run each gate test in a directory outside any git working tree: the effect rules judge
    paths against the real filesystem, and the checkout these tests live in is a repository
    (``rm -rf build`` there would be a recoverable delete)."""
    work = tmp_path / "not-a-repo"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture(scope="module")
def gate() -> Any:
    """A real :class:`~ctxgate.gate.ToolGate` with the shipped local model and the default
    policy, shared by a module's tests (call ``new_run()`` before each decision)."""
    from ctxgate.gate import ToolGate
    from ctxgate.gate.loader import load_decision_model
    from ctxgate.gate.policy import GatePolicy

    policy = GatePolicy()
    return ToolGate(load_decision_model("local", policy), policy)


@pytest.fixture(scope="module")
def judge(gate: Any) -> Callable[..., Any]:
    """``judge(tool, arguments, cwd, request)``: one call through the module's real
    :func:`gate` as a new run, its :class:`~ctxgate.gate.Verdict` returned."""
    from ctxgate.gate import ToolCall

    def run(tool: str, arguments: Any, cwd: Any, request: str) -> Any:
        gate.new_run()
        return gate.decide_sync(ToolCall(tool=tool, arguments=arguments, cwd=str(cwd)),
                                user_request=request)

    return run


@pytest.fixture
def script() -> Callable[..., FunctionDecisionModel]:
    return scripted


@pytest.fixture
def rm_call() -> Any:
    from ctxgate.gate import ToolCall

    return ToolCall(tool="rm", arguments={"path": "/tmp/scratch.txt"})
