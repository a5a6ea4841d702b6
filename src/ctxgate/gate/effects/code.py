"""Code that runs (Python, JavaScript, Ruby, Perl, PHP, Go, a notebook cell): what it visibly
destroys, sends or hides.

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
  :mod:`.sql`;
- writes, moves and copies to a literal path (``open("f", "w")``, ``fs.writeFileSync("f")``,
  ``File.write``, ``file_put_contents``, Perl's ``open(FH, ">f")``, ``os.rename``,
  ``shutil.move``) → the path rules, as for a redirection or ``mv`` (a computed path is not a
  finding: scripts write their results where they compute them);
- ``os.exec*``/``os.spawn*`` argument lists; in Perl, Ruby and PHP also backticks, ``qx``
  and ``system "…"`` without parentheses; Perl's ``unlink glob "*"``; a delete function
  handed on as a value (``map(os.unlink, …)``);
- a raw socket to a literal host that is not this machine → external;
- code that decodes a literal and runs it (``exec(base64.b64decode(…))``, PHP's
  ``eval(base64_decode(…))``) → untrusted code, and what the literal decodes to is scanned;
- spawns with literal words in any of these languages (Ruby/Perl ``system("rm", "-rf", x)``,
  ``%x{}``, ``IO.popen``, PHP ``shell_exec``, Perl pipe opens, Node ``spawn``/``execFileSync``
  and destructured ``child_process`` names, Python ``asyncio`` subprocesses); Node ``fs``
  deletes by any name once ``fs`` is imported; Go's ``os.RemoveAll``/``WriteFile`` and
  ``exec.Command``; data-store clients' ``flushall()``/``drop_database()`` → irreversible;
- Python read as Python (:mod:`.pycalls`): calls resolved through imports, aliases,
  ``__import__`` and ``getattr``, with the strings the code spells out.

Every pattern runs only when a word its matches need is in the code (a long script scanned
by each pattern cost as much as the rest of the gate). Code with no finding gives ``None``:
the decision model judges it (most code only computes).
"""

from __future__ import annotations

import ast
import re
import shlex

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource, combine
from ctxgate.gate.effects.paths import Action

__all__ = ["code_effect"]

_DELETE = re.compile(
    r"\b(shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs)|send2trash|"
    r"fs(?:\.promises)?\.(?:rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync)|rimraf)\s*\(|"
    r"\.(unlink|rmdir)\s*\(\s*(?:missing_ok\s*=\s*\w+)?\s*\)|"
    r"\.(rmSync|rmdirSync|unlinkSync|rimrafSync)\s*\(|"
    r"\b(?:File::Path::)?(?:rmtree|remove_tree)\s*\(|"
    r"\bFileUtils\.(?:rm_rf|rm_r|rm|remove_dir|remove_entry\w*|rmdir)\s*\(|"
    r"\b(?:File\.delete|File\.unlink|Dir\.rmdir|Dir\.delete)\s*\(|"
    r"\barray_map\(\s*['\"](?:unlink|rmdir)['\"]|(?<![\w.$>])(?:unlink|rmdir)\s*\(|"
    r"\bfs::(?:remove_dir_all|remove_dir|remove_file)\s*\(")
_NETWORK = re.compile(
    r"\b(?:requests|httpx|session|client|s)\.(post|put|patch|delete)\s*\(|\b(smtplib)\b|"
    r"\bmethod\s*[:=]\s*['\"](POST|PUT|PATCH|DELETE)['\"]|"
    r"\b(?:urlopen|Request)\s*\([^\n]*\bdata\s*=|"
    r"\.request\s*\(\s*['\"](POST|PUT|PATCH|DELETE)['\"]", re.I)
_SPAWN = re.compile(r"\b(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|"
                    r"check_output|Popen)|execSync|spawnSync|exec|system|os\.execute|io\.popen)"
                    r"\s*\(\s*(\[[^\]]*\]|"
                    r"[rbuf]?(['\"]).*?\2)", re.S)
_FS_IMPORT = re.compile(r"""(?:from\s+['"](?:node:)?fs(?:/promises)?['"]|"""
                        r"""require\(\s*['"](?:node:)?fs(?:/promises)?['"]\s*\))""")
"""Node code that imports ``fs``: its delete functions may then be called bare or through any
name (``import { rm } from "fs/promises"; await rm("x")``, ``fsp.rm("x")``)."""
_FS_DELETE = re.compile(r"(?<![\w$])(?:\w+\.)?(?:rm|rmSync|unlink|unlinkSync|rmdir|rmdirSync)"
                        r"\(\s*(?:(['\"`])([^'\"`\n]{1,400})\1)?")
