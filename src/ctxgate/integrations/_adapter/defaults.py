"""What an adapter was not given, from ctxgate's configuration: one rule for all three.

The gate :class:`ctxgate.app.App` builds (the offline local model by default, loaded on
the first call that needs it, with the audit log), the home's archive
(one that cannot be opened still lets every call run: results are then marked not
archived) and the configured firewall policy. The configuration is read only when something
is missing (or ``load`` asks for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Configured", "configured"]


@dataclass(frozen=True)
class Configured:
    """The gate, archive and firewall policy an adapter uses, and the configuration read
    (``None`` when everything was given)."""

    gate: Any
    archive: Any
    firewall_policy: Any
    config: Any = None


def configured(*, gate: Any = None, archive: Any = None, firewall_policy: Any = None,
               config: Any = None, load: bool = False) -> Configured:
    """Fill ``None`` arguments from ``config`` (default: ``load_config()``, read only when
    something is ``None`` or ``load`` is set). A ``gate`` of ``False`` (gating off) is kept."""
    if config is None and (load or gate is None or archive is None or firewall_policy is None):
        from ctxgate.settings import load_config

        config = load_config()
    if gate is None or archive is None:
        from ctxgate.app.application import App

        app = App(config, failsafe_archive=True)  # a broken archive: shown, not kept
        gate = app.gate if gate is None else gate
        archive = app.archive if archive is None else archive
    if firewall_policy is None:
        firewall_policy = config.firewall
    return Configured(gate=gate, archive=archive, firewall_policy=firewall_policy, config=config)
