"""The ``ctxgate`` command line: a thin veneer over the library.

Each sub-module registers its commands on :data:`app`; every command turns its options into
one call on :class:`ctxgate.app.App` and prints the answer. :func:`main` (and each
argparse twin) turns a :class:`~ctxgate.errors.CtxgateError` into a message on stderr and an
exit code through the one table, :mod:`ctxgate.app.errors` (2 for usage errors and unknown
ids, 1 for other failures).

Importing this package does not import typer: ``app`` is built on first access, and
:func:`main` sends the per-call hot commands ``expand`` and ``run`` to their argparse twins
(:mod:`ctxgate.cli.fast`), and ``hook pre`` and ``hook post`` to theirs
(:mod:`ctxgate.cli.fast_hook`), before typer is ever loaded.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: a hook must not import typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["app", "main"]

_APP: Any = None

FAST_COMMANDS = ("expand", "run")
"""Commands dispatched to :mod:`ctxgate.cli.fast` unless ``--help`` is asked for."""


def build_app() -> Any:
    """Build the typer app with every command registered (once per process)."""
    global _APP
    if _APP is not None:
        return _APP
    import typer

    from ctxgate.cli import archive, bound, doctor, expand, gate, hook, mcp, read, run

    app = typer.Typer(
        name="ctxgate",
        help="Context firewall, tool gate and record bound for LLM agents.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )

    @app.callback()
    def _root() -> None:
        """Context firewall, tool gate and record bound for LLM agents."""

    for module in (run, expand, read, archive, gate, bound, hook, mcp, doctor):
        module.register(app)

    @app.command()
    def version() -> None:
        """Print the ctxgate version."""
        from ctxgate import __version__

        typer.echo(__version__)

    _APP = app
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return build_app()
    raise AttributeError(f"module 'ctxgate.cli' has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map ctxgate errors to exit codes.

    Click's own usage errors already exit 2 in standalone mode; everything from ctxgate is
    printed as ``ctxgate: ErrorType: message`` with the error's exit code, never a traceback.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if argv is None and args[:2] == ["hook", "pre"]:
        # first, before any heavy import: the harness's process becomes a supervisor that
        # blocks on every fault (signals, a hung worker, a closed stdout); the rest runs in
        # its worker (see ctxgate.integrations.hooks.supervisor)
        from ctxgate.integrations.hooks.supervisor import main_guard

        main_guard(args)
    if args[:1] == ["hook"] and args[1:2] in (["pre"], ["post"]) and not (
            {"--help", "-h"} & set(args[2:])):
        from ctxgate.cli import fast_hook

        code = (fast_hook.pre_main if args[1] == "pre" else fast_hook.post_main)(args[2:])
        fast_hook.leave(code)
    from ctxgate._launch import ensure_site

    ensure_site()  # started by `python -S …/_launch.py`: every other command needs site-packages
    if args and args[0] in FAST_COMMANDS and not {"--help", "-h"} & set(args[1:]):
        from ctxgate.cli import fast

        entry = fast.expand_main if args[0] == "expand" else fast.run_main
        sys.exit(entry(args[1:]))
    from ctxgate.errors import CtxgateError

    try:
        build_app()(args=args, prog_name="ctxgate")
    except CtxgateError as exc:
        from ctxgate.app.errors import report

        sys.exit(report(exc))