_SPAWN_ARGS = re.compile(
    r"(?<![\w$])(?:(?:Kernel|IO|Open3|os|asyncio|child_process|cp|proc|pcntl)\.)?"
    r"(system|exec|execl|execlp|execle|execv|execvp|execvpe|spawn[lv]?p?e?|spawnSync|execSync|"
    r"execFileSync|execFile|shell_exec|passthru|proc_open|popen[23]?|capture[23]e?|"
    r"pipeline_[rw]|create_subprocess_(?:shell|exec)|pcntl_exec)\s*\(([^()]{0,2000}"
    r"(?:\([^()]{0,200}\)[^()]{0,2000})*)\)")
"""A spawn whose arguments are literal strings or literal lists, in any of the languages the
scan reads: Ruby/Perl ``system("rm", "-rf", x)``, Node ``spawn("rm", ["-rf", x])`` and
``execFileSync``, PHP ``shell_exec``/``passthru``/``proc_open``, Ruby ``IO.popen`` and
``Open3.capture2``, Python ``asyncio.create_subprocess_exec`` and ``os.execl``/``spawnlp``.
The literal words, in order, are the command (one word with spaces is a shell command)."""
_WORD_LITERAL = re.compile(r"""(['"])((?:\\.|(?!\1).){0,400})\1""")
_PIPE_OPEN = re.compile(r"""\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*(?:['"](?:\|-|-\|)['"]\s*,\s*"""
                        r"""(['"])([^'"\n]{1,400})\1|(['"])([^'"\n|]{1,400})\|\s*\3|"""
                        r"""(['"])\|\s*([^'"\n]{1,400})\5)""")
"""Perl's pipe opens: ``open(my $fh, "|-", "cmd")``, ``open(P, "cmd |")``, ``open(P, "| cmd")``."""
_ASSIGNED_STRING = re.compile(r"(?:\b(?:my|our|local|const|let|var)\s+)?(\$?[A-Za-z_]\w*)\s*=\s*"
                              r"(['\"])((?:\\.|(?!\2).){1,400})\2\s*;")
"""``my $c = "rm -rf x";``, ``const c = '…';``, ``$f = "shell_exec";``: names a script assigns
a string it spells out (JavaScript, Perl, PHP, Ruby with a semicolon)."""
_SPAWN_NAMES = frozenset({"system", "exec", "spawn", "popen", "shell_exec", "passthru",
                          "proc_open", "execSync", "`"})
_SPAWN_BY_NAME = re.compile(r"\b(?:send|public_send|__send__)\(\s*:([\w`]+)\s*,\s*([^)\n]{1,400})\)"
                            r"|\$(\w+)\s*\(([^)\n]{1,400})\)")
"""A spawn called by name: Ruby's ``send(:system, "…")`` and PHP's ``$f("…")`` where ``$f``
holds ``"shell_exec"``."""
_SPAWN_VARIABLE = re.compile(r"(?<![\w$.])(system|exec|spawn|popen|passthru|shell_exec|execSync)"
                             r"\s*\(\s*(\$?[A-Za-z_]\w*)\s*\)")
"""A spawn of a name the script assigned a string (``system($c)``)."""
_RUBY_X = re.compile(r"%x\{([^}\n]{1,400})\}")
"""Ruby's ``%x{cmd}``, a command's output as a string (it runs the command)."""
_CP_NAMES = re.compile(r"""\{([^}]{1,300})\}\s*(?:=\s*require\(\s*|from\s*)['"](?:node:)?"""
                       r"""child_process['"]""")
"""``const { execSync: run } = require("child_process")`` / ``import { exec as run } from
"child_process"``: the names the code gives child_process's functions."""
_STORE_LOSES = re.compile(r"\.(flushall|flushdb|flushAll|flushDb|drop_database|dropDatabase|"
                          r"drop_collection|delete_many|deleteMany|drop_table|delete_bucket|"
                          r"delete_objects)\s*\(")
"""Client methods of Redis, MongoDB, SQLAlchemy and S3 that lose data on a server."""
_GO_DELETE = re.compile(r"\bos\.(?:RemoveAll|Remove|Truncate)\(\s*(?:\"([^\"\n]{1,400})\")?")
_GO_WRITE = re.compile(r"\bos\.(?:WriteFile|Create)\(\s*\"([^\"\n]{1,400})\"")
_GO_COMMAND = re.compile(r"\bexec\.Command(?:Context)?\(\s*(?:ctx\s*,\s*)?((?:\"(?:\\.|[^\"\\])*\""
                         r"\s*,?\s*)+)\)")
