"""The user's configuration as an effect source: ``[gate.tool_rules."PATTERN"]``.

Patterns are shell-style globs over the tool name (``send_*``, ``mcp__github__*``), compared
case-insensitively. The exact name wins, then the longest matching pattern; the rule's
``effect`` (when set) is the strongest evidence there is, and its thresholds replace the
gate's for that tool.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource
from ctxgate.gate.policy import ToolRule

__all__ = ["config_effect", "match_rule"]


def match_rule(tool: str, rules: Mapping[str, ToolRule]) -> tuple[str, ToolRule] | None:
    """The rule that applies to ``tool`` and its pattern, or ``None``."""
    name = tool.lower()
    best: tuple[str, ToolRule] | None = None
    for pattern, rule in rules.items():
        p = pattern.lower()
        if p == name:
            return pattern, rule
        if fnmatch.fnmatchcase(name, p) and (best is None or len(pattern) > len(best[0])):
            best = (pattern, rule)
    return best


def config_effect(tool: str, rules: Mapping[str, ToolRule]) -> Effect | None:
    """The effect class the configuration gives ``tool``, or ``None``."""
    found = match_rule(tool, rules)
    if found is None or found[1].effect is None:
        return None
    pattern, rule = found
    return Effect(effect=EffectClass(rule.effect), source=EffectSource.CONFIG,
                  evidence=f"the configuration says tools matching {pattern!r} are "
                           f"{rule.effect}")
