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


@pytest.fixture
def script() -> Callable[..., FunctionDecisionModel]:
    return scripted


@pytest.fixture
def rm_call() -> Any:
    from ctxgate.gate import ToolCall

    return ToolCall(tool="rm", arguments={"path": "/tmp/scratch.txt"})
