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
- **SQL** — a string that begins like an SQL statement under an argument named ``sql`` (or
  ``*_sql``), or under ``query``/``statement`` of a tool whose name names a database
  (``sql``, ``db``, ``postgres``, ``sqlite`` …) or running a query (``query``, ``execute``).

:func:`executed_effect` then judges the command with the shell parser (the same rules as a
``bash`` call: an unknown program leaves it to the model) and the SQL with :mod:`.sql`. The
user's ``shell_tools`` configuration names shell tools explicitly; this catches the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from ctxgate.gate.effects.model import Effect

__all__ = ["ExecutedArgument", "executed_argument", "executed_effect"]

ExecutedArgument = tuple[Literal["shell", "sql"], str, str]
"""``(kind, argument name, text)``."""

_COMMAND_KEYS = frozenset({"command", "cmd", "commands", "command_line", "commandline",
                           "cmdline", "shell_command", "bash_command", "script",
                           "shell_script", "shell"})
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
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _words(name: str) -> set[str]:
    return {w.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for w in _WORD.findall(part)}


def executed_argument(tool: str, arguments: Any) -> ExecutedArgument | None:
    """The shell command or SQL an unknown tool's call runs, or ``None`` (module docstring)."""
    if not isinstance(arguments, Mapping):
        return None
    from ctxgate.gate.effects.sql import looks_like_sql

    words = _words(tool)
    strings = [(str(k), v) for k, v in arguments.items() if isinstance(v, str) and v.strip()]
    for key, value in strings:
        k = key.lower()
        if k == "sql" or k.endswith("_sql") or k.startswith("sql_"):
            if looks_like_sql(value):
                return "sql", key, value
        elif k in _SQL_KEYS and words & _DB_WORDS and looks_like_sql(value):
            return "sql", key, value
    for key, value in strings:
        k = key.lower()
        if (k in _COMMAND_KEYS and words & _RUN_WORDS) or \
                (k in _TERMINAL_KEYS and words & _TERMINAL_WORDS):
            return "shell", key, value
    return None


def executed_effect(found: ExecutedArgument, *, cwd: str) -> Effect | None:
    """The effect of running ``found`` (``None``: the parser cannot tell; the model judges)."""
    kind, key, text = found
    if kind == "sql":
        from ctxgate.gate.effects.sql import sql_effect

        return sql_effect(text, where=f"the SQL in argument {key!r}")
    from ctxgate.gate.effects.shell import shell_effect

    return shell_effect(text, cwd=cwd)
