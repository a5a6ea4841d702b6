"""`ctxgate expand`: read an archived output back through a bounded view (thin over
:meth:`ctxgate.archive.Archive.expand`).

Kept cheap to start: only typer is imported at module level; the archive, zstandard and the
tokenizer load inside the command, and the tokenizer only when a view is larger than its
budget in bytes.

typer 0.29 validates every parameter through pydantic ``TypeAdapter``s, which costs ~0.1-0.3 s
per process before any command runs, so ``cli.main()`` sends ``expand`` to the argparse twin
in :mod:`ctxgate.cli.fast` (same options, output and exit codes; a test keeps them in step).
"""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the top-level app."""
    app.command("expand")(expand)


def expand(
    entry_id: Annotated[str, typer.Argument(
        metavar="ID", help="Archive id or unique prefix (at least 4 hex characters).")],
    lines: Annotated[str | None, typer.Option(
        "--lines", "-n", help="Line range A:B, 1-based inclusive; negatives count from the end "
        "(-1 is the last line); 'A:' and ':B' are open.", show_default=False)] = None,
    head: Annotated[int | None, typer.Option(
        "--head", help="First N lines.", show_default=False)] = None,
    tail: Annotated[int | None, typer.Option(
        "--tail", help="Last N lines.", show_default=False)] = None,
    grep: Annotated[str | None, typer.Option(
        "--grep", "-g", help="Regular expression (Python syntax) matched per line against the "
        "UTF-8 bytes; combine with --lines/--head/--tail to search a range.",
        show_default=False)] = None,
    ignore_case: Annotated[bool, typer.Option(
        "--ignore-case", "-i", help="Case-insensitive --grep (ASCII case folding).")] = False,
    fixed_strings: Annotated[bool, typer.Option(
        "--fixed-strings", "-F", help="The --grep pattern is a literal string, not a regular "
        "expression: ( [ * ? . match themselves.")] = False,
    context: Annotated[int, typer.Option(
        "--context", "-C", help="Lines of context around each --grep match.")] = 0,
    before: Annotated[int, typer.Option(
        "--before", "-B", help="Lines of context before each --grep match.")] = 0,
    after: Annotated[int, typer.Option(
        "--after", "-A", help="Lines of context after each --grep match.")] = 0,
    max_matches: Annotated[int | None, typer.Option(
        "--max-matches", "-m", help="Matching lines shown (the total is always counted) "
        "[default: archive.grep_max_matches, 200].", show_default=False)] = None,
    byte_range: Annotated[str | None, typer.Option(
        "--bytes", help="OFFSET:LENGTH in bytes, cut at UTF-8 boundaries; a negative offset "
        "counts from the end.", show_default=False)] = None,
    json_pointer: Annotated[str | None, typer.Option(
        "--json", help="RFC 6901 JSON pointer ('' is the whole document; in JSON Lines the "
        "first token is the record index, line - 1).", show_default=False)] = None,
    keys: Annotated[bool, typer.Option(
        "--keys", help="Structural view of JSON / JSON Lines: keys, types, counts, samples.")
    ] = False,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", help="Token budget of the view [default: archive.expand_max_tokens, "
        "4000].", show_default=False)] = None,
    json_output: Annotated[bool, typer.Option(
        "--json-output", help="Print the view and its paging facts as one JSON object.")
    ] = False,
) -> None:
    """Show part of an archived tool output, bounded, with a `next:` hint for the next page.

    Unknown, expired or ambiguous ids exit 2 and list recent ids.

    Example: ctxgate expand 3fa9c2e1d0a4 --grep 'error|warning' -i -C 2
    """

    from ctxgate.archive.archive import Archive
    from ctxgate.cli._options import build_config
    from ctxgate.errors import UsageError

    if max_tokens is not None and max_tokens < 1:
        raise UsageError(f"--max-tokens must be >= 1, got {max_tokens}")
    config = build_config()
    archive = Archive.open(config.home, config.archive)
    try:
        view = archive.expand(
            entry_id, lines=lines, head=head, tail=tail, grep=grep, ignore_case=ignore_case,
            context=context, before=before, after=after, max_matches=max_matches,
            byte_range=byte_range, json_pointer=json_pointer, keys=keys, max_tokens=max_tokens,
            fixed_strings=fixed_strings,
        )
    finally:
        archive.close()
    from ctxgate.cli.fast import write_view

    write_view(view, json_output)
