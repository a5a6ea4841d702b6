"""The argparse twins of `run` and `expand` stay in step with the typer commands."""

from __future__ import annotations

import inspect
import subprocess
import sys

from ctxgate.cli.fast import run_main


def test_run_main_parses_with_the_declaration() -> None:
    """The twin's parser is :data:`ctxgate.app.options.RUN`'s (held equal to typer's in
    tests/app/test_options.py)."""
    assert "argparse_parser(RUN" in inspect.getsource(run_main)


def test_run_main_runs_and_passes_the_exit_code(capfd) -> None:
    assert run_main(["--", "sh", "-c", "echo twin; exit 5"]) == 5
    assert "twin" in capfd.readouterr().out
    assert run_main(["-c", "echo shell-form"]) == 0
    assert "shell-form" in capfd.readouterr().out


def test_run_main_usage_errors_exit_2(capfd) -> None:
    assert run_main([]) == 2
    assert "give a command" in capfd.readouterr().err
    assert run_main(["--timeout", "soon", "--", "true"]) == 2


def test_console_script_uses_the_twin_and_help_uses_typer() -> None:
    probe = ("import sys, runpy; sys.argv=['ctxgate','run','--','true']\n"
             "try:\n    runpy.run_module('ctxgate', run_name='__main__')\n"
             "except SystemExit as e:\n    code = e.code\n"
             "print(code, 'typer' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.split() == ["0", "False"]
    helped = subprocess.run([sys.executable, "-m", "ctxgate", "run", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "--separate-stderr" in helped.stdout
