"""`ctxgate hook` commands: Claude Code / Codex hooks (JSON on stdin, decision on stdout)."""

from __future__ import annotations

import sys
from typing import Annotated, Any, NoReturn

import typer

from ctxgate.app.options import HOOK_POST, HOOK_PRE
from ctxgate.cli._options import with_options

hook_app = typer.Typer(
    name="hook",
    help="Agent-harness hooks: gate tool calls before they run, digest large outputs after.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

_HARNESS_HELP = HOOK_POST.option("harness").help


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
@with_options(HOOK_PRE)
def pre(**values: Any) -> None:
    """PreToolUse: judge the call; deny, or allow (and wrap shell commands). Fails closed.

    Example:
        echo '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' | ctxgate hook pre
    """
    import os
    import threading

    harness, rewrite, approve, backend, deadline = (
        values[name] for name in ("harness", "rewrite", "approve", "backend", "deadline"))
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
@with_options(HOOK_POST)
def post(**values: Any) -> None:
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
        response = _post(values["harness"])
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


def _post(harness: str):
    from ctxgate.integrations.hooks.entry import digest_post

    return digest_post(sys.stdin.buffer.read(), harness=harness)


@hook_app.command("install")
def install(
    harness: Annotated[str, typer.Option("--harness", help=_HARNESS_HELP)] = "claude-code",
    scope: Annotated[str, typer.Option(
        "--scope", help="user: your settings for every project (~/.claude/settings.json, "
        "~/.codex/hooks.json); project: this project's (.claude/settings.json, "
        ".codex/hooks.json).")] = "user",
    write: Annotated[bool, typer.Option(
        "--write", help="Merge into the settings file (backup beside it); without it, print "
        "what would be written and where.")] = False,
    uninstall: Annotated[bool, typer.Option(
        "--uninstall", help="Remove ctxgate's hooks (and nothing else) instead.")] = False,
    project: Annotated[str | None, typer.Option(
        "--project", help="Project directory for --scope project (default: the current "
        "directory).")] = None,
    rewrite: Annotated[bool, typer.Option(
        "--rewrite/--no-rewrite", help="Install `hook pre` with its shell rewrite (default) or "
        "--no-rewrite (permission rules see the original command; failing outputs are not "
        "digested; see docs/hooks.md).")] = True,
) -> None:
    """Install (or --uninstall) the hooks in the harness's settings file.

    Example:
        ctxgate hook install --harness claude-code --scope project --write
    """
    _install(harness, scope, write, uninstall, project, rewrite)  # errors: `ctxgate: UsageError: …`


def _install(harness: str, scope: str, write: bool, uninstall: bool,
             project: str | None, rewrite: bool = True) -> None:
    from pathlib import Path

    from ctxgate.cli._options import apply_install_plan
    from ctxgate.cli.fast_hook import hook_command_prefix
    from ctxgate.errors import UsageError
    from ctxgate.integrations.hooks import install as inst
    from ctxgate.integrations.hooks.harness import get_harness

    adapter = get_harness(harness)
    if scope not in ("user", "project"):
        raise UsageError(f"--scope {scope!r}: use user or project")
    path = adapter.hooks_file(scope, home=Path.home(),
                              project=Path(project).resolve() if project else Path.cwd())
    # `python -S …/ctxgate/_launch.py`: starts without site (see cli/fast_hook.py)
    entries = adapter.hook_entries(hook_command_prefix(),
                                   pre_flags="" if rewrite else " --no-rewrite")
    change = inst.plan(path, entries, uninstall=uninstall)
    if not uninstall:
        _check_gate_decides()
    written = apply_install_plan(change, change.text(), inst.write, write=write,
                                 uninstall=uninstall, what="ctxgate's hooks", verb="merge into")
    if written and not uninstall:
        typer.echo(_VERIFY[adapter.name])


_VERIFY = {
    "claude-code": "verify: start `claude` and run /hooks (PreToolUse and PostToolUse list "
                   "ctxgate), or `claude -p 'run rm -rf /tmp/x'` and see it blocked",
    "codex": "Codex runs a new or changed hook only after you trust it: start `codex`, open "
             "/hooks and trust the two ctxgate hooks (a --scope project install also needs a "
             "trusted project); for one-off automation, `codex exec "
             "--dangerously-bypass-hook-trust` runs them untrusted",
}


def _check_gate_decides() -> None:
    """Refuse to install hooks that would block every call: the gate must reach a decision.

    A probe call that only the decision model can judge is decided in this process; a
    backend that cannot load (missing packages or weights, an unreachable server) turns
    every hook call into a block, so the install stops with the gate's own reason and fix.
    """
    from ctxgate.app.application import App
    from ctxgate.errors import UsageError

    failures = ("backend_error", "timeout", "refused", "malformed_answer", "request_too_large")
    reason = ""
    try:
        with App() as app:
            for _attempt in range(2):  # a cold model on a loaded machine may time out once
                verdict = app.check("ctxgate_install_probe", {"action": "delete the probe"},
                                    request="delete the probe")
                if verdict.code not in failures:
                    return
                reason = verdict.reason
                if verdict.code != "timeout":
                    break
    except Exception as exc:  # noqa: BLE001 - reported below as the reason
        reason = f"{type(exc).__name__}: {exc}"
    raise UsageError(
        "the gate cannot decide here, so the hooks would block every tool call; nothing was "
        f"written. {reason} Fix that first (`ctxgate doctor` lists what is missing; `ctxgate "
        "gate check ls` must answer allow), then run the install again.")


def register(app: typer.Typer) -> None:
    """Add the ``hook`` sub-app to the top-level app."""
    app.add_typer(hook_app, name="hook")
