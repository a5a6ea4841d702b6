"""The ``ctxgate`` command line: a thin veneer over the library.

Each sub-module registers its commands on :data:`app`; every command builds the settings,
opens resources, calls one library function and prints. :func:`main` is the single place
where a :class:`~ctxgate.errors.CtxgateError` becomes a message on stderr and an exit code
(2 for usage errors and unknown ids, 1 for other failures).
"""

from __future__ import annotations

import sys

import typer

from ctxgate.cli import archive as _archive
from ctxgate.cli import bound as _bound
from ctxgate.cli import expand as _expand
from ctxgate.cli import gate as _gate
from ctxgate.cli import hook as _hook
from ctxgate.cli import mcp as _mcp
from ctxgate.cli import run as _run

__all__ = ["app", "main"]

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


for _module in (_run, _expand, _archive, _gate, _bound, _hook, _mcp):
    _module.register(app)


@app.command()
def version() -> None:
    """Print the ctxgate version."""
    from ctxgate import __version__

    typer.echo(__version__)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map ctxgate errors to exit codes.

    Click's own usage errors already exit 2 in standalone mode; everything from ctxgate is
    printed as ``ctxgate: ErrorType: message`` with the error's exit code, never a traceback.
    """
    from ctxgate.errors import CtxgateError

    try:
        app(args=argv, prog_name="ctxgate")
    except CtxgateError as exc:
        print(f"ctxgate: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
