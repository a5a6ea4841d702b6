"""Options shared by several commands, and the one helper that builds the Config."""

from __future__ import annotations

from typing import Annotated, Any

import typer

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def build_config(**sections: dict[str, Any]):  # -> ctxgate.settings.Config
    """Load the configuration with CLI flag overrides (``None`` values are ignored)."""
    from ctxgate.settings import load_config

    return load_config(sections)
