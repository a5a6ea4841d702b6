"""`ctxgate run`: run a command through the context firewall (thin over
:func:`ctxgate.firewall.run_command`).

Only typer is imported at module level; the body is :func:`ctxgate.cli.fast.execute_run`,
shared with the argparse twin that ``cli.main()`` uses on the per-call path.
"""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the top-level app."""
    app.command(
        "run",
        context_settings={"allow_interspersed_args": False},
    )(run)


def run(
    argv: Annotated[list[str] | None, typer.Argument(
        metavar="-- CMD [ARGS]...", help="The command and its arguments, after `--`.",
        show_default=False)] = None,
    shell: Annotated[str | None, typer.Option(
        "-c", "--shell", help="Run this shell string with bash -c instead of CMD ARGS.",
        show_default=False)] = None,
    raw: Annotated[bool, typer.Option(
        "--raw", help="Print the output verbatim, live; archived, never digested.")] = False,
    inline: Annotated[bool, typer.Option(
        "--inline", help="Verbatim when the output fits [firewall] inline_max_bytes "
        "(default 32,768 bytes).")] = False,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Print the decision, its reason and the archive id on stderr.")
    ] = False,
    tool: Annotated[str, typer.Option(
        "--tool", help="Tool name recorded and used for the decision.")] = "shell",
    timeout: Annotated[float | None, typer.Option(
        "--timeout", help="Stop the command after this many seconds (SIGTERM, then SIGKILL; "
        "exit code 124).", show_default=False)] = None,
    separate_stderr: Annotated[bool, typer.Option(
        "--separate-stderr", help="Archive and digest stderr apart from stdout (default: "
        "merged in write order).")] = False,
    session: Annotated[str | None, typer.Option(
        "--session", help="Session or run id recorded with the archive entry.",
        show_default=False)] = None,
    min_tokens: Annotated[int | None, typer.Option(
        "--min-tokens", help="Digest outputs of at least this many tokens [default: "
        "[firewall] min_tokens, 2,000].", show_default=False)] = None,
    sandbox: Annotated[str | None, typer.Option(
        "--sandbox", help="read-only: run where the command cannot write (bwrap, a read-only "
        "mount namespace or Landlock; sandbox-exec on macOS); unsandboxed, with a note, where "
        "none is available (see `ctxgate doctor`). The hooks add it to fast-path allows.",
        show_default=False)] = None,
) -> None:
    """Run a command; print its output, or a digest plus an archive id when it is large.

    The exit code is the command's (124 after --timeout, 128+N when killed by signal N).

    Example: ctxgate run -- cargo test
    """
    from ctxgate.cli.fast import execute_run

    raise typer.Exit(execute_run(
        argv or [], shell=shell, raw=raw, inline=inline, explain=explain, tool=tool,
        timeout=timeout, separate_stderr=separate_stderr, session=session,
        min_tokens=min_tokens, sandbox=sandbox))
