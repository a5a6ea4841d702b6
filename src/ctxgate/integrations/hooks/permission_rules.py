"""The harness's own command rules, matched against the command the model wrote.

Claude Code's ``Bash(…)`` permission rules and Codex's execpolicy ``prefix_rule`` calls.

Claude Code applies its permission rules to the command *after* a ``PreToolUse`` hook's
``updatedInput`` (upstream report claude-code#65393). When the hook wraps ``make`` into
``python -m ctxgate run -c make``, a user's ``Bash(make:*)`` deny or ask rule no longer
matches, and an allow rule no longer spares the prompt. The hook therefore reads the rules
itself, from the same settings files Claude Code reads, and matches them against the
original command:

- a **deny** or **ask** rule matches the command or any of its parts → the hook does not
  rewrite it, so Claude Code's own rule applies to exactly what the user wrote (the output is
  then digested after the fact by ``PostToolUse``);
- every part matches an **allow** rule → the hook rewrites and says ``permissionDecision:
  allow``, carrying the user's approval of the original over to the rewrite;
- a settings file that exists but cannot be read or parsed → :data:`UNKNOWN`, and the hook
  does not rewrite (it cannot tell whether a deny rule would have matched).

Codex does the same with its ``.rules`` files (``prefix_rule(pattern=[…], decision=…)``,
measured: a ``forbidden`` rule for ``./build.sh`` stopped the plain call and not the
rewritten one). :func:`load_codex_rules` reads ``$CODEX_HOME/rules/*.rules`` and the
``.codex/rules/*.rules`` of the working directory and its parents, parsing each file as a
Python expression tree (Starlark's syntax) without running it; ``forbidden`` counts as deny,
``prompt`` as ask. A file with anything but top-level calls (``prefix_rule`` with literal
arguments, ``host_executable`` …) is unreadable (:data:`UNKNOWN`).

Rules given on Claude Code's command line (``--settings``, ``--allowedTools``,
``--disallowedTools``) are not visible to a hook process; docs/hooks.md says so.

Pattern semantics follow Claude Code's documentation: ``Bash`` or ``Bash(*)`` is every
command; ``Bash(prefix:*)`` is a prefix match; ``*`` elsewhere matches any run of characters
(``Bash(ls *)`` matches ``ls -la`` and ``ls``, not ``lsof``); anything else is an exact match.
A command is split into its simple commands by the shared shell scanner
(:mod:`ctxgate.shell`: list operators, pipes, subshells, substitutions, ``sh -c`` bodies);
each is tried as written and without its leading assignments and wrappers (``sudo``,
``timeout 5``, ``nice``, ``env`` …). A deny or ask rule may match any of these texts or the
whole command, so the matching errs on the side of leaving the user's rule in charge.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ctxgate.shell import parse_command

__all__ = ["UNKNOWN", "BashRules", "RuleMatch", "load_bash_rules",
           "load_codex_rules", "match_command", "rule_matches"]

RuleMatch = Literal["deny", "ask", "allow", "unknown"]
UNKNOWN: RuleMatch = "unknown"

MANAGED_SETTINGS = {
    "linux": Path("/etc/claude-code/managed-settings.json"),
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
    "win32": Path("C:/Program Files/ClaudeCode/managed-settings.json"),
}
"""Claude Code's managed (enterprise) settings file, per platform."""

_RULE = re.compile(r"^\s*Bash\s*(?:\((?P<pattern>.*)\))?\s*$", re.DOTALL)

@dataclass(frozen=True)
class BashRules:
    """The command patterns of every rules file the harness reads, by list.

    A pattern is a string in Claude Code's ``Bash(…)`` syntax, or a tuple of token
    alternatives (one ``frozenset`` of words per position) for a Codex ``prefix_rule``.
    """

    allow: tuple[str | TokenPattern, ...] = ()
    ask: tuple[str | TokenPattern, ...] = ()
    deny: tuple[str | TokenPattern, ...] = ()
    unreadable: tuple[str, ...] = ()
    """Rules files that exist but could not be read or parsed (paths)."""


TokenPattern = tuple[frozenset[str], ...]


def settings_files(cwd: str | None, env: dict[str, str] | None = None) -> list[Path]:
    """The settings files Claude Code reads, in no particular order (all lists are unions)."""
    env = dict(os.environ) if env is None else env
    config_dir = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or "~").expanduser()
                                                     / ".claude")
    project = env.get("CLAUDE_PROJECT_DIR") or cwd
    files = [Path(config_dir) / "settings.json"]
    managed = MANAGED_SETTINGS.get(sys.platform)
    if managed is not None:
        files.insert(0, managed)
    if sys.platform == "win32":
        files.insert(0, Path("C:/ProgramData/ClaudeCode/managed-settings.json"))
    if project:
        files += [Path(project) / ".claude" / "settings.json",
                  Path(project) / ".claude" / "settings.local.json"]
    return files


