"""How each way of hooking Bash treats the agent's shell and a big build log, in the real Claude Code CLI.

Runs ``claude -p`` (npm ``@anthropic-ai/claude-code``, tests/integrations/node) against the
scripted Messages server of the integration tests, with the same scripted sessions in each
mode:

- ``none``: no hooks (the physical baseline: what Claude Code itself does);
- ``parts``: ``hook pre`` wraps only the output-producing parts in ``ctxgate run`` (default);
- ``post``: ``hook pre --no-rewrite``; the output is digested after the fact by ``hook post``.

``--src DIR`` runs the hooks from another checkout's ``src`` as a fourth mode (e.g. a worktree
of an older commit that wrapped whole commands). Printed per mode: whether each state
scenario's results equal the no-hook session's, and for a big build log that fails (exit 1)
and one that succeeds: UTF-8 bytes the model received, whether the log's last line (the error)
is in them, whether it came as a ctxgate digest, and the session's wall time. The load
average is printed first: the hooks' own latency depends on it.

    python benchmarks/hook_shell_modes.py [--src DIR] [--only state,fail,ok]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.integrations import test_claude_code as cc  # noqa: E402

STATE = ["mkdir -p sub && cd sub", "pwd", "export X=1", "echo X=$X", "X=2; echo in-call X=$X",
         "export Y=3 && echo in-call Y=$Y", "cd .. && source .venv/bin/activate && echo V=${VIRTUAL_ENV##*/}",
         "echo after V=${VIRTUAL_ENV##*/}; pwd"]
ACTIVATE = 'export VIRTUAL_ENV="$PWD/.venv"\nexport PATH="$VIRTUAL_ENV/bin:$PATH"\n'


def session(mode: str, commands: list[str], *, build_exit: int = 1,
            src: str | None = None) -> tuple[list[str], float]:
    tmp = Path(tempfile.mkdtemp(prefix=f"hookmodes-{mode}-"))
    project = cc.make_project(tmp)
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "activate").write_text(ACTIVATE, encoding="utf-8")
    if build_exit == 0:
        (project / "build.sh").write_text(cc.BUILD_SH.replace("exit 1", "exit 0"),
                                          encoding="utf-8")
    saved = cc.REPO
    if src is not None:
        cc.REPO = Path(src).resolve().parent
    started = time.monotonic()
    try:
        s = cc.run_claude(project, "Do as planned.", commands, hooks=mode != "none",
                          pre_flags=" --no-rewrite" if mode == "post" else "")
    finally:
        cc.REPO = saved
    seconds = time.monotonic() - started
    return [cc.content_text(r).replace(str(project), "<project>") for r in s.tool_results], seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", help="another checkout's src/ to run the hooks from, as mode 'src'")
    parser.add_argument("--only", default="state,fail,ok")
    args = parser.parse_args()
    only = set(args.only.split(","))
    modes = ["none", "parts", "post"] + (["src"] if args.src else [])
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f} on {os.cpu_count()} cores")
    if "state" in only:
        results = {m: session(m, STATE, src=args.src if m == "src" else None) for m in modes}
        base = results["none"][0]
        print("\nstate scenario (one Bash call each) | " + " | ".join(modes))
        print("---|" + "---|" * len(modes))
        for i, command in enumerate(STATE):
            cells = []
            for m in modes:
                got = results[m][0][i]
                cells.append(repr(got.strip()[:40]) + ("" if got == base[i] else " ≠"))
            print(f"`{command}` | " + " | ".join(cells))
        print("session seconds | " + " | ".join(f"{results[m][1]:.1f}" for m in modes))
    for label, code in (("fail", 1), ("ok", 0)):
        if label not in only:
            continue
        print(f"\nbig build log, exit {code} (276,760 bytes) | bytes to model | error line "
              "shown | digest | seconds")
        print("---|---|---|---|---")
        for m in modes:
            (text,), seconds = session(m, ["./build.sh"], build_exit=code,
                                       src=args.src if m == "src" else None)
            print(f"{m} | {len(text.encode('utf-8')):,} | {'yes' if cc.ERROR_LINE in text else 'no'}"
                  f" | {'yes' if '[ctxgate digest:' in text else 'no'} | {seconds:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
