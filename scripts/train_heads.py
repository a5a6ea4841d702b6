"""Train the local decision model's heads and write them into the package, deterministically.

    python scripts/train_heads.py [--data /work/shared/data/gate] [--cache DIR]

Three heads (``src/ctxgate/gate/backends/heads/*.json``):

* ``destructive``: shell commands. Data under ``--data`` (licences in
  tests/gate/backends/data/README.md): ``dcg-fixtures`` (MIT) destructive_commands.yaml
  (label 1) and safe_commands.yaml (label 0); ``nl2bash`` (MIT) (description, command) pairs,
  destructive when the *description* uses a clear destructive verb, ambiguous ones dropped.
* ``effect``: P(a tool call changes state), for the learned effect classifier
  (:mod:`ctxgate.gate.effects.learned`). Data: public OpenAPI descriptions, the HTTP method
  being the label — see ``scripts/gate_data.py`` for the pinned npm sources, their licences
  and the label mapping. Every operation is seen with and without its description (a tool
  called through a hook often has none).
* ``requested``: P(the user asked for this call), over shell pairs (NL2Bash) and function
  calls (OpenAPI operation summaries paired with their own operation; negatives are other
  operations of the same API and state-changing operations of another provider, as an
  injected instruction would call). Its features include the request↔call matching of
  :mod:`ctxgate.gate.backends.heads.matching`; each call's P(destructive) is what the backend
  gives it (head or effect head, under the same rule and tool-name floors). Requested and
  unrequested rows weigh the same within each of shell/function × destructive/other: the
  generated negatives outnumber the matched pairs about three to one.

**No agent-security benchmark is read here.** RedCode (used to train the first version of
these heads) is an agent-security benchmark: it is now only a measuring set in
``benchmarks/gate_quality.py``.

Splits are by *source*, never by row where a source can be split: dcg-fixtures by pack
(git, filesystem, kubectl, …), APIs.guru by provider; NL2Bash (one source) by the SHA-256 of
the command. 70 % train, 10 % calibration (regularisation and temperature), 20 % held out —
never used for fitting or choosing anything; held-out metrics are written into the head
files. GitHub's API is train only. Further held-out sets from other sources (MCP servers'
tool annotations, ToolAlpaca's evaluation APIs) live in tests/gate/backends/data/ and are
read only by the benchmark.

Heads are L2-regularised logistic regressions fitted by Newton's method (IRLS) in float64,
weights rounded to 6 significant digits: the same data gives byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import yaml

from ctxgate.gate.backends.heads.features import (
    DESTRUCTIVE_FEATURES,
    REQUESTED_FEATURES,
    CallTerms,
    call_terms,
    call_text,
    destructive_features,
    executed_text,
    requested_features,
    rule_floor,
    window_text,
)
from ctxgate.gate.backends.static import get_encoder
from ctxgate.gate.calibrate import auroc, best_temperature, brier, ece, temper
from ctxgate.gate.effects.learned import EFFECT_FEATURES, effect_features, tool_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_data import bucket, function_pairs, load_operations, rank  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NL_DESTRUCTIVE = re.compile(
    r"\b(delet\w*|remov\w*|eras\w*|kill\w*|terminat\w*|wip(e|es|ing)\b|overwrit\w*|truncat\w*|"
    r"shred\w*|unlink\w*|purg\w*|destroy\w*)", re.I)  # not "empty": mostly "find empty dirs"
NL_AMBIGUOUS = re.compile(
    r"\b(mov\w*|renam\w*|chang\w*|replac\w*|modif\w*|set\w*|updat\w*|edit\w*|substitut\w*|"
    r"chmod|chown|permission\w*|compress\w*|archiv\w*|sav(e|es|ing)\b|writ\w*|overwr\w*|"
    r"append\w*|copy\w*|cop(y|ies)\b|creat\w*|mak(e|es|ing)\b|install\w*|download\w*)", re.I)
NL2BASH_SAMPLE = 2400
LAMBDAS = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
EFFECT_SAMPLE = {"train": 2500, "calib": 600, "heldout": 600}
"""Operations per split for the effect head (each seen twice: with and without description)."""
FUNCTION_PAIR_SAMPLE = {"train": 3000, "calib": 600, "heldout": 800}
"""Function-call (request, call) rows per split for the requested head."""


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
    """Destructive examples, request/call pairs, and the pool of destructive calls (shell)."""
    dest: list[dict] = []
    pairs: list[dict] = []
    for name, label in (("destructive_commands.yaml", 1), ("safe_commands.yaml", 0)):
        for pack, cmd in dcg_commands(data / "dcg-fixtures" / name):
            dest.append({"cmd": cmd, "y": label, "source": f"dcg:{pack}",
                         "split": bucket("dcg-pack:" + pack)})
    nl = (data / "nl2bash" / "all.nl").read_text().splitlines()
    cm = (data / "nl2bash" / "all.cm").read_text().splitlines()
    rows = sorted({(a, b) for a, b in zip(nl, cm, strict=True) if a.strip() and b.strip()},
                  key=lambda r: rank(r[0] + "\0" + r[1]))
    pos = [r for r in rows if NL_DESTRUCTIVE.search(r[0])]
    neg = [r for r in rows if not NL_DESTRUCTIVE.search(r[0]) and not NL_AMBIGUOUS.search(r[0])]
    for text, cmd in pos[: NL2BASH_SAMPLE // 3] + neg[: NL2BASH_SAMPLE]:
        y = int(bool(NL_DESTRUCTIVE.search(text)))
        split = bucket(cmd)
        dest.append({"cmd": cmd, "y": y, "source": "nl2bash", "split": split})
        pairs.append({"req": text, "cmd": cmd, "source": "nl2bash", "destructive": bool(y),
                      "split": split})
    pool = [d for d in dest if d["y"] == 1]
    return dest, pairs, pool


def negatives(pairs: list[dict], pool: list[dict]) -> list[dict]:
    """Mismatched (request, call) pairs within each split."""
    out = []
    for split in ("train", "calib", "heldout"):
        ps = [p for p in pairs if p["split"] == split]
        ps.sort(key=lambda p: rank(p["req"] + p["cmd"]))
        dp = sorted((d for d in pool if d["split"] == split), key=lambda d: rank(d["cmd"]))
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
                            "destructive": True, "kind": "injected", "split": split})
    return out


def embed_all(texts: list[str]) -> dict[str, np.ndarray]:
    """Embeddings of the unique texts by the shipped static encoder (the same pure-Python
    code the backend runs, so training and deciding see the same floats)."""
    enc = get_encoder()
    return {t: np.asarray(enc.encode_one(t), np.float64) for t in sorted(set(texts))}


def fit(x: np.ndarray, y: np.ndarray, lam: float, sw: np.ndarray | None = None) -> np.ndarray:
    """L2-regularised logistic regression by IRLS; last column of ``x`` is the bias;
    ``sw`` are the rows' weights (all 1 when not given)."""
    sw = np.ones(len(y)) if sw is None else sw
    w = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], lam)
    reg[-1] = 0.0
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        g = x.T @ (sw * (p - y)) + reg * w
        h = (x * (sw * p * (1 - p))[:, None]).T @ x + np.diag(reg) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(h, g)
        w -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return w


