"""Value types of a parsed command: segments, redirections, the whole parse."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ParsedCommand", "Redirection", "Segment"]

_DISCARD_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Segment:
    """One simple command: the program it runs once wrappers and assignments are skipped."""

    program: str
    """Basename of the program (``/usr/bin/psql`` → ``psql``); ``""`` for a bare assignment."""
    argv: tuple[str, ...]
    """The program word as written, then its arguments (quotes removed)."""
    wrappers: tuple[str, ...] = ()
    """Wrapper programs skipped, outermost first (``("sudo", "timeout")``)."""
    env: tuple[str, ...] = ()
    """Environment assignments skipped (``("FOO=1",)``)."""
    raw: str = ""
    """The source text of this simple command."""
    context: str = "top"
    """Where it sits: ``top``, ``subshell``, ``substitution``, ``process_substitution``,
    ``shell_c`` (body of ``sh -c``/``eval``)."""
    redirections: tuple[Redirection, ...] = ()
    """The redirections written on this simple command (``sh <<<'…'``, ``> out``)."""

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments after the program word."""
        return self.argv[1:]

    def has_option(self, *names: str) -> bool:
        """Whether an argument is one of ``names`` or ``NAME=value`` for a long option."""
        for arg in self.args:
            for name in names:
                if arg == name or (name.startswith("--") and arg.startswith(name + "=")):
                    return True
        return False


@dataclass(frozen=True, kw_only=True, slots=True)
class Redirection:
    """One redirection of any segment (``2>/dev/null``, ``>> log``, ``<<EOF``)."""

    operator: str
    """``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``>&``, ``<``, ``<<``, ``<<-``, ``<<<``, ``<>``."""
    target: str
    """File name, fd number (``"1"`` for ``2>&1``) or heredoc delimiter."""
    fd: int | None = None
    """Explicit source descriptor (``2`` in ``2>x``), else None."""

    @property
    def writes_file(self) -> bool:
        """True when output goes to a real file (not ``/dev/null``, not another descriptor)."""
        if self.operator not in (">", ">>", ">|", "&>", "&>>", ">&", "<>"):
            return False
        if self.target.isdigit() or self.target == "-":
            return False
        return self.target not in _DISCARD_TARGETS

    @property
    def discards(self) -> bool:
        """True for output thrown away (``> /dev/null``)."""
        return self.target == "/dev/null" and self.operator not in ("<", "<<", "<<-", "<<<")


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedCommand:
    """The parse of a command string."""

    source: str
    segments: tuple[Segment, ...] = ()
    redirections: tuple[Redirection, ...] = ()
    substitutions: tuple[str, ...] = ()
    """Source text of each ``$(…)``, backtick and ``<(…)``/``>(…)`` substitution."""
    heredocs: tuple[str, ...] = ()
    """Heredoc bodies (data, never parsed as commands)."""
    literal_heredocs: tuple[bool, ...] = ()
    """For each of :attr:`heredocs`: its delimiter was quoted or escaped (``<<'EOF'``,
    ``<<\\EOF``), so bash leaves the body as it is; otherwise bash expands ``$(…)`` and
    backticks in it before the command reads it."""
    parsed_ok: bool = True
    """True when bashlex parsed the string, or it was simple enough for the scanner to be
    exact (``parser="simple"``); False when the fallback scanner stood in for bashlex."""
    parser: str = "bashlex"
    """``"bashlex"``, ``"simple"`` or ``"fallback"``."""
    error: str | None = None
    """Why bashlex (and, if so, the scanner) could not parse the string."""

    @property
    def programs(self) -> tuple[str, ...]:
        """Program basenames of all segments, empty ones left out.

        Order is execution order, roughly: a substitution's programs come before the
        command that uses its output, otherwise source order.
        """
        return tuple(s.program for s in self.segments if s.program)

    @property
    def writes_files(self) -> bool:
        """Whether any redirection writes to a real file."""
        return any(r.writes_file for r in self.redirections)


@dataclass
class _Acc:
    segments: list[Segment] = field(default_factory=list)
    redirections: list[Redirection] = field(default_factory=list)
    substitutions: list[str] = field(default_factory=list)
    heredocs: list[str] = field(default_factory=list)
    literal_heredocs: list[bool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def merge(self, other: ParsedCommand, context: str) -> None:
        for seg in other.segments:
            keep = seg.context if seg.context != "top" else context
            self.segments.append(_replace_context(seg, keep))
        self.redirections.extend(other.redirections)
        self.substitutions.extend(other.substitutions)
        self.heredocs.extend(other.heredocs)
        self.literal_heredocs.extend(other.literal_heredocs)
        if other.error:
            self.errors.append(other.error)


def _replace_context(seg: Segment, context: str) -> Segment:
    return Segment(program=seg.program, argv=seg.argv, wrappers=seg.wrappers, env=seg.env,
                   raw=seg.raw, context=context, redirections=seg.redirections)
