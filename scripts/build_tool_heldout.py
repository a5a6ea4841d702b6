"""Build tests/gate/backends/data/heldout_tools.jsonl: held-out tool calls from other sources.

    python scripts/build_tool_heldout.py --mcp-tools DIR --toolalpaca DIR

Never used to fit or choose anything; read only by benchmarks/gate_quality.py and tests.

* **MCP tool annotations** (``--mcp-tools``: one ``<server>.json`` per server, the ``tools``
  array of a real ``tools/list`` answer, taken with a stdio MCP client from these npm
  packages): ``@modelcontextprotocol/server-memory``, ``-filesystem``, ``-everything``
  2026.8.31 (MIT), ``@hubspot/mcp-server`` 0.4.0 (MIT), ``@circleci/mcp-server-circleci``
  0.20.0 (Apache-2.0), ``@benborla29/mcp-server-mysql`` 2.0.9 (MIT). Only tools that carry
  annotations. Mapping: ``readOnlyHint`` → ``read_only``; otherwise ``openWorldHint`` (the
  spec's default is true) → ``external``; a closed-world ``destructiveHint`` →
  ``local_irreversible``; else ``local_recoverable``. Destructive = the class is.
* **ToolAlpaca evaluation APIs** (``--toolalpaca``: ``eval_real.json`` and
  ``eval_simulated.json`` of tangqiaoyu/ToolAlpaca, Apache-2.0): each function's HTTP method
  (``Function_Projection``) is its label (GET read-only, else external); each instruction with
  its golden calls is a requested pair; the golden call of another instruction on the same
  API is a ``same_api`` negative; a state-changing golden call of another API is an
  ``injected`` negative. ToolAlpaca is a tool-use benchmark, not an agent-security one; it is
  used here only to measure.

Rows are written sorted, so the file is byte-identical for the same inputs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MCP_SERVERS = {
    "memory": ("@modelcontextprotocol/server-memory", "2026.8.31", "MIT"),
    "filesystem": ("@modelcontextprotocol/server-filesystem", "2026.8.31", "MIT"),
    "everything": ("@modelcontextprotocol/server-everything", "2026.8.31", "MIT"),
    "hubspot": ("@hubspot/mcp-server", "0.4.0", "MIT"),
    "circleci": ("@circleci/mcp-server-circleci", "0.20.0", "Apache-2.0"),
    "mysql": ("@benborla29/mcp-server-mysql", "2.0.9", "MIT"),
}


def annotation_class(a: dict) -> str:
    if a.get("readOnlyHint") is True:
        return "read_only"
    if a.get("openWorldHint", True):
        return "external"
    return "local_irreversible" if a.get("destructiveHint", True) else "local_recoverable"


def mcp_rows(directory: Path) -> list[dict]:
    rows = []
    for server, (package, version, licence) in MCP_SERVERS.items():
        for tool in json.loads((directory / f"{server}.json").read_text()):
            ann = tool.get("annotations") or {}
            if not any(k.endswith("Hint") for k in ann):
                continue
            effect = annotation_class(ann)
            desc = " ".join((tool.get("description") or "").split())[:300]
            rows.append({"set": "effect", "tool": tool["name"], "arguments": {},
                         "description": desc,
                         "input_schema": {"properties": {
                             k: {} for k in (tool.get("inputSchema") or {}).get("properties",
                                                                                 {})}},
                         "effect": effect, "destructive": effect in (
                             "external", "local_irreversible", "untrusted_code"),
                         "source": f"mcp:{package}@{version} ({licence})"})
    return rows


def toolalpaca_rows(directory: Path) -> list[dict]:
    apis = []
    for name in ("eval_real.json", "eval_simulated.json"):
        apis += json.loads((directory / name).read_text())
    rows: list[dict] = []
    writes = []
    for api in apis:
        for fn, (_path, method) in sorted(api["Function_Projection"].items()):
            desc = api["Function_Description"].get(fn, "").split("\n")[0][:300]
            rows.append({"set": "effect", "tool": fn, "arguments": {}, "description": desc,
                         "effect": "read_only" if method == "get" else "external",
                         "destructive": method != "get", "method": method.upper(),
                         "source": f"toolalpaca:{api['Name']}"})
    calls_by_api = []
    for api in apis:
        methods = {fn: m for fn, (_p, m) in api["Function_Projection"].items()}
        calls = []
        for instr, golden in zip(api["Instructions"], api["Golden_Answers"], strict=False):
            for g in golden[:1]:  # the first call is the one the instruction asks for first
                try:
                    args = json.loads(g["Action_Input"] or "{}")
                except ValueError:
                    continue
                if not isinstance(args, dict):
                    continue
                call = {"tool": g["Action"], "arguments": args}
                change = methods.get(g["Action"], "get") != "get"
                calls.append((instr, call, change))
                if change:
                    writes.append((api["Name"], call))
        calls_by_api.append((api["Name"], calls))
    writes.sort(key=lambda w: json.dumps(w, sort_keys=True))
    for name, calls in calls_by_api:
        for i, (instr, call, change) in enumerate(calls):
            src = f"toolalpaca:{name}"
            rows.append({"set": "requested", "user_request": instr, "tool_call": call,
                         "requested": True, "destructive": change, "kind": "matched",
                         "source": src})
            others = [c for c in calls if c[1]["tool"] != call["tool"]]
            if others:
                o = others[i % len(others)]
                rows.append({"set": "requested", "user_request": instr, "tool_call": o[1],
                             "requested": False, "destructive": o[2], "kind": "same_api",
                             "source": src})
            foreign = [w for w in writes if w[0] != name]
            if foreign:
                rows.append({"set": "requested", "user_request": instr,
                             "tool_call": foreign[(i * 7) % len(foreign)][1],
                             "requested": False, "destructive": True, "kind": "injected",
                             "source": src})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mcp-tools", type=Path, required=True)
    ap.add_argument("--toolalpaca", type=Path, required=True)
    ap.add_argument("--out", type=Path,
                    default=ROOT / "tests/gate/backends/data/heldout_tools.jsonl")
    args = ap.parse_args()
    rows = mcp_rows(args.mcp_tools) + toolalpaca_rows(args.toolalpaca)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                                for r in rows))
    print(f"{args.out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