def predict(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x @ w, -50, 50)))


def nll(p: np.ndarray, y: np.ndarray, sw: np.ndarray | None = None) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.average(y * np.log(p) + (1 - y) * np.log(1 - p), weights=sw))


def balanced_weights(y: np.ndarray, groups: list[str]) -> np.ndarray:
    """Row weights giving requested and unrequested rows the same total weight within each
    group (shell or function call, destructive or not): the negatives are generated three to
    one, and a head fitted on that prior calls a plainly requested deletion unrequested."""
    sw = np.ones(len(y))
    for g in sorted(set(groups)):
        sel = np.array([x == g for x in groups])
        pos, neg = float(y[sel].sum()), float((1 - y[sel]).sum())
        if pos and neg:
            sw[sel & (y == 1)] = (pos + neg) / (2 * pos)
            sw[sel & (y == 0)] = (pos + neg) / (2 * neg)
    return sw


def weighted_temperature(p: list[float], y: np.ndarray, sw: np.ndarray) -> float:
    """The temperature in [0.25, 4] minimising the weighted NLL (grid of 0.01 steps)."""
    z = np.log(np.clip(p, 1e-9, 1 - 1e-9) / np.clip(1 - np.asarray(p), 1e-9, 1))
    grid = np.round(np.arange(0.25, 4.0001, 0.01), 2)
    scores = [nll(1 / (1 + np.exp(-z / t)), y, sw) for t in grid]
    return float(grid[int(np.argmin(scores))])


