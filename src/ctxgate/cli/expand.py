"""`ctxgate expand`: read an archived output back through a bounded view (thin over
:meth:`ctxgate.archive.Archive.expand`).

Kept cheap to start: only typer is imported at module level; the archive, zstandard and the
tokenizer load inside the command, and the tokenizer only when a view is larger than its
budget in bytes.

typer 0.29 validates every parameter through pydantic ``TypeAdapter``s, which costs ~0.1-0.3 s
per process before any command runs. :func:`fast_main` is the same command on ``argparse``
(same options, same output, same exit codes) for entry points that want ``expand`` without
that cost (``cli.main()`` can dispatch ``expand`` to it before building the typer app).
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
        )
    finally:
        archive.close()
    _write(view, json_output)

def _write(view, json_output: bool) -> None:
    import sys

    if json_output:
        import json

        payload = {
            "id": view.entry.id, "short_id": view.entry.short_id, "selector": view.selector,
            "text": view.text, "next": view.next_hint, "line_range": view.line_range,
            "byte_range": view.byte_range, "matches": view.matches,
            "shown_matches": view.shown_matches, "truncated": view.truncated,
            "notes": list(view.notes),
        }
        out = json.dumps(payload, ensure_ascii=False) + "\n"
    else:
        out = view.text
    sys.stdout.buffer.write(out.encode("utf-8"))
    sys.stdout.flush()


FAST_OPTIONS: dict[str, tuple[tuple[str, ...], type | None]] = {
    "lines": (("--lines", "-n"), str), "head": (("--head",), int), "tail": (("--tail",), int),
    "grep": (("--grep", "-g"), str), "ignore_case": (("--ignore-case", "-i"), None),
    "context": (("--context", "-C"), int), "before": (("--before", "-B"), int),
    "after": (("--after", "-A"), int), "max_matches": (("--max-matches", "-m"), int),
    "byte_range": (("--bytes",), str), "json_pointer": (("--json",), str),
    "keys": (("--keys",), None), "max_tokens": (("--max-tokens",), int),
    "json_output": (("--json-output",), None),
}
"""The options of :func:`expand`, for the argparse twin (a test keeps them in step)."""


def fast_main(argv: list[str]) -> int:
    """Run ``expand`` from ``argv`` (without the word ``expand``) on argparse; returns the exit
    code and prints ``ctxgate: ErrorType: message`` on ctxgate errors, like ``cli.main``."""
    import argparse
    import sys

    from ctxgate.errors import CtxgateError, UsageError

    parser = argparse.ArgumentParser(prog="ctxgate expand", description=expand.__doc__)
    parser.add_argument("entry_id", metavar="ID")
    for dest, (flags, kind) in FAST_OPTIONS.items():
        if kind is None:
            parser.add_argument(*flags, dest=dest, action="store_true")
        else:
            parser.add_argument(*flags, dest=dest, type=kind,
                                default=0 if dest in ("context", "before", "after") else None)
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # argparse usage errors exit 2, --help exits 0
        return int(exc.code or 0)
    try:
        from ctxgate.archive.archive import Archive
        from ctxgate.cli._options import build_config

        if ns.max_tokens is not None and ns.max_tokens < 1:
            raise UsageError(f"--max-tokens must be >= 1, got {ns.max_tokens}")
        config = build_config()
        archive = Archive.open(config.home, config.archive)
        try:
            view = archive.expand(
                ns.entry_id, lines=ns.lines, head=ns.head, tail=ns.tail, grep=ns.grep,
                ignore_case=ns.ignore_case, context=ns.context, before=ns.before,
                after=ns.after, max_matches=ns.max_matches, byte_range=ns.byte_range,
                json_pointer=ns.json_pointer, keys=ns.keys, max_tokens=ns.max_tokens,
            )
        finally:
            archive.close()
    except CtxgateError as exc:
        print(f"ctxgate: {type(exc).__name__}: {exc}", file=sys.stderr)
        return exc.exit_code
    _write(view, ns.json_output)
    return 0