"""Go: ``os.RemoveAll("x")``, ``os.WriteFile("f", …)``, ``exec.Command("rm", "-rf", "x")``
(literal words only), for ``go run main.go``."""
_RUST_COMMAND = re.compile(r"\bCommand::new\(\s*\"((?:\\.|[^\"\\])*)\"\s*\)([^;]*)", re.S)
_RUST_ARG = re.compile(r"\.arg\(\s*\"((?:\\.|[^\"\\])*)\"\s*\)|\.args\(\s*&?\s*(?:vec!)?\[([^\]]*)\]")
_RUST_STRING = re.compile(r"\"((?:\\.|[^\"\\])*)\"")
_EXEC_FAMILY = re.compile(r"\bos\.(?:exec|spawn|posix_spawn)\w*\(\s*(?:os\.P_\w+\s*,\s*)?"
                          r"[rbu]?(['\"])[^'\"\n]{1,200}\1\s*,\s*(\[[^\]]*\]|\([^)]*\))")
"""``os.execvp("rm", ["rm", "-rf", "x"])``, ``os.spawnlp(os.P_WAIT, …)``: the argument list
is the command (its first word is the program's name as it sees it)."""
_BARE_SPAWN = re.compile(r"(?<![\w.$@>:])(?:system|exec)\s+(['\"])((?:\\.|(?!\1).)+)\1"
                         r"|`([^`\n]+)`|\bqx\s*(?:\{([^}]*)\}|\(([^)]*)\)|\[([^\]]*)\]|"
                         r"<([^>]*)>|([|/!])(.*?)\8)", re.S)
"""Perl's, Ruby's and PHP's other ways to run a command: ``system "…"`` without parentheses,
backticks and ``qx{…}`` (read only for those languages: elsewhere backticks quote)."""
_BACKTICK_LANGUAGES = frozenset({"perl", "ruby", "php"})
_BARE_UNLINK = re.compile(r"(?<![\w.$@>:])(?:unlink|rmtree|remove_tree)\s+(?=[$@\"'<]|glob\b)|"
                          r"(?<![\w.$@>:-])file\s+delete\b|"
                          r"\b(?:os\.(?:remove|unlink|rmdir|removedirs)|shutil\.rmtree)\b(?!\s*\()")
"""Deletes without a call's parentheses: Perl's ``unlink glob "*"``/``rmtree $dir``, Tcl's
``file delete``, and a delete function handed on as a value (``map(os.unlink, files)``)."""
_ENV_SENT = re.compile(
    r"\b(?:urlopen|Request|requests\.\w+|httpx\.\w+|session\.\w+|fetch|axios(?:\.\w+)?|"
    r"https?\.(?:get|request)|Net::HTTP\.\w+|URI\.open|curl_init|file_get_contents)\s*\("
    r"[^;\n]{0,300}?(?:os\.environ|os\.getenv|getenv\(|process\.env|ENV\[|\$ENV\{|\$_ENV|"
    r"\bopen\(|\.read_text\(|\.read_bytes\(|readFileSync\(|File\.read\(|"
    r"file_get_contents\()")
"""A request whose URL or body takes an environment variable or a file's contents
(``urlopen(url + os.environ["AWS_SECRET_ACCESS_KEY"])``, ``requests.get(url +
open(".env").read())``): a read that carries the machine's secrets out."""
_LIT = r"[rbu]?(?P<q>['\"`])(?P<path>[^'\"`\n]{1,400})(?P=q)"
_WRITE_CALLS = tuple(re.compile(rx) for rx in (
    r"\b(?:open|io\.open|codecs\.open)\(\s*" + _LIT +
    r"\s*,\s*(?:mode\s*=\s*)?[rbu]?['\"](?P<mode>[rwaxbt+]{1,4})['\"]",
    r"Path\(\s*" + _LIT + r"\s*\)\s*\.(?:write_text|write_bytes|open\(\s*['\"](?P<mode>[wa]))",
    r"\b(?:fs(?:\.promises)?\.)?(?:writeFileSync|writeFile|createWriteStream|truncateSync|"
    r"(?P<mode>append)FileSync|appendFile)\(\s*" + _LIT,
    r"\bFile\.(?:write|open)\(\s*" + _LIT + r"(?:\s*,\s*['\"](?P<mode>[rwa])[b+]?['\"])?",
    r"\bfile_put_contents\(\s*" + _LIT,
    r"\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['\"](?P<mode>>>?)['\"]\s*,\s*" + _LIT,
    r"\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['\"](?P<mode>>>?)\s*(?P<path>[^'\"\n>]{1,400})['\"]",
    r"\b(?:writeFileSync|writeFile|(?P<mode>append)FileSync|appendFile)\(\s*(?:require\(\s*"
    r"['\"](?:node:)?os['\"]\s*\)|os)\.homedir\(\)\s*\+\s*" + _LIT,
))
"""Writes to a literal path: Python's ``open("f", "w")``/``Path("f").write_text``, Node's
``fs.writeFileSync("f")``, Ruby's ``File.write("f")``/``File.open("f", "w")``, PHP's
``file_put_contents("f")``, Perl's ``open(my $fh, ">", "f")``/``open(FH, ">f")``. A computed
path is not a finding (scripts write their results where they compute)."""
_READ_CALL = re.compile(
    r"\b(?:open|io\.open|codecs\.open|Path|readFileSync|readFile|File\.read|File\.readlines|"
    r"IO\.read|file_get_contents)\(\s*" + _LIT)
