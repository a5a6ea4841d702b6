"""FunctionDecisionModel: the scripted backend shipped as a real, documented backend."""

from __future__ import annotations

import asyncio

import pytest

from ctxgate.errors import DecisionModelError
from ctxgate.gate.backends.base import Answer, Capabilities, DecisionModel, Question
from ctxgate.gate.backends.function import FunctionDecisionModel

QS = (Question(id="destructive", text="d?"), Question(id="requested", text="r?"))


def test_it_is_a_decision_model_and_records_calls():
    model = FunctionDecisionModel(fn=lambda s, q: {"destructive": 0.2, "requested": 0.7},
                                  model_id="rules-v1")
    assert isinstance(model, DecisionModel)
    assert model.capabilities == Capabilities(model_id="rules-v1")
    answers = asyncio.run(model.evaluate({"k": 1}, QS))
    assert answers == [Answer(question_id="destructive", p=0.2, model_id="rules-v1"),
                       Answer(question_id="requested", p=0.7, model_id="rules-v1")]
    assert model.calls == [({"k": 1}, QS)]


def test_async_functions_and_answer_lists():
    async def fn(state, questions):
        return [Answer(question_id=q.id, p=0.5) for q in questions]

    answers = asyncio.run(FunctionDecisionModel(fn=fn).evaluate({}, QS))
    assert [a.question_id for a in answers] == ["destructive", "requested"]


def test_exceptions_become_decision_model_errors():
    def fn(state, questions):
        raise KeyError("destructive")

    with pytest.raises(DecisionModelError, match="raised KeyError") as info:
        asyncio.run(FunctionDecisionModel(fn=fn).evaluate({}, QS))
    assert isinstance(info.value.__cause__, KeyError)
