"""The application object (:class:`Ctxgate`) and the tables every front end shares.

* :mod:`.application` — :class:`Ctxgate`: settings in, one method per command out;
* :mod:`.options` — one declaration of each command's options (typer, argparse, MCP);
* :mod:`.errors` — one table from an error to an exit code and an MCP error result.

Importing this package imports nothing else: ``Ctxgate`` loads on first access.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxgate.app.application import Ctxgate

__all__ = ["Ctxgate"]


def __getattr__(name: str) -> object:
    if name == "Ctxgate":
        from ctxgate.app.application import Ctxgate

        return Ctxgate
    raise AttributeError(f"module 'ctxgate.app' has no attribute {name!r}")
