"""`ctxgate archive ls|stat|stats|purge|pin|unpin|rm|put|verify`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctxgate.archive import Archive
from ctxgate.cli import app
from ctxgate.cli.archive import parse_duration
from ctxgate.errors import EntryNotFound, UsageError

runner = CliRunner()


def _ok(args: list[str], input: bytes | None = None) -> str:
    result = runner.invoke(app, args, input=input)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_put_then_read_back_through_the_library(clean_environ: Path) -> None:
    out = _ok(["archive", "put", "--tool", "shell", "--command", "ls -la", "--exit-code", "1"],
              input=b"a\nb\npassword=hunter2\n")
    short = out.split()[0]
    assert "3 lines" in out and "1 secret(s) redacted" in out
    with Archive.open(clean_environ) as a:
        e = a.stat(short)
        assert (e.tool, e.command, e.exit_code, e.redactions) == ("shell", "ls -la", 1, 1)
        assert a.read(short) == b"a\nb\npassword=[REDACTED:password]\n"


def test_ls_stat_stats(clean_environ: Path) -> None:
    assert "(archive is empty)" in _ok(["archive", "ls"])
    short = _ok(["archive", "put", "--command", "seq 3"], input=b"1\n2\n3\n").split()[0]
    listing = _ok(["archive", "ls"])
    assert short in listing and "seq 3" in listing and "in 48h" in listing
    stat = _ok(["archive", "stat", short])
    assert "expires:     in 48h" in stat and "lines:       3" in stat
    assert "tokens:" in stat
    rows = json.loads(_ok(["archive", "ls", "--json-output"]))
    assert rows[0]["short_id"] == short
    stats = json.loads(_ok(["archive", "stats", "--json-output"]))
    assert stats["entries"] == 1 and stats["raw_bytes"] == 6


def test_pin_unpin_rm_verify(clean_environ: Path) -> None:
    short = _ok(["archive", "put"], input=b"keep me\n").split()[0]
    assert f"pinned {short}" in _ok(["archive", "pin", short])
    assert "never (pinned)" in _ok(["archive", "stat", short])
    assert "purged 0 entries" in _ok(["archive", "purge", "--older-than", "0s"])
    assert "unpinned" in _ok(["archive", "unpin", short])
    assert f"ok {short}" in _ok(["archive", "verify", short])
    assert f"removed {short}" in _ok(["archive", "rm", short])
    result = runner.invoke(app, ["archive", "stat", short])
    assert isinstance(result.exception, EntryNotFound) and "deleted" in str(result.exception)


def test_purge_forms(clean_environ: Path) -> None:
    ids = [_ok(["archive", "put"], input=b"e%d\n" % i).split()[0] for i in range(3)]
    assert "purged 1 entry" in _ok(["archive", "purge", ids[0]])
    assert "purged 0 entries" in _ok(["archive", "purge", "--older-than", "2h"])
    assert "purged 2 entries" in _ok(["archive", "purge", "--all"])
    for args in (["archive", "purge"], ["archive", "purge", "--all", "--older-than", "1h"],
                 ["archive", "purge", "--older-than", "soon"]):
        assert isinstance(runner.invoke(app, args).exception, UsageError)


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("2h", 7200),
                                                ("3d", 259200), ("1.5h", 5400), ("42", 42)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_put_and_ls_as_subprocess(clean_environ: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = str(clean_environ)
    put = subprocess.run(["ctxgate", "archive", "put", "--tool", "t"], input=b"x" * 3_000_000,
                         capture_output=True, env=env, timeout=60)
    assert put.returncode == 0, put.stderr
    short = put.stdout.split()[0].decode()
    ls = subprocess.run(["ctxgate", "archive", "ls"], capture_output=True, env=env, timeout=60)
    assert short in ls.stdout.decode() and "3.0MB" in ls.stdout.decode()
    assert (clean_environ / "archive.db").stat().st_mode & 0o777 == 0o600
