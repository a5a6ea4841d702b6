"""`ctxgate doctor` and `ctxgate gate check --explain` say what this machine enforces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ctxgate.sandbox import MECHANISMS_ENV, detect
from ctxgate.sandbox.detect import LINUX_MECHANISMS

ROOT = Path(__file__).resolve().parents[2]
JUDGE = "tests.integrations.scripted_backends:keyword_judge"


def ctxgate(*args: str, mechanisms: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(CTXGATE_HOME=os.environ["CTXGATE_HOME"],
               CTXGATE_CONFIG=os.environ["CTXGATE_CONFIG"],
               PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'src'}{os.pathsep}"
                          + env.get("PYTHONPATH", ""))
    env.pop(MECHANISMS_ENV, None)
    if mechanisms is not None:
        env[MECHANISMS_ENV] = mechanisms
    return subprocess.run([sys.executable, "-m", "ctxgate", *args], capture_output=True,
                          env=env, timeout=60, text=True)


def test_doctor_json_lists_the_mechanism_and_every_check(clean_environ: Path) -> None:
    proc = ctxgate("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout)
    expected = detect(probe_all=True)
    assert facts["sandbox"]["mechanism"] == expected.mechanism
    if sys.platform.startswith("linux"):
        assert [c["name"] for c in facts["sandbox"]["checked"]] == list(LINUX_MECHANISMS)
        assert facts["sandbox"]["mechanism"] in LINUX_MECHANISMS
    for check in facts["sandbox"]["checked"]:
        assert check["why"]  # available: what it does; unavailable: what is missing
    assert facts["archive_home"]["path"] == str(clean_environ)
    assert facts["archive_home"]["writable"] is True
    model = facts["gate"]["local_model"]
    assert {f["name"] for f in model["files"]} == {"static-embeddings.bin", "destructive.json",
                                                   "effect.json", "requested.json"}
    assert model["ok"] is True and all(f["verified"] for f in model["files"])


def test_doctor_text_says_when_nothing_sandboxes(clean_environ: Path) -> None:
    proc = ctxgate("doctor", mechanisms="")
    assert proc.returncode == 0, proc.stderr
    assert "sandbox: none" in proc.stdout
    assert "fast-path allows run NOT sandboxed on this machine" in proc.stdout
    assert f"not selected by {MECHANISMS_ENV}" in proc.stdout


def test_doctor_reports_an_unwritable_home(tmp_path: Path) -> None:
    from ctxgate.cli.doctor import _home_status

    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    status = _home_status(blocked / "home")
    assert status["writable"] is False
    assert "not a directory" in status["why"]


def test_doctor_loads_no_model() -> None:
    code = ("import sys; from ctxgate.cli.doctor import gather; gather(); "
            "print(sorted(m for m in ('numpy', 'tokenizers', 'safetensors') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_explain_says_whether_a_fast_path_allow_runs_sandboxed(clean_environ: Path) -> None:
    args = ("gate", "check", "--tool", "bash", "--args", '{"command": "ls -la"}',
            "--request", "list the files", "--explain")
    proc = ctxgate(*args)
    assert proc.returncode == 0, proc.stderr
    assert "code: fast_path" in proc.stdout
    mechanism = detect().mechanism
    assert f"read-only sandbox on this machine ({mechanism})" in proc.stdout
    off = ctxgate(*args, mechanisms="")
    assert "fast-path allows run NOT sandboxed on this machine" in off.stdout
    as_json = json.loads(ctxgate(*args, "--json").stdout)
    assert f"({mechanism})" in as_json["sandbox"]


def test_explain_has_no_sandbox_line_for_a_model_allow(clean_environ: Path) -> None:
    proc = ctxgate("gate", "check", "--tool", "bash", "--args", '{"command": "rm -rf build"}',
                   "--request", "please delete the build dir", "--backend", JUDGE, "--explain")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "code: allowed" in proc.stdout
    assert "probabilities: destructive=0.950 requested=0.900" in proc.stdout
    assert "  sandbox: " not in proc.stdout and "read-only sandbox" not in proc.stdout