def load_bash_rules(cwd: str | None, env: dict[str, str] | None = None) -> BashRules:
    """Read the ``Bash`` rules of every settings file that exists (missing files add nothing)."""
    lists: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    unreadable: list[str] = []
    for path in settings_files(cwd, env):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError:
            unreadable.append(str(path))
            continue
        parsed = _parse(raw)
        if parsed is None:
            unreadable.append(str(path))
            continue
        for key, patterns in parsed.items():
            lists[key].extend(patterns)
    return BashRules(allow=tuple(lists["allow"]), ask=tuple(lists["ask"]),
                     deny=tuple(lists["deny"]), unreadable=tuple(unreadable))


@lru_cache(maxsize=16)
def _parse(raw: bytes) -> dict[str, tuple[str, ...]] | None:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    perms = data.get("permissions", {})
    if not isinstance(perms, dict):
        return None
    out: dict[str, tuple[str, ...]] = {}
    for key in ("allow", "ask", "deny"):
        items = perms.get(key, [])
        if not isinstance(items, list):
            return None
        patterns = []
        for item in items:
            if not isinstance(item, str):
                return None
            m = _RULE.match(item)
            if m:
                patterns.append("*" if m.group("pattern") is None else m.group("pattern"))
        out[key] = tuple(patterns)
    return out


def rule_matches(pattern: str | TokenPattern, command: str, *, strict: bool = False,
                 words: list[str] | None = None) -> bool:
    """Whether one rule matches one command (already stripped): a ``Bash(pattern)`` string,
    or a Codex token prefix (the command's ``words``, as the shell splits them).

    ``strict`` (for allow rules) reads ``prefix:*`` at a word boundary (``Bash(ls:*)`` does
    not cover ``lsof``); deny and ask rules are read loosely, as a plain prefix.
    """
    if isinstance(pattern, tuple):
        return _prefix_matches(pattern, _words(command) if words is None else words)
    pattern = pattern.strip()
    if pattern in ("", "*"):
        return pattern == "*"
    if pattern.endswith(":*"):
        prefix = pattern[:-2]
        if not strict:
            return command.startswith(prefix)
        return command == prefix or command.startswith(prefix.rstrip() + " ")
    if "*" not in pattern:
        return command == pattern
    regex = "".join(".*" if piece == "*" else re.escape(piece)
                    for piece in re.split(r"(\*)", pattern))
    if pattern.endswith(" *"):  # `ls *` also covers a bare `ls`
        bare = pattern[:-2]
        if command == bare:
            return True
    return re.fullmatch(regex, command, flags=re.DOTALL) is not None


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _mentioned(pattern: str | TokenPattern, command: str) -> bool:
    """Whether the words a deny/ask rule starts with (``git push`` of ``Bash(git push:*)``)
    appear anywhere in ``command``, at word boundaries.

    The catch-all behind the parser: a heredoc body, an arithmetic expansion or nesting the
    scanner does not follow may still run the program, and a command left unrewritten costs
    only its digest.
    """
    if isinstance(pattern, tuple):
        alternatives = [sorted(options) for options in pattern]
    else:
        lead = pattern.strip().split("*", 1)[0].removesuffix(":")
        alternatives = [[w] for w in lead.split()]
    if not alternatives:
        return False
    body = r"\s+".join("(?:" + "|".join(re.escape(w) for w in opts) + ")"
                       for opts in alternatives)
    return re.search(rf"(?<![\w./-]){body}(?![\w.-])", command) is not None


@dataclass(frozen=True)
class _Part:
    """One simple command: its text as written, the texts deny/ask rules may also match, and
    whether an allow rule may speak for it at all."""

    raw: str
    loose: tuple[str, ...]
    plain: bool
    """No wrapper, no assignment, no redirection into a file: an allow rule read against
    ``raw`` means what it says (``Bash(npm test)`` must not approve ``sudo npm test`` or
    ``npm test > ~/.bashrc``)."""


def _parts(command: str) -> list[_Part] | None:
    """The simple commands of ``command`` (nested ones included); ``None`` when the scanner
    could not follow it (too deep, unbalanced)."""
    parsed = parse_command(command, use_bashlex=False)
    if parsed.error is not None:
        return None
    out: list[_Part] = []
    for seg in parsed.segments:
        raw = seg.raw.strip()
        if not raw:
            continue
        loose = [raw]
        if seg.argv and " ".join(seg.argv) != raw:
            loose.append(" ".join(seg.argv))
        plain = not seg.wrappers and not seg.env and not any(
            r.writes_file for r in seg.redirections)
        out.append(_Part(raw=raw, loose=tuple(loose), plain=plain))
    return out


