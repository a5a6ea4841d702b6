"""The README's configuration reference and docs/cli.md are generated from the code; every
command has help text and is named in the README."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generated_references_are_up_to_date() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_reference.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_command_has_help_and_is_in_the_readme() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_reference
    finally:
        sys.path.pop(0)
    from typer.testing import CliRunner

    from ctxgate.cli import app

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    runner = CliRunner()
    for path in gen_reference.commands():
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, path
        assert "Usage:" in result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) >= 3, f"{path} has no help text"
        assert f"ctxgate {path[0]}" in readme, f"the README never shows `ctxgate {path[0]}`"
