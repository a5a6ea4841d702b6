"""The context firewall: large tool outputs become a digest plus an archive id to expand.

``firewall(tool, output, ...)`` handles an output the caller already has;
``run_command(argv | shell=..., ...)`` runs a command and streams its output through the same
path (``ctxgate run``). One function, :func:`ctxgate.firewall.decide.decide`, picks digest or
verbatim and says why (it is not re-exported here: the name is its module's). Names resolve
lazily: importing this package costs nothing on the per-call path.
"""

from __future__ import annotations

from ctxgate._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "DEFAULT_FIREWALL_POLICY": "ctxgate.firewall.policy",
    "REASONS": "ctxgate.firewall.decide",
    "CommandClass": "ctxgate.firewall.commands",
    "Decision": "ctxgate.firewall.decide",
    "Digest": "ctxgate.firewall.digest",
    "DigestContext": "ctxgate.firewall.digest",
    "FirewallPolicy": "ctxgate.firewall.policy",
    "FirewallResult": "ctxgate.firewall.pipeline",
    "OutputPipeline": "ctxgate.firewall.pipeline",
    "OutputScanner": "ctxgate.firewall.scan",
    "RunResult": "ctxgate.firewall.run",
    "TokenMeter": "ctxgate.firewall.meter",
    "build_digest": "ctxgate.firewall.digest",
    "classify_command": "ctxgate.firewall.commands",
    "firewall": "ctxgate.firewall.pipeline",
    "is_dataset_command": "ctxgate.firewall.commands",
    "is_firewallable_tool": "ctxgate.firewall.decide",
    "is_protected_read": "ctxgate.firewall.decide",
    "json_preview": "ctxgate.firewall.jsonpreview",
    "run_command": "ctxgate.firewall.run",
    "should_inline": "ctxgate.firewall.decide",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