"""A literal path the code opens or reads (the mode is not looked at): written again, it is
edited in place (read, changed, written back), as ``sed -i`` does."""
_MOVE_CALL = re.compile(
    r"\b(?:os\.(rename|replace)|shutil\.(move|copy|copy2|copyfile|copytree)|"
    r"fs(?:\.promises)?\.(renameSync|rename|copyFileSync|copyFile|cpSync)|File\.(rename)|"
    r"FileUtils\.(mv|cp|cp_r)|(?<![\w.$>])(rename|copy))\(\s*[rbu]?(['\"])([^'\"\n]{1,400})\7"
    r"\s*,\s*[rbu]?(['\"])([^'\"\n]{1,400})\9")
"""``os.rename("a", "b")``, ``shutil.move``/``copy``, ``fs.renameSync``, ``File.rename``,
``FileUtils.mv``, PHP's ``rename``/``copy`` with literal paths: the destination is
overwritten, and a move takes the source away."""
_SOCKET_SEND = re.compile(
    r"\b(?:create_connection|connect|connect_ex)\(\s*\(\s*[rbu]?(['\"])([^'\"\n]{1,253})\1|"
    r"\bnet\.(?:connect|createConnection)\(\s*(?:\d+\s*,\s*)?(['\"])([^'\"\n]{1,253})\3|"
    r"\b(?:TCPSocket|Socket)\.(?:new|open)\(\s*(['\"])([^'\"\n]{1,253})\5|"
    r"\bfsockopen\(\s*(['\"])([^'\"\n]{1,253})\7")
"""A raw connection to a literal host (Python ``socket``, Node ``net``, Ruby ``TCPSocket``,
PHP ``fsockopen``): what is written to a non-local host leaves the machine."""
_DECODED_RUN = re.compile(
    r"(?<![\w.])(?:exec|eval|compile)\s*\([^;\n]{0,80}?\b(?:b64decode|b32decode|b16decode|"
    r"a85decode|b85decode|decodebytes|decompress|fromhex|unhexlify|decode|rot13|"
    r"marshal\.loads)\b|"
    r"\beval\s*\(?\s*(?:base64_decode|gzinflate|str_rot13|gzuncompress|atob|"
    r"Buffer\.from)\b|\beval\s*\(?\s*(?:unpack|decode_base64|MIME::Base64)", re.I)
"""Code that decodes a literal and runs it (``exec(base64.b64decode('…'))``, PHP's
``eval(base64_decode(…))``, ``eval(atob(…))``): what it runs was hidden on purpose."""
_B64_LITERAL = re.compile(r"(['\"])([A-Za-z0-9+/=\s]{16,}|[A-Za-z0-9_=-]{16,})\1")
_SHELL_LINE = re.compile(r"^\s*(?:[\w.]+\s*=\s*)?(?:!!?|%(?:system|sx)\s+|"
                         r"%(?=(?:rm|rmdir|mv|cp|mkdir|cat|ls|ll|lf|lk|lx|ldir)\b))(.+)$", re.M)
"""A notebook's or IPython's shell lines: ``!cmd``, ``!!cmd``, ``x = !cmd``, ``%system cmd``,
``files = %sx cmd``, and the shell aliases IPython defines (``%rm -rf d``, ``%mv a b``)."""
_SHELL_CELL = re.compile(r"^\s*%%(?:bash|sh|script\s+\w+)\s*\n(.*)", re.S)
_IPYTHON_LINE = re.compile(r"^[ \t]*(?:[\w.]+[ \t]*=[ \t]*)?[!%].*$", re.M)
"""A line of IPython syntax (``!cmd``, ``x = !cmd``, ``%magic``): blanked, line numbers kept,
so the rest of a notebook cell parses as Python."""
_STRING = re.compile(r"(['\"])((?:\\.|(?!\1).){6,}?)\1", re.S)


_TEMPFILES = re.compile(r"\btempfile\.(?:mkdtemp|mkstemp|TemporaryDirectory|"
                        r"NamedTemporaryFile|gettempdir)|\bmkdtempSync\b|\bos\.tmpdir\(|"
                        r"\btempfile::|\benv::var\(\s*\"OUT_DIR\"")
