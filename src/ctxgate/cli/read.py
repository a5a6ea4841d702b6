"""`ctxgate read PATH`: one page of a text file, never digested (the MCP ``read`` tool's twin;
thin over :meth:`ctxgate.app.App.read`, options from :data:`ctxgate.app.options.READ`)."""

from __future__ import annotations

from typing import Any

import typer

from ctxgate.app.options import READ
from ctxgate.cli._options import with_options


def register(app: typer.Typer) -> None:
    """Add ``read`` to the top-level app."""
    app.command("read")(read)


@with_options(READ)
def read(**values: Any) -> None:
    """Print a page of a text file as it is, under a token ceiling, with the next page's lines.

    Example: ctxgate read src/app.py --lines 120:200
    """
    import sys

    from ctxgate.app.application import App

    view = App().read(values.pop("path"), tool="read", cli=True, **values)
    sys.stdout.buffer.write(view.text.encode("utf-8"))
    sys.stdout.flush()
