"""firewall() and run_command() on a real SQLite archive with real programs (sqlite3, psql, jq)."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgate.archive import Archive
from ctxgate.errors import FirewallError, UsageError
from ctxgate.firewall import FirewallPolicy, firewall, run_command
from ctxgate.tokens import count_tokens

from .helpers import build_log


def run(archive: Archive, *args, **kw):
    out, err = io.BytesIO(), io.BytesIO()
    result = run_command(*args, archive=archive, stdout=out, stderr=err, **kw)
    return result, out.getvalue(), err.getvalue()


def test_firewall_archives_first_and_records_the_reason(archive: Archive) -> None:
    log = build_log(3_000, error_at=1_234)
    result = firewall("shell", log, archive=archive, command="make", exit_code=2)
    assert result.reason == "digest" and result.digested
    entry = archive.stat(result.archive_id)
    assert archive.read(entry.id) == log.encode()  # lossless
    assert entry.reason == "digest" and entry.exit_code == 2
    assert entry.extra["decision"]["reason"] == "digest"
    assert entry.tokens is not None
    assert result.archive_id in result.text and "1234| " in result.text
    assert result.output_bytes == len(log) and result.output_lines == 3_000


def test_below_threshold_is_verbatim_and_still_archived(archive: Archive) -> None:
    result = firewall("shell", "small output\n", archive=archive)
    assert result.reason == "below_threshold" and result.text == "small output\n"
    assert archive.read(result.entry.id) == b"small output\n"
    # fewer bytes than min_tokens: fewer tokens too, so the tokenizer is never even loaded
    assert not result.tokens.exact and result.tokens.tokenizer == "estimate"
    mid = "hello " * 1_000  # 6,000 bytes, 1,000 words: tokenized (exactly) to decide
    counted = firewall("shell", mid, archive=archive)
    assert counted.tokens.exact and counted.tokens.tokenizer == "o200k_base"
    assert counted.reason == "below_threshold"
    # 2,000 words are at least 2,000 tokens: decided by the pre-token bound, not tokenized
    words = firewall("shell", "x y " * 1_000, archive=archive)
    assert words.digested and not words.tokens.exact
    assert "(o200k_base pre-token bound, not tokenized)" in words.tokens_text


def test_sqlite3_60_rows_returned_whole(archive: Archive, tmp_path: Path) -> None:
    # the shape of lean-ctx #1260: a narrowed 60-row query just over 2,000 tokens
    db = tmp_path / "energy.db"
    con = sqlite3.connect(db)
    con.execute("create table t (hour text, produced_kwh real, consumed_kwh real, "
                "grid_kwh real, battery_pct real, temp_c integer, note text)")
    con.executemany("insert into t values (?, ?, ?, ?, ?, ?, ?)", [
        (f"2026-07-25 {h // 4:02d}:{(h % 4) * 15:02d}", round(((h * 37) % 97) * 0.7311, 3),
         round(1.5 + ((h * 13) % 17) * 0.2537, 3), round(((h * 53) % 89) * 0.113 - 4, 3),
         round(((h * 71) % 101) * 0.977, 2), 14 + ((h * 29) % 23),
         "daylight" if 24 <= h < 80 else "night")
        for h in range(60)])
    con.commit()
    con.close()
    cmd = ["sqlite3", "-header", "-column", str(db), "select * from t order by hour limit 60"]
    expected = subprocess.run(cmd, capture_output=True, check=True).stdout
    tokens = count_tokens(expected.decode()).count
    assert 2_000 <= tokens <= 2_300, tokens  # over min_tokens: only its class keeps it whole
    assert expected.count(b"\n") == 62
    result, out, _ = run(archive, cmd)
    assert result.result.reason == "dataset"
    assert out == expected  # every row, byte for byte
    assert result.exit_code == 0
    # the same bytes from an ordinary command are digested
    rows = tmp_path / "rows.txt"
    rows.write_bytes(expected)
    code = f"import sys; sys.stdout.buffer.write(open({str(rows)!r}, 'rb').read())"
    other, out2, _ = run(archive, [sys.executable, "-c", code])
    assert other.result.reason == "digest" and out2.startswith(b"[ctxgate digest:")


def test_psql_against_local_postgres_is_dataset(archive: Archive) -> None:
    sql = "select g as n, md5(g::text) as h from generate_series(1, 400) g"
    result, out, _ = run(archive, ["psql", "-h", "127.0.0.1", "-d", "test", "-c", sql])
    assert result.exit_code == 0, out[:500]
    assert result.result.reason == "dataset"
    assert b"(400 rows)" in out and out.count(b"\n") >= 400


def test_jq_pipeline_is_dataset(archive: Archive, tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text(json.dumps([{"id": i, "title": f"issue number {i}"} for i in range(600)]))
    result, out, _ = run(archive, shell=f"cat {f} | jq -c '.[]'")
    assert result.result.reason == "dataset"
    assert out.count(b"\n") == 600


def test_exit_code_passthrough(archive: Archive) -> None:
    result, out, _ = run(archive, shell="echo hi; exit 7")
    assert result.exit_code == 7 and out == b"hi\n"
    assert archive.stat(result.result.archive_id).exit_code == 7


def test_killed_by_signal_is_128_plus_n(archive: Archive) -> None:
    result, _, _ = run(archive, shell="echo before; kill -9 $$")
    assert result.exit_code == 137
    assert archive.read(result.result.entry.id) == b"before\n"


def test_timeout_still_archives_what_came(archive: Archive) -> None:
    script = "for i in $(seq 1 3000); do echo line $i; done; sleep 30; echo never"
    result, out, _ = run(archive, shell=script, timeout=1.5)
    assert result.timed_out and result.exit_code == 124
    entry = result.result.entry
    stored = archive.read(entry.id)
    assert stored.startswith(b"line 1\n") and b"line 3000\n" in stored and b"never" not in stored
    assert result.result.reason == "digest"
    assert "[interrupted: stopped after the 1.5 s timeout (SIGTERM)]" in out.decode()
    assert result.duration_seconds < 10


def test_timeout_escalates_to_sigkill(archive: Archive) -> None:
    script = "trap '' TERM; echo stubborn; sleep 30"
    from ctxgate.firewall import run as runmod

    old = runmod.KILL_GRACE_SECONDS
    runmod.KILL_GRACE_SECONDS = 0.5
    try:
        result, _, _ = run(archive, shell=script, timeout=0.5)
    finally:
        runmod.KILL_GRACE_SECONDS = old
    assert result.exit_code == 124 and "SIGKILL" in result.notes[0]
    assert archive.read(result.result.entry.id) == b"stubborn\n"


def test_separate_stderr(archive: Archive) -> None:
    result, out, err = run(archive, shell="echo to-out; echo to-err >&2", separate_stderr=True)
    assert out == b"to-out\n" and err == b"to-err\n"
    assert [r.entry.extra["stream"] for r in result.results] == ["stdout", "stderr"]


def test_merged_output_keeps_write_order(archive: Archive) -> None:
    result, out, _ = run(archive, shell="echo 1; echo 2 >&2; echo 3; echo 4 >&2")
    assert out == b"1\n2\n3\n4\n"


def test_raw_streams_live_and_is_never_digested(archive: Archive) -> None:
    script = "seq 1 20000"
    result, out, _ = run(archive, shell=script, raw=True)
    assert result.result.reason == "explicit_raw" and result.result.text is None
    assert out == subprocess.run(["seq", "1", "20000"], capture_output=True).stdout
    assert archive.read(result.result.entry.id) == out


def test_binary_output(archive: Archive, tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x7fELF" + bytes(range(256)) * 2_000)
    result, out, _ = run(archive, ["head", "-c", "600000", str(blob)],
                         policy=FirewallPolicy(line_selectors=False))
    assert result.result.reason == "digest"
    assert b"[binary: ELF executable or object; sha256 " in out


def test_errors_are_actionable(archive: Archive) -> None:
    with pytest.raises(FirewallError, match="cannot run 'no-such-program-xyz'"):
        run(archive, ["no-such-program-xyz"])
    with pytest.raises(UsageError, match="give a command"):
        run(archive)
    with pytest.raises(UsageError, match="--timeout must be > 0"):
        run(archive, ["true"], timeout=0)


def test_closed_reader_does_not_lose_the_archive(archive: Archive) -> None:
    class Closed(io.BytesIO):
        def write(self, data):  # a pipe whose reader went away
            raise BrokenPipeError(32, "Broken pipe")

    result = run_command(shell="seq 1 50000", archive=archive, raw=True, stdout=Closed(),
                         stderr=io.BytesIO())
    assert result.exit_code == 0
    assert archive.read(result.result.entry.id).count(b"\n") == 50_000


def test_background_process_holding_the_pipe_does_not_hang(archive: Archive) -> None:
    from ctxgate.firewall import run as runmod

    old = runmod.LINGER_SECONDS
    runmod.LINGER_SECONDS = 1.0
    try:
        result, out, err = run(archive, shell="echo started; sleep 30 & echo done")
    finally:
        runmod.LINGER_SECONDS = old
    assert result.exit_code == 0 and result.duration_seconds < 10
    assert out == b"started\ndone\n"
    assert err.startswith(b"ctxgate: stopped reading 1 s after the command exited")
    assert "background process" in result.notes[0]


def test_archive_failure_still_delivers_a_digest(archive: Archive) -> None:
    class BrokenArchive(Archive):
        def writer(self, meta=None, **kw):
            w = super().writer(meta, **kw)

            def fail(data):
                raise OSError(28, "No space left on device")

            w.write = fail
            return w

    broken = BrokenArchive(policy=archive.policy)
    result, out, _ = run(broken, shell="seq 1 20000")
    assert result.exit_code == 0 and result.result.entry is None
    text = out.decode()
    assert text.startswith("[ctxgate digest: ") and "[not archived; digest: " in text
    assert ("[not archived (the archive's disk is full ([Errno 28] No space left on device); "
            "fix: free disk space") in text
    assert "this digest is all that is kept; at least 102,894 of the 108,894 output bytes are "\
        "omitted below and lost]" in text
    assert "--- no drill down: the output is not archived ---" in text
    assert "20000| 20000" in text


def test_library_runs_never_read_the_callers_stdin(archive: Archive) -> None:
    # an MCP stdio server's stdin is its protocol channel: the command must not consume it
    result, out, _ = run(archive, shell="cat; echo end")
    assert out == b"end\n" and result.exit_code == 0


def test_slow_digesting_after_exit_is_not_mistaken_for_a_background_process(
        archive: Archive, monkeypatch) -> None:
    """Reading stops only after silence: time spent feeding output already read never counts."""
    import time as _time

    from ctxgate.firewall import pipeline as pipemod
    from ctxgate.firewall import run as runmod

    monkeypatch.setattr(runmod, "LINGER_SECONDS", 0.3)
    real_feed = pipemod.OutputPipeline.feed

    def slow_feed(self, data: bytes) -> None:
        _time.sleep(0.5)  # each chunk takes a while, as a slow tokenizer once did
        real_feed(self, data)

    monkeypatch.setattr(pipemod.OutputPipeline, "feed", slow_feed)
    result, out, err = run(archive, shell="head -c 3000000 /dev/zero | tr '\\0' 'a'")
    stored = archive.read(result.result.entry.id)
    assert len(stored) == 3_000_000  # every byte, though the command exited long before
    assert not any("background process" in n for n in result.notes)
    assert b"stopped reading" not in err
