"""The application object (:class:`App`) and the tables every front end shares.

* :mod:`.application` — :class:`App`: settings in, one method per command out;
* :mod:`.options` — one declaration of each command's options (typer, argparse, MCP);
* :mod:`.errors` — one table from an error to an exit code and an MCP error result.

Importing this package imports nothing else: ``App`` loads on first access.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxgate.app.application import App

__all__ = ["App"]


def __getattr__(name: str) -> object:
    if name == "App":
        from ctxgate.app.application import App

        return App
    raise AttributeError(f"module 'ctxgate.app' has no attribute {name!r}")
