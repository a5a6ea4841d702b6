"""One declaration of each command's options, from which every front end's schema comes.

``expand``, ``read``, ``list``, ``search`` and ``run`` are offered by the typer CLI, by the
argparse fast paths (``expand``, ``run``), by the MCP server and by the framework adapters
(``expand``); ``hook pre`` and ``hook post`` by typer and their argparse twins. Each
command's options are declared here once, as :class:`Option` rows; :func:`argparse_parser`
builds the argparse parser, :func:`mcp_schema` the MCP input schema, and
:func:`ctxgate.cli._options.with_options` the typer parameters, all from the same rows
(a test holds the three equal: names, types, defaults). The hand-written quick parsers of
the hottest paths (:func:`ctxgate.firewall.passthrough._parse`, the exact-option tables of
:mod:`ctxgate.cli.fast_hook`) do not import this module (0.3 ms from bytecode, ~3 ms compiled
from source, on a path whose whole budget is tens of milliseconds), and a test holds each
equal to its declaration instead.

Standard library only: the argparse fast path imports this before anything heavy.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the fast path must not import typing
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from typing import Any

__all__ = [
    "EXPAND",
    "HOOK_POST",
    "HOOK_PRE",
    "LIST",
    "READ",
    "RUN",
    "SEARCH",
    "Command",
    "Option",
    "argparse_parser",
    "from_mcp",
    "mcp_schema",
]


class Option:
    """One option (or the positional argument) of a command.

    ``name`` is the library keyword (:meth:`ctxgate.app.App.expand` takes it);
    ``flags`` the CLI spellings (empty: a positional argument); ``kind`` one of ``str``,
    ``int``, ``float``, ``bool`` (a flag); ``default`` the value when not given; ``help``
    the CLI help; ``mcp`` the MCP / adapter argument name (``""``: the same as ``name``;
    ``None``: a CLI-only option such as an output format); ``mcp_help`` the MCP description
    when it differs from ``help`` (which names CLI flags; ``""``: none); ``minimum`` and
    ``maximum`` the bounds the schema states; ``many``: a positional argument of several
    words (CLI), joined by spaces, one string in MCP; ``remainder``: a positional argument
    that takes every word left (``run``'s command, after ``--``; optional); ``cli=False``:
    offered to the model only; ``negation``: the flag that turns a ``bool`` option off
    (``--no-rewrite``); ``mcp_required``: the MCP schema requires it (positional arguments
    always are); ``exclusive_minimum``: a bound the value must exceed.

    A plain class rather than a dataclass: this module is imported by the argparse fast
    path, where generating dataclass methods is a measurable share of the start.
    """

    __slots__ = (
        "cli",
        "default",
        "exclusive_minimum",
        "flags",
        "help",
        "kind",
        "many",
        "maximum",
        "mcp",
        "mcp_help",
        "mcp_required",
        "metavar",
        "minimum",
        "name",
        "negation",
        "remainder",
    )

    def __init__(
        self,
        name: str,
        flags: tuple[str, ...],
        kind: type,
        default: Any = None,
        *,
        help: str = "",
        mcp: str | None = "",
        mcp_help: str | None = None,
        minimum: int | None = None,
        maximum: int | None = None,
        metavar: str | None = None,
        many: bool = False,
        cli: bool = True,
        remainder: bool = False,
        negation: str | None = None,
        mcp_required: bool = False,
        exclusive_minimum: float | None = None,
    ) -> None:
        self.name, self.flags, self.kind, self.default = name, flags, kind, default
        self.help, self.mcp, self.mcp_help = help, mcp, mcp_help
        self.minimum, self.maximum, self.metavar = minimum, maximum, metavar
        self.many, self.cli = many, cli
        self.remainder, self.negation = remainder, negation
        self.mcp_required, self.exclusive_minimum = mcp_required, exclusive_minimum

    def __repr__(self) -> str:
        return f"Option({self.name!r}, {self.flags!r}, {self.kind.__name__})"

    @property
    def positional(self) -> bool:
        return not self.flags

    @property
    def required(self) -> bool:
        """The MCP schema requires it."""
        return (self.positional and not self.remainder) or self.mcp_required

    @property
    def mcp_name(self) -> str | None:
        return self.name if self.mcp == "" else self.mcp


class Command:
    """A command's name, its one-line description, and its options in CLI order."""

    __slots__ = ("description", "name", "options")

    def __init__(self, name: str, description: str, options: tuple[Option, ...]) -> None:
        self.name, self.description, self.options = name, description, options

    def option(self, name: str) -> Option:
        for opt in self.options:
            if opt.name == name:
                return opt
        raise KeyError(name)


EXPAND = Command(
    "expand",
    "Show part of an archived tool output.",
    (
        Option(
            "entry_id",
            (),
            str,
            help="Archive id or unique prefix (at least 4 hex characters).",
            mcp="id",
            mcp_help="Archive id (or a unique prefix) from a digest.",
            metavar="ID",
        ),
        Option(
            "lines",
            ("--lines", "-n"),
            str,
            help="Line range A:B, 1-based inclusive; negatives count from the end (-1 is the "
            "last line); 'A:' and ':B' are open.",
            mcp_help="A:B, 1-based inclusive; negative from the end.",
        ),
        Option(
            "head",
            ("--head",),
            int,
            help="First N lines.",
            mcp_help="The first N lines.",
            minimum=0,
        ),
        Option(
            "tail", ("--tail",), int, help="Last N lines.", mcp_help="The last N lines.", minimum=0
        ),
        Option(
            "grep",
            ("--grep", "-g"),
            str,
            help="Regular expression (Python syntax) matched per line against the UTF-8 bytes; "
            "combine with --lines/--head/--tail to search a range.",
            mcp_help="Regular expression; the lines that match.",
        ),
        Option(
            "ignore_case",
            ("--ignore-case", "-i"),
            bool,
            False,
            help="Case-insensitive --grep (ASCII case folding).",
            mcp_help="Case-insensitive grep (ASCII case folding).",
        ),
        Option(
            "fixed_strings",
            ("--fixed-strings", "-F"),
            bool,
            False,
            help="The --grep pattern is a literal string, not a regular expression: ( [ * ? . "
            "match themselves.",
            mcp="literal",
            mcp_help="grep is a literal string, not a regular expression.",
        ),
        Option(
            "context",
            ("--context", "-C"),
            int,
            0,
            help="Lines of context around each --grep match.",
            mcp_help="Lines around each match.",
            minimum=0,
        ),
        Option(
            "before",
            ("--before", "-B"),
            int,
            0,
            help="Lines of context before each --grep match.",
            mcp_help="Lines before each match.",
            minimum=0,
        ),
        Option(
            "after",
            ("--after", "-A"),
            int,
            0,
            help="Lines of context after each --grep match.",
            mcp_help="Lines after each match.",
            minimum=0,
        ),
        Option(
            "max_matches",
            ("--max-matches", "-m"),
            int,
            help="Matching lines shown (the total is always counted) [default: "
            "archive.grep_max_matches, 200].",
            mcp_help="Matching lines shown (the total is always counted; default 200).",
            minimum=1,
        ),
        Option(
            "byte_range",
            ("--bytes",),
            str,
            help="OFFSET:LENGTH in bytes, cut at UTF-8 boundaries; a negative offset counts "
            "from the end.",
            mcp="bytes",
            mcp_help="OFFSET:LENGTH in UTF-8 bytes.",
        ),
        Option(
            "json_pointer",
            ("--json",),
            str,
            help="RFC 6901 JSON pointer ('' is the whole document; in JSON Lines the first "
            "token is the record index, line - 1).",
            mcp="json",
            mcp_help="RFC 6901 JSON pointer.",
        ),
        Option(
            "keys",
            ("--keys",),
            bool,
            False,
            help="Structural view of JSON / JSON Lines: keys, types, counts, samples.",
            mcp_help="Structural view of a JSON output.",
        ),
        Option(
            "max_tokens",
            ("--max-tokens",),
            int,
            help="Token budget of the view [default: archive.expand_max_tokens, 4000].",
            mcp_help="View budget in tokens (default 4000).",
            minimum=100,  # ctxgate.archive.views.MIN_VIEW_TOKENS (a test holds them equal)
        ),
        Option(
            "json_output",
            ("--json-output",),
            bool,
            False,
            help="Print the view and its paging facts as one JSON object.",
            mcp=None,
        ),
    ),
)
"""``ctxgate expand`` / the ``expand`` tool."""

READ = Command(
    "read",
    "Print a page of a text file as it is, under a token ceiling.",
    (
        Option(
            "path",
            (),
            str,
            help="The text file to read.",
            metavar="PATH",
            mcp_help="The file to read (text; never digested).",
        ),
        Option(
            "lines",
            ("--lines", "-n"),
            str,
            help="A:B, 1-based inclusive; A: or -N: to the end.",
            mcp_help="A:B, 1-based inclusive; A: or -N: to the end; default 1:.",
        ),
        Option(
            "max_tokens",
            ("--max-tokens",),
            int,
            help="Page ceiling in o200k_base tokens (default: [firewall] verbatim_max_tokens, "
            "25,000).",
            mcp_help="Page ceiling in o200k_base tokens (default 25,000).",
            minimum=1,
            maximum=100_000,
        ),
    ),
)
"""``ctxgate read`` / the MCP ``read`` tool."""

LIST = Command(
    "list",
    "List archived outputs, most recently used first.",
    (
        Option(
            "limit",
            ("--limit",),
            int,
            20,
            help="Entries shown, newest use first.",
            mcp_help="Entries shown, most recently used first (default 20).",
            minimum=1,
            maximum=200,
        ),
        Option("json_output", ("--json-output",), bool, False, help="Print JSON.", mcp=None),
    ),
)
"""``ctxgate archive ls`` / the MCP ``list`` tool."""

SEARCH = Command(
    "search",
    "Search every archived output for lines holding all the words.",
    (
        Option(
            "query",
            (),
            str,
            help="Words a matching line holds (all of them).",
            metavar="WORD...",
            many=True,
            mcp_help="Words; a line matches when it holds all of them (case-insensitive "
            "substrings).",
        ),
        Option(
            "limit",
            ("--limit",),
            int,
            20,
            help="Most matching lines shown (1-200).",
            mcp_help="Most matching lines returned (default 20).",
            minimum=1,
            maximum=200,
        ),
        Option("json_output", ("--json-output",), bool, False, help="Print JSON.", mcp=None),
    ),
)
"""``ctxgate archive search`` / the MCP ``search`` tool."""

RUN = Command(
    "run",
    "Run a command; print its output, or a digest plus an archive id when it is large.",
    (
        Option(
            "argv",
            (),
            str,
            help="The command and its arguments, after `--`.",
            metavar="-- CMD [ARGS]...",
            many=True,
            remainder=True,
            mcp=None,
        ),
        Option(
            "shell",
            ("-c", "--shell"),
            str,
            help="Run this shell string with bash -c instead of CMD ARGS.",
            mcp="command",
            mcp_help="Shell command (bash -c).",
            mcp_required=True,
        ),
        Option(
            "raw",
            ("--raw",),
            bool,
            False,
            help="Print the output verbatim, live; archived, never digested.",
            mcp_help="Return the output verbatim (still archived).",
        ),
        Option(
            "inline",
            ("--inline",),
            bool,
            False,
            help="Verbatim when the output fits [firewall] inline_max_bytes (default 32,768 "
            "bytes).",
            mcp_help="Verbatim up to the inline byte cap.",
        ),
        Option(
            "explain",
            ("--explain",),
            bool,
            False,
            help="Print the decision, its reason and the archive id on stderr.",
            mcp=None,
        ),
        Option(
            "tool",
            ("--tool",),
            str,
            "shell",
            help="Tool name recorded and used for the decision.",
            mcp=None,  # the MCP tool records its calls as "bash"
        ),
        Option(
            "timeout",
            ("--timeout",),
            float,
            help="Stop the command after this many seconds (SIGTERM, then SIGKILL; exit code "
            "124).",
            mcp_help="Seconds.",
            exclusive_minimum=0,
        ),
        Option(
            "separate_stderr",
            ("--separate-stderr",),
            bool,
            False,
            help="Archive and digest stderr apart from stdout (default: merged in write order).",
            mcp=None,
        ),
        Option(
            "session",
            ("--session",),
            str,
            help="Session or run id recorded with the archive entry.",
            mcp=None,
        ),
        Option(
            "min_tokens",
            ("--min-tokens",),
            int,
            help="Digest outputs of at least this many tokens [default: [firewall] min_tokens, "
            "2,000].",
            mcp=None,
        ),
        Option(
            "sandbox",
            ("--sandbox",),
            str,
            help="read-only: run where the command cannot write (bwrap, a read-only mount "
            "namespace or Landlock; sandbox-exec on macOS); unsandboxed, with a note, where "
            "none is available (see `ctxgate doctor`). The hooks add it to fast-path allows.",
            mcp=None,
        ),
    ),
)
"""``ctxgate run`` / the MCP ``run`` tool (``command`` is ``--shell``). The small-output
quick parser (:func:`ctxgate.firewall.passthrough._parse`) is held equal to it by a test."""

_HARNESS = Option(
    "harness",
    ("--harness",),
    str,
    "claude-code",
    help="Harness: claude-code or codex (each has its own reply format; see docs/hooks.md).",
    mcp=None,
)

HOOK_PRE = Command(
    "pre",
    "PreToolUse: judge the call; deny, or allow (and wrap shell commands). Fails closed.",
    (
        _HARNESS,
        Option(
            "rewrite",
            ("--rewrite",),
            bool,
            True,
            help="Route allowed shell commands through `ctxgate run` (archive + digest).",
            negation="--no-rewrite",
            mcp=None,
        ),
        Option(
            "approve",
            ("--approve",),
            bool,
            False,
            help="On allow, also skip the harness's own permission prompt.",
            mcp=None,
        ),
        Option(
            "backend",
            ("--backend",),
            str,
            help="Decision backend (default: [gate] backend).",
            mcp=None,
        ),
        Option(
            "deadline",
            ("--deadline",),
            float,
            30.0,  # ctxgate.integrations.hooks.supervisor.DEFAULT_DEADLINE_SECONDS (a test)
            help="Seconds after which the call is blocked, whatever is running.",
            mcp=None,
        ),
    ),
)
"""``ctxgate hook pre`` (typer and :mod:`ctxgate.cli.fast_hook`)."""

HOOK_POST = Command(
    "post",
    "PostToolUse: digest a large firewallable output; prints nothing for small ones.",
    (_HARNESS,),
)
"""``ctxgate hook post``."""

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def mcp_schema(command: Command) -> dict[str, Any]:
    """The JSON Schema of ``command``'s MCP arguments: one property per option the model is
    offered (CLI-only options left out), positional arguments required, no others allowed."""
    properties: dict[str, Any] = {}
    required = []
    for opt in command.options:
        name = opt.mcp_name
        if name is None:
            continue
        prop: dict[str, Any] = {"type": _JSON_TYPES[opt.kind]}
        if opt.minimum is not None:
            prop["minimum"] = opt.minimum
        if opt.exclusive_minimum is not None:
            prop["exclusiveMinimum"] = opt.exclusive_minimum
        if opt.maximum is not None:
            prop["maximum"] = opt.maximum
        if opt.default is not None:
            prop["default"] = opt.default
        description = opt.help if opt.mcp_help is None else opt.mcp_help
        if description:
            prop["description"] = description
        properties[name] = prop
        if opt.required:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def from_mcp(command: Command, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call's arguments (MCP, a framework adapter) → the library keywords of
    ``command`` (``literal`` → ``fixed_strings`` …), checked against :func:`mcp_schema`'s
    rules; ``None`` values are left out.

    Raises:
        UsageError: an argument the schema does not name (the message lists the known
            ones), a missing or empty positional argument, an integer or string argument of
            another type.
    """
    from ctxgate.errors import UsageError

    tool = command.name
    offered = {opt.mcp_name: opt for opt in command.options if opt.mcp_name is not None}
    unknown = sorted(set(arguments) - set(offered))
    if unknown:
        raise UsageError(f"{tool}: unknown argument(s) {unknown}; known: {', '.join(offered)}")
    values: dict[str, Any] = {}
    for name, opt in offered.items():
        value = arguments.get(name)
        if value is None or (opt.required and value == ""):
            if opt.required:
                raise UsageError(f"{tool}: {name!r} is required")
            continue
        if opt.kind is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise UsageError(f"{tool}: {name!r} must be an integer, got {value!r}")
        if opt.kind is str and not isinstance(value, str):
            raise UsageError(f"{tool}: {name!r} must be a string, got {value!r}")
        if opt.kind is bool and not isinstance(value, bool):  # "false" is a truthy string
            raise UsageError(f"{tool}: {name!r} must be true or false, got {value!r}")
        if opt.kind is float:
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise UsageError(f"{tool}: {name!r} must be a number, got {value!r}")
            if opt.exclusive_minimum is not None and not value > opt.exclusive_minimum:
                raise UsageError(
                    f"{tool}: {name!r} must be more than {opt.exclusive_minimum}, got {value!r}"
                )
        values[opt.name] = value
    return values


def argparse_parser(command: Command, prog: str, **settings: Any) -> argparse.ArgumentParser:
    """The argparse parser of ``command`` (the fast path's twin of the typer command);
    ``settings`` go to ``ArgumentParser`` (``add_help=False`` …)."""
    import argparse

    parser = argparse.ArgumentParser(prog=prog, description=command.description, **settings)
    for opt in command.options:
        if not opt.cli:
            continue
        if opt.positional:
            nargs = argparse.REMAINDER if opt.remainder else "+" if opt.many else None
            parser.add_argument(opt.name, metavar=opt.metavar or opt.name.upper(), nargs=nargs)
        elif opt.kind is bool:
            parser.add_argument(
                *opt.flags, dest=opt.name, action="store_true", default=opt.default
            )
            if opt.negation:
                parser.add_argument(opt.negation, dest=opt.name, action="store_false")
        else:
            parser.add_argument(*opt.flags, dest=opt.name, type=opt.kind, default=opt.default)
    return parser