"""Code that makes temporary files or directories (Python ``tempfile``, Node ``mkdtempSync``,
Rust's ``tempfile`` crate; a Cargo build script's ``OUT_DIR`` is its own scratch space):
deleting a computed path there is how it cleans up after itself."""
_LITERAL_ARG = re.compile(r"\s*[rbu]?(['\"])([^'\"\n]{1,400})\1\s*[,)]")
_PATH_CALL = re.compile(r"Path\(\s*[rbu]?(['\"])([^'\"\n]{1,400})\1\s*\)\s*$")


_HOME_JS = (r"(?:(?:require\(\s*['\"](?:node:)?os['\"]\s*\)|os)\.homedir\(\)|"
            r"process\.env(?:\.HOME\b|\[\s*['\"]HOME['\"]\s*\]))")
_HOME_RB = r"(?:Dir\.home(?:\(\))?|ENV\[\s*['\"]HOME['\"]\s*\])"
_HOME_FOLDS = tuple((re.compile(rx), repl) for rx, repl in (
    (r"(?:require\(\s*['\"](?:node:)?path['\"]\s*\)|path)\.(?:join|resolve)\(\s*" + _HOME_JS +
     r"\s*,\s*(['\"])/?([^'\"\n]+)\1\s*\)", r'"~/\2"'),
    (_HOME_JS + r"\s*\+\s*(['\"])/?([^'\"\n]+)\1", r'"~/\2"'),
    (r"`\$\{\s*" + _HOME_JS + r"\s*\}/([^`\n]+)`", r'"~/\1"'),
    (r"File\.join\(\s*" + _HOME_RB + r"\s*,\s*(['\"])/?([^'\"\n]+)\1\s*\)", r'"~/\2"'),
    (r"File\.expand_path\(\s*(['\"])(~/[^'\"\n]+)\1\s*\)", r'"\2"'),
    (r"\"#\{\s*" + _HOME_RB + r"\s*\}/([^\"\n]+)\"", r'"~/\1"'),
    (r"\"\$ENV\{\s*['\"]?HOME['\"]?\s*\}/([^\"\n]+)\"", r'"~/\1"'),
    (r"(?:getenv\(\s*['\"]HOME['\"]\s*\)|\$_SERVER\[\s*['\"]HOME['\"]\s*\])\s*\.\s*(['\"])/?"
     r"([^'\"\n]+)\1", r'"~/\2"'),
))
"""Paths built on the home directory in Node, Ruby, Perl and PHP (``path.join(os.homedir(),
".bashrc")``, ``File.join(Dir.home, ".bashrc")``, ``"$ENV{HOME}/.bashrc"``), rewritten as the
literal ``"~/.bashrc"`` they always are, so the literal-path rules read them (Python's are
folded on its syntax tree: :mod:`.pycalls`)."""


def _fold_home(code: str) -> str:
    if not _has_any(code, "homedir", "process.env", "Dir.home", "HOME"):
        return code
    for rx, repl in _HOME_FOLDS:
        code = rx.sub(repl, code)
    return code


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


_WRITE_NEEDLES = (("open",), ("Path(",), ("File", "Stream", "truncate"), ("File.",), ("file_put_contents",),
                  ("open",), ("open",), ("homedir",))
"""Words one of which each of :data:`_WRITE_CALLS` needs (a cheap test before it runs)."""


def _has_any(code: str, *needles: str) -> bool:
    return any(n in code for n in needles)


def _finditer(rx: re.Pattern[str], code: str, *needles: str):
    """``rx.finditer(code)``, skipped when none of ``needles`` (words every match holds)
    is in the code: most code never names them, and a long script scanned by every pattern
    cost as much as the rest of the gate."""
    return rx.finditer(code) if _has_any(code, *needles) else iter(())


def _opened_for_reading(m: re.Match[str]) -> bool:
    mode = m.groupdict().get("mode") or ""
    if m.group(0).lstrip().startswith("File.open"):
        return not mode or mode == "r"
    return bool(mode) and not any(c in mode for c in "wax+>")


Change = tuple[str, str, Action]
"""``(call, literal path, action)``: one write the code makes, for :func:`_judge_changes`."""
Delete = tuple[str | None, str]
"""``(literal path or None when computed, call)``: one delete, for :func:`_judge_deletes`."""


def _write_action(mode: str, path: str | None, read: set[str | None]) -> Action:
    """What a write in ``mode`` does to ``path``: append, an in-place change (``r+``, or a
    file the same code also reads: read, changed, written back, as ``sed -i``), or an
    overwrite."""
    if "a" in mode or mode == ">>":
        return "append"
    if "+" in mode and "w" not in mode or path in read:
        return "modify"
    return "overwrite"


