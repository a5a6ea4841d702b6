"""Static token embeddings distilled from all-MiniLM-L6-v2: the local model's text encoder.

A sentence embedding here is the L2-normalised mean of one fixed vector per WordPiece token
— no attention, no layers — so encoding a text costs a dictionary walk and a few hundred
additions in pure Python (no numpy, no ``tokenizers``, nothing to install). The vectors were
computed once by ``scripts/build_static_model.py`` from the teacher model (each vocabulary
token run through all-MiniLM-L6-v2 on its own, centred, reduced by PCA, weighted by token
rank and stored as float16) and ship inside the package, verified by SHA-256 at load time
(:mod:`ctxgate.gate.backends.modelfiles`).

File layout (``heads/static-embeddings.bin``, little-endian):

* ``CTXGSE01`` (8 bytes), then a ``uint32`` header length and the header, JSON;
* the vocabulary, ``header["vocab_bytes"]`` bytes of UTF-8, one token per ``\\n``-separated
  line, in row order;
* ``header["rows"] × header["dim"]`` float16 values, row-major.

Same text → the same floats, on every machine (IEEE doubles summed in a fixed order).
"""

from __future__ import annotations

import functools
import json
import math
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ctxgate.gate.backends.modelfiles import ModelFileError, read_verified
from ctxgate.gate.backends.wordpiece import WordPiece

__all__ = ["MAGIC", "MODEL_FILE", "StaticEncoder", "get_encoder", "pack", "unpack_header"]

MODEL_FILE = "static-embeddings.bin"
"""The shipped file (in :data:`~ctxgate.gate.backends.modelfiles.MODEL_PACKAGE`)."""
MAGIC = b"CTXGSE01"
_ROW_CACHE = 16_384


@dataclass(frozen=True, kw_only=True)
class _Layout:
    header: dict
    vocab: tuple[str, ...]
    matrix_offset: int


def unpack_header(data: bytes) -> _Layout:
    """Parse the header and the vocabulary of a model file (see the module docstring).

    Raises:
        ModelFileError: the bytes are not a model file of this format.
    """
    if data[:8] != MAGIC or len(data) < 12:
        raise ModelFileError(f"{MODEL_FILE} does not start with {MAGIC!r}: not a static "
                             "embedding file of this ctxgate version")
    (n,) = struct.unpack_from("<I", data, 8)
    header = json.loads(data[12:12 + n].decode("utf-8"))
    start = 12 + n
    vocab = tuple(data[start:start + header["vocab_bytes"]].decode("utf-8").split("\n"))
    offset = start + header["vocab_bytes"]
    if header.get("dtype") != "float16" or len(vocab) != header["rows"] or \
            len(data) != offset + header["rows"] * header["dim"] * 2:
        raise ModelFileError(f"{MODEL_FILE} is inconsistent with its header "
                             f"({header.get('rows')} rows × {header.get('dim')} float16)")
    return _Layout(header=header, vocab=vocab, matrix_offset=offset)


def pack(header: dict, vocab: Sequence[str], matrix_f16: bytes) -> bytes:
    """The bytes of a model file (what the build script writes)."""
    vb = "\n".join(vocab).encode("utf-8")
    head = json.dumps({**header, "vocab_bytes": len(vb), "rows": len(vocab)},
                      sort_keys=True, separators=(",", ":")).encode("utf-8")
    return MAGIC + struct.pack("<I", len(head)) + head + vb + matrix_f16


class StaticEncoder:
    """Pure-Python sentence encoder over the shipped static token embeddings."""

    def __init__(self, data: bytes | None = None) -> None:
        self._data = read_verified(MODEL_FILE) if data is None else data
        layout = unpack_header(self._data)
        self.header = layout.header
        self.dim: int = int(layout.header["dim"])
        self._offset = layout.matrix_offset
        self._row = struct.Struct(f"<{self.dim}e")
        self._tok = WordPiece(dict(zip(layout.vocab, range(len(layout.vocab)), strict=True)),
                              unk=layout.header.get("unk", "[UNK]"))
        self._lock = threading.Lock()
        self.row = functools.lru_cache(maxsize=_ROW_CACHE)(self._read_row)

    def _read_row(self, i: int) -> tuple[float, ...]:
        return self._row.unpack_from(self._data, self._offset + i * self.dim * 2)

    def token_ids(self, text: str) -> list[int]:
        """Row ids of the WordPiece tokens of ``text``."""
        return self._tok.ids(text)

    def encode_one(self, text: str) -> list[float]:
        """The L2-normalised embedding of ``text`` (all zeros for a text with no tokens)."""
        ids = self._tok.ids(text)
        if not ids:
            return [0.0] * self.dim
        acc = list(self.row(ids[0]))
        for i in ids[1:]:
            acc = [a + b for a, b in zip(acc, self.row(i), strict=True)]
        norm = math.sqrt(sum(a * a for a in acc))
        if norm == 0.0:
            return [0.0] * self.dim
        return [a / norm for a in acc]

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """:meth:`encode_one` of each text."""
        return [self.encode_one(t) for t in texts]


@functools.cache
def get_encoder() -> StaticEncoder:
    """The process-wide encoder, loaded (and verified) on first use."""
    return StaticEncoder()
