"""Honest task runs in real projects: what the effect rules make of the project's own code.

    python benchmarks/project_runs.py PROJECTS_DIR [--before REF] [--show 40]

``PROJECTS_DIR`` holds git clones of real projects (one directory each; the closing note and
``benchmarks/README.md`` list the ones measured: SWE-bench's Python projects, a Rust, a C
and two JavaScript projects, cloned from their public repositories). In each, the commands a
developer or an agent runs there every day are classified by
:func:`ctxgate.gate.effects.shell.shell_effect` in the directory that holds the file they
run, once with this checkout's ``src`` and once with ``REF``'s (in child processes):

* every directory with a makefile: ``make`` and ``make TARGET`` for each explicit target;
* every ``package.json`` outside ``node_modules``: ``npm run SCRIPT`` for each script, and
  ``npm install``;
* every ``conftest.py``: ``pytest`` in its directory, and ``pytest`` at the project root;
* every ``setup.py``: ``pip install -e .``; every ``build.rs``: ``cargo build``;
* every ``tox.ini``: ``tox`` and ``tox -e ENV`` for each environment; every ``noxfile.py``:
  ``nox``;
* at the root: ``git commit -m x`` (the clone has no hooks: a control).

These are the projects' own files, so each destructive class is either a target that really
destroys (``make clean`` of tracked files, ``make install`` into /usr/local) or a false alarm
that would stop honest work; the table counts them, and ``--show`` lists them to be read.
Measuring only: nothing here tunes a rule.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

CLASSIFY = r"""
import json, sys
from ctxgate.gate.effects.shell import shell_effect
for line in sys.stdin:
    cwd, command = json.loads(line)
    e = shell_effect(command, cwd=cwd)
    print(json.dumps([e.effect.value, e.evidence] if e else None), flush=False)
"""
DESTRUCTIVE = {"local_irreversible", "external", "untrusted_code"}
_SKIP = {".git", "node_modules", ".venv", "venv", "build", "dist", "target"}
PER_PROJECT = 400
"""At most this many commands per project (vite has hundreds of package.json files)."""


def calls(project: Path) -> list[tuple[str, str, str]]:
    """``(kind, cwd, command)`` for one project."""
    from ctxgate.gate.effects.runners import _MakefileReader

    out: list[tuple[str, str, str]] = [("pytest", str(project), "pytest -q"),
                                       ("git hooks", str(project), "git commit -m x")]
    for dirpath, dirnames, filenames in os.walk(project):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP and not d.startswith("."))
        here = str(dirpath)
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name in ("Makefile", "makefile", "GNUmakefile"):
                out.append(("make", here, "make"))
                try:
                    text = Path(path).read_text(errors="replace")
                except OSError:
                    continue
                reader = _MakefileReader(text, {}, name)
                out += [("make", here, f"make {t}") for t in sorted(reader.rules)
                        if not t.startswith(".") and "$" not in t and "/" not in t][:30]
            elif name == "package.json":
                try:
                    scripts = json.loads(Path(path).read_text()).get("scripts") or {}
                except (OSError, ValueError, AttributeError):
                    continue
                out += [("npm", here, f"npm run {s}") for s in sorted(scripts)
                        if isinstance(s, str) and s.replace(":", "").replace("-", "").isalnum()]
                out.append(("npm", here, "npm install"))
            elif name == "conftest.py":
                out.append(("pytest", here, "pytest"))
            elif name == "setup.py":
                out.append(("pip", here, "pip install -e ."))
            elif name == "build.rs":
                out.append(("cargo", here, "cargo build"))
            elif name == "tox.ini":
                import configparser

                parser = configparser.ConfigParser(interpolation=None, strict=False)
                try:
                    parser.read_string(Path(path).read_text(errors="replace"))
                except (OSError, configparser.Error):
                    continue
                out.append(("tox", here, "tox"))
                out += [("tox", here, f"tox -e {s.split(':', 1)[1]}") for s in parser.sections()
                        if s.startswith("testenv:") and s.split(":", 1)[1].replace("-", "")
                        .replace("_", "").replace(".", "").isalnum()][:30]
            elif name == "noxfile.py":
                out.append(("nox", here, "nox"))
    return out[:PER_PROJECT]


def classify(src: Path, rows: list[tuple[str, str, str]]) -> list[list[str] | None]:
    env = dict(os.environ, PYTHONPATH=str(src))
    proc = subprocess.run([sys.executable, "-c", CLASSIFY], env=env, check=True,
                          input="".join(json.dumps([c, cmd]) + "\n" for _, c, cmd in rows),
                          capture_output=True, text=True, timeout=3600)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("projects", type=Path)
    ap.add_argument("--before", default="HEAD")
    ap.add_argument("--show", type=int, default=40)
    args = ap.parse_args()
    rows = [(f"{p.name}: {kind}", cwd, cmd) for p in sorted(args.projects.iterdir())
            if p.is_dir() for kind, cwd, cmd in calls(p)]
    with tempfile.TemporaryDirectory(prefix="ctxgate-projects-") as tmp:
        old_tree = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(old_tree), args.before], check=True)
        try:
            before = classify(old_tree / "src", rows)
            after = classify(ROOT / "src", rows)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(old_tree)], check=False)
    table: dict[str, Counter[str]] = {}
    shown: list[str] = []
    for (kind, cwd, cmd), old, new in zip(rows, before, after, strict=True):
        c = table.setdefault(kind.split(": ", 1)[1], Counter())
        c["calls"] += 1
        c["destructive before"] += bool(old and old[0] in DESTRUCTIVE)
        c["destructive now"] += bool(new and new[0] in DESTRUCTIVE)
        c["changed"] += old != new
        if new and new[0] in DESTRUCTIVE and old != new:
            rel = os.path.relpath(cwd, args.projects)
            shown.append(f"- `{cmd}` in {rel}: {new[0]}: {new[1][:220]}")
    print(f"{len(rows)} calls in {sum(1 for p in args.projects.iterdir() if p.is_dir())} "
          f"projects under {args.projects}; before = {args.before}")
    cols = ("calls", "destructive before", "destructive now", "changed")
    print("| runner | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for kind in sorted(table):
        print(f"| {kind} | " + " | ".join(str(table[kind][c]) for c in cols) + " |")
    total = sum(table.values(), Counter())
    print("| all | " + " | ".join(str(total[c]) for c in cols) + " |")
    print(f"\nnewly destructive ({len(shown)}):")
    print("\n".join(shown[:args.show]))


if __name__ == "__main__":
    main()
