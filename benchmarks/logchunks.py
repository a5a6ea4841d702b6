"""Load LogChunks: real failing Travis CI logs of 30 languages, each with a human-labelled chunk.

Source: the LogChunks data set (Brandt, Panichella, Zaidman, Beller: "LogChunks: A Data Set
for Build Log Analysis", MSR 2020; https://zenodo.org/record/3632351, whose record gives the
licence: CC BY 4.0 as far as we know), in the adapted layout of its authors' repository
https://github.com/lacinoire/master-thesis (folder ``tool``: ``samples/LANG/REPO/failed/N.log``
and ``example-sets/BuildFailureReason/LANG/REPO.xml``, whose ``<Output>`` is the chunk of the
log a person marked as the reason the build failed). That repository has no licence file at
its root (its only LICENSE, the Unlicense, is in ``thesis/`` and covers the thesis sources;
``replication.md`` calls ``tool`` "a modified version of the LogChunks data set"), so nothing
of it is committed here.

It is a suite built by others to evaluate build-log analysis. Make the data with::

    git clone --depth 1 https://github.com/lacinoire/master-thesis /tmp/mt
    mkdir -p /work/cache/data-recall/logchunks && cp -r /tmp/mt/tool /work/cache/data-recall/logchunks/

(``digest_recall.py`` splits it by repository into a dev part, whose misses were read while
the block digest was tuned, and a held-out part, never read; see ``logchunks_held_out``.)

Labels are chunk texts, not line numbers: :func:`label_lines` finds the chunk's lines in the
log (control characters, which the XML files drop, removed from both; each chunk line must be
contained in consecutive log lines, the first such place wins).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

_CTRL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_EXAMPLE = re.compile(rb"<ExampleDataOfString>.*?<InputPath>(.*?)</InputPath>.*?"
                      rb"<Output>(.*?)</Output>", re.S)


def examples(root: Path) -> list[tuple[Path, str]]:
    """(log path, labelled chunk) for every example of every BuildFailureReason set."""
    out: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for xml in sorted((root / "tool/example-sets/BuildFailureReason").glob("*/*.xml")):
        for m in _EXAMPLE.finditer(xml.read_bytes()):
            rel = html.unescape(m.group(1).decode("utf-8", "replace")).strip()
            chunk = html.unescape(_CTRL.sub(b"", m.group(2)).decode("utf-8", "replace"))
            path = root / "tool/samples" / rel
            if rel and path.is_file() and path not in seen and chunk.strip():
                seen.add(path)
                out.append((path, chunk))
    return out


def label_lines(log: bytes, chunk: str) -> set[int]:
    """The ``\\n``-counted line numbers of ``log`` that hold the labelled ``chunk``."""
    want = [c.strip() for c in chunk.replace("\r", "").split("\n")]
    while want and not want[-1]:
        want.pop()
    while want and not want[0]:
        want.pop(0)
    if not want:
        return set()
    lines = [_CTRL.sub(b"", x).decode("utf-8", "replace").strip() for x in log.split(b"\n")]
    first = want[0]
    for i, line in enumerate(lines):
        if first not in line:
            continue
        if all(i + k < len(lines) and w in lines[i + k] for k, w in enumerate(want)):
            return set(range(i + 1, i + len(want) + 1))
    return set()
