"""Wrapping only the output-producing parts keeps the shell's state: checked with real bash.

Each command runs in one bash twice — as written, and rewritten by
:func:`wrap_outputs` with a wrapper that runs its part in a child ``bash -c`` (what
``ctxgate run -c`` does) — followed by probes of the shell's state (directory, variables,
aliases, functions, options). Both runs must print the same.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgate.integrations.hooks.handlers import rewrite_shell_command, wrap_shell_command
from ctxgate.integrations.hooks.shellsplit import split_list, wrap_outputs

PROBE = ('; echo "[pwd=${PWD##*/} X=${X-} Y=${Y-} V=${VIRTUAL_ENV##*/}]"; '
         'type ll >/dev/null 2>&1 && echo has-ll; type f >/dev/null 2>&1 && echo has-f; '
         'shopt -qo pipefail && echo pipefail; true')


def child(part: str) -> str:
    return f"bash -c {shlex.quote(part)}"


CASES = [
    "cd sub && ls",
    "cd sub; pwd",
    "mkdir -p a && cd a && pwd",
    "export X=1 && echo $X",
    "export X=1; bash -c 'echo $X'",
    "X=1; echo $X",
    "X=1 Y=2; echo $X $Y",
    "Y=2 printenv Y",
    "source .venv/bin/activate && echo $VIRTUAL_ENV",
    ". .venv/bin/activate; which python || true",
    "shopt -s expand_aliases; alias ll='echo ALIAS'; ll",
    "f() { echo FN; }; f",
    "set -o pipefail; false | true; echo $?",
    "cd sub && echo 'a && b; cd c' && pwd",
    "if true; then cd sub; fi; pwd",
    "for i in 1 2; do echo $i; done; cd sub",
    "echo $(cd sub && pwd); pwd",
    "cd sub || echo no; cd ..; pwd",
    "false && cd sub; pwd",
    "pushd sub >/dev/null && pwd",
    "cat <<EOF\nhello\nEOF\ncd sub",
    "cd sub\nls\n",
    "ls # cd sub",
    "umask 077 && touch u && stat -c %a u",
    "unset X; echo ${X-unset}",
    "read -r X <<< 'from-read'; echo $X",
    "cd sub && { echo group; cd ..; }",
    "[ -d sub ] && cd sub && ls",
    "printf -v X '%s' from-printf; echo $X",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "file").write_text("x\n")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "activate").write_text(
        'export VIRTUAL_ENV="$PWD/.venv"\nexport PATH="$VIRTUAL_ENV/bin:$PATH"\n')
    return tmp_path


def run(script: str, cwd: Path) -> str:
    proc = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=30, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})
    return f"{proc.stdout}|{proc.returncode}"


@pytest.mark.parametrize("command", CASES)
def test_rewrite_keeps_output_and_shell_state(command: str, tree: Path, tmp_path: Path) -> None:
    rewritten = wrap_outputs(command, child)
    as_written = run(command + "\n" + PROBE, tree)
    if rewritten is None:  # nothing could be wrapped safely: the command is left as it is
        return
    (tmp_path / "u").unlink(missing_ok=True)
    assert run(rewritten + "\n" + PROBE, tree) == as_written, rewritten


@pytest.mark.parametrize(("command", "expected"), [
    ("cd sub && make", "cd sub && <make>"),
    ("make", "<make>"),
    ("export X=1 && pytest -x", "export X=1 && <pytest -x>"),
    ("source .venv/bin/activate && pytest", "source .venv/bin/activate && <pytest>"),
    ("cd a; ls | wc -l; cd b", "cd a; <ls | wc -l>; cd b"),
    ("cd sub\nmake test", "cd sub\n<make test>"),
    ("X=1; echo $X", None),
    ("alias ll=ls; ll", None),
    ("f() { echo; }; f", None),
    ("if true; then cd x; fi; ls", None),
    ("[ -d sub ] && cd sub && make", "[ -d sub ] && cd sub && <make>"),
    ("printf -v X a; echo $X", None),
    ("test -d sub && cd sub", None),
])
def test_which_parts_are_wrapped(command: str, expected: str | None) -> None:
    assert wrap_outputs(command, lambda part: f"<{part}>") == expected


@pytest.mark.parametrize("command", ["echo 'unterminated", "cat <<EOF\nx\nEOF", "sleep 1 &",
                                      "a \\\n b", "case x in x) echo;; esac", "echo )"])
def test_unsure_commands_are_one_element(command: str) -> None:
    assert split_list(command) is None


def test_rewrite_uses_ctxgate_run_and_keeps_cd_outside(tree: Path) -> None:
    rewritten = rewrite_shell_command("cd sub && cat file", python=sys.executable)
    assert rewritten == "cd sub && " + wrap_shell_command("cat file", python=sys.executable)
    assert rewrite_shell_command("ls", read_only=True) == wrap_shell_command("ls", read_only=True)


def test_most_cases_are_rewritten_not_skipped() -> None:
    """The equivalence test above only means something for commands that were rewritten."""
    rewritten = [c for c in CASES if wrap_outputs(c, child) is not None]
    assert len(rewritten) >= 16, [c for c in CASES if c not in rewritten]


def test_arithmetic_commands_stay_in_the_shell() -> None:
    assert wrap_outputs("(( n += 1 )); echo $n", child) is None
