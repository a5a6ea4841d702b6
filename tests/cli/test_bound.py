"""`ctxgate bound`: stdin/file in, compact bounded JSON out, structured refusals on stderr."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from ctxgate.bound import emit, parse_marker
from ctxgate.cli import app

MIB = 1_048_576
runner = CliRunner()


def big_turn(result_chars: int = 2 * MIB) -> dict:
    return {"response": "done", "toolInvocations": [
        {"toolCallId": "c1", "toolName": "webfetch", "result": "x" * result_chars}]}


def test_record_that_fits_is_printed_compact_and_unchanged() -> None:
    record = {"response": "héllo", "toolInvocations": [{"toolName": "t", "result": "ok"}]}
    out = runner.invoke(app, ["bound", "--no-archive"], input=json.dumps(record, indent=2))
    assert out.exit_code == 0, out.output
    assert out.stdout == emit(record) + "\n"


def test_file_input_is_trimmed_with_report_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "turn.json"
    path.write_text(json.dumps(big_turn()), encoding="utf-8")
    out = runner.invoke(app, ["bound", str(path), "--no-archive", "--report"])
    assert out.exit_code == 0, out.stderr
    body = out.stdout_bytes.rstrip(b"\n")
    assert len(body) <= MIB
    record = json.loads(body)
    marker = parse_marker(record["toolInvocations"][0]["result"])
    assert marker.original_bytes == 2 * MIB and marker.archive_id is None
    report = json.loads(out.stderr)
    assert report["changed"] is True and report["serialized_bytes"] == len(body)
    assert report["cuts"][0]["path"] == "/toolInvocations/0/result"


def test_max_bytes_and_strategy_flags() -> None:
    record = {"toolInvocations": [{"result": "a" * 9000}, {"result": "b" * 9000}]}
    out = runner.invoke(app, ["bound", "--max-bytes", "5000", "--strategy", "widest",
                              "--no-archive", "--report"], input=json.dumps(record))
    assert out.exit_code == 0, out.output
    assert len(out.stdout_bytes.rstrip(b"\n")) <= 5000
    kept = [c["kept_bytes"] for c in json.loads(out.stderr)["cuts"]]
    assert kept[0] == 0 and kept[1] > 0  # widest-first empties the first of equals


def test_refusal_exits_1_with_structured_error_on_stderr() -> None:
    record = {"response": "r" * (2 * MIB), "toolInvocations": []}
    out = runner.invoke(app, ["bound", "--no-archive"], input=json.dumps(record))
    assert out.exit_code == 1 and out.stdout == ""
    error = json.loads(out.stderr)
    assert error["code"] == "record_too_large" and error["rule"] == "max_bytes"
    assert (error["path"], error["limit"], error["unit"]) == ("/response", MIB, "bytes")
    assert "rrrr" not in out.stderr


def test_structural_refusal_names_rule_and_path() -> None:
    record = {"toolInvocations": [{"result": list(range(2000))}]}
    out = runner.invoke(app, ["bound", "--no-archive"], input=json.dumps(record))
    assert out.exit_code == 1
    error = json.loads(out.stderr)
    assert (error["rule"], error["path"], error["observed"]) == (
        "max_array_length", "/toolInvocations/0/result", 2000)


def test_archive_is_on_by_default_and_keeps_the_original(clean_environ: Path) -> None:
    out = runner.invoke(app, ["bound"], input=json.dumps(big_turn()))
    assert out.exit_code == 0, out.output
    record = json.loads(out.stdout)
    marker = parse_marker(record["toolInvocations"][0]["result"])
    from ctxgate.archive import Archive

    with Archive.open(clean_environ) as archive:
        entry = archive.stat(marker.archive_id)
        assert archive.read(entry.id) == b"x" * (2 * MIB)


def test_config_section_is_honoured(monkeypatch) -> None:
    monkeypatch.setenv("CTXGATE_BOUND__MAX_BYTES", "4000")
    record = {"toolInvocations": [{"result": "z" * 9000}]}
    out = runner.invoke(app, ["bound", "--no-archive"], input=json.dumps(record))
    assert out.exit_code == 0, out.output
    assert 3900 <= len(out.stdout_bytes.rstrip(b"\n")) <= 4000


def run_cli(*args: str, data: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(["ctxgate", "bound", *args], input=data, capture_output=True,
                          env=os.environ.copy(), timeout=60, check=False)


def test_real_subprocess_round_trip_and_errors() -> None:
    done = run_cli("--no-archive", data=json.dumps(big_turn(4 * MIB)).encode())
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.rstrip(b"\n")) <= MIB
    done.stdout.decode("utf-8")  # strict UTF-8
    refused = run_cli("--no-archive", "--max-bytes", "100",
                      data=b'{"response": "' + b"y" * 500 + b'"}')
    assert refused.returncode == 1 and json.loads(refused.stderr)["code"] == "record_too_large"
    bad = run_cli("--no-archive", data=b"{not json")
    assert bad.returncode == 2 and b"not a JSON document" in bad.stderr
    zero = run_cli("--no-archive", "--max-bytes", "0", data=b"{}")
    assert zero.returncode == 2 and b"max_bytes" in zero.stderr


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(["ctxgate", "bound", str(tmp_path / "nope.json"), "--no-archive"],
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 2 and b"cannot read" in done.stderr


def test_toml_bound_section_sets_selectors_and_limits(tmp_path: Path, monkeypatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[bound]\nmax_bytes = 5000\nselectors = ["notes[*]=tail"]\n'
                      "max_array_length = 0\narchive = false\n", encoding="utf-8")
    monkeypatch.setenv("CTXGATE_CONFIG", str(config))
    record = {"notes": ["n" * 5000] + [1] * 1500, "toolInvocations": []}
    out = runner.invoke(app, ["bound"], input=json.dumps(record))
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    assert got["notes"][0].rpartition("\n")[2].startswith("[ctxgate: kept")
    assert len(got["notes"]) == 1501
    bad = tmp_path / "bad.toml"
    bad.write_text('[bound]\nstrategy = "random"\n', encoding="utf-8")
    monkeypatch.setenv("CTXGATE_CONFIG", str(bad))
    out = runner.invoke(app, ["bound"], input="{}")
    assert out.exit_code != 0 and "strategy" in str(out.exception)
