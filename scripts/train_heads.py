"""Train the local decision model's heads and write them into the package, deterministically.

    python scripts/train_heads.py [--data /work/shared/data/gate] [--out src/ctxgate/gate/backends/heads]

Data (all under ``--data``; licences in tests/gate/backends/data/README.md):

* ``dcg-fixtures``: destructive_commands.yaml (label 1) and safe_commands.yaml (label 0).
* ``redcode-exec-bash``: (Text_summary, Code) pairs. Categories that change state — POST a
  file (1), download to disk (2), write files (6), delete files (8), edit .bashrc (9), kill
  processes (18), send data (21) — are destructive positives; the read-only and pure
  computation categories (3, 5, 7, 12, 13, 15, 16, 22, 25) are negatives; the rest (4, 14,
  20, 23) are ambiguous and left out. Every pair is a *requested* positive.
* ``nl2bash``: (description, command) pairs, requested positives. Destructive labels come from
  the *description* (an independent signal from the parser features): a clear destructive
  verb → 1, an ambiguous one (move, rename, change, replace …) → dropped, none → 0.

Requested negatives pair a request with a call it did not ask for, drawn from the same split:
a random other command, a command with the same program (hard), and a destructive command
(an injected call). Every example goes to a split by the SHA-256 of its command text:
70 % train, 10 % calibration (regularisation and temperature), 20 % held out — never used
for fitting or choosing anything; its metrics are written into the head files and printed.

Heads are L2-regularised logistic regressions fitted by Newton's method (IRLS) in float64,
weights rounded to 6 significant digits: the same data gives byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import yaml

from ctxgate.gate.backends.embed import get_encoder
from ctxgate.gate.backends.heads.features import (
    DESTRUCTIVE_FEATURES,
    REQUESTED_FEATURES,
    call_text,
    destructive_features,
    executed_text,
    requested_features,
    rule_floor,
    window_text,
)
from ctxgate.gate.calibrate import auroc, best_temperature, brier, ece, temper

ROOT = Path(__file__).resolve().parents[1]
REDCODE_DESTRUCTIVE = {1, 2, 6, 8, 9, 18, 21}
REDCODE_BENIGN = {3, 5, 7, 12, 13, 15, 16, 22, 25}
NL_DESTRUCTIVE = re.compile(
    r"\b(delet\w*|remov\w*|eras\w*|kill\w*|terminat\w*|wip(e|es|ing)\b|overwrit\w*|truncat\w*|"
    r"shred\w*|unlink\w*|purg\w*|destroy\w*)", re.I)  # not "empty": mostly "find empty dirs"
NL_AMBIGUOUS = re.compile(
    r"\b(mov\w*|renam\w*|chang\w*|replac\w*|modif\w*|set\w*|updat\w*|edit\w*|substitut\w*|"
    r"chmod|chown|permission\w*|compress\w*|archiv\w*|sav(e|es|ing)\b|writ\w*|overwr\w*|"
    r"append\w*|copy\w*|cop(y|ies)\b|creat\w*|mak(e|es|ing)\b|install\w*|download\w*)", re.I)
NL2BASH_SAMPLE = 3000
LAMBDAS = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


def bucket(key: str) -> str:
    n = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 100
    return "train" if n < 70 else "calib" if n < 80 else "heldout"


def rank(key: str) -> str:
    return hashlib.sha256(("order:" + key).encode()).hexdigest()


def dcg_commands(path: Path) -> list[tuple[str, str]]:
    """(pack, command) from a dcg fixture file, line by line.

    A few fixture lines are not valid YAML (unescaped quotes inside double quotes), so each
    ``- command:`` value is read on its own: YAML scalar rules when it parses, else the text
    between the outer quotes.
    """
    out, pack = [], ""
    for line in path.read_text().splitlines():
        if re.match(r"^[A-Za-z0-9_.\-]+:\s*$", line):
            pack = line.strip()[:-1]
            continue
        m = re.match(r"^\s*- command:\s*(.+?)\s*$", line)
        if not m:
            continue
        raw = m.group(1)
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw[1:-1] if raw[:1] in "\"'" and raw[-1:] == raw[:1] else raw
        if isinstance(value, str) and value.strip():
            out.append((pack, value))
    return out


def load(data: Path) -> tuple[list[dict], list[dict], list[dict]]:
    """Destructive examples, request/call pairs, and the pool of destructive calls."""
    dest: list[dict] = []
    pairs: list[dict] = []
    for name, label in (("destructive_commands.yaml", 1), ("safe_commands.yaml", 0)):
        for pack, cmd in dcg_commands(data / "dcg-fixtures" / name):
            dest.append({"cmd": cmd, "y": label, "source": f"dcg:{pack}"})
    for f in sorted((data / "redcode-exec-bash").glob("index*_30_codes_full_upd.json"),
                    key=lambda p: int(re.findall(r"\d+", p.name)[0])):
        idx = int(re.findall(r"\d+", f.name)[0])
        for row in json.loads(f.read_text()):
            src = f"redcode:{row['Index']}"
            if idx in REDCODE_DESTRUCTIVE or idx in REDCODE_BENIGN:
                y = int(idx in REDCODE_DESTRUCTIVE)
                dest.append({"cmd": row["Code"], "y": y, "source": src})
                pairs.append({"req": row["Text_summary"], "cmd": row["Code"], "source": src,
                              "destructive": bool(y)})
    nl = (data / "nl2bash" / "all.nl").read_text().splitlines()
    cm = (data / "nl2bash" / "all.cm").read_text().splitlines()
    rows = sorted({(a, b) for a, b in zip(nl, cm, strict=True) if a.strip() and b.strip()},
                  key=lambda r: rank(r[0] + "\0" + r[1]))
    pos = [r for r in rows if NL_DESTRUCTIVE.search(r[0])]
    neg = [r for r in rows if not NL_DESTRUCTIVE.search(r[0]) and not NL_AMBIGUOUS.search(r[0])]
    for text, cmd in pos[: NL2BASH_SAMPLE // 3] + neg[: NL2BASH_SAMPLE]:
        y = int(bool(NL_DESTRUCTIVE.search(text)))
        dest.append({"cmd": cmd, "y": y, "source": "nl2bash"})
        pairs.append({"req": text, "cmd": cmd, "source": "nl2bash", "destructive": bool(y)})
    pool = [d for d in dest if d["y"] == 1]
    return dest, pairs, pool


def negatives(pairs: list[dict], pool: list[dict]) -> list[dict]:
    """Mismatched (request, call) pairs within each split."""
    out = []
    for split in ("train", "calib", "heldout"):
        ps = [p for p in pairs if bucket(p["cmd"]) == split]
        ps.sort(key=lambda p: rank(p["req"] + p["cmd"]))
        dp = sorted((d for d in pool if bucket(d["cmd"]) == split), key=lambda d: rank(d["cmd"]))
        by_prog: dict[str, list[dict]] = {}
        for p in ps:
            by_prog.setdefault(p["cmd"].split()[0], []).append(p)
        for i, p in enumerate(ps):
            other = ps[(i * 7 + 3) % len(ps)]
            if other["cmd"] != p["cmd"]:
                out.append({**other, "req": p["req"], "kind": "random"})
            same = [q for q in by_prog[p["cmd"].split()[0]] if q["cmd"] != p["cmd"]]
            if same:
                out.append({**same[i % len(same)], "req": p["req"], "kind": "same_program"})
            if dp and i % 2 == 0:
                d = dp[i % len(dp)]
                out.append({"cmd": d["cmd"], "req": p["req"], "source": d["source"],
                            "destructive": True, "kind": "injected"})
    return out


def embed_all(texts: list[str], cache: Path | None) -> dict[str, np.ndarray]:
    """Embeddings of the unique texts, one text per forward pass.

    One at a time, so a text's vector never depends on what it was batched (padded) with:
    the result is bit-for-bit the same whatever the cache holds. The optional cache
    (``emb-cache.npz`` under ``--cache``) keeps vectors by text between runs.
    """
    uniq = sorted(set(texts))
    known: dict[str, np.ndarray] = {}
    path = cache / "emb-cache.npz" if cache is not None else None
    if path is not None and path.is_file():
        with np.load(path, allow_pickle=False) as z:
            known = dict(zip(z["texts"].tolist(), z["emb"], strict=True))
    enc = get_encoder()
    missing = [t for t in uniq if t not in known]
    for i, t in enumerate(missing):
        known[t] = enc.encode([t])[0]
        if i % 1000 == 0:
            print(f"  embedded {i}/{len(missing)} new texts", file=sys.stderr)
    if path is not None and missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(known)
        np.savez(path, texts=np.array(keys), emb=np.stack([known[k] for k in keys]))
    return {t: known[t].astype(np.float64) for t in uniq}


def fit(x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """L2-regularised logistic regression by IRLS; last column of ``x`` is the bias."""
    w = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], lam)
    reg[-1] = 0.0
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        g = x.T @ (p - y) + reg * w
        h = (x * (p * (1 - p))[:, None]).T @ x + np.diag(reg) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(h, g)
        w -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return w


def predict(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x @ w, -50, 50)))


def nll(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def metrics(p: list[float], y: list[int]) -> dict[str, float]:
    ys = [bool(v) for v in y]
    return {"n": len(p), "positives": int(sum(y)), "auroc": round(auroc(p, ys), 4),
            "accuracy": round(sum((a >= 0.5) == b for a, b in zip(p, ys, strict=True)) / len(p), 4),
            "brier": round(brier(p, ys), 4), "ece": round(ece(p, ys), 4)}


def train_head(name: str, rows: list[dict], x: np.ndarray, y: np.ndarray,
               variants: dict[str, np.ndarray],
               floors: np.ndarray | None = None) -> tuple[dict, dict]:
    split = np.array([r["split"] for r in rows])
    tr, ca, ho = split == "train", split == "calib", split == "heldout"
    best = None
    for vname, mask in variants.items():
        xv = x[:, mask]
        for lam in LAMBDAS:
            w = fit(xv[tr], y[tr], lam)
            score = nll(predict(xv[ca], w), y[ca])
            if best is None or score < best[0] - 1e-12:
                best = (score, vname, lam, w)
    assert best is not None
    _, vname, lam, w = best
    mask = variants[vname]
    cal_p = predict(x[ca][:, mask], w).tolist()
    t = best_temperature(cal_p, [bool(v) for v in y[ca]])
    held = [temper(p, t) for p in predict(x[ho][:, mask], w).tolist()]
    head_only = metrics(held, y[ho].astype(int).tolist())
    if floors is not None:  # the backend's rules in front of the head
        held = [max(p, float(f)) for p, f in zip(held, floors[ho], strict=True)]
    held_metrics = metrics(held, y[ho].astype(int).tolist())
    if floors is not None:
        held_metrics["head_only"] = head_only
    calib_metrics = metrics([temper(p, t) for p in cal_p], y[ca].astype(int).tolist())
    head = {"variant": vname, "lambda": lam, "temperature": t,
            "weights": [float(f"{v:.6g}") for v in w],
            "counts": {s: int(m.sum()) for s, m in (("train", tr), ("calib", ca), ("heldout", ho))},
            "heldout": held_metrics, "calibration_split": calib_metrics}
    print(f"{name}: variant={vname} lambda={lam} T={t} heldout={held_metrics}")
    return head, {"p": held, "rows": [r for r, m in zip(rows, ho, strict=True) if m]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/gate"))
    ap.add_argument("--out", type=Path, default=ROOT / "src/ctxgate/gate/backends/heads")
    ap.add_argument("--cache", type=Path, default=None,
                    help="directory for an embedding cache (reruns skip the encoder)")
    ap.add_argument("--eval-out", type=Path,
                    default=ROOT / "tests/gate/backends/data/heldout.jsonl")
    args = ap.parse_args()
    dest, pairs, pool = load(args.data)
    for r in dest:
        r["split"] = bucket(r["cmd"])
        r["exec"] = window_text(executed_text("bash", {"command": r["cmd"]}))
    negs = negatives(pairs, pool)
    req_rows = [{**p, "y": 1, "kind": "matched"} for p in pairs] + [{**n, "y": 0} for n in negs]
    for r in req_rows:
        r["split"] = bucket(r["cmd"])
        r["exec"] = window_text(executed_text("bash", {"command": r["cmd"]}))
        r["reqw"] = window_text(r["req"])
    print(f"destructive rows {len(dest)}, requested rows {len(req_rows)}", file=sys.stderr)
    emb = embed_all([r["exec"] for r in dest] + [r["exec"] for r in req_rows]
                    + [r["reqw"] for r in req_rows], args.cache)

    # destructive: [embedding | parser features | bias]
    fd = np.array([destructive_features("bash", {"command": r["cmd"]}) for r in dest])
    xd = np.hstack([np.stack([emb[r["exec"]] for r in dest]), fd, np.ones((len(dest), 1))])
    yd = np.array([r["y"] for r in dest], float)
    ne, nf = 384, len(DESTRUCTIVE_FEATURES)
    dvariants = {
        "embedding+features": np.ones(ne + nf + 1, bool),
        "features": np.r_[np.zeros(ne, bool), np.ones(nf + 1, bool)],
    }
    floors = np.array([rule_floor("bash", list(f))[0] for f in fd])
    dhead, dheld = train_head("destructive", dest, xd, yd, dvariants, floors)

    # requested: [request features | request ⊙ call embedding | bias]
    wd = np.array(dhead["weights"])
    dmask = dvariants[dhead["variant"]]
    rule_p = {}
    for r in req_rows:
        if r["cmd"] not in rule_p:
            feats = destructive_features("bash", {"command": r["cmd"]})
            xrow = np.r_[emb[r["exec"]], feats, 1.0]
            rule_p[r["cmd"]] = max(float(temper(float(predict(xrow[dmask][None], wd)[0]),
                                                dhead["temperature"])),
                                   rule_floor("bash", feats)[0])
    fr = np.array([requested_features(r["req"], call_text("bash", {"command": r["cmd"]}),
                                      float(emb[r["reqw"]] @ emb[r["exec"]]), rule_p[r["cmd"]])
                   for r in req_rows])
    prod = np.stack([emb[r["reqw"]] * emb[r["exec"]] for r in req_rows])
    xr = np.hstack([fr, prod, np.ones((len(req_rows), 1))])
    yr = np.array([r["y"] for r in req_rows], float)
    nr = len(REQUESTED_FEATURES)
    rvariants = {
        "features": np.r_[np.ones(nr, bool), np.zeros(ne, bool), True],
        "features+product": np.ones(nr + ne + 1, bool),
    }
    rhead, rheld = train_head("requested", req_rows, xr, yr, rvariants)
    cos_only = [float(v) for v in fr[[r["split"] == "heldout" for r in req_rows], 0]]
    rhead["heldout"]["auroc_cosine_only"] = round(
        auroc(cos_only, [bool(r["y"]) for r in rheld["rows"]]), 4)
    by_kind: dict[str, list[float]] = {}
    for r, p in zip(rheld["rows"], rheld["p"], strict=True):
        by_kind.setdefault(r["kind"], []).append(p)
    rhead["heldout"]["mean_p_by_kind"] = {k: round(sum(v) / len(v), 4)
                                          for k, v in sorted(by_kind.items())}

    common = {"format": 1, "encoder": "sentence-transformers/all-MiniLM-L6-v2",
              "embedding_dim": ne, "trainer": "scripts/train_heads.py"}
    args.out.mkdir(parents=True, exist_ok=True)
    for name, head, feats in (("destructive", dhead, DESTRUCTIVE_FEATURES),
                              ("requested", rhead, REQUESTED_FEATURES)):
        doc = {**common, "question": name, "features": list(feats), **head}
        (args.out / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    write_eval(args.eval_out, dest, req_rows)


def write_eval(path: Path, dest: list[dict], req_rows: list[dict]) -> None:
    """The held-out eval set: labelled (request, call, destructive, requested) rows."""
    label = {r["cmd"]: bool(r["y"]) for r in dest}
    rows = []
    for r in req_rows:
        if r["split"] != "heldout" or r["cmd"] not in label:
            continue
        rows.append({"user_request": r["req"],
                     "tool_call": {"tool": "bash", "arguments": {"command": r["cmd"]}},
                     "destructive": label[r["cmd"]], "requested": bool(r["y"]),
                     "source": r["source"], "kind": r["kind"]})
    rows.sort(key=lambda r: rank(json.dumps(r, sort_keys=True)))
    keep: list[dict] = []
    quota = {(d, q): 0 for d in (True, False) for q in (True, False)}
    for r in rows:  # balanced over the four (destructive, requested) cells, 150 each at most
        cell = (r["destructive"], r["requested"])
        if quota[cell] < 150:
            quota[cell] += 1
            keep.append(r)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep))
    print(f"eval set {path}: {len(keep)} rows, cells {quota}", file=sys.stderr)


if __name__ == "__main__":
    main()
