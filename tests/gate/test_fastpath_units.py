"""Unit tests of the fast path's parts: lexer, option tables, sed scripts, find, git checks."""

from __future__ import annotations

import os
import subprocess

import pytest

from ctxgate.gate.fastpath import is_read_only
from ctxgate.gate.fastpath.git import git_config_problem
from ctxgate.gate.fastpath.lexer import LexError, lex
from ctxgate.gate.fastpath.options import Refusal, parse_options, spec
from ctxgate.gate.fastpath.sed import sed_script_problem


def words(command: str) -> list[list[str]]:
    return [[w.text for w in c.words] for c in lex(command)]


@pytest.mark.parametrize(("command", "expected"), [
    ("echo 'a b' \"c\\\"d\" e\\ f", [["echo", "a b", 'c"d', "e f"]]),
    ('echo "a\\nb" "a\\$b" "a\\\\b"', [["echo", "a\\nb", "a$b", "a\\b"]]),
    ("ls # x; rm -rf /", [["ls"]]),
    ("echo a#b", [["echo", "a#b"]]),
    ("find . -exec grep -l x {} +", [["find", ".", "-exec", "grep", "-l", "x", "{}", "+"]]),
    ("find . ! -name x", [["find", ".", "!", "-name", "x"]]),
    ("ls |\nwc -l", [["ls"], ["wc", "-l"]]),
    ("git diff HEAD~1", [["git", "diff", "HEAD~1"]]),
])
def test_lexer_words(command, expected):
    assert words(command) == expected


def test_lexer_descriptors_and_targets():
    (c,) = lex("echo a2>/dev/null 2>&1")
    assert [w.text for w in c.words] == ["echo", "a2"]
    assert [(r.fd, r.op, r.target) for r in c.redirects] == [(None, ">", "/dev/null"),
                                                              (2, ">&", "1")]
    for bad in ("echo > 2", "echo 2>f", "echo x >&f", "echo x 3<f", "echo x >| /dev/null",
                "cat <<'EOF'\nx\nEOF", "cat <<< x", "echo x &", "ls |& cat", "echo $x",
                "echo `x`", "(ls)", "echo {a,b}", "echo a!b", "echo ~root", "echo a=~/x",
                "echo 'open", "ls \\\n-la", "echo a\rb"):
        with pytest.raises(LexError):
            lex(bad)


def test_lexer_globs():
    (c,) = lex("ls src/*.py *.py 'x'* \\* [")
    flags = [(w.text, w.glob, w.option_safe) for w in c.words[1:]]
    assert flags == [("src/*.py", True, True), ("*.py", True, False), ("x*", True, True),
                     ("*", False, True), ("[", False, True)]


def test_tilde_is_home(monkeypatch):
    monkeypatch.setenv("HOME", "/home/u")
    assert words("ls ~ ~/x") == [["ls", "/home/u", "/home/u/x"]]


SP = spec("abn", "o", long="all", long_arg="output", long_opt="color", short_opt="w",
          max_operands=1)


def parse(*args: str):
    return parse_options("p", SP, [w for c in lex("p " + " ".join(args)) for w in c.words[1:]])


def test_options_clusters_long_and_optional():
    p = parse("-abo", "x", "--all", "--color", "--output", "y", "-wz", "in")
    assert p.options == (("-a", None), ("-b", None), ("-o", "x"), ("--all", None),
                         ("--color", None), ("--output", "y"), ("-w", "z"))
    assert [w.text for w in p.operands] == ["in"]
    for bad in (["--out=x"], ["--al"], ["-ac"], ["in", "out"], ["-w", "--output=z", "a", "b"],
                ["in*"], ["-o"], ["--", "a", "-b"]):
        with pytest.raises(Refusal):
            parse(*bad)
    assert [w.text for w in parse("--", "-b").operands] == ["-b"]


def test_spec_rejects_a_letter_listed_twice():
    with pytest.raises(ValueError):
        spec("ab", "b")


@pytest.mark.parametrize("script", ["1,5p", "/a/,/b/p", "$p", "1~2p", "s/a/b/g", "1!d",
                                    "/x/{=;p}", "y/ab/cd/", "s|a|b|3p", "\\,a,p", "q5", "l 20",
                                    "s/[a-z]/x/", "0,/a/p", "2,+3p", "/[[:alpha:]]/p",
                                    "s/[]a]/x/"])
def test_sed_print_scripts(script):
    assert sed_script_problem(script) is None


@pytest.mark.parametrize("script", ["w out", "1w out", "s/a/b/w out", "s/a/b/e", "e ls",
                                    "r f", "R f", "W f", "a text", "i\\", "c x", "b end",
                                    ":a", "1{p", "p}", "s/a/b", "v", "s/a/b/gx",
                                    # sed 4.9 reads [/] as one bracket: this writes d/p
                                    "s/[/]/g;/w d/p", "s/[/]/x/", "/[\\/]/p"])
def test_sed_scripts_that_write_or_are_not_modelled(script):
    assert sed_script_problem(script) is not None


def test_find_exec_plus_with_an_operand_limit(tmp_path):
    assert is_read_only("find . -exec uniq {} \\;", cwd=str(tmp_path)).read_only
    assert not is_read_only("find . -exec uniq {} +", cwd=str(tmp_path)).read_only
    assert not is_read_only("find . -exec grep x {} \\; -delete", cwd=str(tmp_path)).read_only


