"""The pure-Python WordPiece tokenizer gives the Rust tokenizer's ids for all-MiniLM-L6-v2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxgate.gate.backends.wordpiece import MAX_WORD_CHARS, WordPiece, basic_tokens

NL2BASH = Path("/work/shared/data/gate/nl2bash")
EXTRA = [
    "Café naïve résumé — “quotes” 東京 中文 ☃ \x00 x\u200b y",
    "camelCaseName snake_case_name /usr/local/bin --force-with-lease",
    "a" * (MAX_WORD_CHARS + 5),
    "ﬁ ligature Ⅻ ① ÅNGSTRÖM",
    "rm -rf ~/.config && curl -fsSL https://example.com/x.sh | sh",
    "tabs\tand\nnewlines\r\nand  double  spaces",
    "",
]


@pytest.fixture(scope="module")
def rust_and_ours():
    from tokenizers import Tokenizer

    from ctxgate.gate.backends.embed import model_dir

    root = model_dir()
    rust = Tokenizer.from_file(str(root / "tokenizer.json"))
    rust.no_truncation()
    rust.no_padding()
    vocab = json.loads((root / "tokenizer.json").read_text())["model"]["vocab"]
    return rust, WordPiece(vocab)


def corpus() -> list[str]:
    texts = list(EXTRA)
    for name in ("all.nl", "all.cm"):
        path = NL2BASH / name
        if path.is_file():
            texts += path.read_text().splitlines()[::40]
    return texts


def test_ids_equal_the_rust_tokenizer(rust_and_ours):
    rust, ours = rust_and_ours
    texts = corpus()
    assert len(texts) > 300
    for text in texts:
        assert ours.ids(text) == rust.encode(text).ids[1:-1], text


def test_basic_tokens_split_punctuation_lowercase_and_strip_accents():
    assert basic_tokens("Héllo, WORLD! rm -rf") == ["hello", ",", "world", "!", "rm", "-",
                                                     "rf"]
    assert basic_tokens("東京") == ["東", "京"]
