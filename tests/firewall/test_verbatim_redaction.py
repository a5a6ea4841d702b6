"""Outputs shown whole are redacted too (``[firewall] redact_verbatim``), not only digests."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import pytest

from ctxgate.errors import ConfigError
from ctxgate.firewall import firewall
from ctxgate.firewall.policy import DEFAULT_FIREWALL_POLICY, FirewallPolicy

SECRET = "sk-ant-api03-" + "Q7fakeFAKEfake9x" * 6 + "AA"
OUTPUT = f"HOME=/root\nANTHROPIC_API_KEY={SECRET}\nPATH=/usr/bin\n"


def _shown(command: str, mode: str | None = None) -> str:
    policy = DEFAULT_FIREWALL_POLICY if mode is None else replace(
        DEFAULT_FIREWALL_POLICY, redact_verbatim=mode)
    result = firewall("bash", OUTPUT, command=command, policy=policy)
    assert not result.digested  # small: shown whole
    assert result.text is not None
    return result.text


def test_small_command_output_is_shown_redacted_by_default():
    text = _shown("env")
    assert SECRET not in text
    assert "[REDACTED" in text
    assert text.count("\n") == OUTPUT.count("\n")  # lines kept
    assert "HOME=/root" in text and "PATH=/usr/bin" in text  # nothing else lost


def test_explicit_file_read_stays_exact_by_default_and_all_redacts_it():
    assert SECRET in _shown("cat .env")  # an agent may edit what it read: exact bytes
    assert SECRET not in _shown("cat .env", "all")


def test_none_shows_the_output_as_produced():
    assert _shown("env", "none") == OUTPUT


def test_unknown_mode_is_a_clear_config_error():
    with pytest.raises(ConfigError, match="redact_verbatim='some'.*'except_reads'"):
        FirewallPolicy(redact_verbatim="some")


def test_real_ctxgate_run_prints_the_redacted_output(tmp_path):
    env = {**os.environ, "CTXGATE_HOME": str(tmp_path / "home")}
    script = tmp_path / "show.sh"
    script.write_text(f"printf '%s' '{OUTPUT}'\n")
    proc = subprocess.run([sys.executable, "-m", "ctxgate", "run", "--", "sh", str(script)],
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert SECRET not in out and "[REDACTED" in out
    assert "PATH=/usr/bin" in out
