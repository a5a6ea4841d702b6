"""`ctxgate gate calibrate` and `ctxgate gate eval` (decision-model tooling)."""

from __future__ import annotations

import typer


def register_gate(gate_app: typer.Typer) -> None:
    """Add the decision-model commands to the ``gate`` sub-app."""
