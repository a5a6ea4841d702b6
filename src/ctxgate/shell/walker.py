"""The bashlex path: walk bashlex's tree into segments, redirections and substitutions."""

from __future__ import annotations

from ctxgate.shell.model import Redirection, _Acc
from ctxgate.shell.scanner import dequote_word
from ctxgate.shell.wrappers import _segment


class _BashlexWalker:
    def __init__(self, source: str, acc: _Acc, depth: int):
        self.source = source
        self.acc = acc
        self.depth = depth

    def walk(self, node, context: str) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, context)
        elif kind == "compound":
            inner = context
            first = node.list[0] if node.list else None
            if first is not None and getattr(first, "word", None) == "(" and context == "top":
                inner = "subshell"
            for part in node.list:
                self.walk(part, inner)
            for redirect in getattr(node, "redirects", []) or []:
                self.redirect(redirect, context)
        elif kind in ("list", "pipeline", "if", "for", "while", "until", "function"):
            for part in node.parts:
                self.walk(part, context)
        elif kind in ("word", "assignment"):
            self.scan_word(node, context)
        elif kind == "redirect":
            self.redirect(node, context)

    def value(self, node) -> str:
        """A word's value: bashlex's, except that ``$'…'`` (which bashlex leaves undecoded,
        ``$'\\x72m'`` → ``$x72m``) is decoded as bash decodes it."""
        start, end = node.pos
        written = self.source[start:end]
        return dequote_word(written) if "$'" in written else node.word

    def scan_word(self, node, context: str) -> None:
        for part in getattr(node, "parts", []) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                start, end = part.pos
                self.acc.substitutions.append(self.source[start:end])
                sub = ("substitution" if part.kind == "commandsubstitution"
                       else "process_substitution")
                self.walk(part.command, sub)
            else:
                self.scan_word(part, context)

    def command(self, node, context: str) -> None:
        words: list[str] = []
        mine: list[Redirection] = []
        for part in node.parts:
            if part.kind in ("word", "assignment"):
                words.append(self.value(part))
                self.scan_word(part, context)
            elif part.kind == "redirect":
                mine.append(self.redirect(part, context))
            else:
                self.walk(part, context)
        start, end = node.pos
        _segment(words, self.source[start:end], context, self.acc, self.depth, True,
                 tuple(mine))

    def redirect(self, node, context: str) -> Redirection:
        """Record one redirection (after any substitution in its target) and return it."""
        out = node.output
        if isinstance(out, int):
            target = str(out)
        else:
            target = self.value(out)
            self.scan_word(out, context)
        fd = node.input if isinstance(node.input, int) else None
        made = Redirection(operator=node.type, target=target, fd=fd)
        self.acc.redirections.append(made)
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            value = heredoc.value
            body = value.rsplit("\n", 1)[0] + "\n" if "\n" in value else ""
            self.acc.heredocs.append(body)
            written = self.source[out.pos[0]:out.pos[1]] if not isinstance(out, int) else ""
            self.acc.literal_heredocs.append(any(q in written for q in "'\"\\"))
        return made
