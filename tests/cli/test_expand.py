"""`ctxgate expand` through CliRunner and as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctxgate.archive import Archive, EntryMeta
from ctxgate.cli import app
from ctxgate.errors import AmbiguousId, EntryNotFound, UsageError

runner = CliRunner()


@pytest.fixture
def stored(clean_environ: Path) -> str:
    with Archive.open(clean_environ) as a:
        data = b"".join(b"row %d%s\n" % (i, b" FAIL" if i % 25 == 0 else b"") for i in range(1, 201))
        return a.put(data, EntryMeta(tool="shell", command="make test")).short_id


def _out(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_lines_head_tail(stored: str) -> None:
    assert _out(["expand", stored, "--lines", "2:3"]).splitlines()[1:] == ["2| row 2", "3| row 3"]
    assert _out(["expand", stored, "--head", "1"]).splitlines()[1:] == ["1| row 1"]
    assert _out(["expand", stored, "--tail", "1"]).splitlines()[1:] == ["200| row 200 FAIL"]
    assert _out(["expand", stored, "-n", "-2:"]).splitlines()[1:] == ["199| row 199",
                                                                     "200| row 200 FAIL"]


def test_grep_options(stored: str) -> None:
    out = _out(["expand", stored, "--grep", "fail", "-i", "-m", "2", "-A", "1"])
    assert "8 matching lines, showing 2" in out
    assert out.splitlines()[1:4] == ["25: row 25 FAIL", "26- row 26", "--"]
    assert out.rstrip().endswith("next: --grep fail -i -A 1 --max-matches 2 --lines 51:")
    out = _out(["expand", stored, "--grep", "FAIL", "--lines", "40:80", "-C", "0"])
    assert "2 matching lines" in out


def test_bytes_json_keys_and_budget(stored: str, clean_environ: Path) -> None:
    assert "row 1\nrow" in _out(["expand", stored, "--bytes", "0:9"])
    with Archive.open(clean_environ) as a:
        doc = a.put(json.dumps({"a": {"b": [1, 2, 3]}}).encode()).short_id
    assert _out(["expand", doc, "--json", "/a/b/1"]).splitlines()[1:] == ["2"]
    assert '"b": array[3] of int' in _out(["expand", doc, "--keys", "--json", "/a"])
    out = _out(["expand", stored, "--max-tokens", "100"])
    assert out.rstrip().splitlines()[-1].startswith("next: --lines ")


def test_json_output(stored: str) -> None:
    payload = json.loads(_out(["expand", stored, "--lines", "1:2", "--json-output"]))
    assert payload["line_range"] == [1, 2] and payload["next"] is None
    assert payload["text"].endswith("2| row 2\n") and payload["short_id"] == stored


def test_errors_raise_typed_exceptions(stored: str, clean_environ: Path) -> None:
    result = runner.invoke(app, ["expand", "deadbeef"])
    assert isinstance(result.exception, EntryNotFound) and stored in str(result.exception)
    result = runner.invoke(app, ["expand", stored, "--grep", "(a+)+"])
    assert isinstance(result.exception, UsageError)
    result = runner.invoke(app, ["expand", stored, "--lines", "0:3"])
    assert isinstance(result.exception, UsageError)
    with Archive.open(clean_environ) as a:
        e = a.put(b"one\n")
        rec = a.store.get(e.id)
        from dataclasses import replace

        twin = e.id[:8] + ("0" if e.id[8] != "0" else "1") + e.id[9:]
        a.store.commit(replace(rec, id=twin, blob="b2"), [a.store.read_chunk(rec.blob, 0)])
    result = runner.invoke(app, ["expand", e.id[:8]])
    assert isinstance(result.exception, AmbiguousId)


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = str(home)
    return subprocess.run(["ctxgate", *args], capture_output=True, env=env, timeout=60)


def test_real_subprocess_exit_codes(stored: str, clean_environ: Path) -> None:
    ok = _run(["expand", stored, "--lines", "25:25"], clean_environ)
    assert ok.returncode == 0 and ok.stdout.decode().splitlines()[1] == "25| row 25 FAIL"
    missing = _run(["expand", "0123456789ab"], clean_environ)
    assert missing.returncode == 2
    err = missing.stderr.decode()
    assert "EntryNotFound: no archive entry 0123456789ab (unknown id)" in err and stored in err
    bad = _run(["expand", stored, "--grep", "("], clean_environ)
    assert bad.returncode == 2 and "not a valid regular expression" in bad.stderr.decode()
    with Archive.open(clean_environ) as a:
        a.purge(entry_id=stored)
    gone = _run(["expand", stored], clean_environ)
    assert gone.returncode == 2 and "purged" in gone.stderr.decode()


def test_argparse_twin_has_the_same_options_and_output(stored: str, capsys) -> None:
    # the option sets themselves are held equal in tests/app/test_options.py
    from ctxgate.cli.fast import expand_main as fast_main

    args = [stored, "--grep", "FAIL", "-C", "1", "-m", "2"]
    typer_out = _out(["expand", *args])
    assert fast_main(args) == 0
    assert capsys.readouterr().out == typer_out
    assert fast_main(["0000aaaa"]) == 2
    assert "EntryNotFound: no archive entry 0000aaaa" in capsys.readouterr().err
    assert fast_main([stored, "--lines", "0:1"]) == 2
