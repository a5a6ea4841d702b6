"""Differential sandbox test of the read-only fast path (issue 13, "Done means").

Every command of ``data/fastpath_corpus.jsonl`` goes through ``is_read_only``; every command
it allows is run with real bash in a throwaway copy of a fixture tree (remade after any
change, so each command starts from the template) built to catch the classic escapes: files
named ``2``, ``-delete``, ``--output=f``, ``-out``, ``-o``; ``tools/ls`` and ``evil`` scripts
that leave a marker; a repository whose ``core.fsmonitor`` leaves a marker, one with a
``post-index-change`` hook, one whose index has a gitlink to such a repository; ``HOME``
inside the sandbox; a timeout per command. The whole sandbox root (files, modes, symlinks,
the set of paths, markers anywhere) must be unchanged afterwards. The one exception is the
*content* of ``.git/index``: git refreshes its stat cache there after the copy changed every
inode (same entries, new stat data); a hook or fsmonitor run still shows up as a marker file.

Also here: the word split of every allowed command equals bash's own (each simple command
re-run as ``printf '%s\\0' WORDS`` in an empty directory, so globs stay unexpanded).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from ctxgate.gate.fastpath import is_read_only
from ctxgate.gate.fastpath.lexer import LexError, lex

DATA = Path(__file__).parent / "data"


def _generator():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fastpath_corpus",
                                                  DATA / "make_fastpath_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_GEN = _generator()
KNOWN_BAD, render = _GEN.KNOWN_BAD, _GEN.render
CORPUS = DATA / "fastpath_corpus.jsonl"
PATH = "/usr/bin:/bin"
MARK = 'touch "$(dirname "$0")/MARKER-$(basename "$0")-$$"\n'


def load_corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def _env(home: Path) -> dict[str, str]:
    return {"PATH": PATH, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


def _git(cwd: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                   timeout=30)


def build_fixture(root: Path) -> None:
    """The sandbox template: ``root/home`` (HOME) and ``root/tree`` (the working directory)."""
    home, tree = root / "home", root / "tree"
    env = _env(home)
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("not a key\n")
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@t\n")
    (tree / "src").mkdir(parents=True)
    (tree / "d").mkdir()
    (tree / "tools").mkdir()
    for name, text in {"2": "two\n", "-delete": "x\n", "--output=f": "o\n", "-out": "out\n",
                       "-o": "o\n", "in": "b\na\nb\nhello\n", "a.txt": "a\nb\nc\nhello\n",
                       "b.txt": "a\nc\n", "j.json": '{"a": 1, "b": [1, 2]}\n', "x": "x\n",
                       ".env": "A=1\n"}.items():
        (tree / name).write_text(text)
    (tree / "src" / "a.py").write_text("def f():\n    print('hello')\n")
    (tree / "src" / "b.py").write_text("import os\n")
    (tree / "d" / "-delete").write_text("d\n")
    (tree / "d" / "keep").write_text("k\n")
    _script(tree / "tools" / "ls", MARK)
    _script(tree / "evil", MARK + "cat\n")
    _git(tree, env, "init", "-q", "--template=")
    _git(tree, env, "add", "-A")
    _git(tree, env, "commit", "-qm", "fixture")
    (tree / "a.txt").write_text("a\nb\nc\nhello\nchanged\n")  # something for git diff
    for repo, setup in (("evilrepo", "fsmonitor"), ("hookrepo", "hook")):
        r = tree / repo
        r.mkdir()
        (r / "f.txt").write_text("f\n")
        if setup == "hook":
            # an unchanged tracked file: every copy of the fixture gives it a new inode and
            # ctime, so git status always refreshes its entry and rewrites the index (which
            # runs the hook); with only the modified f.txt, whether git wrote the index
            # depended on timing
            (r / "g.txt").write_text("g\n")
        _git(r, env, "init", "-q", "--template=")
        _git(r, env, "add", "-A")
        _git(r, env, "commit", "-qm", "fixture")
        if setup == "fsmonitor":
            _script(r / "fsmon.sh", MARK)
            _git(r, env, "config", "core.fsmonitor", "./fsmon.sh")
        else:
            (r / ".git" / "hooks").mkdir()
            _script(r / ".git" / "hooks" / "post-index-change", MARK)
        (r / "f.txt").write_text("f\nchanged\n")
    # a repository with a gitlink (no .gitmodules) to a repository with core.fsmonitor:
    # git status in the outer one runs git in the inner one, under its configuration
    outer = tree / "linkrepo"
    outer.mkdir()
    (outer / "o.txt").write_text("o\n")
    _git(outer, env, "init", "-q", "--template=")
    inner = outer / "inner"
    inner.mkdir()
    (inner / "i.txt").write_text("i\n")
    _git(inner, env, "init", "-q", "--template=")
    _git(inner, env, "add", "-A")
    _git(inner, env, "commit", "-qm", "inner")
    _script(inner / "fsmon.sh", MARK)
    _git(inner, env, "config", "core.fsmonitor", "./fsmon.sh")
    _git(outer, env, "add", "o.txt", "inner")
    _git(outer, env, "commit", "-qm", "outer")
    (inner / "i.txt").write_text("i\nchanged\n")
    (tree / ".git" / "info").mkdir(exist_ok=True)
    with open(tree / ".git" / "info" / "exclude", "a") as f:
        f.write("evilrepo/\nhookrepo/\nlinkrepo/\n")


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root``: type and mode, and content hash or link target."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                if rel.endswith("/.git/index") or rel == ".git/index":
                    out[rel] = ("file", st.st_mode, "index")
                else:
                    out[rel] = ("file", st.st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
            else:
                out[rel] = ("other", st.st_mode)
    return out


def _diff(a: dict, b: dict) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fastpath-template")
    build_fixture(root)
    return root


@pytest.fixture
def sandbox_env(monkeypatch, template):
    """is_read_only sees the environment the commands run in (HOME, PATH, no system config)."""
    for key, value in _env(template / "home").items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CDPATH", raising=False)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)


def test_corpus_file_is_current_and_large():
    assert CORPUS.read_text(encoding="utf-8") == render(), \
        "run python tests/gate/data/make_fastpath_corpus.py"
    rows = load_corpus()
    assert len(rows) >= 300
    kinds = {r["kind"] for r in rows}
    assert {"known-bad", "abbreviation", "cluster", "redirection", "glob"} <= kinds


def test_every_known_bad_example_and_generated_variant_is_refused(sandbox_env, template):
    rows = load_corpus()
    assert all(any(r["cmd"] == c and r["must_refuse"] for r in rows) for c in KNOWN_BAD)
    allowed = [r["cmd"] for r in rows if r["must_refuse"]
               and is_read_only(r["cmd"], cwd=str(template / "tree")).read_only]
    assert allowed == []


def test_allowed_commands_change_nothing_in_a_sandbox(sandbox_env, template, tmp_path):
    """The differential test: run every allowed command for real; count state changes."""
    if shutil.which("git") is None:
        pytest.fail("git is needed for the sandbox fixture")
    rows = load_corpus()
    before = snapshot(template)
    allowed, changed = 0, []
    box = tmp_path / "box"
    shutil.copytree(template, box, symlinks=True)
    for row in rows:
        # decided in the template (identical files), run in the throwaway copy; each command
        # starts from the template's state: the copy is remade after any change
        if not is_read_only(row["cmd"], cwd=str(template / "tree")).read_only:
            continue
        allowed += 1
        try:
            subprocess.run(["bash", "-c", row["cmd"]], cwd=box / "tree", env=_env(box / "home"),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        except subprocess.TimeoutExpired:
            changed.append((row["cmd"], ["timed out"]))
        diff = _diff(before, snapshot(box))
        if diff:
            changed.append((row["cmd"], diff))
            shutil.rmtree(box)
            shutil.copytree(template, box, symlinks=True)
    print(f"\nfast-path sandbox: {len(rows)} commands, {allowed} allowed and executed, "
          f"{len(changed)} state changes")
    assert allowed >= 200, allowed  # the test must exercise the fast path, not just refuse
    assert changed == []


def test_refused_escapes_do_change_state_when_run(sandbox_env, template, tmp_path):
    """The fixture is live: run without the fast path, the classic escapes leave traces."""
    escapes = ["echo > 2", "find . -delete", "cd evilrepo && git status",
               "cd hookrepo && git status", "cd linkrepo && git status",
               "/usr/bin/../../proc/self/cwd/tools/ls",
               "sort --out=f in", "uniq -- in -out"]
    before = snapshot(template)
    for i, cmd in enumerate(escapes):
        box = tmp_path / f"esc{i}"
        shutil.copytree(template, box, symlinks=True)
        subprocess.run(["bash", "-c", cmd], cwd=box / "tree", env=_env(box / "home"),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        assert _diff(before, snapshot(box)), cmd
        assert not is_read_only(cmd, cwd=str(box / "tree")).read_only, cmd


def bash_words(words_raw: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    probe = "printf '%s\\0' " + " ".join(words_raw)
    out = subprocess.run(["bash", "-c", probe], cwd=cwd, env=env, capture_output=True,
                         timeout=10, check=True).stdout
    return out.decode("utf-8", "surrogateescape").split("\0")[:-1]


def test_word_split_equals_bash_for_every_allowed_command(sandbox_env, template, tmp_path):
    """Divergence from bash: 0 for the commands the lexer accepted and the fast path allowed."""
    empty = tmp_path / "empty"
    empty.mkdir()
    env = _env(template / "home")
    rows = load_corpus()
    checked, divergent = 0, []
    for row in rows:
        if not is_read_only(row["cmd"], cwd=str(template / "tree")).read_only:
            continue
        for cmd in lex(row["cmd"]):
            ours = [w.text for w in cmd.words]
            theirs = bash_words([w.raw for w in cmd.words], empty, env)
            checked += 1
            if ours != theirs:
                divergent.append((row["cmd"], ours, theirs))
    print(f"\nbash word-split divergences: {len(divergent)} of {checked} simple commands")
    assert checked >= 200
    assert divergent == []


def test_lexer_refusals_are_lex_errors():
    for cmd in ("cat <<'EOF'\nx\nEOF", "echo $(x)", "ls &", "echo {a,b}", "ls |& cat"):
        with pytest.raises(LexError):
            lex(cmd)
