"""Archives unpacked over files, editors driven from the command line, git configuration
that outlives the repository, and a rule that fails (ctxgate.gate.effects.programs, .git,
.resolve)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ctxgate.gate.effects import resolve as resolve_module
from ctxgate.gate.effects.model import EffectClass, EffectSource
from ctxgate.gate.effects.resolve import resolve_effect
from ctxgate.gate.effects.shell import shell_effect
from ctxgate.gate.policy import GatePolicy

LOSE = EffectClass.LOCAL_IRREVERSIBLE


@pytest.mark.parametrize("command", [
    "tar -xf a.tar -C ~",
    "tar xzf a.tgz -C {outside}",
    "tar --extract -f a.tar --directory={outside}",
    "tar -C {outside} -xf a.tar",
    "unzip -o a.zip -d {outside}",
    "unzip a.zip -d ~",
])
def test_unpacking_over_files_outside_the_tree_is_irreversible(
        repo: Path, home: Path, command: str) -> None:
    outside = home / "project"  # not under the temporary directory, as tmp_path is
    outside.mkdir()
    (outside / "data.txt").write_text("precious\n")
    e = shell_effect(command.format(outside=outside), cwd=str(repo))
    assert e is not None and e.effect is LOSE, (command, e)
    assert "unpacks into" in e.evidence


@pytest.mark.parametrize("command", [
    "tar -xf a.tar",  # into the working tree: the model judges, as before
    "tar -xf a.tar -C /tmp",  # the temporary directory
    "tar -xf a.tar -C {outside}/new",  # a directory that does not exist yet replaces nothing
    "tar -xkf a.tar -C {outside}",  # --keep-old-files
    "tar -tf a.tar -C {outside}",  # lists
    "tar -czf out.tgz src",
    "unzip -l a.zip -d {outside}",
    "unzip -n a.zip -d {outside}",  # never overwrite
])
def test_unpacking_that_replaces_nothing_outside_is_not_a_finding(
        repo: Path, outside: Path, command: str) -> None:
    e = shell_effect(command.format(outside=outside), cwd=str(repo))
    assert e is None or not e.effect.destructive, (command, e)


@pytest.mark.parametrize(("command", "said"), [
    ("vim -c ':!rm -rf ~/.ssh' -c q", "deletes ~/.ssh"),
    ("vim -es -c 'r !rm -rf ~/.ssh' -c q README.md", "runs a shell command"),
    ("vim +'py3 import shutil' +q", "runs code in the editor"),
    ("nvim --cmd 'lua os.remove(\"x\")' README.md", "runs code in the editor"),
    ("vim -c ':%d|wq' {outside}/data.txt", "data.txt"),
    ("ed {outside}/data.txt <<< $',d\\nw'", "data.txt"),
    ("emacs --batch --eval '(delete-file \"README.md\")'", "Lisp that deletes"),
])
def test_editors_told_what_to_do_are_judged(repo: Path, home: Path, outside: Path, command,
                                            said) -> None:
    e = shell_effect(command.format(outside=outside), cwd=str(repo))
    assert e is not None and e.effect is LOSE, (command, e)
    assert said in e.evidence + " ".join(e.details)


def test_an_editor_edit_of_a_tracked_file_is_recoverable_and_an_interactive_one_unknown(
        repo: Path) -> None:
    e = shell_effect("vim -c ':%s/hello/bye/g|wq' src/app.py", cwd=str(repo))
    assert e is None  # the edit is recoverable, the editor itself still unknown: model
    assert shell_effect("vim src/app.py", cwd=str(repo)) is None


@pytest.mark.parametrize("command", [
    "git config --global core.hooksPath /tmp/hooks",
    "git config --global core.pager less",
    "git config --system alias.st '!rm -rf ~'",
])
def test_global_git_configuration_is_irreversible(repo: Path, command: str) -> None:
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is LOSE, (command, e)


def test_repository_git_configuration_keeps_its_old_classes(repo: Path) -> None:
    e = shell_effect("git config alias.st status", cwd=str(repo))
    assert e is not None and e.effect is EffectClass.LOCAL_RECOVERABLE
    e = shell_effect("git config core.pager 'rm -rf ~'", cwd=str(repo))
    assert e is not None and e.effect is LOSE


def test_a_rule_that_raises_makes_the_call_destructive_not_model_judged(
        repo: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(*_args, **_kwargs):
        raise IndexError("no such group")

    monkeypatch.setattr(resolve_module, "_resolve", broken)
    with caplog.at_level(logging.WARNING, logger="ctxgate.gate"):
        e = resolve_effect("bash", {"command": "ls"}, policy=GatePolicy(), cwd=str(repo))
    assert e is not None and e.effect is LOSE and e.source is EffectSource.RULES_FAILED
    assert "IndexError: no such group" in e.evidence and "clearly requested" in e.evidence
    assert "judged destructive" in caplog.text
