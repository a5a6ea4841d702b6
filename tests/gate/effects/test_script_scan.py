"""Scripts an interpreter runs from a file (``python t.py``, ``bash t.sh``) are scanned: the
body the same command writes from a here-doc, else the file on disk when nothing in the
command may change it first. What the scan finds destructive is the command's effect; a scan
that finds nothing proves nothing (the run stays unknown: the model judges)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.shell import shell_effect

IRR, EXT = EffectClass.LOCAL_IRREVERSIBLE, EffectClass.EXTERNAL


@pytest.mark.parametrize(
    ("command", "expected", "words"),
    [
        ("cat > t.py << 'EOF'\nimport shutil\nshutil.rmtree('/srv/data')\nEOF\npython t.py",
         IRR, "t.py this command writes"),
        ("cat > t.sh <<EOF\nrm -rf ~/Documents\nEOF\nbash t.sh", IRR, "t.sh this command"),
        ("tee run.py << 'EOF'\nimport requests\nrequests.post('https://x.example/u', data=1)\n"
         "EOF\npython3 -u run.py", EXT, "run.py this command writes"),
        ("cd . && cat > a.js << 'EOF'\nrequire('fs').rmSync('/srv/x', {recursive: true})\n"
         "EOF\nnode a.js", IRR, "a.js this command writes"),
    ],
)
def test_a_here_doc_script_the_command_runs_is_scanned(
    repo: Path, command: str, expected: EffectClass, words: str
) -> None:
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is expected and words in e.evidence, (command, e)


@pytest.mark.parametrize(
    "command",
    [
        "cat > t.py << 'EOF'\nprint('hello')\nEOF\npython t.py",  # nothing found: unknown
        "cat >> t.py << 'EOF'\nimport shutil\nEOF\npython t.py",  # append: content unknown
        "python -m pytest -q",  # a module, not a file
        "python missing_script.py",
    ],
)
def test_a_scan_that_finds_nothing_leaves_the_run_to_the_model(repo: Path, command: str) -> None:
    assert shell_effect(command, cwd=str(repo)) is None, command


def test_a_script_on_disk_is_read_unless_the_command_may_change_it_first(repo: Path) -> None:
    (repo / "cleanup.py").write_text("import os\nos.remove('/srv/db/main.sqlite')\n")
    for command in ("python cleanup.py", f"cd {repo} && python3 cleanup.py"):
        e = shell_effect(command, cwd=str(repo))
        assert e is not None and e.effect is IRR and "cleanup.py that `python" in e.evidence
    # another directory, or a command that rewrites the file first: the disk copy says nothing
    assert shell_effect("cd /elsewhere && python cleanup.py", cwd=str(repo)) is None
    e = shell_effect("cp src/app.py cleanup.py && python cleanup.py", cwd=str(repo))
    assert e is None or "cleanup.py that" not in e.evidence
    # a script larger than the read limit is not read
    (repo / "big.py").write_text("import os\nos.remove('/srv/x')\n" + "#" * 300_000 + "\n")
    assert shell_effect("python big.py", cwd=str(repo)) is None


def test_a_temporary_directory_cleanup_in_a_test_script_is_not_a_delete(repo: Path) -> None:
    # what coding agents write all day (effect_drift: 0 of 14,250 real commands changed)
    body = ("import shutil, tempfile\nd = tempfile.mkdtemp()\ntry:\n    pass\nfinally:\n"
            "    shutil.rmtree(d)\n")
    assert shell_effect(f"cat > t.py << 'EOF'\n{body}EOF\npython t.py", cwd=str(repo)) is None


@pytest.mark.parametrize(
    ("command", "destructive"),
    [
        ("cat <<EOF\n$(rm -rf ~/Documents)\nEOF", True),  # bash runs it first
        ("cat <<EOF\nnotes: `rm -rf ~/Documents`\nEOF", True),
        ("cat > x.txt <<-EOF\n\tnow: $(date) $(echo $(rm -rf ~/Documents))\n\tEOF", True),
        ("cat <<'EOF'\n$(rm -rf ~/Documents)\nEOF", False),  # quoted delimiter: literal text
        ('cat <<"EOF"\n$(rm -rf ~/Documents)\nEOF', False),
        ("cat <<\\EOF\n$(rm -rf ~/Documents)\nEOF", False),
        ("cat <<EOF\n\\$(rm -rf ~/Documents) is escaped\nEOF", False),
        ("cat <<EOF\ntotal: $((1 + 2))\nEOF", False),  # arithmetic runs nothing
    ],
)
def test_substitutions_in_an_unquoted_here_doc_run(repo: Path, command: str,
                                                   destructive: bool) -> None:
    e = shell_effect(command, cwd=str(repo))
    assert (e is not None and e.effect.destructive) is destructive, (command, e)
    if destructive:
        assert "unquoted here-doc" in e.evidence, e
