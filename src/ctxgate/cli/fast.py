"""Argparse twins of the per-call hot commands, so they start without typer.

``ctxgate`` starts once per tool call from agent hooks; typer 0.29 costs 0.1-0.3 s per process
before any command runs (it validates every parameter through pydantic). :func:`cli.main`
dispatches ``expand`` and ``run`` here (``run`` is what the hooks wrap every shell
command in); the typer command stays the documented one (``--help``) and a
test keeps both option sets identical. Nothing here imports typer.
"""

from __future__ import annotations

__all__ = ["FAST_OPTIONS", "RUN_OPTIONS", "execute_run", "expand_main", "run_main", "write_view"]

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
    "fixed_strings": (("--fixed-strings", "-F"), None),
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
        from ctxgate.settings import load_config

        if ns.max_tokens is not None and ns.max_tokens < 1:
            raise UsageError(f"--max-tokens must be >= 1, got {ns.max_tokens}")
        config = load_config()
        archive = Archive.open(config.home, config.archive)
        try:
            view = archive.expand(
                ns.entry_id, lines=ns.lines, head=ns.head, tail=ns.tail, grep=ns.grep,
                ignore_case=ns.ignore_case, context=ns.context, before=ns.before,
                after=ns.after, max_matches=ns.max_matches, byte_range=ns.byte_range,
                json_pointer=ns.json_pointer, keys=ns.keys, max_tokens=ns.max_tokens,
                fixed_strings=ns.fixed_strings,
            )
        finally:
            archive.close()
    except CtxgateError as exc:
        print(f"ctxgate: {type(exc).__name__}: {exc}", file=sys.stderr)
        return exc.exit_code
    write_view(view, ns.json_output)
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
    from ctxgate.firewall.run import run_command
    from ctxgate.settings import load_config

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