def match_command(command: str, rules: BashRules) -> RuleMatch | None:
    """The rule list that decides ``command`` for the harness, as far as a hook can tell.

    ``deny``/``ask`` when a rule of that list matches the whole command or any simple command
    in it (as written, or without its wrappers and assignments), or names a program that
    appears anywhere in it (deny first); ``allow`` when every simple command is plain and
    matches an allow rule as written; :data:`UNKNOWN` when a rules file could not be read, or
    rules exist and the command could not be followed; ``None`` when no rule speaks.
    """
    if rules.unreadable:
        return UNKNOWN
    if not (rules.deny or rules.ask or rules.allow):
        return None
    whole = command.strip()
    parts = _parts(whole)
    if parts is None:
        return UNKNOWN
    texts = [whole] + [t for part in parts for t in part.loose]
    words = {t: _words(t) for t in texts}
    for kind, patterns in (("deny", rules.deny), ("ask", rules.ask)):
        for p in patterns:
            if _mentioned(p, whole) or any(rule_matches(p, t, words=words[t]) for t in texts):
                return kind  # type: ignore[return-value]
    # an allow rule must match each part by itself: `Bash(cd *)` must not allow `cd x && rm y`
    if rules.allow and parts and all(
            part.plain and any(rule_matches(p, part.raw, strict=True, words=words[part.raw])
                               for p in rules.allow) for part in parts):
        return "allow"
    return None


def _prefix_matches(pattern: TokenPattern, words: list[str]) -> bool:
    return len(words) >= len(pattern) and all(
        word in options for word, options in zip(words, pattern, strict=False))


def codex_rules_files(cwd: str | None, env: dict[str, str] | None = None) -> list[Path]:
    """``$CODEX_HOME/rules/*.rules`` and ``.codex/rules/*.rules`` from ``cwd`` up to ``/``."""
    env = dict(os.environ) if env is None else env
    home = Path(env.get("CODEX_HOME") or Path(env.get("HOME") or "~").expanduser() / ".codex")
    dirs = [home / "rules"]
    if cwd:
        here = Path(cwd)
        dirs += [d / ".codex" / "rules" for d in (here, *here.parents)]
    files: list[Path] = []
    for d in dirs:
        try:
            files += sorted(p for p in d.iterdir() if p.suffix == ".rules")
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            files.append(d)  # a rules directory we cannot list: unreadable, not absent
    return files


def load_codex_rules(cwd: str | None, env: dict[str, str] | None = None) -> BashRules:
    """The ``prefix_rule`` calls of every Codex rules file: forbidden → deny, prompt → ask."""
    lists: dict[str, list[str | TokenPattern]] = {"allow": [], "ask": [], "deny": []}
    unreadable: list[str] = []
    for path in codex_rules_files(cwd, env):
        try:
            rules = _parse_codex(path.read_bytes())
        except OSError:
            rules = None
        if rules is None:
            unreadable.append(str(path))
            continue
        for kind, pattern in rules:
            lists[kind].append(pattern)
    return BashRules(allow=tuple(lists["allow"]), ask=tuple(lists["ask"]),
                     deny=tuple(lists["deny"]), unreadable=tuple(unreadable))


_CODEX_DECISION = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}


@lru_cache(maxsize=16)
def _parse_codex(raw: bytes) -> tuple[tuple[str, TokenPattern], ...] | None:
    """``(kind, pattern)`` of each ``prefix_rule`` call; ``None`` for anything else."""
    try:
        tree = ast.parse(raw.decode("utf-8"), mode="exec")
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None
    found: list[tuple[str, TokenPattern]] = []
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return None
        if call.func.id != "prefix_rule":
            continue  # host_executable(…) and future shapes: not command rules
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
        except (ValueError, TypeError, SyntaxError):
            return None
        if call.args:
            try:
                args.setdefault("pattern", ast.literal_eval(call.args[0]))
            except (ValueError, TypeError, SyntaxError):
                return None
        pattern, decision = args.get("pattern"), args.get("decision", "allow")
        if not isinstance(pattern, list) or not pattern or decision not in _CODEX_DECISION:
            return None
        tokens: list[frozenset[str]] = []
        for item in pattern:
            options = item if isinstance(item, list) else [item]
            if not options or not all(isinstance(o, str) for o in options):
                return None
            tokens.append(frozenset(options))
        found.append((_CODEX_DECISION[decision], tuple(tokens)))
    return tuple(found)
