"""`ctxgate run`: run a command through the context firewall (thin over
:func:`ctxgate.firewall.run_command`).

The options are :data:`ctxgate.app.options.RUN`'s; the body is :func:`ctxgate.cli.fast.execute_run`,
shared with the argparse twin that ``cli.main()`` uses on the per-call path.
"""

from __future__ import annotations

from typing import Any

import typer

from ctxgate.app.options import RUN
from ctxgate.cli._options import with_options


def register(app: typer.Typer) -> None:
    """Add this module's commands to the top-level app."""
    app.command(
        "run",
        context_settings={"allow_interspersed_args": False},
    )(run)


@with_options(RUN)
def run(**values: Any) -> None:
    """Run a command; print its output, or a digest plus an archive id when it is large.

    The exit code is the command's (124 after --timeout, 128+N when killed by signal N).

    Example: ctxgate run -- cargo test
    """
    from ctxgate.cli.fast import execute_run

    argv = values.pop("argv") or []
    raise typer.Exit(execute_run(argv, **values))
