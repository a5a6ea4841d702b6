"""Argparse twins of ``hook pre`` and ``hook post``: a tool call's hooks start without typer.

:func:`ctxgate.cli.main` sends ``hook pre`` and ``hook post`` here (``--help`` goes to typer,
the documented command). Their argparse parsers come from :data:`ctxgate.app.options.HOOK_PRE`
and ``HOOK_POST``; the exact-option quick parser that answers the usual argv without
importing argparse or the declarations keeps its own table, held equal to them by a test. Each asks the warm decision
daemon first (:mod:`ctxgate.gate.daemon`), which answers with what the in-process hook would
have printed, byte for byte; when no daemon can answer it decides in-process with the same
functions (:mod:`ctxgate.integrations.hooks.entry`). ``hook pre`` runs under the supervisor
(:mod:`ctxgate.integrations.hooks.supervisor`), so signals, the deadline, a closed stdout and
a crashed worker still block; a daemon that took the request and did not answer blocks too.
Imports stay lazy: a call the daemon answers loads no gate, settings or pydantic module.
"""

from __future__ import annotations

__all__ = ["HOOK_POST_DEFAULTS", "HOOK_POST_OPTIONS", "HOOK_PRE_DEFAULTS", "HOOK_PRE_OPTIONS", "POST_TIMEOUT_SECONDS", "SERVICE",
           "hook_command_prefix", "leave", "post_main", "pre_main"]

HOOK_PRE_OPTIONS: dict[str, tuple[tuple[str, ...], type | None]] = {
    "harness": (("--harness",), str), "rewrite": (("--rewrite", "--no-rewrite"), bool),
    "approve": (("--approve",), None), "backend": (("--backend",), str),
    "deadline": (("--deadline",), float),
}
"""The options of ``hook pre`` for the exact-option quick parser (``bool``: an on/off pair;
``None``: a flag). Hand-written, not read from :data:`ctxgate.app.options.HOOK_PRE`:
importing the declarations costs a daemon-answered hook 0.3 ms (~3 ms without bytecode); a
test holds this table and :data:`HOOK_PRE_DEFAULTS` equal to the declaration."""
HOOK_PRE_DEFAULTS: dict[str, object] = {"harness": "claude-code", "rewrite": True,
                                        "deadline": 30.0}
"""The defaults the quick parser gives ``hook pre`` (the declaration's; a test)."""
HOOK_POST_OPTIONS: dict[str, tuple[tuple[str, ...], type | None]] = {
    "harness": (("--harness",), str),
}
"""The options of ``hook post`` (quick parser; held equal to
:data:`ctxgate.app.options.HOOK_POST`)."""
HOOK_POST_DEFAULTS: dict[str, object] = {"harness": "claude-code"}

SERVICE = "ctxgate.integrations.hooks.served"
"""The daemon service hooks ask (a test holds it equal to that module's name)."""
POST_TIMEOUT_SECONDS = 30.0
"""How long ``hook post`` waits for the daemon before digesting in-process."""
_ANSWER_MARGIN_SECONDS = 0.25  # the daemon's answer is due this long before the deadline


def hook_command_prefix(python: str | None = None) -> str:
    """The start of an installed hook command (``… hook pre`` follows).

    ``PYTHON -S …/ctxgate/_launch.py``: the hook starts without ``site`` (site-packages and
    their ``.pth`` files, which can cost more than the rest of a daemon-answered hook); what
    needs site-packages loads it itself (:func:`ctxgate._launch.ensure_site`). Where the
    package is not a plain directory (a zip), ``PYTHON -m ctxgate``.
    """
    import os
    import shlex
    import sys

    import ctxgate

    exe = shlex.quote(python or sys.executable)
    launcher = os.path.join(os.path.dirname(os.path.abspath(ctxgate.__file__)), "_launch.py")
    if not os.path.isfile(launcher):
        return f"{exe} -m ctxgate"
    return f"{exe} -S {shlex.quote(launcher)}"


def _parse_simple(argv: list[str], options: dict, defaults: dict):
    """``argv`` parsed as argparse would, without importing it (``argparse`` brings ``re``,
    ``gettext`` and ``shutil``, a visible share of a daemon-answered hook), when every word
    is an exact option of ``options`` with a valid value; else None (argparse then parses
    and reports). A test holds the two equal."""
    from types import SimpleNamespace

    flags: dict[str, tuple[str, type | None, bool]] = {}
    for dest, (names, kind) in options.items():
        if kind is bool:
            flags[names[0]] = (dest, None, True)
            flags[names[1]] = (dest, None, False)
        else:
            for name in names:
                flags[name] = (dest, kind, True)
    values = {dest: (False if kind is None else defaults.get(dest))
              for dest, (_, kind) in options.items()}
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        spec = flags.get(name)
        if spec is None or not name.startswith("--"):
            return None
        dest, kind, on = spec
        if kind is None:
            if eq:
                return None
            values[dest] = on
        else:
            if not eq:
                if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                    return None
                i += 1
                value = argv[i]
            try:
                values[dest] = kind(value)
            except ValueError:
                return None
        i += 1
    return SimpleNamespace(**values)


def _parse(argv: list[str], options: dict, defaults: dict, command: str):
    """``argv`` by the quick parser, else by the argparse parser of ``command``'s declaration
    (:mod:`ctxgate.app.options`, imported only then); an ``int`` is the exit status of a
    usage error or ``--help``."""
    ns = _parse_simple(argv, options, defaults)
    if ns is not None:
        return ns
    from ctxgate.app import options as declared

    declaration = declared.HOOK_PRE if command == "pre" else declared.HOOK_POST
    # no abbreviations: typer refuses `--harn`, and the supervisor reads `--deadline` whole
    parser = declared.argparse_parser(declaration, f"ctxgate hook {command}",
                                      allow_abbrev=False)
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:  # usage error: exit 2 (for ``hook pre``, a block)
        return int(exc.code or 0)


