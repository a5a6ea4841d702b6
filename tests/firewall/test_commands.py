"""Dataset-command detection and line selections: shell-aware, per segment, never in quotes."""

from __future__ import annotations

import pytest

from ctxgate.firewall import FirewallPolicy, classify_command, is_dataset_command

DEFAULT = FirewallPolicy().dataset_commands

DATASET = [
    # the seed's own table
    "sqlite3 -header backup.db \"select 1\"",
    "/usr/bin/psql -c 'select 1'",
    "cat x.json | jq '.[]'",
    "gh issue list --json number,title",
    # its documented gaps, now found
    "FOO=1 sqlite3 db 'select 1'",
    "echo $(sqlite3 db 'select count(*) from t')",
    "sudo -u postgres psql -c 'select 1'",
    "env jq . x.json",
    "time duckdb x.db -c 'select 1'",
    "ls *.json | xargs jq .name",
    '"sqlite3" db "select 1"',
    "(cd data; sqlite3 x.db 'select 1')",
    "timeout 10 psql -d test -c 'select 1'",
    "nice -n 5 stdbuf -oL jq -c . big.json",
    "command psql -l",
    "a && b || jq .",
    "x\nsqlite3 db .tables",
    "gh api repos/o/r/issues --jq '.[].title'",
    "gh pr view 1 --json=body,files",
    "gh api repos/o/r -q .name",
    "bash -c 'sqlite3 db .tables'",
]
NOT_DATASET = [
    "gh issue view 1260",
    "grep -rn sqlite3 src/",
    "cargo test",
    "echo 'a; psql x'",
    "echo \"select * | jq\"",
    "cat <<EOF\npsql -c x\nEOF",
    "git log --grep jq",
    "pip install duckdb",
    "gh api repos/o/r",
    "",
]


@pytest.mark.parametrize("cmd", DATASET)
def test_dataset_commands(cmd: str) -> None:
    assert is_dataset_command(cmd, DEFAULT) is not None
    assert classify_command(cmd, DEFAULT).kind == "dataset"


@pytest.mark.parametrize("cmd", NOT_DATASET)
def test_not_dataset_commands(cmd: str) -> None:
    assert is_dataset_command(cmd, DEFAULT) is None


def test_empty_list_disables() -> None:
    assert is_dataset_command("sqlite3 db 'select 1'", ()) is None
    assert classify_command("sqlite3 db 'select 1'", (), line_selectors=False).kind == ""


def test_configurable_list() -> None:
    assert is_dataset_command("mlr --icsv cat x.csv", ("mlr",)) == "mlr"
    assert is_dataset_command("psql -c x", ("mlr",)) is None


def test_case_sensitive_program_names() -> None:
    assert is_dataset_command("PSQL -c x", DEFAULT) is None


@pytest.mark.parametrize(("cmd", "kind"), [
    ("sed -n '236,270p;780,800p' src/main.rs", "line_selection"),
    ("sed -n 10p f", "line_selection"),
    ("cargo test 2>&1 | tail -n 200", "line_selection"),
    ("git log | head -50", "line_selection"),
    ("awk 'NR>=10 && NR<=20' f", "line_selection"),
    ("cat src/main.rs", "file_read"),
    ("cat a b", ""),
    ("cat x | grep y", ""),
    ("cat -A x", ""),
    ("sed 's/a/b/' f", ""),
    ("tail -f log", ""),
    ("head -n 5 f | wc -l", ""),
    ("cargo build", ""),
])
def test_line_selections(cmd: str, kind: str) -> None:
    assert classify_command(cmd, DEFAULT).kind == kind
    assert classify_command(cmd, DEFAULT, line_selectors=False).kind == ""


def test_describe_names_the_program() -> None:
    assert "psql" in classify_command("sudo psql -c x", DEFAULT).describe()
    assert "cat FILE" in classify_command("cat f", DEFAULT).describe()


@pytest.mark.parametrize(("cmd", "expected"), [
    ("grep -rn sqlite3 src/", True),
    ("rg -n 'fn main' .", True),
    ("git grep -n TODO", True),
    ("cd src && grep -rn x .", True),
    ("grep -rn x . | wc -l", False),
    ("git log --grep x", False),
    ("cargo test", False),
])
def test_search_commands(cmd: str, expected: bool) -> None:
    from ctxgate.firewall.commands import is_search_command

    assert is_search_command(cmd) is expected
