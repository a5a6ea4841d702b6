"""The whole gate on tools of MCP servers that no held-out set uses: where MCP rules are chosen.

    python scripts/mcp_dev.py [--tools DIR] [--dump FILE] [--bare]

``benchmarks/gate_quality.py`` measures MCP tools on the annotations of six npm servers
(``scripts/build_tool_heldout.py``) and must never steer a choice. This script is the
development side: real ``tools/list`` answers of *other* npm MCP servers (Playwright, Chrome
DevTools, Supabase, Neon, Sentry, Notion, Kubernetes, Stripe …), one ``<server>.json`` per
server in ``--tools`` (default ``../cache/mcp-dev/tools``), each the ``tools`` array as the
MCP Python SDK's client returned it. ``scripts/mcp_dev/collect.py`` makes them outside the
repository (``--install`` the pinned npm packages, then ``initialize`` and ``tools/list``
over stdio with fake credentials; no tool is called); ``../cache/mcp-dev/manifest.json``
names each package, its version and its licence (MIT, Apache-2.0, ISC; Sentry's FSL-1.1-ALv2
and exa's unlabelled package are read only for their tool names and annotations). Nothing of
them is committed.

Labels are the servers' own annotations, mapped as the held-out set maps them
(:func:`build_tool_heldout.annotation_class`): ``readOnlyHint`` → read-only; otherwise an open
world (the spec's default) → external; a closed world → irreversible when ``destructiveHint``
(default true), else recoverable. Only annotated tools count.

Every tool goes through a real :class:`~ctxgate.gate.ToolGate` (default local backend and
policy, cwd a fresh git repository) under a request that asks for none of them, with empty
arguments, named as a Claude Code hook sees it (``mcp__<server>__<tool>``; ``--bare``: the
tool's own name, as the held-out table names it). The gate sees no annotation and no
description, as a hook without ``ctxgate mcp proxy`` in front of the server does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_tool_heldout import annotation_class  # noqa: E402
from gate_dev import run_whole_gate  # noqa: E402
from gate_quality import NEUTRAL_REQUEST, Example  # noqa: E402

DESTRUCTIVE = ("external", "local_irreversible", "untrusted_code")


def server_examples(tools_dir: Path, bare: bool) -> dict[str, list[Example]]:
    """Annotated tools of every server file, as unrequested examples, by server."""
    out: dict[str, list[Example]] = {}
    for path in sorted(tools_dir.glob("*.json")):
        server = path.stem
        exs = []
        for tool in json.loads(path.read_text()):
            ann = tool.get("annotations") or {}
            if not any(k.endswith("Hint") for k in ann):
                continue
            name = tool["name"] if bare else f"mcp__{server}__{tool['name']}"
            exs.append(Example(tool=name, arguments={},
                               destructive=annotation_class(ann) in DESTRUCTIVE,
                               requested=False, request=NEUTRAL_REQUEST))
        if exs:
            out[server] = exs
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", type=Path, default=ROOT.parent / "cache" / "mcp-dev" / "tools")
    ap.add_argument("--bare", action="store_true")
    ap.add_argument("--dump", type=Path)
    args = ap.parse_args()
    sets = server_examples(args.tools, args.bare)
    if not sets:
        sys.exit(f"mcp_dev: no annotated tools under {args.tools} (see the module docstring)")
    run_whole_gate({f"mcp dev: {server}": exs for server, exs in sets.items()},
                   "mcp dev: all", args.dump)


if __name__ == "__main__":
    main()
