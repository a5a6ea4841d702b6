"""`ctxgate hook` commands: Claude Code / Codex hooks (JSON on stdin, decision on stdout)."""

from __future__ import annotations

import sys
from typing import Annotated, NoReturn

import typer

from ctxgate.integrations.hooks.supervisor import DEFAULT_DEADLINE_SECONDS

hook_app = typer.Typer(
    name="hook",
    help="Agent-harness hooks: gate tool calls before they run, digest large outputs after.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

_HARNESS_HELP = "Harness sending the payload: claude-code or codex (same wire format)."


def _emit(response) -> None:
    if response.stdout:
        sys.stdout.write(response.stdout + "\n")
        sys.stdout.flush()
    if response.stderr:
        sys.stderr.write(response.stderr + "\n")
    raise typer.Exit(response.exit_code)


def _post_fault(message: str) -> NoReturn:
    """End ``hook post`` on a fault (see :func:`ctxgate.integrations.hooks.entry.post_fault`)."""
    from ctxgate.integrations.hooks.entry import post_fault

    post_fault(message)


POST_FAULT_EXIT = 1
"""``hook post`` exit status on any fault: a non-blocking error (the call already ran)."""


@hook_app.command("pre")
def pre(
    harness: Annotated[str, typer.Option("--harness", help=_HARNESS_HELP)] = "claude-code",
    rewrite: Annotated[bool, typer.Option(
        "--rewrite/--no-rewrite",
        help="Route allowed shell commands through `ctxgate run` (archive + digest).")] = True,
    approve: Annotated[bool, typer.Option(
        "--approve", help="On allow, also skip the harness's own permission prompt.")] = False,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="Decision backend (default: [gate] backend).")] = None,
    deadline: Annotated[float, typer.Option(
        "--deadline", help="Seconds after which the call is blocked, whatever is running.")
    ] = DEFAULT_DEADLINE_SECONDS,
) -> None:
    """PreToolUse: judge the call; deny, or allow (and wrap shell commands). Fails closed.

    Example:
        echo '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' | ctxgate hook pre
    """
    import os
    import threading

    from ctxgate.integrations.hooks.handlers import BLOCK_EXIT, HookResponse
    from ctxgate.integrations.hooks.supervisor import BLOCK_PREFIX, is_worker

    def block(message: str) -> HookResponse:
        return HookResponse(stderr=f"{BLOCK_PREFIX}{message}", exit_code=BLOCK_EXIT)

    def watchdog() -> None:
        sys.stderr.write(f"{BLOCK_PREFIX}the gate did not decide within {deadline:g} s "
                         "(a hung decision model or a slow start); retry, or ask the user\n")
        sys.stderr.flush()
        os._exit(BLOCK_EXIT)

    # Under the supervisor (every real `ctxgate hook pre` process on POSIX) the deadline is
    # enforced by the supervisor process, on time even when this one holds the GIL; the
    # thread below is the fallback where there is no supervisor (in-process calls, Windows).
    timer = None if is_worker() else threading.Timer(deadline, watchdog)
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        response = _pre(harness, rewrite, approve, backend)
    except Exception as exc:  # noqa: BLE001 - every failure blocks the call (fail closed)
        response = block(f"{type(exc).__name__}: {exc}")
    finally:
        if timer is not None:
            timer.cancel()
    _emit(response)


def _pre(harness: str, rewrite: bool, approve: bool, backend: str | None):
    from ctxgate.integrations.hooks.entry import decide_pre

    return decide_pre(sys.stdin.buffer.read(), harness=harness, rewrite=rewrite,
                      approve=approve, backend=backend)


@hook_app.command("post")
def post(
    harness: Annotated[str, typer.Option("--harness", help=_HARNESS_HELP)] = "claude-code",
) -> None:
    """PostToolUse: digest a large firewallable output; prints nothing for small ones.

    Example:
        ctxgate hook post < payload.json
    """
    import signal

    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name),
                          lambda signum, _frame: _post_fault(
                              f"interrupted by {signal.Signals(signum).name}"))
    try:
        response = _post()
    except Exception as exc:  # noqa: BLE001 - the output then reaches the model unchanged
        _post_fault(f"{type(exc).__name__}: {exc}")
    if response.stdout:
        import os

        data = memoryview((response.stdout + "\n").encode("utf-8"))
        try:
            while data:
                data = data[os.write(1, data):]
        except OSError as exc:
            _post_fault(f"its answer could not be written: {exc.strerror}")
    raise typer.Exit(0)


def _post():
    from ctxgate.integrations.hooks.entry import digest_post

    return digest_post(sys.stdin.buffer.read())


@hook_app.command("install")
def install(
    harness: Annotated[str, typer.Option("--harness", help=_HARNESS_HELP)] = "claude-code",
) -> None:
    """Print the hooks configuration to paste into the harness settings.

    Example:
        ctxgate hook install > /tmp/hooks.json
    """
    import json

    from ctxgate.cli.fast_hook import hook_command_prefix

    exe = hook_command_prefix()  # `python -S …/ctxgate/_launch.py`: starts without site
    flag = "" if harness == "claude-code" else f" --harness {harness}"
    config = {"hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": f"{exe} hook pre{flag}", "timeout": 60}]}],
        "PostToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": f"{exe} hook post{flag}", "timeout": 60}]}],
    }}
    typer.echo(json.dumps(config, indent=2))


def register(app: typer.Typer) -> None:
    """Add the ``hook`` sub-app to the top-level app."""
    app.add_typer(hook_app, name="hook")