def _writes(code: str) -> list[Change]:
    """Writes, moves and copies to literal paths (:data:`_WRITE_CALLS`, :data:`_MOVE_CALL`,
    Go's :data:`_GO_WRITE`)."""
    changes: list[Change] = []
    writes = [m for rx, needles in zip(_WRITE_CALLS, _WRITE_NEEDLES, strict=True)
              for m in _finditer(rx, code, *needles)
              if not _opened_for_reading(m)]
    starts = {m.start() for m in writes}
    read = {m.group("path") for m in _READ_CALL.finditer(code) if m.start() not in starts}
    for m in writes:
        call, path = m.group(0).strip(), m.group("path")
        changes.append((call[:60], "~" + path if "homedir()" in call else path,
                        _write_action(m.groupdict().get("mode") or "", path, read)))
    for m in _finditer(_MOVE_CALL, code, "rename", "replace", "move", "copy", "cp", "mv"):
        verb = next(g for g in m.groups()[:6] if g)
        src, dst = m.group(8), m.group(10)
        changes.append((m.group(0)[:60], dst, "overwrite"))
        if verb in ("rename", "replace", "move", "renameSync", "mv"):
            changes.append((m.group(0)[:60], src, "edit"))
    changes += [(m.group(0), m.group(1), "overwrite")
                for m in _finditer(_GO_WRITE, code, "os.WriteFile", "os.Create")]
    return changes


_VERBS: dict[str, str] = {"delete": "deletes", "overwrite": "writes", "modify": "changes",
                          "append": "appends to", "edit": "moves"}


def _judge_changes(changes: list[Change], where: str, cwd: str) -> list[tuple[EffectClass, str]]:
    """Each write judged by the path rules like a redirection or ``mv``; a path the gate
    cannot expand is no evidence here (scripts write where they compute)."""
    from ctxgate.gate.effects.shell import path_finding

    out = []
    for call, path, action in changes:
        found = path_finding(f"{where} {_VERBS[action]} {path!r} (`{call}`)", path, action, cwd)
        if found is not None and not found.guess:
            out.append((found.effect, found.evidence))
    return out


def _judge_deletes(deletes: list[Delete], where: str, cwd: str, *,
                   computed: bool) -> list[tuple[EffectClass, str]]:
    """A literal path judged by the path rules, as for ``rm``; a computed one irreversible
    when ``computed`` (not in code that makes temporary files, nor in a project's own file
    that cleans up after itself)."""
    from ctxgate.gate.effects.shell import path_finding

    out = []
    for path, call in deletes:
        if path is not None:
            found = path_finding(f"{where} deletes {path!r} (`{call}`)", path, "delete", cwd)
            if found is not None:
                out.append((found.effect, found.evidence))
        elif computed:
            out.append((EffectClass.LOCAL_IRREVERSIBLE, f"{where} deletes files (`{call}`)"))
    return out


def _python(code: str, spawned: list[str]) -> tuple[list[Delete], list[Change]]:
    """The deletes and writes of the Python calls :func:`.pycalls.python_calls` resolves
    through imports and aliases (``from os import remove as r; r("f")``,
    ``__import__("os").remove``, ``open(file="f", mode="w")``); the literal commands of
    spawns are appended to ``spawned`` for the shell rules."""
    from dataclasses import replace

    from ctxgate.gate.effects.pycalls import COPIES, DELETES, MOVES, SPAWNS, python_calls

    deletes: list[Delete] = []
    changes: list[Change] = []
    calls = python_calls(code)
    if calls is None and _IPYTHON_LINE.search(code):  # a notebook cell: its Python, parsed
        calls = python_calls(_IPYTHON_LINE.sub("", code))
    calls = calls or []
    read = {c.args[0] for c in calls if c.name == "open" and c.args and c.args[0] and
            not (c.mode and any(x in c.mode for x in "wax+"))}
    here: str | None = None  # where an os.chdir with a literal path moved the code
    for c in calls:
        first = c.args[0] if c.args else None
        if c.name == "os.chdir":
            here = None if first is None else first if first.startswith(("/", "~")) else \
                f"{here.rstrip('/')}/{first}" if here else first
            continue
        if here is not None and first is not None and not first.startswith(("/", "~")):
            first = f"{here.rstrip('/')}/{first}"  # a relative path after os.chdir
            c = replace(c, args=(first, *c.args[1:]))
        if c.name == "os.truncate":
            if first is not None:
                changes.append((c.name, first, "overwrite"))
        elif c.name in DELETES:
            deletes.append((first, f"{c.name}, resolved through imports"))
        elif c.name == "open" and c.mode and any(x in c.mode for x in "wax+"):
            if first is not None:
                changes.append((f"open(…, {c.mode!r})", first, _write_action(c.mode, first,
                                                                              read)))
        elif c.name in MOVES or c.name in COPIES:
            if len(c.args) >= 2 and c.args[1] is not None:
                changes.append((c.name, c.args[1], "overwrite"))
            if c.name in MOVES and first is not None:
                changes.append((c.name, first, "edit"))
        elif c.name in SPAWNS and first is not None:
            spawned.append(first)
        elif c.name.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
            argv = next((a for a in c.args[1:] if a is not None and " " in a), None)
            if argv is not None:
                spawned.append(argv)
    return deletes, changes


