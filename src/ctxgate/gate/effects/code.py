"""Code an argument runs (Python, JavaScript, a notebook cell): what it visibly destroys or sends.

A ``python_repl {"code": …}`` or ``jupyter_execute_cell`` call runs whatever its code says.
The code is not executed or fully parsed here; :func:`code_effect` looks for the calls that
lose data or leave the machine, each a finding with the line it is on:

- deletes: ``shutil.rmtree``, ``os.remove``/``unlink``/``rmdir``, ``Path(…).unlink()``,
  ``fs.rmSync``/``unlinkSync``, Rust's ``fs::remove_dir_all`` … → irreversible (the path is not resolved: deleting is
  judged, not where);
- network writes: ``requests.post``/``put``/``patch``/``delete`` (and ``httpx``, a session),
  ``smtplib``, ``fetch(…, {method: "DELETE"})`` → external;
- shell: a notebook's ``!command`` lines and ``%%bash`` cells, and the literal command of
  ``os.system("…")``, ``subprocess.run("…"/[…])`` and Rust's ``Command::new("…").arg(…)``
  are judged by the shell parser;
- SQL: a string literal holding a statement that loses data (``DELETE FROM …``) is judged by
  :mod:`.sql`.

Code with no finding gives ``None``: the decision model judges it (most code only computes).
"""

from __future__ import annotations

import ast
import re

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource, combine

__all__ = ["code_effect"]

_DELETE = re.compile(
    r"\b(shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs)|send2trash|"
    r"fs(?:\.promises)?\.(?:rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync)|rimraf)\s*\(|"
    r"\.(unlink|rmdir)\s*\(\s*(?:missing_ok\s*=\s*\w+)?\s*\)|"
    r"\.(rmSync|rmdirSync|unlinkSync|rimrafSync)\s*\(|"
    r"\b(?:File::Path::)?(?:rmtree|remove_tree)\s*\(|"
    r"\bFileUtils\.(?:rm_rf|rm_r|rm|remove_dir|remove_entry\w*|rmdir)\s*\(|"
    r"\b(?:File\.delete|Dir\.rmdir|Dir\.delete)\s*\(|(?<![\w.$>])(?:unlink|rmdir)\s*\(|"
    r"\bfs::(?:remove_dir_all|remove_dir|remove_file)\s*\(")
_NETWORK = re.compile(
    r"\b(?:requests|httpx|session|client|s)\.(post|put|patch|delete)\s*\(|\b(smtplib)\b|"
    r"\bmethod\s*[:=]\s*['\"](POST|PUT|PATCH|DELETE)['\"]|"
    r"\b(?:urlopen|Request)\s*\([^\n]*\bdata\s*=|"
    r"\.request\s*\(\s*['\"](POST|PUT|PATCH|DELETE)['\"]", re.I)
_SPAWN = re.compile(r"\b(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|"
                    r"check_output|Popen)|execSync|spawnSync|exec|system)\s*\(\s*(\[[^\]]*\]|"
                    r"[rbuf]?(['\"]).*?\2)", re.S)
_RUST_COMMAND = re.compile(r"\bCommand::new\(\s*\"((?:\\.|[^\"\\])*)\"\s*\)([^;]*)", re.S)
_RUST_ARG = re.compile(r"\.arg\(\s*\"((?:\\.|[^\"\\])*)\"\s*\)|\.args\(\s*&?\s*(?:vec!)?\[([^\]]*)\]")
_RUST_STRING = re.compile(r"\"((?:\\.|[^\"\\])*)\"")
_SHELL_LINE = re.compile(r"^\s*!(.+)$", re.M)
_SHELL_CELL = re.compile(r"^\s*%%(?:bash|sh|script\s+\w+)\s*\n(.*)", re.S)
_STRING = re.compile(r"(['\"])((?:\\.|(?!\1).){6,}?)\1", re.S)


_TEMPFILES = re.compile(r"\btempfile\.(?:mkdtemp|mkstemp|TemporaryDirectory|"
                        r"NamedTemporaryFile|gettempdir)|\bmkdtempSync\b|\bos\.tmpdir\(|"
                        r"\btempfile::|\benv::var\(\s*\"OUT_DIR\"")
"""Code that makes temporary files or directories (Python ``tempfile``, Node ``mkdtempSync``,
Rust's ``tempfile`` crate; a Cargo build script's ``OUT_DIR`` is its own scratch space):
deleting a computed path there is how it cleans up after itself."""
_LITERAL_ARG = re.compile(r"\s*[rbu]?(['\"])([^'\"\n]{1,400})\1\s*[,)]")
_PATH_CALL = re.compile(r"Path\(\s*[rbu]?(['\"])([^'\"\n]{1,400})\1\s*\)\s*$")