def metrics(p: list[float], y: list[int]) -> dict[str, float]:
    ys = [bool(v) for v in y]
    return {"n": len(p), "positives": int(sum(y)), "auroc": round(auroc(p, ys), 4),
            "accuracy": round(sum((a >= 0.5) == b for a, b in zip(p, ys, strict=True)) / len(p), 4),
            "brier": round(brier(p, ys), 4), "ece": round(ece(p, ys), 4)}


def train_head(name: str, rows: list[dict], x: np.ndarray, y: np.ndarray,
               variants: dict[str, np.ndarray],
               floors: np.ndarray | None = None,
               sw: np.ndarray | None = None) -> tuple[dict, dict]:
    split = np.array([r["split"] for r in rows])
    tr, ca, ho = split == "train", split == "calib", split == "heldout"
    best = None
    for vname, mask in variants.items():
        xv = x[:, mask]
        for lam in LAMBDAS:
            w = fit(xv[tr], y[tr], lam, None if sw is None else sw[tr])
            score = nll(predict(xv[ca], w), y[ca], None if sw is None else sw[ca])
            if best is None or score < best[0] - 1e-12:
                best = (score, vname, lam, w)
    assert best is not None
    _, vname, lam, w = best
    mask = variants[vname]
    cal_p = predict(x[ca][:, mask], w).tolist()
    t = (best_temperature(cal_p, [bool(v) for v in y[ca]]) if sw is None
         else weighted_temperature(cal_p, y[ca], sw[ca]))
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