def _hidden(code: str, where: str, cwd: str, depth: int) -> list[tuple[EffectClass, str]]:
    """Code that decodes a literal and runs it (:data:`_DECODED_RUN`): what the literal
    decodes to is scanned too, and the run itself is untrusted code whatever that shows."""
    run = _DECODED_RUN.search(code) if _has_any(code, "exec", "eval", "compile") else None
    if run is None:
        return []
    import base64
    import binascii

    out = [(EffectClass.UNTRUSTED_CODE,
            f"{where} decodes code and runs it (`{run.group(0)}`): what runs was hidden "
            "from reading")]
    if depth >= 2:
        return out
    for m in _B64_LITERAL.finditer(code):
        raw = re.sub(r"\s+", "", m.group(2))
        try:
            text = base64.b64decode(raw + "=" * (-len(raw) % 4),
                                    altchars=b"-_" if "-" in raw or "_" in raw else None
                                    ).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        found = code_effect(text, where=f"{where} (decoded)", cwd=cwd, _depth=depth + 1)
        if found is not None and found.effect.destructive:
            out.append((found.effect, found.evidence))
    return out


def _as_command(words: list[str]) -> str:
    """Literal spawn arguments as a command line: one word is a shell command as it stands
    (``system("rm -rf x")``), several are an argv (``system("rm", "-rf", "x")``)."""
    return words[0] if len(words) == 1 else shlex.join(words)


def _commands(code: str, language: str) -> list[str]:
    """The literal commands the code spawns, for the shell rules: notebook ``!cmd`` lines,
    IPython's ``%system``/``%sx`` and shell aliases (``%rm``), ``%%bash`` cells, ``os.system``/``subprocess`` strings and lists, ``os.exec*``, bare
    Perl/Ruby/PHP spawns, Rust's ``Command::new``, spawns with literal words in any language,
    Perl pipe opens, Ruby ``%x{}``, Node's destructured ``child_process`` names, Go's
    ``exec.Command``, nox's ``session.run``."""
    commands = [m.group(1) for m in _SHELL_LINE.finditer(code)]
    cell = _SHELL_CELL.match(code)
    if cell:
        commands.append(cell.group(1))
    for m in _SPAWN.finditer(code):
        literal = _literal_command(m.group(1))
        if literal is not None:
            commands.append(literal)
    for m in _finditer(_EXEC_FAMILY, code, "os.exec", "os.spawn", "os.posix_spawn"):
        words = _literal_command(m.group(2))
        if words is not None:
            commands.append(words)
    if language in _BACKTICK_LANGUAGES:
        for m in _BARE_SPAWN.finditer(code):
            bare = next((g for g in m.groups()[1:] if g and g not in "|/!"), None)
            if bare is not None:
                commands.append(bare)
    commands.extend(_rust_commands(code))
    for m in _finditer(_SPAWN_ARGS, code, "system", "exec", "spawn", "popen", "passthru",
                       "proc_open", "capture", "pipeline_", "create_subprocess"):
        if m.group(1) == "exec" and language == "python":
            continue  # Python's exec() runs Python (the decoded-code rule judges it)
        words = [w.group(2) for w in _WORD_LITERAL.finditer(m.group(2))]
        if not words:
            continue
        if m.group(1) in ("execl", "execlp", "execle", "execv", "execvp", "execvpe") or \
                m.group(1).startswith("spawn") and m.group(1) not in ("spawn", "spawnSync"):
            words = words[1:] if len(words) > 1 else words  # the path, then argv[0] …
        commands.append(_as_command(words))
    consts = {m.group(1): m.group(3) for m in _ASSIGNED_STRING.finditer(code)}
    for m in _finditer(_SPAWN_BY_NAME, code, "send", "$"):
        target = m.group(1) or consts.get("$" + (m.group(3) or ""), "")
        words = [w.group(2) for w in _WORD_LITERAL.finditer(m.group(2) or m.group(4) or "")]
        if target in _SPAWN_NAMES and words:
            commands.append(_as_command(words))
    for m in _finditer(_SPAWN_VARIABLE, code, "system", "exec", "spawn", "popen", "passthru"):
        if m.group(2) in consts:  # my $c = "rm -rf x"; system($c)
            commands.append(consts[m.group(2)])
    for m in _finditer(_PIPE_OPEN, code, "open"):
        commands.append((m.group(2) or m.group(4) or m.group(6)).strip())
    for m in _finditer(_RUBY_X, code, "%x"):
        commands.append(m.group(1))
    for names in _finditer(_CP_NAMES, code, "child_process"):
        for item in names.group(1).split(","):
            alias = re.split(r"\s*(?::|\bas\b)\s*", item.strip())[-1]
            if re.fullmatch(r"[A-Za-z_$][\w$]*", alias):
                for m in re.finditer(r"(?<![\w.$])" + re.escape(alias) +
                                     r"\(\s*(['\"`])([^'\"`\n]{1,400})\1", code):
                    commands.append(m.group(2))
    for m in _finditer(_GO_COMMAND, code, "exec.Command"):
        words = _literal_command("(" + m.group(1).rstrip().rstrip(",") + ",)")
        if words is not None:
            commands.append(words)
    commands.extend(_session_runs(code))
    return commands