def _repo(path, env):
    subprocess.run(["git", "init", "-q", "--template=", str(path)], check=True, env=env)


def test_git_config_problems(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    import os

    env = dict(os.environ)
    clean, fsm, hooked = tmp_path / "clean", tmp_path / "fsm", tmp_path / "hooked"
    for r in (clean, fsm, hooked):
        _repo(r, env)
    subprocess.run(["git", "-C", str(fsm), "config", "core.fsmonitor", "x"], check=True)
    (hooked / ".git" / "hooks").mkdir()
    hook = hooked / ".git" / "hooks" / "post-index-change"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    assert git_config_problem(str(clean)) is None
    assert "core.fsmonitor" in git_config_problem(str(fsm))
    assert "hook" in git_config_problem(str(hooked))
    assert git_config_problem(str(tmp_path / "missing")) is not None
    (tmp_path / ".gitconfig").write_text("[diff \"x\"]\n\ttextconv = cat\n")
    assert "textconv" in git_config_problem(str(clean))
    assert not is_read_only("git log -p", cwd=str(clean)).read_only
    assert not is_read_only(f"cd {fsm} && git status", cwd=str(clean)).read_only


def test_environment_that_changes_what_names_mean(tmp_path, monkeypatch):
    assert is_read_only("ls", cwd=str(tmp_path)).read_only
    monkeypatch.setenv("BASH_FUNC_ls%%", "() { rm -rf x; }")
    assert not is_read_only("ls", cwd=str(tmp_path)).read_only
    monkeypatch.delenv("BASH_FUNC_ls%%")
    monkeypatch.setenv("PATH", "tools:/usr/bin")
    assert not is_read_only("ls", cwd=str(tmp_path)).read_only
    assert is_read_only("/usr/bin/ls", cwd=str(tmp_path)).read_only
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("CDPATH", "/tmp")
    assert not is_read_only("cd src && ls", cwd=str(tmp_path)).read_only
    assert is_read_only("cd ./src && ls", cwd=str(tmp_path)).read_only


def test_many_cds_are_refused_quickly(tmp_path):
    import time

    started = time.perf_counter()
    assert not is_read_only("cd a; " * 40 + "ls", cwd=str(tmp_path)).read_only
    assert time.perf_counter() - started < 1.0
    assert is_read_only("cd /tmp && cd src && ls", cwd=str(tmp_path)).read_only


def test_never_raises():
    for odd in ("", " ", "\x00", None, 5, "a" * 100_000, "'" * 7, "\\"):
        assert not is_read_only(odd).read_only  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [
    "rm --help", "rm --version", "/bin/rm --help", "shred --help", "kubectl --help",
    "sudo --version", "man rm", "man 1 rm", "man 8 shutdown", "git help reset",
    "git help", "git help -a", "git reset --help", "git push --help", "git --help",
    "ls && rm --help", "find . -name x -exec rm --help ';'",
])
def test_naming_a_program_is_proved(command, tmp_path, monkeypatch):
    for var in ("MANPAGER", "PAGER", "MANOPT"):
        monkeypatch.delenv(var, raising=False)
    assert is_read_only(command, cwd=str(tmp_path)).read_only, command


@pytest.mark.parametrize("command", [
    "rm -h",  # -h is an action for some programs (shutdown -h halts)
    "shutdown -h now",
    "rm -rf x --help",  # operands first: POSIXLY_CORRECT stops option parsing there
    "rm x --help", "rm --help x", "rm --he", "rm --help=x", "rm '--help' --version",
    "./wipe.sh --help", "wipe --help",  # a script or unknown program need not honour it
    "docker --help",  # loads and runs CLI plugins first
    "terraform --version",  # checks for updates and writes its cache
    "xargs rm --help", "man -P ./evil rm", "man --pager=./evil rm", "man ./evil",
    "man rm ls", "man 'r*'", "git help -w reset", "git help --web reset", "git reset -h",
    "git reset --hard --help", "git help -i reset",
])
def test_only_exact_naming_forms_are_proved(command, tmp_path):
    assert not is_read_only(command, cwd=str(tmp_path)).read_only, command


def test_naming_refuses_a_pager_or_viewer_that_man_or_git_would_run(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("MANPAGER", "PAGER", "MANOPT"):
        monkeypatch.delenv(var, raising=False)
    assert is_read_only("man rm", cwd=str(tmp_path)).read_only
    monkeypatch.setenv("MANPAGER", "sh -c 'rm -rf ~'")
    for command in ("man rm", "git help reset", "git reset --help", "git --help"):
        why = is_read_only(command, cwd=str(tmp_path))
        assert not why.read_only and "MANPAGER" in why.reason, command
    assert is_read_only("rm --help", cwd=str(tmp_path)).read_only  # no man involved
    monkeypatch.delenv("MANPAGER")
    for key in ("man.viewer", "help.format", "web.browser", "man.x.cmd", "help.browser"):
        (tmp_path / ".gitconfig").unlink(missing_ok=True)
        subprocess.run(["git", "config", "--global", key, "x"], check=True,
                       env={**os.environ, "HOME": str(tmp_path)})
        why = is_read_only("git help reset", cwd=str(tmp_path))
        assert not why.read_only and key in why.reason, (key, why.reason)