def _write_all(fd: int, text: str) -> None:
    import os

    data = memoryview(text.encode("utf-8", "surrogateescape"))
    while data:
        data = data[os.write(fd, data):]


def leave(code: int) -> None:
    """Exit with ``code`` now, skipping interpreter shutdown (a hook's answer is written and
    flushed; under load the shutdown is a visible share of a hook's time)."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1  # an answer that could not be written is no answer
    os._exit(code)


def _early_stderr(result: dict) -> None:
    """Write what the daemon's request wrote to stderr (warnings an in-process hook prints)."""
    text = result.get("early_stderr")
    if text:
        try:
            _write_all(2, str(text))
        except OSError:
            pass


def pre_main(argv: list[str]) -> int:
    """``hook pre`` from ``argv`` (after the words ``hook pre``); returns the exit status."""
    import os
    import sys
    import time

    from ctxgate.integrations.hooks.supervisor import (
        BLOCK_EXIT,
        BLOCK_PREFIX,
        is_worker,
    )

    started = time.monotonic()
    ns = _parse(argv, HOOK_PRE_OPTIONS, HOOK_PRE_DEFAULTS, "pre")
    if isinstance(ns, int):
        return ns
    timer = None
    if not is_worker():  # no supervisor (no fork): the in-process watchdog, as typer's pre
        import threading

        def watchdog() -> None:
            sys.stderr.write(f"{BLOCK_PREFIX}the gate did not decide within {ns.deadline:g} "
                             "s (a hung decision model or a slow start); retry, or ask the "
                             "user\n")
            sys.stderr.flush()
            os._exit(BLOCK_EXIT)

        timer = threading.Timer(ns.deadline, watchdog)
        timer.daemon = True
        timer.start()
    try:
        stdout, stderr, code = _pre(ns, started)
    finally:
        if timer is not None:
            timer.cancel()
    if stdout:
        sys.stdout.write(stdout + "\n")
        sys.stdout.flush()
    if stderr:
        sys.stderr.write(stderr + "\n")
        sys.stderr.flush()
    return code


def _pre(ns, started: float) -> tuple[str, str, int]:
    import os
    import sys
    import time

    raw = sys.stdin.buffer.read()
    options = {"harness": ns.harness, "rewrite": ns.rewrite, "approve": ns.approve,
               "backend": ns.backend}
    try:
        from ctxgate.gate.daemon.client import DaemonFailed, DaemonUnavailable, call

        budget = ns.deadline - _ANSWER_MARGIN_SECONDS - (time.monotonic() - started)
        try:
            result = call(SERVICE, "pre", {"options": options, "python": sys.executable,
                                           "cwd": os.getcwd(), "env": dict(os.environ)},
                          raw, timeout=max(0.05, budget))
            _early_stderr(result)
            code = result.get("exit_code")
            if type(code) is not int or code not in (0, 2):  # answer (0) or block (2), only
                raise DaemonFailed(f"the decision daemon answered exit status {code!r}")
            return str(result.get("stdout", "")), str(result.get("stderr", "")), int(code)
        except DaemonUnavailable:
            pass  # decide in-process, below
        except DaemonFailed as exc:
            from ctxgate.integrations.hooks.entry import block

            response = block(str(exc))
            return response.stdout, response.stderr, response.exit_code
    except OSError:
        pass  # no working directory to send (removed): decide in-process
    from ctxgate._launch import ensure_site
    from ctxgate.integrations.hooks.entry import pre_answer

    ensure_site()  # the gate's dependencies live in site-packages

    response = pre_answer(raw, **options)
    return response.stdout, response.stderr, response.exit_code


def post_main(argv: list[str]) -> int:
    """``hook post`` from ``argv`` (after the words ``hook post``); returns the exit status.

    Every fault is ``post_fault`` (exit 1, the output reaches the model unchanged); a daemon
    that cannot answer, or fails, leaves the digest to this process.
    """
    import signal
    import sys

    from ctxgate.integrations.hooks.entry import post_fault

    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name),
                          lambda signum, _frame: post_fault(
                              f"interrupted by {signal.Signals(signum).name}"))
    ns = _parse(argv, HOOK_POST_OPTIONS, HOOK_POST_DEFAULTS, "post")
    if isinstance(ns, int):
        return ns
    try:
        raw = sys.stdin.buffer.read()
        stdout = _post(raw, ns.harness)
    except Exception as exc:  # noqa: BLE001 - the output then reaches the model unchanged
        post_fault(f"{type(exc).__name__}: {exc}")
    if stdout:
        try:
            _write_all(1, stdout + "\n")
        except OSError as exc:
            post_fault(f"its answer could not be written: {exc.strerror}")
    return 0


def _post(raw: bytes, harness: str = "claude-code") -> str:
    import os
    import sys

    from ctxgate.gate.daemon.client import DaemonFailed, DaemonUnavailable, call

    try:
        result = call(SERVICE, "post", {"python": sys.executable, "cwd": os.getcwd(),
                                        "env": dict(os.environ),
                                        "options": {"harness": harness}},
                      raw, timeout=POST_TIMEOUT_SECONDS)
        _early_stderr(result)
        if "fault" in result:
            from ctxgate.integrations.hooks.entry import post_fault

            post_fault(str(result["fault"]))
        return str(result.get("stdout", ""))
    except (DaemonUnavailable, DaemonFailed, OSError):
        from ctxgate._launch import ensure_site
        from ctxgate.integrations.hooks.entry import digest_post

        ensure_site()

        return digest_post(raw, harness=harness).stdout
