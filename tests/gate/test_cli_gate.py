"""`ctxgate gate check` and `ctxgate gate log`, through CliRunner and as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from ctxgate.cli import app, main

BACKEND = textwrap.dedent('''
    """A rule backend for CLI tests: rm is destructive; 'delete' in the request asks for it."""
    from ctxgate.gate.backends.function import FunctionDecisionModel

    def rules(state, questions):
        destructive = 0.9 if state["tool_call"]["tool"] == "rm" else 0.1
        requested = 0.9 if "delete" in state["user_request"] else 0.1
        return {"destructive": destructive, "requested": requested}

    def factory(policy):
        return FunctionDecisionModel(fn=rules, model_id="cli-rules")

    def broken(policy):
        raise ImportError("the model files are missing")
''')


@pytest.fixture
def backend(tmp_path, monkeypatch):
    (tmp_path / "cli_backend_mod.py").write_text(BACKEND, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "cli_backend_mod:factory"


def invoke(*args):
    return CliRunner().invoke(app, ["gate", *args], catch_exceptions=False)


def test_check_allow_deny_and_json(backend):
    ok = invoke("check", "--request", "delete the scratch file", "--tool", "rm",
                "--args", '{"path": "/tmp/scratch"}', "--backend", backend)
    assert ok.exit_code == 0 and ok.output.startswith("allow: ")
    no = invoke("check", "--request", "list things", "--tool", "rm",
                "--args", '{"path": "/tmp/scratch"}', "--backend", backend, "--json")
    assert no.exit_code == 1
    record = json.loads(no.output)
    assert record["outcome"] == "deny" and record["code"] == "destructive_unrequested"
    assert record["probabilities"] == {"destructive": 0.9, "requested": 0.1}
    assert record["model_id"] == "cli-rules"
    assert record["state"]["tool_call"]["arguments"] == {"path": "/tmp/scratch"}


def test_check_fast_path_needs_no_backend():
    r = invoke("check", "--tool", "bash", "--args", '{"command": "git log -3"}',
               "--backend", "nonexistent_module_xyz:factory")
    assert r.exit_code == 0 and "read-only" in r.output


def test_check_reads_the_request_from_messages(backend, tmp_path):
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"role": "user", "content": "please delete /tmp/scratch"}]))
    r = invoke("check", "--messages", str(msgs), "--tool", "rm", "--args", '{"p": 1}',
               "--backend", backend)
    assert r.exit_code == 0
    r = invoke("check", "--tool", "rm", "--args", '{"p": 1}', "--backend", backend)
    assert r.exit_code == 1 and "restate the request" in r.output


def test_usage_errors_exit_2(backend, capsys):
    for argv in (["gate", "check", "--tool", "rm", "--args", "{bad"],
                 ["gate", "log", "--since", "yesterday"],
                 ["gate", "log", "--verdict", "maybe"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    assert "--args is not valid JSON" in capsys.readouterr().err


def test_a_missing_backend_never_allows(capsys, tmp_path, monkeypatch):
    (tmp_path / "cli_backend_mod2.py").write_text(BACKEND, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec in ("cli_backend_mod2:broken", "no_such_module_q:factory"):
        with pytest.raises(SystemExit) as info:
            main(["gate", "check", "--request", "x", "--tool", "rm", "--args", "{}",
                  "--backend", spec])
        assert info.value.code == 1
        assert "never allows a call without a backend" in capsys.readouterr().err


def test_log_lists_and_filters(backend):
    invoke("check", "--request", "delete it", "--tool", "rm", "--args", "{}", "--backend", backend)
    invoke("check", "--request", "look", "--tool", "rm", "--args", "{}", "--backend", backend)
    invoke("check", "--tool", "bash", "--args", '{"command": "ls"}')
    rows = json.loads(invoke("log", "--json").output)
    assert [r["verdict"] for r in rows] == ["allow", "deny", "allow"]
    assert rows[0]["fast_path"] and not rows[1]["fast_path"]
    denies = json.loads(invoke("log", "--json", "--verdict", "deny").output)
    assert len(denies) == 1 and denies[0]["tool"] == "rm"
    assert len(json.loads(invoke("log", "--json", "--tool", "bash").output)) == 1
    assert len(json.loads(invoke("log", "--json", "--limit", "2").output)) == 2
    text = invoke("log", "--since", "1h").output
    assert "destructive_unrequested" in text and "fast-path" in text


def test_real_subprocess(tmp_path, clean_environ):
    (tmp_path / "cli_backend_mod3.py").write_text(BACKEND, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p))  # keep the tested src
    exe = shutil.which("ctxgate")
    assert exe, "the ctxgate console script is not installed"
    base = [exe, "gate", "check", "--backend",
            "cli_backend_mod3:factory", "--tool", "rm", "--args", '{"path": "/srv/data"}']
    denied = subprocess.run([*base, "--request", "show me the data"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert denied.returncode == 1 and denied.stdout.startswith("deny: Tool gate:")
    allowed = subprocess.run([*base, "--request", "delete /srv/data"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert allowed.returncode == 0, allowed.stderr
    log = subprocess.run([sys.executable, "-m", "ctxgate", "gate", "log", "--json"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert [r["verdict"] for r in json.loads(log.stdout)] == ["allow", "deny"]
    assert (clean_environ / "audit.db").is_file()


def test_ask_without_a_terminal_leaves_the_call_waiting(backend):
    r = invoke("check", "--request", "look", "--tool", "rm", "--args", '{"p": 1}',
               "--backend", backend, "--ask", "--json")
    assert r.exit_code == 3  # ask: a person decides
    record = json.loads(r.output)
    assert record["outcome"] == "ask" and record["code"] == "awaiting_approval"


def test_large_arguments_show_what_was_omitted(backend):
    # a new file inside a git working tree: a recoverable write, allowed by the effect rules
    subprocess.run(["git", "init", "-q"], check=True)
    args = json.dumps({"path": "notes.md", "content": "line\n" * 20_000})
    r = invoke("check", "--request", "write the notes", "--tool", "write", "--args", args,
               "--backend", backend, "--json")
    record = json.loads(r.output)
    assert r.exit_code == 0
    assert record["omitted"] == record["state"]["tool_call"]["omitted"]
    assert record["omitted"][0]["argument"] == "/content"