def code_effect(code: str, *, where: str = "the code", cwd: str,
                computed_deletes: bool = True, language: str = "",
                _depth: int = 0) -> Effect | None:
    """What running ``code`` visibly does (module docstring), or ``None``.

    ``computed_deletes=False``: a delete of a computed path is not a finding (a project's own
    ``conftest.py`` or ``setup.py`` that cleans up after itself); literal paths still are.
    ``language``: the interpreter (``perl``, ``ruby``, ``php`` also run backticks and
    ``system "…"`` without parentheses)."""
    from ctxgate.gate.effects.programs import LOCAL_HOST
    from ctxgate.gate.effects.shell import shell_effect
    from ctxgate.gate.effects.sql import sql_effect

    findings: list[tuple[EffectClass, str]] = []
    code = _fold_home(code)
    deletes: list[Delete] = [(_deleted_literal(code, m), m.group(0).strip())
                             for m in _DELETE.finditer(code)]
    deletes += [(None, m.group(0).strip()) for m in _finditer(
        _BARE_UNLINK, code, "unlink", "rmtree", "remove_tree", "delete", "os.r", "shutil.")]
    if _FS_IMPORT.search(code):
        deletes += [(m.group(2), m.group(0).strip()) for m in _FS_DELETE.finditer(code)]
    deletes += [(m.group(1), m.group(0).strip())
                for m in _finditer(_GO_DELETE, code, "os.Re", "os.Truncate")]
    changes = _writes(code)
    spawned: list[str] = []
    language = re.sub(r"[\d.]+$", "", language)  # python3.11 → python
    if language in ("", "python") and _has_any(code, "import", "open(", "getattr"):
        resolved, written = _python(code, spawned)
        deletes += resolved
        changes += written
    temporary = bool(_TEMPFILES.search(code))  # a computed delete there is its own cleanup
    findings += _judge_deletes(deletes, where, cwd, computed=computed_deletes and not temporary)
    findings += _judge_changes(changes, where, cwd)
    findings += _hidden(code, where, cwd, _depth)
    for m in _finditer(_STORE_LOSES, code, "flush", "drop", "delete_", "deleteMany"):
        if computed_deletes:  # a project's own test set-up may empty its test database
            findings.append((EffectClass.LOCAL_IRREVERSIBLE,
                             f"{where} calls `{m.group(1)}()`, which loses a data store's data"))
    for m in _finditer(_SOCKET_SEND, code, "onnect", "Socket", "fsockopen"):
        host = next(g for g in m.groups()[1::2] if g is not None)
        if host and not LOCAL_HOST.match(host):  # '' binds or reaches this machine
            findings.append((EffectClass.EXTERNAL,
                             f"{where} opens a connection to {host} (`{m.group(0)[:60]}`): "
                             "what it writes there leaves the machine"))
    for m in _finditer(_ENV_SENT, code, "urlopen", "Request", "requests.", "httpx.", "session.",
                       "fetch", "axios", "http", "Net::HTTP", "URI.open", "curl_init",
                       "file_get_contents"):
        findings.append((EffectClass.EXTERNAL, f"{where} sends an environment variable or a "
                                               f"file's contents to a server "
                                               f"(`{m.group(0)[:70]}`)"))
    for m in _NETWORK.finditer(code):
        findings.append((EffectClass.EXTERNAL,
                         f"{where} sends a request that changes a remote service "
                         f"(`{m.group(0).strip()}`)"))
    commands = _commands(code, language) + spawned
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
