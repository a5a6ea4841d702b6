"""``benchmarks/project_runs.py`` on two tiny projects: every everyday call is classified with
the project's files on disk, before (``--before HEAD``, a real git worktree) and now, and the
table's counts add up — so the benchmark cannot rot silently."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _project(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_the_benchmark_classifies_every_call_and_its_counts_add_up(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    _project(projects / "c-lib", {"Makefile": "all:\n\tcc -o app main.c\n"
                                              "nuke:\n\trm -rf $(HOME)/.ssh\n"})
    _project(projects / "web", {"package.json": json.dumps(
        {"scripts": {"test": "node --test", "wipe": "rm -rf ~/Documents"}})})
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "project_runs.py"),
                          str(projects), "--before", "HEAD", "--show", "10"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = {m.group(1): [int(x) for x in m.group(2).split(" | ")] for m in re.finditer(
        r"^\| (\w[\w ]*) \| (\d+ \| \d+ \| \d+ \| \d+) \|$", out.stdout, re.M)}
    # c-lib: make, make all, make nuke, pytest, git commit; web: npm run test/wipe, npm install,
    # pytest, git commit
    assert rows["make"][0] == 3 and rows["npm"][0] == 3, out.stdout
    assert rows["all"][0] == sum(v[0] for k, v in rows.items() if k != "all") == 10
    assert rows["make"][2] >= 1 and rows["npm"][2] >= 1, out.stdout  # nuke and wipe
    assert rows["all"][2] == sum(v[2] for k, v in rows.items() if k != "all")
