"""`ctxgate run` through CliRunner and as a real subprocess, on the default configuration."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from ctxgate.archive import Archive
from ctxgate.cli import app
from ctxgate.errors import UsageError
from ctxgate.tokens import count_tokens

PRINT_3000_TOKENS = (
    "import random\n"
    "r = random.Random(1)\n"
    "words = ['alpha', 'beta', 'gamma', 'delta', 'build', 'step', 'ok', 'src/main.rs']\n"
    "for i in range(1, 301):\n"
    "    print(f'{i:04d} ' + ' '.join(r.choice(words) for _ in range(6)))\n"
)


def ctxgate(*args: str, home: Path, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = str(home)
    return subprocess.run(["ctxgate", *args], capture_output=True, env=env, timeout=60, **kw)


def test_3000_token_output_is_digested_by_default_end_to_end(tmp_path: Path) -> None:
    # the lean-ctx #1540 lesson: the default configuration must really digest
    expected = subprocess.run([sys.executable, "-c", PRINT_3000_TOKENS], capture_output=True,
                              check=True).stdout
    tokens = count_tokens(expected.decode()).count
    assert 2_500 <= tokens <= 3_500, tokens
    home = tmp_path / "home"
    proc = ctxgate("run", "--", sys.executable, "-c", PRINT_3000_TOKENS, home=home)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert out.startswith("[ctxgate digest: shell output, ")
    # decided by the pre-token lower bound (no tokenizer loaded): at most the real count
    head = re.search(r"([\d,]+) bytes, 300 lines, >=([\d,]+) tokens \(o200k_base pre-token "
                     r"bound, not tokenized\) · ~([\d,]+) tokens \(estimate\)", out)
    assert head is not None, out[:300]
    assert int(head.group(1).replace(",", "")) == len(expected)
    assert 2_000 <= int(head.group(2).replace(",", "")) <= tokens
    assert len(proc.stdout) < len(expected) // 2
    archive_id = re.search(r"archive id ([0-9a-f]{12})", out).group(1)
    # the drill-down line printed in the digest works as written
    drill = re.search(rf"ctxgate expand {archive_id} (--lines \d+:\d+)", out).group(1)
    view = ctxgate("expand", archive_id, *drill.split(), home=home)
    assert view.returncode == 0, view.stderr
    assert "21| 0021 " in view.stdout.decode()
    with Archive.open(home) as archive:
        assert archive.read(archive.stat(archive_id).id) == expected


def test_dataset_command_through_real_cli_is_whole(tmp_path: Path) -> None:
    data = tmp_path / "x.json"
    data.write_text("[" + ",".join(f'{{"n": {i}, "t": "title {i}"}}' for i in range(800)) + "]")
    proc = ctxgate("run", "--explain", "-c", f"cat {data} | jq -c '.[]'", home=tmp_path / "h")
    assert proc.returncode == 0
    assert proc.stdout.count(b"\n") == 800
    assert b"output: dataset (dataset command `jq`" in proc.stderr


def test_sigint_kills_child_and_still_archives(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = str(home)
    script = "for i in $(seq 1 500); do echo row $i; done; sleep 60; echo never"
    proc = subprocess.Popen(["ctxgate", "run", "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    time.sleep(2.0)  # let the rows arrive
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGINT, err
    with Archive.open(home) as archive:
        (entry,) = archive.list()
        stored = archive.read(entry.id)
    assert stored.startswith(b"row 1\n") and b"row 500\n" in stored and b"never" not in stored
    assert entry.exit_code == 130
    assert "interrupted: SIGINT forwarded" in (out.decode() + str(entry.extra))


def test_cli_runner_exit_code_and_explain() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["run", "--explain", "-c", "echo hi; exit 5"])
    assert result.exit_code == 5
    assert result.stdout == "hi\n"
    assert "output: below_threshold" in result.stderr


def test_cli_runner_raw_and_min_tokens_flag() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["run", "--min-tokens", "10", "--", "seq", "1", "200"])
    assert result.exit_code == 0 and result.stdout.startswith("[ctxgate digest:")
    raw = runner.invoke(app, ["run", "--raw", "--min-tokens", "10", "--", "seq", "1", "200"])
    assert raw.stdout == "".join(f"{i}\n" for i in range(1, 201))


def test_cli_min_tokens_env_alias(monkeypatch) -> None:
    monkeypatch.setenv("CTXGATE_MIN_TOKENS", "10")
    result = CliRunner().invoke(app, ["run", "--", "seq", "1", "200"])
    assert result.stdout.startswith("[ctxgate digest:")
    monkeypatch.setenv("CTXGATE_FIREWALL__MIN_TOKENS", "100000")
    result = CliRunner().invoke(app, ["run", "--", "seq", "1", "200"])
    assert result.stdout.startswith("1\n2\n")


def test_cli_usage_errors() -> None:
    result = CliRunner().invoke(app, ["run"])
    assert isinstance(result.exception, UsageError)  # cli.main() maps it to exit 2
    usage = subprocess.run(["ctxgate", "run"], capture_output=True)
    assert usage.returncode == 2 and b"ctxgate: UsageError: give a command" in usage.stderr
    proc = subprocess.run(["ctxgate", "run", "--", "no-such-program-xyz"], capture_output=True)
    assert proc.returncode == 1
    assert b"ctxgate: FirewallError: cannot run 'no-such-program-xyz'" in proc.stderr


def test_cli_timeout_exit_code() -> None:
    result = CliRunner().invoke(app, ["run", "--timeout", "0.5", "-c", "echo a; sleep 20"])
    assert result.exit_code == 124
    assert result.stdout == "a\n"


def test_sigterm_is_forwarded_and_output_archived(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["CTXGATE_HOME"] = str(home)
    proc = subprocess.Popen(["ctxgate", "run", "-c", "echo up; sleep 60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env)
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert out == b"up\n" and b"ctxgate: interrupted: SIGTERM forwarded" in err
    with Archive.open(home) as archive:
        (entry,) = archive.list()
        assert archive.read(entry.id) == b"up\n" and entry.exit_code == 143


def test_cli_inline_and_separate_stderr() -> None:
    runner = CliRunner()
    big = "import sys; [print(f'row {i} ' + 'x' * 20) for i in range(700)]"
    digested = runner.invoke(app, ["run", "--", sys.executable, "-c", big])
    assert digested.stdout.startswith("[ctxgate digest:")
    inline = runner.invoke(app, ["run", "--inline", "--explain", "--", sys.executable, "-c", big])
    assert inline.stdout.startswith("row 0 ") and "output: inline" in inline.stderr
    split = runner.invoke(app, ["run", "--separate-stderr", "--explain", "-c",
                                "echo out; echo err >&2"])
    assert split.stdout == "out\n"
    assert "err\n" in split.stderr and "stdout: below_threshold" in split.stderr
    assert "stderr: below_threshold" in split.stderr


def test_cli_passes_stdin_through(tmp_path: Path) -> None:
    proc = ctxgate("run", "--", "jq", "-c", ".a", home=tmp_path / "h", input=b'{"a": [1, 2]}')
    assert proc.returncode == 0 and proc.stdout == b"[1,2]\n"
