"""`ctxgate expand`: read an archived output back through a bounded view (thin over
:meth:`ctxgate.app.App.expand`).

The options are declared once, in :data:`ctxgate.app.options.EXPAND`; typer reads them from
there, as do the argparse twin and the MCP schema.

Kept cheap to start: only typer is imported at module level; the archive, zstandard and the
tokenizer load inside the command, and the tokenizer only when a view is larger than its
budget in bytes.

typer 0.29 validates every parameter through pydantic ``TypeAdapter``s, which costs ~0.1-0.3 s
per process before any command runs, so ``cli.main()`` sends ``expand`` to the argparse twin
in :mod:`ctxgate.cli.fast` (same options, output and exit codes; a test keeps them in step).
"""

from __future__ import annotations

from typing import Any

import typer

from ctxgate.app.options import EXPAND
from ctxgate.cli._options import with_options


def register(app: typer.Typer) -> None:
    """Add this module's commands to the top-level app."""
    app.command("expand")(expand)


@with_options(EXPAND)
def expand(**values: Any) -> None:
    """Show part of an archived tool output, bounded, with a `next:` hint for the next page.

    Unknown, expired or ambiguous ids exit 2 and list recent ids.

    Example: ctxgate expand 3fa9c2e1d0a4 --grep 'error|warning' -i -C 2
    """
    from ctxgate.cli.fast import expand_values

    expand_values(values)
