"""The fallback scanner: a careful tokenizer for what bashlex rejects (and simple commands).

Quotes, escapes, ``$(…)``/backticks/``<(…)`` (parsed recursively), heredocs (bodies kept as
data), comments, operators and redirections; it never executes or expands anything.
"""

from __future__ import annotations

import re

from ctxgate.shell.model import Redirection, _Acc
from ctxgate.shell.wrappers import _segment

_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done",
                       "while", "until", "esac", "function"})
_OPERATORS = ("&&", "||", "|&", ";;", "|", ";", "&", "\n", "(", ")")
_REDIRECT = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|>|<)")


class _Scanner:
    """Hand-written tokenizer for what bashlex rejects: quotes, escapes, substitutions,
    heredocs, comments, operators and redirections, without executing anything."""

    def __init__(self, source: str, acc: _Acc, depth: int):
        self.s = source
        self.acc = acc
        self.depth = depth
        self.i = 0
        self.pending_heredocs: list[tuple[str, bool, bool]] = []

    def run(self) -> None:
        words: list[str] = []
        start = 0
        context_stack = ["top"]
        expect_target: tuple[str, int | None] | None = None
        case_pattern = False
        comment_at: int | None = None
        self.own_redirections: list[Redirection] = []
        s = self.s
        while True:
            self.skip_blanks()
            if self.i >= len(s):
                break
            ch = s[self.i]
            if ch == "#" and (self.i == 0 or s[self.i - 1] in " \t\n;&|()"):
                comment_at = self.i if comment_at is None else comment_at
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
                continue
            m = _REDIRECT.match(s, self.i)
            if m and expect_target is None and (m.group(1) or ch in "<>&"):
                if not (ch == "&" and not m.group(2).startswith("&")):
                    op = m.group(2)
                    if op in ("<", ">") and s.startswith("(", m.end()):  # <( … ) process subst
                        m = None
                    else:
                        fd = int(m.group(1)) if m.group(1) else None
                        self.i = m.end()
                        if op in (">&", "<&"):
                            self.skip_blanks()
                        expect_target = (op, fd)
                        continue
            op = next((o for o in _OPERATORS if s.startswith(o, self.i)), None)
            if op is not None:
                if op == ")" and (case_pattern or (words and words[0] == "case")):
                    # `case` header or pattern list: words before `)` are patterns, not commands
                    case_pattern = False
                    words = []
                    self.i += 1
                    start = self.i
                    continue
                self.flush(words, s[start:comment_at or self.i], context_stack[-1])
                comment_at = None
                case_pattern = op == ";;"
                words = []
                self.i += len(op)
                if op == "\n":
                    self.read_heredoc_bodies()
                if op == "(":
                    context_stack.append("subshell" if context_stack[-1] == "top"
                                         else context_stack[-1])
                elif op == ")" and len(context_stack) > 1:
                    context_stack.pop()
                start = self.i
                continue
            word = self.read_word(context_stack[-1])
            if expect_target is not None:
                op_, fd = expect_target
                expect_target = None
                if op_ in ("<<", "<<-"):
                    self.pending_heredocs.append((word[0], op_ == "<<-", word[1]))
                redirection = Redirection(operator=op_, target=word[0], fd=fd)
                self.acc.redirections.append(redirection)
                self.own_redirections.append(redirection)
                continue
            if not words and word[0] in _RESERVED and not word[1]:
                case_pattern = case_pattern and word[0] != "esac"
                start = self.i  # keywords (`then`, `do`, `{`, `!`) start no program
                continue
            words.append(word[0])
        self.flush(words, s[start:comment_at or len(s)], context_stack[-1])
        if self.pending_heredocs:
            self.acc.errors.append("heredoc without body")

    def flush(self, words: list[str], raw: str, context: str) -> None:
        own, self.own_redirections = tuple(self.own_redirections), []
        if not words:
            return
        if words[0] in ("for", "case", "select"):
            return  # loop/case headers: their bodies are separate segments
        _segment(words, raw, context, self.acc, self.depth, False, own)

    def skip_blanks(self) -> None:
        s = self.s
        while self.i < len(s):
            if s[self.i] in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            else:
                break

    def read_word(self, context: str) -> tuple[str, bool]:
        """One word with quotes removed; returns (text, was_quoted)."""
        s = self.s
        out: list[str] = []
        quoted = False
        while self.i < len(s):
            ch = s[self.i]
            if ch in " \t\n;&|()":
                break
            if ch in "<>":
                if not s.startswith("(", self.i + 1):
                    break  # a redirection starts here
                end = self.matching(self.i + 2, ")")
                self.record_subst(self.i, end, "process_substitution")
                out.append(s[self.i:end])
                self.i = end
                continue
            if ch == "\\":
                if self.i + 1 < len(s):
                    if s[self.i + 1] != "\n":
                        out.append(s[self.i + 1])
                    self.i += 2
                else:
                    self.i += 1
                quoted = True
                continue
            if ch == "'":
                end = s.find("'", self.i + 1)
                if end == -1:
                    self.acc.errors.append("unterminated single quote")
                    end = len(s)
                out.append(s[self.i + 1:end])
                self.i = end + 1
                quoted = True
                continue
            if ch == "$" and s.startswith("$'", self.i):
                text, self.i = ansi_c_at(s, self.i)
                out.append(text)
                quoted = True
                continue
            if ch == '"':
                self.i += 1
                buf: list[str] = []
                while self.i < len(s) and s[self.i] != '"':
                    c = s[self.i]
                    if c == "\\" and self.i + 1 < len(s):
                        nxt = s[self.i + 1]
                        buf.append(nxt if nxt in '"\\$`\n' else c + nxt)
                        self.i += 2
                    elif c == "$" and s.startswith("$(", self.i) and not s.startswith("$((", self.i):
                        end = self.matching(self.i + 2, ")")
                        self.record_subst(self.i, end, "substitution")
                        buf.append(s[self.i:end])
                        self.i = end
                    elif c == "`":
                        end = self.backtick_end(self.i + 1)
                        self.record_subst(self.i, end, "substitution")
                        buf.append(s[self.i:end])
                        self.i = end
                    else:
                        buf.append(c)
                        self.i += 1
                if self.i >= len(s):
                    self.acc.errors.append("unterminated double quote")
                out.append("".join(buf))
                self.i += 1
                quoted = True
                continue
            if ch == "$" and s.startswith("$((", self.i):
                end = self.matching(self.i + 3, "))")
                out.append(s[self.i:end])
                self.i = end
                continue
            if ch == "$" and s.startswith("$(", self.i):
                end = self.matching(self.i + 2, ")")
                self.record_subst(self.i, end, "substitution")
                out.append(s[self.i:end])
                self.i = end
                continue
            if ch == "`":
                end = self.backtick_end(self.i + 1)
                self.record_subst(self.i, end, "substitution")
                out.append(s[self.i:end])
                self.i = end
                continue
            out.append(ch)
            self.i += 1
        return "".join(out), quoted

    def matching(self, j: int, closer: str) -> int:
        """Index just past the ``closer`` that ends a construct opened before ``j``."""
        end = construct_end(self.s, j, closer)
        if end is None:
            self.acc.errors.append(f"unterminated {closer!r}")
            return len(self.s)
        return end

    def backtick_end(self, j: int) -> int:
        end = backtick_end(self.s, j)
        if end is None:
            self.acc.errors.append("unterminated backtick")
            return len(self.s)
        return end

    def record_subst(self, start: int, end: int, context: str) -> None:
        text = self.s[start:end]
        self.acc.substitutions.append(text)
        if text.startswith("`"):
            inner = text[1:-1] if text.endswith("`") and len(text) > 1 else text[1:]
        else:
            inner = text[2:-1] if text.endswith(")") else text[2:]
        from ctxgate.shell import _parse

        self.acc.merge(_parse(inner, depth=self.depth + 1, use_bashlex=False), context)

    def read_heredoc_bodies(self) -> None:
        s = self.s
        while self.pending_heredocs:
            delim, strip_tabs, literal = self.pending_heredocs.pop(0)
            body: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                line = s[self.i:] if end == -1 else s[self.i:end]
                self.i = len(s) if end == -1 else end + 1
                check = line.lstrip("\t") if strip_tabs else line
                if check == delim:
                    break
                body.append(line + "\n")
            self.acc.heredocs.append("".join(body))
            self.acc.literal_heredocs.append(literal)


