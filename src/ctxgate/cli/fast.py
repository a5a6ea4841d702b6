"""Argparse twins of the per-call hot commands, so they start without typer.

``ctxgate`` starts once per tool call from agent hooks; typer 0.29 costs 0.1-0.3 s per process
before any command runs (it validates every parameter through pydantic). :func:`cli.main`
dispatches ``expand`` and ``run`` here (``run`` is what the hooks wrap every shell
command in); the typer command stays the documented one (``--help``). Both read their options
from :mod:`ctxgate.app.options` (a test keeps them identical), run through
:class:`ctxgate.app.App` and end through :mod:`ctxgate.app.errors`. Nothing here imports
typer.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the fast path must not import typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["execute_run", "expand_main", "expand_values", "run_main", "write_view"]

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


def expand_values(values: dict) -> None:
    """The body of ``ctxgate expand`` (both front ends): ``values`` by the names of
    :data:`ctxgate.app.options.EXPAND`; prints the view, raises ctxgate errors."""
    from ctxgate.app.application import App
    from ctxgate.errors import UsageError

    view = dict(values)
    json_output = view.pop("json_output", False)
    entry_id = view.pop("entry_id")
    if view.get("max_tokens") is not None and view["max_tokens"] < 1:
        raise UsageError(f"--max-tokens must be >= 1, got {view['max_tokens']}")
    write_view(App().expand(entry_id, **view), json_output)


def expand_main(argv: list[str]) -> int:
    """Run ``expand`` from ``argv`` (without the word ``expand``) on argparse; returns the exit
    code and prints ``ctxgate: ErrorType: message`` on ctxgate errors, like ``cli.main``."""
    from ctxgate.app.options import EXPAND, argparse_parser
    from ctxgate.errors import CtxgateError

    try:
        ns = argparse_parser(EXPAND, "ctxgate expand").parse_args(argv)
    except SystemExit as exc:  # argparse usage errors exit 2, --help exits 0
        return int(exc.code or 0)
    try:
        expand_values(vars(ns))
    except CtxgateError as exc:
        from ctxgate.app.errors import report

        return report(exc)
    return 0


def run_main(argv: list[str]) -> int:
    """Run ``run`` from ``argv`` (without the word ``run``) on argparse (the parser of
    :data:`ctxgate.app.options.RUN`); returns the exit code and prints ``ctxgate: ErrorType:
    message`` on ctxgate errors (:func:`ctxgate.app.errors.report`), like ``cli.main``."""
    from ctxgate.app.options import RUN, argparse_parser
    from ctxgate.errors import CtxgateError

    try:
        ns = argparse_parser(RUN, "ctxgate run").parse_args(argv)
    except SystemExit as exc:  # argparse usage errors exit 2, --help exits 0
        return int(exc.code or 0)
    values = vars(ns)
    command = values.pop("argv") or []
    if command[:1] == ["--"]:
        command = command[1:]
    try:
        return execute_run(command, **values)
    except CtxgateError as exc:
        from ctxgate.app.errors import report

        return report(exc)


def execute_run(argv: list[str], *, explain: bool = False, min_tokens: int | None = None,
                **options: Any) -> int:
    """The body of ``ctxgate run`` (both front ends): run through :meth:`ctxgate.app.App.run`,
    print, return the exit code. ``options`` are :data:`ctxgate.app.options.RUN`'s other
    keywords (``shell``, ``raw``, ``tool`` …); ctxgate errors are raised, for the caller's
    :func:`ctxgate.app.errors.report`."""
    import sys

    from ctxgate.app.application import App
    from ctxgate.firewall import memtune

    memtune.allow()  # this process is ctxgate run's own: the allocator may be tuned
    session = options.pop("session", None)
    app = App(settings={"firewall": {"min_tokens": min_tokens}})
    app.config  # noqa: B018 - a bad configuration is reported before the command starts
    result = app.run(
        argv if argv else None, session_id=session,
        stdin=None,  # inherited: `cat x.json | ctxgate run -- jq .` works
        **options,
    )
    if explain:
        for res in result.results:
            stream = res.entry.extra.get("stream", "output") if res.entry else "output"
            sys.stderr.write(
                f"ctxgate: {stream}: {res.decision.reason} ({res.decision.detail}); "
                f"archive id {res.archive_id}; {res.output_bytes:,} bytes, "
                f"{res.output_lines:,} lines, {res.tokens_text}\n")
        sys.stderr.flush()
    return result.exit_code
