"""Argparse twins of the per-call hot commands, so they start without typer.

``ctxgate`` starts once per tool call from agent hooks; typer 0.29 costs 0.1-0.3 s per process
before any command runs (it validates every parameter through pydantic). :func:`cli.main`
dispatches ``expand`` and ``run`` here (``run`` is what the hooks wrap every shell
command in); the typer command stays the documented one (``--help``) and a
test keeps both option sets identical. Nothing here imports typer.
"""

from __future__ import annotations

__all__ = ["RUN_OPTIONS", "execute_run", "expand_main", "expand_values", "run_main", "write_view"]

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


RUN_OPTIONS: dict[str, tuple[tuple[str, ...], type | None]] = {
    "shell": (("-c", "--shell"), str), "raw": (("--raw",), None),
    "inline": (("--inline",), None), "explain": (("--explain",), None),
    "tool": (("--tool",), str), "timeout": (("--timeout",), float),
    "separate_stderr": (("--separate-stderr",), None), "session": (("--session",), str),
    "min_tokens": (("--min-tokens",), int), "sandbox": (("--sandbox",), str),
}
"""The options of ``ctxgate run``, for the argparse twin (a test keeps them in step)."""


def run_main(argv: list[str]) -> int:
    """Run ``run`` from ``argv`` (without the word ``run``) on argparse; returns the exit code."""
    import argparse
    import sys

    from ctxgate.errors import CtxgateError

    parser = argparse.ArgumentParser(prog="ctxgate run", description="Run a command; print its "
                                     "output, or a digest plus an archive id when it is large.")
    for dest, (flags, kind) in RUN_OPTIONS.items():
        if kind is None:
            parser.add_argument(*flags, dest=dest, action="store_true")
        else:
            parser.add_argument(*flags, dest=dest, type=kind,
                                default="shell" if dest == "tool" else None)
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS]")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    command = ns.argv[1:] if ns.argv[:1] == ["--"] else ns.argv
    try:
        return execute_run(command, shell=ns.shell, raw=ns.raw, inline=ns.inline,
                           explain=ns.explain, tool=ns.tool, timeout=ns.timeout,
                           separate_stderr=ns.separate_stderr, session=ns.session,
                           min_tokens=ns.min_tokens, sandbox=ns.sandbox)
    except CtxgateError as exc:
        print(f"ctxgate: {type(exc).__name__}: {exc}", file=sys.stderr)
        return exc.exit_code


def execute_run(argv: list[str], *, shell: str | None = None, raw: bool = False,
                inline: bool = False, explain: bool = False, tool: str = "shell",
                timeout: float | None = None, separate_stderr: bool = False,
                session: str | None = None, min_tokens: int | None = None,
                sandbox: str | None = None) -> int:
    """The body of ``ctxgate run`` (both front ends): run, print, return the exit code."""
    import sys

    from ctxgate.archive.failure import open_archive
    from ctxgate.firewall import memtune
    from ctxgate.firewall.run import run_command
    from ctxgate.settings import load_config

    memtune.allow()  # this process is ctxgate run's own: the allocator may be tuned
    config = load_config({"firewall": {"min_tokens": min_tokens}})
    archive, _ = open_archive(config.home, config.archive)  # a broken one never blocks the run
    try:
        result = run_command(
            argv if argv else None, shell=shell, archive=archive, policy=config.firewall,
            tool=tool, raw=raw, inline=inline, timeout=timeout,
            separate_stderr=separate_stderr, session_id=session,
            stdin=None,  # inherited: `cat x.json | ctxgate run -- jq .` works
            sandbox=sandbox,
        )
    finally:
        archive.close()
    if explain:
        for res in result.results:
            stream = res.entry.extra.get("stream", "output") if res.entry else "output"
            sys.stderr.write(
                f"ctxgate: {stream}: {res.decision.reason} ({res.decision.detail}); "
                f"archive id {res.archive_id}; {res.output_bytes:,} bytes, "
                f"{res.output_lines:,} lines, {res.tokens_text}\n")
        sys.stderr.flush()
    return result.exit_code
