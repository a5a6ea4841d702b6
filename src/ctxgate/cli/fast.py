"""Argparse twins of the per-call hot commands, so they start without typer.

``ctxgate`` starts once per tool call from agent hooks; typer 0.29 costs 0.1-0.3 s per process
before any command runs (it validates every parameter through pydantic). :func:`cli.main`
dispatches ``expand`` here; the typer command stays the documented one (``--help``) and a
test keeps both option sets identical. Nothing here imports typer.
"""

from __future__ import annotations

__all__ = ["FAST_OPTIONS", "expand_main", "write_view"]

def write_view(view, json_output: bool) -> None:
    """Print a view (text, or one JSON object with its paging facts) as UTF-8."""
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


def expand_main(argv: list[str]) -> int:
    """Run ``expand`` from ``argv`` (without the word ``expand``) on argparse; returns the exit
    code and prints ``ctxgate: ErrorType: message`` on ctxgate errors, like ``cli.main``."""
    import argparse
    import sys

    from ctxgate.errors import CtxgateError, UsageError

    parser = argparse.ArgumentParser(prog="ctxgate expand",
                                     description="Show part of an archived tool output.")
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
    write_view(view, ns.json_output)
    return 0
