"""Reversibility for coding work (issue 9 item 3), each case against a real git repository:
what a coding agent does to its own working tree is recoverable; what reaches past it is not;
and a delete with nothing to delete proves nothing (the model decides)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.harness import harness_effect
from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.shell import shell_effect

R, IRR = EffectClass.LOCAL_RECOVERABLE, EffectClass.LOCAL_IRREVERSIBLE
EXT = EffectClass.EXTERNAL


@pytest.mark.parametrize(
    "command",
    [
        "sed -i 's/hello/hi/' src/app.py",  # in-place edit of a tracked file
        "perl -pi -e 's/hello/hi/' src/app.py",
        "echo 'x = 3' > src/app.py",  # overwrite of a tracked, unmodified file
        "printf 'y\\n' >> src/dirty.py",  # append
        "rm -rf build",  # ignored build output
        "rm src/cache.pyc",
        "find . -name '*.pyc' -delete",
        "rm src/app.py",  # tracked, unmodified: git restores it
        "mkdir -p out && touch out/new.txt",
        "git add -A && git commit -m 'wip'",
        "rename 's/app/main/' src/app.py",  # Perl's rename: the content keeps a name
        "rename 's/x/y/' scratch.txt",  # (as for `mv`, renaming back restores it)
    ],
)
def test_coding_work_in_the_tree_is_recoverable(repo: Path, command: str) -> None:
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is R, (command, e)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo 'alias ls=rm' >> ~/.bashrc", IRR),  # a dotfile
        ("cp key ~/.ssh/authorized_keys", IRR),
        ("rm -rf ../outside", IRR),  # outside the working tree
        ("rm scratch.txt", IRR),  # untracked: git cannot restore
        ("rm src/dirty.py", IRR),  # uncommitted changes
        ("> src/dirty.py", IRR),  # truncates uncommitted work
        ("sort -o src/dirty.py src/dirty.py", IRR),
        ("git reset --hard HEAD~1", IRR),  # history rewrite / discard
        ("git commit --amend -m x", IRR),
        ("git push --force origin main", EXT),  # force push
        ("psql -c 'DROP DATABASE prod'", IRR),  # database drop
        ("aws s3 rm s3://bucket --recursive", EXT),  # cloud delete
        ("kubectl delete namespace payments", EXT),
        ("rename 's/rc/rc.bak/' ~/.bashrc", IRR),
    ],
)
def test_what_reaches_past_the_tree_stays_destructive(
    repo: Path, tmp_path: Path, command: str, expected
) -> None:
    (tmp_path / "outside").mkdir(exist_ok=True)
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is expected, (command, e)


@pytest.mark.parametrize(
    "command",
    [
        "rm -f *.bak",  # a glob that matches nothing now
        "rm -rf no-such-dir",
        "find . -name '*.mp3' -exec rm -f {} \\;",  # nothing under . matches now
        "find src -name '*.orig' -delete",
    ],
)
def test_nothing_to_delete_inside_the_tree_is_no_evidence(repo: Path, command: str) -> None:
    assert shell_effect(command, cwd=str(repo)) is None, command  # the model decides


def test_the_same_delete_with_something_of_value_there_is_irreversible(repo: Path) -> None:
    (repo / "notes.bak").write_text("my only copy\n")
    e = shell_effect("rm -f *.bak", cwd=str(repo))
    assert e is not None and e.effect is IRR and "notes.bak" in e.evidence
    (repo / "song.mp3").write_text("untracked\n")
    e = shell_effect("find . -name '*.mp3' -exec rm -f {} \\;", cwd=str(repo))
    assert e is not None and e.effect is IRR and "song.mp3" in e.evidence


def test_harness_writes_and_edits(repo: Path, home: Path) -> None:
    cwd = str(repo)
    for tool, args in (
        ("Write", {"file_path": "src/app.py", "content": "x"}),
        ("Edit", {"file_path": "src/dirty.py", "old_string": "x", "new_string": "y"}),
        ("Write", {"file_path": "src/dirty.py", "content": "x"}),  # checkpointed
        ("Write", {"file_path": "src/brand_new.py", "content": "x"}),
    ):
        e = harness_effect(tool, args, cwd=cwd)
        assert e is not None and e.effect is R, (tool, args, e)
    for args in (
        {"file_path": "~/.bashrc", "content": "x"},
        {"file_path": str(home / ".ssh" / "config"), "content": "x"},
    ):
        e = harness_effect("Write", args, cwd=cwd)
        assert e is not None and e.effect is IRR and "dotfile" in e.evidence


def test_apply_patch_deleting_a_missing_file_is_left_to_the_model(repo: Path) -> None:
    patch = "*** Begin Patch\n*** Delete File: gone.py\n*** End Patch\n"
    assert harness_effect("apply_patch", {"input": patch}, cwd=str(repo)) is None
    patch = "*** Begin Patch\n*** Delete File: scratch.txt\n*** End Patch\n"
    e = harness_effect("apply_patch", {"input": patch}, cwd=str(repo))
    assert e is not None and e.effect is IRR


@pytest.mark.parametrize(
    "command",
    ["git checkout -- src/app.py", "git checkout HEAD -- src/app.py README.md",
     "git restore src/app.py", "git restore --source HEAD~0 src/app.py"],
)
def test_restoring_paths_with_no_uncommitted_change_discards_nothing(
    repo: Path, command: str
) -> None:
    # honest coding work: an agent puts back a file it had not changed (or had already put
    # back); seen denied in benchmarks/honest_work.py. Irreversible before this rule.
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is R and "nothing is discarded" in e.evidence, (command, e)


@pytest.mark.parametrize(
    "command",
    ["git checkout -- src/dirty.py", "git checkout -- .", "git checkout -- src",
     "git restore src/dirty.py", "git restore .", "git checkout -f", "git checkout -f main",
     "git checkout -- ':(glob)src/*.py'"],
)
def test_restoring_paths_with_uncommitted_changes_stays_irreversible(
    repo: Path, command: str
) -> None:
    # src/dirty.py holds uncommitted work; a forced switch may overwrite untracked files
    # (scratch.txt); pathspec magic is not checked
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is IRR, (command, e)


def test_a_new_file_in_the_temporary_directory_replaces_nothing(repo: Path, home: Path) -> None:
    import tempfile

    temp = Path(tempfile.mkdtemp(prefix="ctxgate-test-", dir="/tmp"))
    try:
        new = temp / "fix.py"
        e = shell_effect(f"cat > {new} << 'EOF'\nprint(1)\nEOF", cwd=str(repo))
        assert e is not None and e.effect is R and "temporary directory" in e.evidence, e
        new.write_text("someone's file\n")  # now it exists: an overwrite loses it
        e = shell_effect(f"echo x > {new}", cwd=str(repo))
        assert e is not None and e.effect is IRR, e
        e = shell_effect(f"rm {new}", cwd=str(repo))
        assert e is not None and e.effect is IRR, e
    finally:
        import shutil

        shutil.rmtree(temp, ignore_errors=True)
    # a new file outside any tree but not in the temporary directory stays irreversible (a
    # program on the PATH); so does one under a $HOME that lies in the temporary directory,
    # as this test's does
    e = shell_effect("echo x > /usr/local/bin/newtool", cwd=str(repo))
    assert e is not None and e.effect is IRR, e
    e = shell_effect("echo x > ~/bin/sudo", cwd=str(repo))
    assert e is not None and e.effect is IRR, e


@pytest.mark.parametrize("command", ["rename .py .txt src/app.py",  # util-linux's
                                     "rename -f 's/app/x/' src/app.py"])
def test_a_rename_that_may_replace_another_file_is_left_to_the_model(repo: Path,
                                                                     command: str) -> None:
    assert shell_effect(command, cwd=str(repo)) is None, command


def test_a_rename_dry_run_changes_nothing(repo: Path) -> None:
    e = shell_effect("rename -n 's/app/main/' src/app.py", cwd=str(repo))
    assert e is not None and e.effect is EffectClass.READ_ONLY and e.needs_model, e


def test_coverage_erase_is_judged_by_the_data_file_it_deletes(repo: Path) -> None:
    """``coverage erase`` deletes ``.coverage`` (the verb rule called it a reset of anything):
    ignored output of the last test run is recoverable, as ``rm -rf build`` is; with no data
    file there is no evidence either way and the model judges."""
    assert shell_effect("coverage erase", cwd=str(repo)) is None
    with (repo / ".gitignore").open("a") as fh:
        fh.write(".coverage\n")
    (repo / ".coverage").write_text("data")
    e = shell_effect("coverage erase", cwd=str(repo))
    assert e is not None and e.effect is R, e
