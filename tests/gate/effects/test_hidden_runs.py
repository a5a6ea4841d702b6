"""Commands the shell rules called read-only (which waives the destructive test) or
recoverable while they run or lose something: found by probing the rules with commands that
hide a run or a write in an option or an expansion. Each case against a real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.shell import shell_effect

R, IRR, RO = (EffectClass.LOCAL_RECOVERABLE, EffectClass.LOCAL_IRREVERSIBLE,
              EffectClass.READ_ONLY)


@pytest.mark.parametrize(
    ("command", "expected", "words"),
    [
        ("echo ${x:=$(rm -rf scratch.txt)}", IRR, "parameter expansion"),
        ("echo ${x:-`rm -f scratch.txt`}", IRR, "parameter expansion"),
        ("echo ${x:-${y:-$(rm -f scratch.txt)}}", IRR, "parameter expansion"),
        ("less '+!rm scratch.txt' README.md", IRR, "runs"),
        ("more '+!rm scratch.txt' README.md", IRR, "runs"),
        ("less -o notes.log README.md", R, "logs to"),
        ("rsync -a --delete ../empty/ src/", IRR, "--delete"),
        ("git stash", R, "git stash"),
        ("tree -o scratch.txt", IRR, "tree -o"),
        ("bat --pager 'rm scratch.txt' README.md", IRR, "--pager"),
        ("fzf --preview 'rm scratch.txt'", IRR, "--preview"),
        ("fzf --bind 'enter:execute(rm scratch.txt)'", IRR, "--bind"),
        ("trap 'rm scratch.txt' EXIT; ls", IRR, "trap"),
        ("export PROMPT_COMMAND='rm scratch.txt'", IRR, "plants"),
        ("fd -e txt -x rm", IRR, "fd -x"),  # fd appends each match
        ("rg --pre 'rm scratch.txt' pattern README.md", IRR, "--pre"),
        ("git grep -O'rm scratch.txt' hello", IRR, "git grep -O"),
        ("git grep --open-files-in-pager='rm scratch.txt' hello", IRR, "git grep -O"),
        ("info --output=scratch.txt ls", IRR, "info -o"),
        ("iconv -f utf8 -t ascii README.md -o scratch.txt", IRR, "iconv -o"),
        ("base64 -o scratch.txt README.md", IRR, "base64 -o"),  # BSD base64
        ("rg --hostname-bin='rm scratch.txt' foo", IRR, "--hostname-bin"),
        ("man --html='rm scratch.txt' ls", IRR, "--html"),
    ],
)
def test_hidden_runs_and_losses_are_found(repo: Path, command: str, expected: EffectClass,
                                          words: str) -> None:
    (repo.parent / "empty").mkdir(exist_ok=True)
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is expected and words in e.evidence, (command, e)


@pytest.mark.parametrize("command", ["echo ${HOME}", "less +G README.md", "git stash list",
                                     "echo ${x:-default}", "tree -L 2", "fd -e py",
                                     "rg -n foo", "trap - EXIT", "export FOO=1",
                                     "fd -e py -x wc -l", "git grep -n hello", "info ls"])
def test_their_plain_forms_still_only_read(repo: Path, command: str) -> None:
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is RO, (command, e)


@pytest.mark.parametrize("command", ["hash -p /bin/rm ls; ls scratch.txt",
                                     "PATH=/tmp/evil:$PATH ls", "export PATH=./bin:$PATH; ls"])
def test_a_program_name_that_may_run_another_file_is_left_to_the_model(repo: Path,
                                                                       command: str) -> None:
    # `ls` after `hash -p /bin/rm ls` runs rm: the rules cannot say what each name runs
    assert shell_effect(command, cwd=str(repo)) is None, command


def test_file_compiling_a_magic_file_is_left_to_the_model(repo: Path) -> None:
    # `file -C -m x` writes x.mgc into the working directory
    assert shell_effect("file -C -m magic", cwd=str(repo)) is None
    assert shell_effect("file README.md", cwd=str(repo)).effect is RO