def _deleted_literal(code: str, m: re.Match[str]) -> str | None:
    """The literal path a delete call names (``shutil.rmtree('/srv/data')``,
    ``Path('db.sqlite').unlink()``), or ``None`` when it deletes a computed path."""
    if m.group(0).lstrip().startswith("."):  # Path(...).unlink(): the literal is before
        before = _PATH_CALL.search(code[max(0, m.start() - 420):m.start()])
        return before.group(2) if before else None
    after = _LITERAL_ARG.match(code, m.end())
    return after.group(2) if after else None


def _literal_command(text: str) -> str | None:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        import shlex

        return shlex.join(value)
    return None


_SESSION_RUN = re.compile(r"\bsession\.(?:run|run_always|run_install)\(\s*("
                          r"(?:[rbu]?(['\"])(?:\\.|(?!\2).)*\2\s*,?\s*)+)", re.S)


def _session_runs(code: str) -> list[str]:
    """The commands of nox's ``session.run("rm", "-rf", "build")``: its leading literal
    string arguments, joined as a command line."""
    commands = (_literal_command("(" + m.group(1).rstrip().rstrip(",") + ",)")
                for m in _SESSION_RUN.finditer(code))
    return [c for c in commands if c is not None]


def _rust_commands(code: str) -> list[str]:
    """The commands of Rust's ``std::process::Command::new("rm").arg("-rf").args(&["x"])``
    (a build script's spawns), literal words only, up to the statement's end; a word
    computed at run time ends the command there (what is known of it is still judged)."""
    import shlex

    out = []
    for m in _RUST_COMMAND.finditer(code):
        words, chain = [m.group(1)], m.group(2)
        for start in (k.start() for k in re.finditer(r"\.args?\(", chain)):
            arg = _RUST_ARG.match(chain, start)
            if arg is None:
                break  # a computed word: the rest of the command is not known
            if arg.group(1) is not None:
                words.append(arg.group(1))
            else:
                items = [x.strip() for x in arg.group(2).split(",") if x.strip()]
                if not all(_RUST_STRING.fullmatch(x) for x in items):
                    break
                words.extend(x[1:-1] for x in items)
        out.append(shlex.join(words))
    return out


def code_effect(code: str, *, where: str = "the code", cwd: str,
                computed_deletes: bool = True) -> Effect | None:
    """What running ``code`` visibly does (module docstring), or ``None``.

    ``computed_deletes=False``: a delete of a computed path is not a finding (a project's own
    ``conftest.py`` or ``setup.py`` that cleans up after itself); literal paths still are."""
    from ctxgate.gate.effects.shell import path_finding, shell_effect
    from ctxgate.gate.effects.sql import sql_effect

    findings: list[tuple[EffectClass, str]] = []
    temporary = bool(_TEMPFILES.search(code))
    for m in _DELETE.finditer(code):
        call = m.group(0).strip()
        path = _deleted_literal(code, m)
        if path is not None:  # a literal path: the path rules judge it, as for `rm`
            found = path_finding(f"{where} deletes {path!r} (`{call}`)", path, "delete", cwd)
            if found is not None:
                findings.append((found.effect, found.evidence))
            continue
        if temporary or not computed_deletes:
            continue  # a computed path in code that makes temporary files: its own cleanup
        findings.append((EffectClass.LOCAL_IRREVERSIBLE,
                         f"{where} deletes files (`{call}`)"))
    for m in _NETWORK.finditer(code):
        findings.append((EffectClass.EXTERNAL,
                         f"{where} sends a request that changes a remote service "
                         f"(`{m.group(0).strip()}`)"))
    commands = [m.group(1) for m in _SHELL_LINE.finditer(code)]
    cell = _SHELL_CELL.match(code)
    if cell:
        commands.append(cell.group(1))
    for m in _SPAWN.finditer(code):
        literal = _literal_command(m.group(1))
        if literal is not None:
            commands.append(literal)
    commands.extend(_rust_commands(code))
    commands.extend(_session_runs(code))
    for command in commands:
        e = shell_effect(command, cwd=cwd)
        if e is not None and e.effect is not EffectClass.READ_ONLY:
            findings.append((e.effect, f"{where} runs `{command.strip()[:60]}`: {e.evidence}"))
    for m in _STRING.finditer(code):
        text = m.group(2)
        if re.match(r"\s*(delete|update|drop|truncate|alter|merge|replace)\b", text, re.I):
            e = sql_effect(text)
            if e is not None and e.effect.destructive:
                findings.append((e.effect, f"{where} runs SQL: {e.evidence}"))
    return combine(findings, EffectSource.CODE_SCAN)
