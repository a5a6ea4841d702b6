"""Issue 11 item 4 through the real CLI (``ctxgate`` subprocess): ``--json`` bounded and paged
with an exact ``next:``, ``-F/--fixed-strings``, a Latin-1 log shown as text, and the 25,000-token
verbatim ceiling for a bare ``cat FILE``. Each fails on the code before issue 11 (d72e402)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from ctxgate.archive import Archive, EntryMeta
from ctxgate.tokens import count_tokens


def _run(args: list[str], home: Path, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = str(home)
    return subprocess.run(["ctxgate", *args], capture_output=True, env=env, timeout=120, **kw)


def _big_json(home: Path) -> tuple[str, dict]:
    doc = {"meta": {"n": 4000}, "items": [{"id": i, "name": f"item-{i}", "tags": ["a", "b"]}
                                         for i in range(4000)]}
    with Archive.open(home) as a:
        return a.put(json.dumps(doc).encode(), EntryMeta(tool="shell", command="api")).short_id, doc


def test_json_pointer_is_bounded_and_pages_with_exact_next(clean_environ: Path) -> None:
    sid, doc = _big_json(clean_environ)
    expected = json.dumps(doc["items"], indent=2, ensure_ascii=False).splitlines()
    args = ["expand", sid, "--json", "/items", "--max-tokens", "2000"]
    rows: list[str] = []
    pages = 0
    while True:
        out = _run(args, clean_environ)
        assert out.returncode == 0, out.stderr
        text = out.stdout.decode()
        assert count_tokens(text).count <= 2000 + 50  # bounded like every view
        lines = text.rstrip("\n").split("\n")
        nxt = lines[-1][len("next: "):] if lines[-1].startswith("next: ") else None
        rows += [ln for ln in lines[1:] if not ln.startswith(("note: ", "next: "))]
        pages += 1
        if nxt is None:
            break
        assert nxt.startswith("--json /items --lines ")
        args = ["expand", sid, *shlex.split(nxt), "--max-tokens", "2000"]
        assert pages < 200
    assert pages > 3
    assert rows == expected  # every row once, in order: no gap, no overlap


def test_json_pointer_single_huge_value_is_cut(clean_environ: Path) -> None:
    with Archive.open(clean_environ) as a:
        sid = a.put(json.dumps({"blob": "z" * 400_000}).encode()).short_id
    out = _run(["expand", sid, "--json", "/blob"], clean_environ)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout) < 40_000 and "row cut: +" in out.stdout.decode()


def test_fixed_strings_grep(clean_environ: Path) -> None:
    with Archive.open(clean_environ) as a:
        data = b"".join(b"call f(%d) [ok]\n" % i for i in range(100)) + b"call f(x)* [boom?]\n"
        sid = a.put(data).short_id
    literal = _run(["expand", sid, "--grep", "f(x)* [boom?]", "-F"], clean_environ)
    assert literal.returncode == 0, literal.stderr
    assert "101: call f(x)* [boom?]" in literal.stdout.decode()
    assert "1 matching line" in literal.stdout.decode()
    long = _run(["expand", sid, "--fixed-strings", "--grep", "(7) [", "-i"], clean_environ)
    assert "8: call f(7) [ok]" in long.stdout.decode()
    bad = _run(["expand", sid, "-F"], clean_environ)
    assert bad.returncode == 2 and "only applies to --grep" in bad.stderr.decode()


def test_latin1_log_is_text_with_a_note(clean_environ: Path, tmp_path: Path) -> None:
    log = tmp_path / "latin1.log"
    log.write_bytes("".join(f"ligne {i}: opération réussie, durée {i % 97} ms\n"
                            for i in range(4000)).encode("latin-1"))
    out = _run(["run", "--", "cat", str(log)], clean_environ)
    text = out.stdout.decode()
    assert "binary" not in text.splitlines()[0] and "--- hex" not in text
    assert "text is not UTF-8 (reads as Latin-1/cp1252)" in text
    assert "ligne 0: op\ufffdration r\ufffdussie" in text


def test_bare_cat_over_25k_tokens_is_digested(clean_environ: Path, tmp_path: Path) -> None:
    big = tmp_path / "notes.txt"
    big.write_text("".join(f"entry {i} has value {i * 7919 % 10007} and state ready\n"
                           for i in range(5000)))
    assert 30_000 < count_tokens(big.read_text()).count < 100_000
    out = _run(["run", "--", "cat", str(big)], clean_environ)
    text = out.stdout.decode()
    assert text.startswith("[ctxgate digest:") and "verbatim_max_tokens (25,000)" in text
    small = tmp_path / "small.txt"
    small.write_text("".join(f"row {i}\n" for i in range(3000)))
    assert _run(["run", "--", "cat", str(small)], clean_environ).stdout.decode() == \
        small.read_text()
