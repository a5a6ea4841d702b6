"""Claude Code's ``Bash(…)`` rules as the hook reads and matches them (permission_rules)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxgate.integrations.hooks.permission_rules import (
    BashRules,
    load_bash_rules,
    load_codex_rules,
    match_command,
    rule_matches,
)


@pytest.mark.parametrize(("pattern", "command", "expected"), [
    ("*", "anything at all", True),
    ("npm run test:*", "npm run test", True),
    ("npm run test:*", "npm run test:unit --watch", True),
    ("npm run test:*", "npm run build", False),
    ("./build.sh", "./build.sh", True),
    ("./build.sh", "./build.sh --fast", False),
    ("ls *", "ls -la", True),
    ("ls *", "ls", True),
    ("ls *", "lsof -i", False),
    ("ls*", "lsof -i", True),
    ("git * main", "git push origin main", True),
    ("git * main", "git push origin dev", False),
    ("rm -rf (x)", "rm -rf (x)", True),  # regex metacharacters are literal
])
def test_rule_patterns(pattern: str, command: str, expected: bool) -> None:
    assert rule_matches(pattern, command) is expected


def command_parts(command: str) -> list[str]:
    """The top-level simple commands the rules are matched against (the shared scanner's)."""
    from ctxgate.shell import parse_command

    return [s.raw.strip() for s in parse_command(command, use_bashlex=False).segments
            if s.context == "top"]


def test_command_parts_split_at_operators_not_inside_quotes_or_redirections() -> None:
    assert command_parts("cd sub && make 2>&1 | tee log; echo 'a && b' || true &>/dev/null") == [
        "cd sub", "make 2>&1", "tee log", "echo 'a && b'", "true &>/dev/null"]
    assert command_parts('echo "x; y" $(a; b)\nls') == ['echo "x; y" $(a; b)', "ls"]


def test_deny_and_ask_match_any_part_and_see_through_wrappers() -> None:
    rules = BashRules(deny=("rm:*",), ask=("git push:*",))
    assert match_command("cd x && rm -rf build", rules) == "deny"
    assert match_command("FOO=1 timeout 5 rm x", rules) == "deny"
    assert match_command("nice -n 5 git push origin main", rules) == "ask"
    assert match_command("ls | grep -v rmdir", rules) is None
    # a program a deny rule names, anywhere the scanner may not follow: left as written
    assert match_command("ls | grep rm", rules) == "deny"
    assert match_command("cat <<EOF\n$(rm -rf x)\nEOF", rules) == "deny"
    assert match_command("echo $(( $(rm x) + 1 ))", rules) == "deny"
    assert match_command("echo " + "$(" * 9 + "rm -rf x" + ")" * 9, rules) == "unknown"
    assert match_command("echo " + "$(" * 9 + "ls" + ")" * 9, rules) == "unknown"


def test_allow_speaks_only_for_plain_parts_as_written() -> None:
    """Review finding: an allow rule matched against a part stripped of its wrappers,
    assignments and redirections approved commands Claude Code would have asked about."""
    rules = BashRules(allow=("npm test", "ls:*"))
    assert match_command("npm test", rules) == "allow"
    for command in ("sudo npm test", "npm test > ~/.bashrc", "PATH=/tmp/evil:$PATH npm test",
                    "env -i npm test", "lsof -i"):
        assert match_command(command, rules) is None, command
    assert match_command("ls -la", rules) == "allow"


def test_allow_needs_every_part() -> None:
    rules = BashRules(allow=("make:*", "cd *"))
    assert match_command("cd sub && make all", rules) == "allow"
    assert match_command("cd sub && make all && curl x", rules) is None
    assert match_command("make && rm -rf /", BashRules(allow=("make:*",), deny=("rm:*",))) == "deny"


def _settings(path: Path, perms: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": perms}), encoding="utf-8")


def test_rules_are_read_from_user_and_project_settings(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    _settings(home / ".claude" / "settings.json", {"allow": ["Bash(make:*)", "Read"]})
    _settings(proj / ".claude" / "settings.json", {"deny": ["Bash(rm:*)"]})
    _settings(proj / ".claude" / "settings.local.json", {"ask": ["Bash"]})
    env = {"HOME": str(home)}
    rules = load_bash_rules(str(proj), env)
    assert rules.allow == ("make:*",)
    assert rules.deny == ("rm:*",)
    assert rules.ask == ("*",)
    assert rules.unreadable == ()
    # CLAUDE_PROJECT_DIR wins over the payload's cwd, CLAUDE_CONFIG_DIR over ~/.claude
    elsewhere = load_bash_rules(str(tmp_path), {"HOME": str(tmp_path / "none"),
                                                "CLAUDE_PROJECT_DIR": str(proj),
                                                "CLAUDE_CONFIG_DIR": str(home / ".claude")})
    assert elsewhere == rules


def test_a_settings_file_that_cannot_be_parsed_makes_the_answer_unknown(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text("{not json", encoding="utf-8")
    rules = load_bash_rules(str(proj), {"HOME": str(tmp_path)})
    assert rules.unreadable == (str(proj / ".claude" / "settings.json"),)
    assert match_command("ls", rules) == "unknown"
    _settings(proj / ".claude" / "settings.json", {"deny": "Bash(rm:*)"})  # not a list
    assert match_command("ls", load_bash_rules(str(proj), {"HOME": str(tmp_path)})) == "unknown"


def _codex_rules(directory: Path, text: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "default.rules").write_text(text, encoding="utf-8")


def test_codex_prefix_rules_from_codex_home_and_project_parents(tmp_path: Path) -> None:
    home, proj = tmp_path / "codex-home", tmp_path / "repo"
    _codex_rules(home / "rules", 'prefix_rule(pattern=["git", ["push", "fetch"]], '
                 'decision="prompt", match=[["git", "push"]])\n'
                 'host_executable(name="git", paths=["/usr/bin/git"])\n')
    _codex_rules(proj / ".codex" / "rules",
                 'prefix_rule(\n    pattern = ["./build.sh"],\n    decision = "forbidden",\n'
                 '    justification = "no builds here",\n)\nprefix_rule(pattern=["ls"])\n')
    (proj / "sub").mkdir()
    rules = load_codex_rules(str(proj / "sub"), {"CODEX_HOME": str(home)})
    assert rules.unreadable == ()
    assert match_command("cd sub && ./build.sh --fast", rules) == "deny"
    assert match_command("git fetch origin", rules) == "ask"
    assert match_command("git status", rules) is None
    assert match_command("ls -la", rules) == "allow"
    assert match_command("'./build.sh'", rules) == "deny"  # the shell's words, not the text


@pytest.mark.parametrize("text", [
    "import os\n",
    "prefix_rule(pattern=[name], decision='forbidden')\n",
    "prefix_rule(pattern=['rm'], decision='maybe')\n",
    "prefix_rule(pattern=[], decision='forbidden')\n",
    "prefix_rule(pattern=['rm'\n",
    "x = 1\n",
])
def test_a_codex_rules_file_ctxgate_cannot_read_whole_makes_the_answer_unknown(
        tmp_path: Path, text: str) -> None:
    _codex_rules(tmp_path / "rules", text)
    rules = load_codex_rules(None, {"CODEX_HOME": str(tmp_path)})
    assert match_command("ls", rules) == "unknown"


def test_a_codex_rules_directory_that_cannot_be_listed_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "rules").write_text("not a directory", encoding="utf-8")
    assert load_codex_rules(None, {"CODEX_HOME": str(tmp_path)}).unreadable == ()
    (tmp_path / "rules").unlink()
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules").chmod(0)
    try:
        import os
        if os.geteuid() == 0:  # root lists any directory: make listing fail another way
            (tmp_path / "rules").chmod(0o755)
            (tmp_path / "rules").rmdir()
            (tmp_path / "rules").symlink_to(tmp_path / "rules")  # a loop: ELOOP
        rules = load_codex_rules(None, {"CODEX_HOME": str(tmp_path)})
        assert match_command("ls", rules) == "unknown"
    finally:
        if (tmp_path / "rules").is_dir() and not (tmp_path / "rules").is_symlink():
            (tmp_path / "rules").chmod(0o755)
