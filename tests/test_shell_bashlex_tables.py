"""ctxgate.shell.bashlex_tables: bashlex from cached parser tables, same parser, safe fallbacks.

Each case runs in a fresh interpreter (bashlex is imported once per process) with its own
``XDG_CACHE_HOME``, and compares the parser's tables and its parse trees with bashlex's own
import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("bashlex")

_PROBE = r"""
import hashlib, json, sys
mode = sys.argv[1]
if mode == "plain":
    import bashlex
    source = "plain"
else:
    from ctxgate.shell.bashlex_tables import load_bashlex, loaded_from
    bashlex = load_bashlex()
    source = loaded_from()
import bashlex.parser as p
y = p.yaccparser
tables = repr([sorted((k, sorted(v.items())) for k, v in y.action.items()),
               sorted((k, sorted(v.items())) for k, v in y.goto.items()),
               sorted(y.defaulted_states.items()), [str(q) for q in y.productions]])
cmds = ["for i in $(ls); do echo $i | grep x > /dev/null; done", "a && b || (c; d) &",
        "cat <<EOF\nhi\nEOF\n", "x=$(echo `date`) y=2 env z", "if [ -f a ]; then rm a; fi",
        "diff <(sort a) <(sort b) 2>&1 | head -n 3", "f() { echo hi; }; f"]
trees = "".join(t.dump() for c in cmds for t in bashlex.parse(c))
try:
    bashlex.parse("echo (")
    error = None
except Exception as exc:
    error = type(exc).__name__
print(json.dumps({"source": source, "tables": hashlib.sha256(tables.encode()).hexdigest(),
                  "trees": hashlib.sha256(trees.encode()).hexdigest(), "error": error}))
"""


def _probe(mode: str, cache: Path) -> dict:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # no yacc warnings leak
    return json.loads(out.stdout)


def _cache_files(cache: Path) -> list[Path]:
    return sorted((cache / "ctxgate" / "bashlex").glob("tables-*.marshal"))


def test_first_import_builds_and_stores_then_later_ones_load_the_same_parser(tmp_path):
    plain = _probe("plain", tmp_path)
    first = _probe("cached", tmp_path)
    assert first["source"] == "built"
    files = _cache_files(tmp_path)
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600
    second = _probe("cached", tmp_path)
    assert second["source"] == "cache"
    for probe in (first, second):
        assert probe["tables"] == plain["tables"]
        assert probe["trees"] == plain["trees"]
        assert probe["error"] == plain["error"] == "ParsingError"


@pytest.mark.parametrize("damage", [b"", b"not marshal at all", b"\xe9\x03\x00\x00\x00",
                                    None])
def test_a_damaged_cache_falls_back_to_building_and_is_replaced(tmp_path, damage):
    import marshal

    plain = _probe("plain", tmp_path)
    _probe("cached", tmp_path)
    (path,) = _cache_files(tmp_path)
    # None: well-formed marshal with the right outer shape but wrong tables (a state missing)
    path.write_bytes(damage if damage is not None
                     else marshal.dumps(({0: {"WORD": 1}}, {}, [("S'", 1, None, "S' -> x")])))
    got = _probe("cached", tmp_path)
    assert got["tables"] == plain["tables"] and got["trees"] == plain["trees"]
    if damage is not None:  # unreadable: rebuilt and stored again
        assert got["source"] == "built"
    else:  # readable but rejected by bashlex: its own import, and the file is dropped
        assert got["source"] == "plain"
        assert _cache_files(tmp_path) == []
        assert _probe("cached", tmp_path)["source"] == "built"
    assert _probe("cached", tmp_path)["source"] == "cache"


def test_an_unwritable_cache_directory_still_parses(tmp_path):
    if os.geteuid() == 0:
        cache = tmp_path / "file-not-dir"
        cache.write_text("x")  # a file where the directory should be: mkdir fails for root too
    else:
        cache = tmp_path / "ro"
        cache.mkdir(mode=0o500)
    plain = _probe("plain", tmp_path / "other")
    for _ in range(2):
        got = _probe("cached", cache)
        assert got["source"] == "built"
        assert got["tables"] == plain["tables"] and got["trees"] == plain["trees"]


def test_ctxgate_shell_uses_the_cache(tmp_path):
    code = ("from ctxgate.shell import parse_command; from ctxgate.shell import bashlex_tables "
            "as t; r = parse_command('for f in $(ls); do cat $f; done'); "
            "print(r.parser, sorted(r.programs), t.loaded_from())")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=120).stdout.split() for _ in range(2)]
    assert runs[0] == ["bashlex", "['cat',", "'ls']", "built"]
    assert runs[1] == ["bashlex", "['cat',", "'ls']", "cache"]