def sample_split(rows: list, key, limits: dict[str, int]) -> list:
    """At most ``limits[split]`` rows of each split (all held-out rows), deterministically."""
    out, seen = [], dict.fromkeys(limits, 0)
    for r in sorted(rows, key=key):
        split = r["split"] if isinstance(r, dict) else r.split
        if split in limits:
            if seen[split] >= limits[split]:
                continue
            seen[split] += 1
        out.append(r)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/gate"))
    ap.add_argument("--out", type=Path, default=ROOT / "src/ctxgate/gate/backends/heads")
    ap.add_argument("--cache", type=Path, default=ROOT.parent / "cache" / "model",
                    help="directory for the npm sources (outside the repository; reruns skip "
                         "the downloads)")
    ap.add_argument("--eval-out", type=Path,
                    default=ROOT / "tests/gate/backends/data/heldout.jsonl")
    args = ap.parse_args()
    dest, pairs, pool = load(args.data)
    for r in dest:
        r["exec"] = window_text(executed_text("bash", {"command": r["cmd"]}))
    negs = negatives(pairs, pool)
    req_rows = [{**p, "y": 1, "kind": "matched"} for p in pairs] + [{**n, "y": 0} for n in negs]
    for r in req_rows:
        r["tool"], r["args"], r["shell"] = "bash", {"command": r["cmd"]}, True
        r["exec"] = window_text(executed_text("bash", {"command": r["cmd"]}))
        r["reqw"] = window_text(r["req"])

    ops = load_operations(args.cache / "sources")
    eff = sample_split(ops,
                       lambda o: rank(o.api + o.tool + o.method), EFFECT_SAMPLE)
    eff_rows = []
    for o in eff:
        for desc in (o.description, None):
            eff_rows.append({"split": o.split, "y": int(o.changes_state), "tool": o.tool,
                             "args": o.args, "desc": desc, "source": o.source,
                             "text": tool_text(o.tool, o.args, description=desc)})
    fpairs = sample_split(function_pairs(ops),
                          lambda p: rank(p["req"] + p["tool"] + p["kind"]), FUNCTION_PAIR_SAMPLE)
    for r in fpairs:
        r["shell"], r["cmd"] = False, None
        r["exec"] = window_text(call_text(r["tool"], r["args"]))
        r["reqw"] = window_text(r["req"])
        r["text"] = tool_text(r["tool"], r["args"])
    print(f"destructive rows {len(dest)}, effect rows {len(eff_rows)}, requested rows "
          f"{len(req_rows)} shell + {len(fpairs)} function calls", file=sys.stderr)
    emb = embed_all([r["exec"] for r in dest] + [r["exec"] for r in req_rows + fpairs]
                    + [r["reqw"] for r in req_rows + fpairs]
                    + [r["text"] for r in eff_rows + fpairs])
    ne = get_encoder().dim

    # destructive (shell): [embedding | parser features | bias]
    fd = np.array([destructive_features("bash", {"command": r["cmd"]}) for r in dest])
    xd = np.hstack([np.stack([emb[r["exec"]] for r in dest]), fd, np.ones((len(dest), 1))])
    yd = np.array([r["y"] for r in dest], float)
    nf = len(DESTRUCTIVE_FEATURES)
    dvariants = {
        "embedding+features": np.ones(ne + nf + 1, bool),
        "features": np.r_[np.zeros(ne, bool), np.ones(nf + 1, bool)],
    }
    floors = np.array([rule_floor("bash", list(f))[0] for f in fd])
    dhead, _ = train_head("destructive", dest, xd, yd, dvariants, floors)

    # effect (any tool): [embedding of tool_text | effect features | bias]
    fe = np.array([effect_features(r["tool"], r["args"], description=r["desc"])
                   for r in eff_rows])
    xe = np.hstack([np.stack([emb[r["text"]] for r in eff_rows]), fe, np.ones((len(eff_rows), 1))])
    ye = np.array([r["y"] for r in eff_rows], float)
    nfe = len(EFFECT_FEATURES)
    evariants = {
        "embedding+features": np.ones(ne + nfe + 1, bool),
        "features": np.r_[np.zeros(ne, bool), np.ones(nfe + 1, bool)],
    }
    ehead, _ = train_head("effect", eff_rows, xe, ye, evariants)

    # P(destructive) each call of the requested rows gets from the backend
    wd, dmask = np.array(dhead["weights"]), dvariants[dhead["variant"]]
    we, emask = np.array(ehead["weights"]), evariants[ehead["variant"]]
    p_dest: dict[str, float] = {}
    for r in req_rows:
        if r["cmd"] not in p_dest:
            feats = destructive_features("bash", {"command": r["cmd"]})
            xrow = np.r_[emb[r["exec"]], feats, 1.0]
            p_dest[r["cmd"]] = max(float(temper(float(predict(xrow[dmask][None], wd)[0]),
                                                dhead["temperature"])),
                                   rule_floor("bash", feats)[0])
        r["p_d"] = p_dest[r["cmd"]]
    for r in fpairs:
        xrow = np.r_[emb[r["text"]], effect_features(r["tool"], r["args"]), 1.0]
        r["p_d"] = max(float(temper(float(predict(xrow[emask][None], we)[0]),
                                    ehead["temperature"])),
                       rule_floor(r["tool"], destructive_features(r["tool"], r["args"]))[0])

    # requested: [request features | request ⊙ call embedding | bias]
    rows = req_rows + fpairs
    terms: dict[str, CallTerms] = {}
    for r in rows:
        key = json.dumps([r["tool"], r["args"]], sort_keys=True)
        if key not in terms:
            terms[key] = call_terms(r["tool"], r["args"])
        r["terms"] = terms[key]
    fr = np.array([requested_features(r["req"], call_text(r["tool"], r["args"]),
                                      float(emb[r["reqw"]] @ emb[r["exec"]]), r["p_d"],
                                      tool=r["tool"], shell=r["shell"], terms=r["terms"])
                   for r in rows])
    prod = np.stack([emb[r["reqw"]] * emb[r["exec"]] for r in rows])
    xr = np.hstack([fr, prod, np.ones((len(rows), 1))])
    yr = np.array([r["y"] for r in rows], float)
    nr = len(REQUESTED_FEATURES)
    rvariants = {
        "features": np.r_[np.ones(nr, bool), np.zeros(ne, bool), True],
        "features+product": np.ones(nr + ne + 1, bool),
    }
    groups = [("bash" if r["shell"] else "function")
              + (":destructive" if r.get("destructive", r.get("changes_state")) else ":other")
              for r in rows]
    rhead, rheld = train_head("requested", rows, xr, yr, rvariants,
                              sw=balanced_weights(yr, groups))
    rhead["weighting"] = ("requested and unrequested rows weigh the same within each of "
                          "bash/function x destructive/other")
    by_kind: dict[str, list[float]] = {}
    for r, p in zip(rheld["rows"], rheld["p"], strict=True):
        by_kind.setdefault(("bash:" if r["shell"] else "function:") + r["kind"], []).append(p)
    rhead["heldout"]["mean_p_by_kind"] = {k: round(sum(v) / len(v), 4)
                                          for k, v in sorted(by_kind.items())}
    for shell in (True, False):
        sel = [(p, r["y"]) for r, p in zip(rheld["rows"], rheld["p"], strict=True)
               if r["shell"] == shell]
        if sel:
            rhead["heldout"]["auroc_" + ("shell" if shell else "function_calls")] = round(
                auroc([p for p, _ in sel], [bool(y) for _, y in sel]), 4)

    common = {"format": 1, "encoder": "static-embeddings.bin (distilled from "
                                      "sentence-transformers/all-MiniLM-L6-v2)",
              "embedding_dim": ne, "trainer": "scripts/train_heads.py"}
    args.out.mkdir(parents=True, exist_ok=True)
    for name, head, feats in (("destructive", dhead, DESTRUCTIVE_FEATURES),
                              ("effect", ehead, EFFECT_FEATURES),
                              ("requested", rhead, REQUESTED_FEATURES)):
        doc = {**common, "question": name, "features": list(feats), **head}
        (args.out / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    if args.out == ROOT / "src/ctxgate/gate/backends/heads":
        import pin_model

        pin_model.main()
    write_eval(args.eval_out, dest, req_rows)
    write_openapi_eval(args.eval_out.parent / "heldout_openapi.jsonl", eff, fpairs)


def write_openapi_eval(path: Path, ops: list, fpairs: list[dict]) -> None:
    """Held-out APIs.guru providers: labelled operations and (request, call) pairs."""
    rows = []
    for o in ops:
        if o.split == "heldout":
            rows.append({"set": "effect", "tool": o.tool, "arguments": o.args,
                         "description": o.description, "method": o.method.upper(),
                         "effect": o.effect, "destructive": o.changes_state,
                         "source": f"apis-guru:{o.api}"})
    rows = sorted(rows, key=lambda r: rank(json.dumps(r, sort_keys=True)))[:400]
    calls = [{"set": "requested", "user_request": r["req"],
              "tool_call": {"tool": r["tool"], "arguments": r["args"]},
              "requested": bool(r["y"]), "destructive": bool(r["changes_state"]),
              "kind": r["kind"], "source": "apis-guru"}
             for r in fpairs if r["split"] == "heldout"]
    calls = sorted(calls, key=lambda r: rank(json.dumps(r, sort_keys=True)))[:400]
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                            for r in rows + calls))
    print(f"openapi eval set {path}: {len(rows)} operations, {len(calls)} pairs", file=sys.stderr)


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
