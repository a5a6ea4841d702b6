"""A pure-Python BERT uncased WordPiece tokenizer (no ``tokenizers`` package needed).

It reproduces the normaliser, pre-tokeniser and WordPiece model that all-MiniLM-L6-v2's
``tokenizer.json`` names (``BertNormalizer`` with ``clean_text``, ``handle_chinese_chars``,
``lowercase`` and accents stripped; ``BertPreTokenizer``; WordPiece with ``##`` continuations
and at most 100 characters per word), so the static encoder looks up the same token rows the
teacher model saw. ``tests/gate/backends/test_wordpiece.py`` holds it equal to the Rust
tokenizer on a few hundred texts when that package is installed.

Pure and deterministic; words are memoised (an agent repeats the same words all day).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping, Sequence

__all__ = ["MAX_WORD_CHARS", "WordPiece", "basic_tokens"]

MAX_WORD_CHARS = 100
"""A longer word becomes ``[UNK]`` (the model's ``max_input_chars_per_word``)."""
_WORD_CACHE = 65_536


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _normalise(text: str) -> str:
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        cat = unicodedata.category(ch)
        if ch in "\t\n\r" or cat == "Zs":
            out.append(" ")
        elif cat.startswith("C"):
            continue
        elif _is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    text = "".join(out).lower()
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFD", text)
                       if unicodedata.category(c) != "Mn")
    return text


def basic_tokens(text: str) -> list[str]:
    """Normalised words and punctuation marks, before WordPiece (BERT's basic tokeniser)."""
    words: list[str] = []
    for chunk in _normalise(text).split():
        if chunk.isalnum() and chunk.isascii():
            words.append(chunk)
            continue
        cur: list[str] = []
        for ch in chunk:
            if _is_punct(ch):
                if cur:
                    words.append("".join(cur))
                    cur = []
                words.append(ch)
            else:
                cur.append(ch)
        if cur:
            words.append("".join(cur))
    return words


class WordPiece:
    """Greedy longest-match-first WordPiece over a vocabulary (token → id)."""

    def __init__(self, vocab: Mapping[str, int], *, unk: str = "[UNK]") -> None:
        self.vocab = vocab if isinstance(vocab, dict) else dict(vocab)  # never mutated
        self.unk_id = self.vocab[unk]
        self.word_ids = functools.lru_cache(maxsize=_WORD_CACHE)(self._word_ids)

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk_id,)
        vocab, ids, start, n = self.vocab, [], 0, len(word)
        while start < n:
            end = n
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unk_id,)
            ids.append(found)
            start = end
        return tuple(ids)

    def ids(self, text: str) -> list[int]:
        """Token ids of ``text`` (no ``[CLS]``/``[SEP]``)."""
        out: list[int] = []
        for word in basic_tokens(text):
            out.extend(self.word_ids(word))
        return out

    def tokens(self, text: str, inverse: Sequence[str]) -> list[str]:
        """The token strings of ``text``, given the id → token list."""
        return [inverse[i] for i in self.ids(text)]
