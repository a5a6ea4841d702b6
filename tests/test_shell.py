"""Table tests of ctxgate.shell: segments, wrappers, quotes, substitutions, heredocs.

Every case runs through both parsers (bashlex and the fallback scanner), so the scanner is
held to the same answers bashlex gives where bashlex can parse at all.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.shell import Redirection, Segment, _is_simple, _parse, iter_programs, parse_command

BOTH = pytest.mark.parametrize("use_bashlex", [True, False], ids=["bashlex", "fallback"])

# (command, expected programs as a set of basenames)
PROGRAM_TABLE: list[tuple[str, set[str]]] = [
    ("psql -c 'select 1'", {"psql"}),
    ("/usr/bin/psql -c 'select 1'", {"psql"}),
    ("./bin/sqlite3 db.sqlite 'select 1'", {"sqlite3"}),
    ('"sqlite3" db "select 1"', {"sqlite3"}),
    ("cat x.json | jq '.[]'", {"cat", "jq"}),
    ("a || jq .", {"a", "jq"}),
    ("a && jq .", {"a", "jq"}),
    ("a; jq .", {"a", "jq"}),
    ("a & jq .", {"a", "jq"}),
    ("a\njq .", {"a", "jq"}),
    ("a |& jq .", {"a", "jq"}),
    ("(cd d; sqlite3 x.db 'select 1')", {"cd", "sqlite3"}),
    ("{ cd d; duckdb; } > out.txt", {"cd", "duckdb"}),
    ("echo $(sqlite3 db 'select 1')", {"echo", "sqlite3"}),
    ('echo "$(psql -c x)"', {"echo", "psql"}),
    ("echo `jq . f`", {"echo", "jq"}),
    ("x=$(jq -r .a f) make", {"jq", "make"}),
    ("diff <(jq -S . a) <(jq -S . b)", {"diff", "jq"}),
    ("FOO=1 psql", {"psql"}),
    ("FOO=1 BAR='x y' psql", {"psql"}),
    ("sudo psql", {"psql"}),
    ("sudo -u postgres psql -d test", {"psql"}),
    ("sudo -upostgres psql", {"psql"}),
    ("sudo --user=postgres -E psql", {"psql"}),
    ("sudo -E PGUSER=x psql", {"psql"}),
    ("env jq .", {"jq"}),
    ("env -i PATH=/bin jq .", {"jq"}),
    ("env -u HOME jq .", {"jq"}),
    ("env -S 'jq -r' f", {"jq"}),
    ("time duckdb x.db", {"duckdb"}),
    ("time -p duckdb x.db", {"duckdb"}),
    ("nice duckdb", {"duckdb"}),
    ("nice -n 10 duckdb", {"duckdb"}),
    ("nice -10 duckdb", {"duckdb"}),
    ("timeout 10 psql", {"psql"}),
    ("timeout -s KILL -k 5 10s psql", {"psql"}),
    ("timeout --signal=TERM 10 psql", {"psql"}),
    ("find . -name '*.json' | xargs jq .", {"find", "jq"}),
    ("ls | xargs -n 1 -P 4 jq .", {"ls", "jq"}),
    ("ls | xargs -I{} jq . {}", {"ls", "jq"}),
    ("command psql", {"psql"}),
    ("command -p psql", {"psql"}),
    ("exec psql", {"psql"}),
    ("exec -a name psql", {"psql"}),
    ("stdbuf -oL jq .", {"jq"}),
    ("stdbuf -o L -e 0 jq .", {"jq"}),
    ("nohup sqlite3 db", {"sqlite3"}),
    ("sudo timeout 5 nice -n 2 env A=1 /usr/local/bin/psql", {"psql"}),
    ("bash -c 'cd x && duckdb'", {"bash", "cd", "duckdb"}),
    ("sh -ec \"jq . f\"", {"sh", "jq"}),
    ("eval 'sqlite3 db'", {"eval", "sqlite3"}),
    ("echo 'a; psql x'", {"echo"}),
    ('echo "a | sqlite3 x"', {"echo"}),
    ("echo a\\;psql", {"echo"}),
    ("grep -rn sqlite3 src/", {"grep"}),
    ("grep -e '$(psql)' f", {"grep"}),
    ("echo hi # ; psql", {"echo"}),
    ("cat <<EOF | wc -l\npsql; sqlite3 x\nEOF\necho done", {"cat", "wc", "echo"}),
    ("cat <<'EOF'\n$(psql)\nEOF", {"cat"}),
    ("cat <<-EOF\n\tjq .\n\tEOF\nls", {"cat", "ls"}),
    ("jq . <<< '{\"a\": 1}'", {"jq"}),
    ("for f in *.json; do jq . \"$f\"; done", {"jq"}),
    ("if test -f x; then sqlite3 x; fi", {"test", "sqlite3"}),
    ("while read l; do echo $l; done < f", {"read", "echo"}),
    ("! jq -e . f", {"jq"}),
    ("cargo test", {"cargo"}),
    ("gh issue view 1260", {"gh"}),
    ("A=1", set()),
    ("", set()),
    ("   ", set()),
]


@BOTH
@pytest.mark.parametrize(("cmd", "expected"), PROGRAM_TABLE, ids=[c for c, _ in PROGRAM_TABLE])
def test_programs_table(cmd: str, expected: set[str], use_bashlex: bool) -> None:
    parsed = parse_command(cmd, use_bashlex=use_bashlex)
    assert set(parsed.programs) == expected


# Constructs bashlex rejects: the scanner must still find the programs.
FALLBACK_ONLY: list[tuple[str, set[str]]] = [
    ("time psql -c $x", {"psql"}),
    ("[[ -f x ]] && jq . x", {"[[", "jq"}),
    ("case $x in a) jq . ;; b) sqlite3 db ;; esac", {"jq", "sqlite3"}),
    ("echo $((1 + 2)); duckdb", {"echo", "duckdb"}),
    ("echo 'unterminated; psql", {"echo"}),
]


@pytest.mark.parametrize(("cmd", "expected"), FALLBACK_ONLY, ids=[c for c, _ in FALLBACK_ONLY])
def test_fallback_when_bashlex_fails(cmd: str, expected: set[str]) -> None:
    parsed = parse_command(cmd)
    assert parsed.parsed_ok is False
    assert parsed.parser == "fallback"
    assert parsed.error and "bashlex" in parsed.error
    assert set(parsed.programs) == expected


@pytest.mark.parametrize("delimiter", ["'EOF'", '"EOF"', "\\EOF", "EOF"])
def test_a_quoted_here_doc_delimiter_is_parsed_by_bashlex(delimiter: str) -> None:
    """bashlex looked for the quotes on the closing line and failed on every ``<< 'EOF'``
    (the form agents write most), so those commands fell back to the scanner and could
    never be called parsed whole. The body stays literal for a quoted delimiter."""
    parsed = parse_command(f"cat > out <<{delimiter}\npsql $(rm -rf x)\nEOF\njq .")
    assert parsed.parsed_ok is True and parsed.parser == "bashlex", parsed.error
    assert set(parsed.programs) == {"cat", "jq"}
    assert parsed.heredocs == ("psql $(rm -rf x)\n",)
    assert parsed.literal_heredocs == (delimiter != "EOF",)


def test_parsed_ok_for_plain_bash() -> None:
    parsed = parse_command("cat x.json | jq '.[]' > out.txt")
    assert parsed.parsed_ok is True and parsed.parser == "simple" and parsed.error is None
    parsed = parse_command("echo $(jq . x.json)")
    assert parsed.parsed_ok is True and parsed.parser == "bashlex" and parsed.error is None


@pytest.mark.parametrize("cmd", [c for c, _ in PROGRAM_TABLE if _is_simple(c)])
def test_simple_path_agrees_with_bashlex(cmd: str) -> None:
    simple = parse_command(cmd)
    full = _parse(cmd, depth=0, use_bashlex=True)
    assert simple.parser == "simple"
    assert (simple.segments, simple.redirections) == (full.segments, full.redirections)


def test_simple_commands_do_not_import_bashlex() -> None:
    import subprocess
    import sys

    code = ("import sys; from ctxgate.shell import parse_command; "
            "p = parse_command(\"FOO=1 sudo -u pg psql -c 'select 1' | jq . > out.json\"); "
            "assert p.programs == ('psql', 'jq'), p; assert 'bashlex' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unterminated_quote_reports_error() -> None:
    parsed = parse_command("echo 'oops", use_bashlex=False)
    assert parsed.error and "unterminated single quote" in parsed.error


@BOTH
def test_segment_fields(use_bashlex: bool) -> None:
    parsed = parse_command("FOO=1 sudo -u pg timeout 5 /usr/bin/psql -d test -c 'select 1'",
                           use_bashlex=use_bashlex)
    (seg,) = parsed.segments
    assert seg == Segment(
        program="psql",
        argv=("/usr/bin/psql", "-d", "test", "-c", "select 1"),
        wrappers=("sudo", "timeout"),
        env=("FOO=1",),
        raw="FOO=1 sudo -u pg timeout 5 /usr/bin/psql -d test -c 'select 1'",
        context="top",
    )
    assert seg.args == ("-d", "test", "-c", "select 1")


@BOTH
def test_contexts(use_bashlex: bool) -> None:
    parsed = parse_command("(a); echo $(b) <(c); sh -c 'd'", use_bashlex=use_bashlex)
    ctx = {s.program: s.context for s in parsed.segments}
    assert ctx == {"a": "subshell", "b": "substitution", "c": "process_substitution",
                   "echo": "top", "sh": "top", "d": "shell_c"}


@BOTH
def test_substitutions_recorded(use_bashlex: bool) -> None:
    parsed = parse_command("echo $(jq . a) `wc -l b` <(sort c)", use_bashlex=use_bashlex)
    assert parsed.substitutions == ("$(jq . a)", "`wc -l b`", "<(sort c)")


@BOTH
def test_single_quotes_are_not_substitutions(use_bashlex: bool) -> None:
    parsed = parse_command("echo '$(psql)' '`jq`'", use_bashlex=use_bashlex)
    assert parsed.substitutions == ()
    assert parsed.programs == ("echo",)


@BOTH
def test_redirections(use_bashlex: bool) -> None:
    parsed = parse_command("make 2>&1 > build.log 2>/dev/null | tee -a x >> y",
                           use_bashlex=use_bashlex)
    assert parsed.redirections == (
        Redirection(operator=">&", target="1", fd=2),
        Redirection(operator=">", target="build.log", fd=None),
        Redirection(operator=">", target="/dev/null", fd=2),
        Redirection(operator=">>", target="y", fd=None),
    )
    assert [r.writes_file for r in parsed.redirections] == [False, True, False, True]
    assert [r.discards for r in parsed.redirections] == [False, False, True, False]
    assert parsed.writes_files


@BOTH
def test_no_file_writes(use_bashlex: bool) -> None:
    parsed = parse_command("ls -la 2>/dev/null | grep x < input.txt", use_bashlex=use_bashlex)
    assert not parsed.writes_files


@BOTH
def test_amp_redirect(use_bashlex: bool) -> None:
    parsed = parse_command("cargo build &> out.log", use_bashlex=use_bashlex)
    assert parsed.redirections == (Redirection(operator="&>", target="out.log"),)
    assert parsed.programs == ("cargo",)


@BOTH
def test_heredoc_body_is_data(use_bashlex: bool) -> None:
    parsed = parse_command("cat <<EOF | psql\nselect 1; DROP TABLE x\nEOF\necho done",
                           use_bashlex=use_bashlex)
    assert parsed.heredocs == ("select 1; DROP TABLE x\n",)
    assert parsed.programs == ("cat", "psql", "echo")


def test_quoted_heredoc_delimiter_fallback() -> None:
    parsed = parse_command("cat <<'EOF' > x\nrm -rf /\nEOF\nls")
    assert parsed.heredocs == ("rm -rf /\n",)
    assert parsed.programs == ("cat", "ls")
    assert parsed.writes_files


@BOTH
def test_has_option(use_bashlex: bool) -> None:
    (seg,) = parse_command("gh issue list --json=number,title", use_bashlex=use_bashlex).segments
    assert seg.has_option("--json")
    assert not seg.has_option("--jq")
    (seg,) = parse_command("gh api x --jq .a", use_bashlex=use_bashlex).segments
    assert seg.has_option("--json", "--jq")


@BOTH
def test_wrapper_alone_is_the_program(use_bashlex: bool) -> None:
    assert parse_command("time", use_bashlex=use_bashlex).programs == ("time",)
    assert parse_command("env", use_bashlex=use_bashlex).programs == ("env",)
    assert parse_command("sudo -l", use_bashlex=use_bashlex).programs == ("sudo",)


def test_iter_programs() -> None:
    assert list(iter_programs("FOO=1 a | sudo b && echo $(c)")) == ["a", "b", "c", "echo"]


@BOTH
def test_dynamic_program_name_is_kept_verbatim(use_bashlex: bool) -> None:
    # the program run is whatever `c` prints: reported as written, never guessed
    assert parse_command("$(c) x", use_bashlex=use_bashlex).programs == ("c", "$(c)")


def test_line_continuation() -> None:
    parsed = parse_command("psql \\\n  -c 'select 1' \\\n  test", use_bashlex=False)
    assert parsed.segments[0].argv == ("psql", "-c", "select 1", "test")


def test_deep_nesting_is_bounded() -> None:
    cmd = "x"
    for _ in range(20):
        cmd = f"echo $({cmd})"
    parsed = parse_command(cmd, use_bashlex=False)
    assert "nesting deeper" in (parsed.error or "")
    assert "echo" in parsed.programs


_ALPHABET = st.sampled_from(list("ab |;&()$`'\"\\<>\n#=-{}") + ["psql", "jq", " EOF", "<<"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_never_raises(cmd: str) -> None:
    for flag in (True, False):
        parsed = parse_command(cmd, use_bashlex=flag)
        assert parsed.source == cmd
        assert all(isinstance(s.program, str) for s in parsed.segments)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="'\x00"), max_size=60))
def test_single_quoted_text_is_never_a_program(text: str) -> None:
    cmd = f"echo '{text}'"
    for flag in (True, False):
        assert parse_command(cmd, use_bashlex=flag).programs == ("echo",)


def test_ansi_c_quoting_is_decoded_as_bash_decodes_it() -> None:
    from ctxgate.shell import parse_command
    from ctxgate.shell.scanner import ansi_c

    assert ansi_c(r"\x72\x6d \162\155 \u00e9 \t\n \cA \q") == "rm rm \u00e9 \t\n \x01 \\q"
    for command in (r"$'\x72\x6d' -rf x", r"r$'\x6d' -rf x"):
        (seg,) = parse_command(command).segments
        assert seg.program == "rm" and seg.args == ("-rf", "x"), seg
    (seg,) = parse_command("cat <<< $'a\\nb'").segments
    assert seg.redirections[0].target == "a\nb"
    # the fallback scanner decodes too
    (seg,) = parse_command(r"$'\x72\x6d' -rf x", use_bashlex=False).segments
    assert seg.program == "rm"