def construct_end(s: str, j: int, closer: str) -> int | None:
    """Index just past the ``closer`` (``)``, ``))``, ``}``) that ends a construct opened
    before ``j`` — quotes, escapes and nested parentheses skipped — or ``None`` when ``s``
    ends first."""
    level = 1
    while j < len(s):
        if s.startswith(closer, j) and level == 1:
            return j + len(closer)
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "'":
            k = s.find("'", j + 1)
            j = len(s) if k == -1 else k + 1
            continue
        if c == '"':
            j += 1
            while j < len(s) and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            j += 1
            continue
        if c == "(":
            level += 1
        elif c == ")":
            level -= 1
        j += 1
    return None


def backtick_end(s: str, j: int) -> int | None:
    """Index just past the backtick that closes one opened before ``j``, or ``None``."""
    while j < len(s) and s[j] != "`":
        j += 2 if s[j] == "\\" else 1
    return j + 1 if j < len(s) else None


_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_NUMERIC = re.compile(r"([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|"
                           r"U([0-9A-Fa-f]{1,8})|c(.)", re.S)


def ansi_c(body: str) -> str:
    """The text of bash's ANSI-C quoting ``$'…'`` (``body`` without the quotes): ``\\n``,
    ``\\t``, ``\\x72``, ``\\162``, ``\\u00e9``, ``\\cX`` … decoded as bash decodes them, so
    ``$'\\x72\\x6d'`` is judged as ``rm``. An unknown escape stays as written."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        m = _ANSI_NUMERIC.match(body, i + 1)
        if m is None:
            out.append(c + nxt)
            i += 2
            continue
        octal, hx, u4, u8, ctl = m.groups()
        if ctl is not None:
            out.append(chr(ord(ctl.upper()) ^ 0x40) if ctl != "?" else "\x7f")
        else:
            code = int(octal, 8) if octal else int(hx or u4 or u8, 16)
            out.append(chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else "?")
        i = m.end()
    return "".join(out)


def ansi_c_at(s: str, start: int) -> tuple[str, int]:
    """The decoded text of the ``$'…'`` that starts at ``s[start]``, and the index after its
    closing quote (the end of ``s`` when it is unterminated)."""
    end = start + 2
    while end < len(s) and s[end] != "'":
        end += 2 if s[end] == "\\" else 1
    return ansi_c(s[start + 2:end]), end + 1


def dequote_word(text: str) -> str:
    """The value of one shell word as written (quotes removed, ``$'…'`` decoded, expansions
    left as written): bashlex keeps ``$'…'`` undecoded, so the walker asks here for words that
    hold one."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 < len(text) and text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            end = len(text) if end == -1 else end
            out.append(text[i + 1:end])
            i = end + 1
        elif c == "$" and text.startswith("$'", i):
            decoded, i = ansi_c_at(text, i)
            out.append(decoded)
        elif c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                if text[i] == "\\" and i + 1 < len(text):
                    nxt = text[i + 1]
                    out.append(nxt if nxt in '"\\$`' else ("" if nxt == "\n" else "\\" + nxt))
                    i += 2
                else:
                    out.append(text[i])
                    i += 1
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)
