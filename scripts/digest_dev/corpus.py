"""What the own digest development corpora share (``maven_logs.py``, ``polyglot_logs.py``):
reading a produced log as lines, the ``groundtruth`` file's ranges, shell quoting, a wrong
value for an injected assertion, and clearing a corpus directory only when it made it."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from random import Random

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def log_lines(log: bytes) -> list[str]:
    """The log's ``\\n``-counted lines (no trailing empty one), colour codes removed."""
    text = log.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ANSI.sub("", x) for x in lines]


def ranges(nums: set[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as inclusive runs of consecutive numbers."""
    out: list[tuple[int, int]] = []
    for x in sorted(nums):
        if out and x == out[-1][1] + 1:
            out[-1] = (out[-1][0], x)
        else:
            out.append((x, x))
    return out


def groundtruth(labels: set[int]) -> list[str]:
    """The ``groundtruth`` file's lines: ``DEFAULT``, then one ``E a-b`` (or ``E a``) a run."""
    return ["DEFAULT"] + [f"E {a}-{b}" if a != b else f"E {a}" for a, b in ranges(labels)]


def sh_quote(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"


def wrong(rng: Random, v: int) -> int:
    """A value an injected assertion expects instead of ``v``."""
    return v + rng.choice((-3, -2, -1, 1, 2, 5, 10))


def prepare_out(out: Path, group: str, generator: str) -> Path:
    """``out/group``, emptied: only when every case in it was made by ``generator``."""
    target = out / group
    if target.exists():
        for d in target.iterdir():
            meta = d / "meta.json"
            if not (d.is_dir() and meta.exists()
                    and json.loads(meta.read_text()).get("generator") == generator):
                sys.exit(f"refusing to clear {target}: {d} was not made by {generator}")
        shutil.rmtree(target)
    target.mkdir(parents=True)
    return target
