"""Reversibility of file changes against a real git repository (one per test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.paths import classify_path, resolve_path

R, IRR = EffectClass.LOCAL_RECOVERABLE, EffectClass.LOCAL_IRREVERSIBLE


@pytest.mark.parametrize(("path", "action", "expected", "words"), [
    ("src/app.py", "overwrite", R, "tracked by git"),
    ("src/app.py", "modify", R, "tracked by git"),
    ("src/app.py", "delete", R, "tracked and unmodified"),
    ("src/dirty.py", "edit", R, "tracked by git"),
    ("src/dirty.py", "delete", IRR, "uncommitted changes"),
    ("src/new_module.py", "overwrite", R, "creates a new file"),
    ("scratch.txt", "edit", R, "partial edit"),
    ("scratch.txt", "append", R, "partial edit"),
    ("scratch.txt", "overwrite", IRR, "untracked existing file"),
    ("scratch.txt", "delete", IRR, "untracked scratch.txt"),
    ("build", "delete", R, "ignored output"),
    ("build/out.o", "delete", R, "ignored build output"),
    ("build/out.o", "overwrite", IRR, "ignored existing file"),
    ("src/cache.pyc", "delete", R, "ignored build output"),
    ("src", "delete", IRR, "would be lost"),
    (".git/config", "overwrite", IRR, "the repository itself"),
    (".", "delete", IRR, "the repository itself"),
    ("src/dirty.py", "overwrite", IRR, "uncommitted changes"),
])
def test_inside_the_working_tree(repo: Path, path: str, action, expected, words: str) -> None:
    pe = classify_path(path, action, cwd=str(repo))
    assert pe.effect is expected, pe.evidence
    assert words in pe.evidence


@pytest.mark.parametrize("path", ["~/.bashrc", "$HOME/.bashrc", "${HOME}/.ssh/config",
                                  "~/.config/fish/config.fish", "/etc/hosts", "/usr/bin/ls"])
def test_dotfiles_and_system_paths_are_irreversible(repo: Path, home: Path, path: str) -> None:
    for action in ("overwrite", "edit", "append", "create"):
        assert classify_path(path, action, cwd=str(repo)).effect is IRR


def test_a_home_that_is_a_repository_still_protects_its_dotfiles(home: Path) -> None:
    from .conftest import git

    git(home, "init", "-q")
    git(home, "add", ".bashrc")
    git(home, "commit", "-qm", "dotfiles")
    pe = classify_path(".bashrc", "overwrite", cwd=str(home))
    assert pe.effect is IRR and "dotfile" in pe.evidence


def test_outside_any_working_tree(outside: Path, home: Path) -> None:
    for action in ("overwrite", "delete", "modify", "edit"):
        pe = classify_path("data.txt", action, cwd=str(outside))
        assert pe.effect is IRR and "outside any git working tree" in pe.evidence
    assert classify_path("newdir", "create", cwd=str(outside)).effect is R


def test_symlinks_are_judged_where_they_point(repo: Path, home: Path) -> None:
    (repo / "rc").symlink_to(home / ".bashrc")
    pe = classify_path("rc", "overwrite", cwd=str(repo))
    assert pe.effect is IRR and "dotfile" in pe.evidence


def test_unknown_variables_are_irreversible(repo: Path) -> None:
    pe = classify_path("$OUT/file", "overwrite", cwd=str(repo))
    assert pe.effect is IRR and "variable" in pe.evidence
    assert resolve_path("$OUT", str(repo)) is None
    assert resolve_path("src/../README.md", str(repo)) == str((repo / "README.md").resolve())


@pytest.mark.parametrize("path", ["no/such/file", "gone.txt", "*.bak", "build/missing.o"])
def test_a_delete_of_nothing_is_no_evidence(repo: Path, path: str) -> None:
    """Nothing there now proves nothing about what the call deletes when it runs: no class,
    so the shell parser leaves the command to the model (never "recoverable")."""
    pe = classify_path(path, "delete", cwd=str(repo))
    assert pe.effect is None and "no evidence" in pe.evidence


def test_a_delete_of_nothing_outside_the_tree_or_through_a_variable_stays_irreversible(
        repo: Path, outside: Path, home: Path) -> None:
    for path in (str(outside / "missing.txt"), "~/.cache-missing", "$TARGET/x", "/srv/none"):
        assert classify_path(path, "delete", cwd=str(repo)).effect is IRR, path


def test_overwriting_uncommitted_work_depends_on_who_keeps_history(repo: Path) -> None:
    shell = classify_path("src/dirty.py", "overwrite", cwd=str(repo))
    assert shell.effect is IRR and "uncommitted changes" in shell.evidence
    harness = classify_path("src/dirty.py", "overwrite", cwd=str(repo), keeps_history=True)
    assert harness.effect is R
    assert classify_path("src/app.py", "overwrite", cwd=str(repo)).effect is R
