"""The effect of SQL text given to a tool: which statements read, add, or destroy data.

:func:`sql_effect` splits the text into statements (outside quotes and comments) and
classifies each by its leading keyword and the shape that follows it, so a search query that
merely begins with "delete" is not taken for a ``DELETE FROM``:

- reads: ``SELECT`` (not ``SELECT … INTO``), ``WITH`` without a data-changing body, ``SHOW``,
  ``DESCRIBE``, ``VALUES``, ``TABLE``, ``EXPLAIN`` (``EXPLAIN ANALYZE`` runs its statement and
  is judged as that statement), ``PRAGMA name`` without ``=``, transaction control;
- adds data or schema (recoverable: what was added can be removed): ``INSERT INTO``,
  ``CREATE …``, ``SELECT … INTO``, ``COMMENT ON``, ``REINDEX``, ``ANALYZE``;
- loses data (irreversible): ``DELETE FROM``, ``UPDATE … SET``, ``DROP …``, ``TRUNCATE``,
  ``ALTER …``, ``MERGE``, ``REPLACE INTO``, ``GRANT``/``REVOKE`` and ``CREATE USER``/``ROLE``
  (access changes), ``VACUUM FULL``, ``PRAGMA name = value``, ``SET GLOBAL``, and writes of
  files on the server (``SELECT … INTO OUTFILE``, ``COPY … TO 'file'``);
- runs a program: ``COPY … PROGRAM`` (untrusted code).

A statement of any other shape makes the answer ``None``: the decision model judges it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource, combine

__all__ = ["looks_like_sql", "sql_effect", "split_statements"]

_READ = EffectClass.READ_ONLY
_ADD = EffectClass.LOCAL_RECOVERABLE
_LOSE = EffectClass.LOCAL_IRREVERSIBLE
_OBJECTS = (r"(?:table|database|schema|index|view|materialized\s+view|sequence|function|"
            r"procedure|trigger|user|role|type|extension|collection|keyspace|column|"
            r"constraint|policy|owned|domain|event|publication|subscription)")
_SIDE_EFFECT_CALLS = re.compile(
    r"\b(pg_terminate_backend|pg_cancel_backend|pg_drop_replication_slot|pg_promote|"
    r"pg_reload_conf|lo_unlink|dblink_exec|setval|writefile|pg_file_write|"
    r"pg_file_unlink)\s*\(", re.I)
"""Functions a ``SELECT`` can call that change or end something (kill a session, drop a
replication slot, write a file)."""
_CODE_CALLS = re.compile(r"\b(load_extension|lo_import|lo_export|sys_exec|sys_eval)\s*\(", re.I)
"""Functions that load or run code, or move files between the server and the database."""
_SHAPES: tuple[tuple[re.Pattern[str], EffectClass, str], ...] = tuple(
    (re.compile(p, re.I | re.S), cls, what) for p, cls, what in (
        (r"^copy\b.*\bprogram\b", EffectClass.UNTRUSTED_CODE, "COPY … PROGRAM runs a program"),
        (r"^delete\s+from\b|^delete\s+\w+\s+from\b", _LOSE, "DELETE removes rows"),
        (r"^update\s+\S+(?:\s+(?:as\s+)?\w+)?\s+set\b", _LOSE, "UPDATE overwrites values"),
        (r"^drop\s+" + _OBJECTS, _LOSE, "DROP removes an object and its data"),
        (r"^truncate\b", _LOSE, "TRUNCATE empties a table"),
        (r"^alter\s+" + _OBJECTS, _LOSE, "ALTER changes a schema in place"),
        (r"^merge\s+into\b", _LOSE, "MERGE overwrites rows"),
        (r"^(?:replace|upsert)\s+into\b", _LOSE, "REPLACE overwrites rows"),
        (r"^(?:grant|revoke)\s+\w", _LOSE, "GRANT/REVOKE changes who may access data"),
        (r"^vacuum\s+full\b", _LOSE, "VACUUM FULL rewrites tables"),
        (r"^pragma\s+[\w.]+\s*=", _LOSE, "PRAGMA … = changes a database setting"),
        (r"^create\s+(?:user|role|login)\b", _LOSE,
         "CREATE USER/ROLE adds an account that can reach the data"),
        (r"^select\b.*\binto\s+(?:outfile|dumpfile)\b", _LOSE,
         "SELECT … INTO OUTFILE writes a file on the database server"),
        (r"^copy\b.*\bto\s+(?:'|e')", _LOSE, "COPY … TO 'file' writes a file on the database server"),
        (r"^set\s+(?:global|persist)\b", _LOSE, "SET GLOBAL changes the server's settings"),
        (r"^insert\s+(?:or\s+\w+\s+)?into\b", _ADD, "INSERT adds rows"),
        (r"^create\s+(?:or\s+replace\s+|temp\w*\s+|unique\s+|unlogged\s+)*" + _OBJECTS, _ADD,
         "CREATE adds an object"),
        (r"^select\b.*\binto\s+(?!@|:|\$)\w", _ADD, "SELECT … INTO creates a table"),
        (r"^comment\s+on\b|^reindex\b|^analy[sz]e\b|^copy\b.*\bfrom\b", _ADD,
         "adds or rebuilds data"),
        (r"^copy\b.*\bto\b", _READ, "COPY … TO reads rows out"),
        (r"^(?:select|show|describe|desc|values|table|explain|pragma|with)\b", _READ,
         "reads"),
        (r"^(?:begin|start\s+transaction|commit|end|rollback|savepoint|release|set|use|"
         r"reset)\b", _READ, "transaction control or a session setting"),
    ))
_CHANGES_IN_WITH = re.compile(r"\b(insert\s+into|update\s+\S+\s+set|delete\s+from|merge\s+into)\b",
                              re.I)
_EXPLAIN_ANALYZE = re.compile(r"^explain\s+(?:\(\s*analy[sz]e[^)]*\)|analy[sz]e)\s+", re.I)
_START = re.compile(
    r"^\s*\(?\s*(select|with|insert|update|delete|drop|create|alter|truncate|grant|revoke|"
    r"merge|replace|upsert|explain|show|describe|desc|pragma|vacuum|values|table|copy|comment|"
    r"reindex|begin|commit|rollback)\b", re.I)


def split_statements(text: str) -> list[str]:
    """The statements of ``text``: split at ``;`` outside quotes, comments removed."""
    out: list[str] = []
    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            buf.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j == -1 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j == -1 else j + 2
            buf.append(" ")
        elif c == ";":
            out.append("".join(buf))
            buf = []
            i += 1
        else:
            buf.append(c)
            i += 1
    out.append("".join(buf))
    cleaned = (s.strip().lstrip("(").strip() for s in out)
    return [s for s in cleaned if s]


def looks_like_sql(text: str) -> bool:
    """Whether ``text`` begins like an SQL statement (after comments)."""
    statements = split_statements(text)
    return bool(statements) and bool(_START.match(statements[0]))


def _statement(stmt: str) -> tuple[EffectClass, str] | None:
    analysed = _EXPLAIN_ANALYZE.match(stmt)
    if analysed:  # EXPLAIN ANALYZE runs the statement
        stmt = stmt[analysed.end():]
    code = _CODE_CALLS.search(stmt)
    if code:
        return EffectClass.UNTRUSTED_CODE, f"{code.group(1)}() loads or runs code"
    side = _SIDE_EFFECT_CALLS.search(stmt)
    if side:
        return _LOSE, f"{side.group(1)}() changes or ends something"
    if re.match(r"^with\b", stmt, re.I):
        m = _CHANGES_IN_WITH.search(stmt)
        if m:
            return _statement(stmt[m.start():])
    for pattern, cls, what in _SHAPES:
        if pattern.search(stmt):
            return cls, what
    return None


def sql_effect(text: str, *, where: str = "SQL") -> Effect | None:
    """The effect of running ``text`` (``where``: how the evidence names its origin), or
    ``None`` when a statement has a shape the rules do not know."""
    found: list[tuple[EffectClass, str]] = []
    for stmt in split_statements(text):
        got = _statement(stmt)
        if got is None:
            return None
        found.append((got[0], f"{got[1]} (`{' '.join(stmt.split())[:80]}`)"))
    effect = combine(found, EffectSource.SQL_PARSER)
    return replace(effect, evidence=f"{where}: {effect.evidence}") if effect else None
