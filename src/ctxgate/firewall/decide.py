"""The one firewall decision: digest or verbatim, and the reason why.

:func:`decide` is the only place that decides. Its reasons, checked in this order:

==================  ========  ==============================================================
reason              digest?   when
==================  ========  ==============================================================
protected_read      never     the tool is an explicit file read (``protected_read_tools``)
explicit_raw        never     the caller asked for raw output (archived, never digested)
disabled            never     ``[firewall] enabled = false`` (still archived)
not_firewallable    never     the tool is not in ``firewallable_tools`` (nor ``mcp__*``)
dataset             no*       the command runs a dataset program or an explicit line selection
inline              no*       inline was requested and the output fits ``inline_max_bytes``
below_threshold     no        fewer than ``min_tokens`` tokens
digest              yes       ``min_tokens`` or more (inclusive), or implicit verbatim (*) at
                              ``verbatim_max_tokens`` or more
==================  ========  ==============================================================

Token thresholds are answered by a :class:`TokenGauge`, which decides from byte bounds first
and tokenizes only as far as needed (never a whole 1 GiB output to learn it is over 2,000).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ctxgate.firewall.commands import CommandClass, classify_command
from ctxgate.firewall.policy import FirewallPolicy
from ctxgate.tokens import TokenCount

__all__ = [
    "REASONS",
    "Decision",
    "TokenGauge",
    "decide",
    "is_firewallable_tool",
    "is_protected_read",
    "should_inline",
]

REASONS = ("protected_read", "explicit_raw", "disabled", "not_firewallable", "dataset", "inline",
           "below_threshold", "digest")
"""Every reason :func:`decide` can return."""


class TokenGauge(Protocol):
    """Answers "does the output have at least N tokens?" as cheaply as it can."""

    def reaches(self, threshold: int) -> bool:
        """Whether the output has at least ``threshold`` tokens."""
        ...

    def count(self) -> TokenCount:
        """The best count known: exact, a lower bound (``counted until…``) or an estimate."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """What the firewall does with one output, and why."""

    reason: str
    """One of :data:`REASONS`."""
    digest: bool
    """True when the output is replaced by a digest."""
    detail: str
    """One human sentence for ``--explain`` and the archive entry."""

    def to_dict(self) -> dict[str, object]:
        """The structured form recorded with the archive entry."""
        return {"reason": self.reason, "digest": self.digest, "detail": self.detail}


def is_protected_read(tool: str, policy: FirewallPolicy) -> bool:
    """Whether ``tool`` is an explicit file read: never digested, never stubbed, at any size.

    This is the single source of truth; every path that could replace a result (firewall,
    references, stubs) must consult it.
    """
    names = {_norm(t) for t in policy.protected_read_tools}
    name = _norm(tool)
    # An MCP tool (``mcp__server__read_text_file``) is a protected read when its own name is.
    return name in names or (name.startswith("mcp__") and name.rsplit("__", 1)[-1] in names)


def is_firewallable_tool(tool: str, policy: FirewallPolicy) -> bool:
    """Whether large outputs of ``tool`` may be digested (never for a protected read).

    ``mcp`` in ``firewallable_tools`` also admits every MCP tool result (``mcp__server__tool``).
    """
    if is_protected_read(tool, policy):
        return False
    name = _norm(tool)
    names = {_norm(t) for t in policy.firewallable_tools}
    return name in names or ("mcp" in names and name.startswith("mcp__"))


def should_inline(inline_requested: bool, output_bytes: int, policy: FirewallPolicy) -> bool:
    """Whether an explicitly requested inline result fits ``inline_max_bytes`` (UTF-8 bytes)."""
    return inline_requested and output_bytes <= policy.inline_max_bytes


def decide(
    *,
    tool: str,
    output_bytes: int,
    gauge: TokenGauge,
    policy: FirewallPolicy,
    command: str | None = None,
    raw: bool = False,
    inline: bool = False,
    command_class: CommandClass | None = None,
) -> Decision:
    """Decide digest or verbatim for one tool output.

    Args:
        tool: the tool name (``shell``, ``read_file``, ``mcp__github__search`` …).
        output_bytes: size of the output in UTF-8 bytes (as stored).
        gauge: answers token thresholds for this output (see :class:`TokenGauge`).
        policy: the firewall policy.
        command: the shell command that produced the output, when there is one.
        raw: the caller explicitly asked for raw output.
        inline: the caller explicitly asked for inline output.
        command_class: a precomputed :func:`classify_command` result (else computed here).
    """
    if is_protected_read(tool, policy):
        return Decision(reason="protected_read", digest=False,
                        detail=f"`{tool}` is an explicit file read: never digested")
    if raw:
        return Decision(reason="explicit_raw", digest=False,
                        detail="raw output requested: archived, never digested")
    if not policy.enabled:
        return Decision(reason="disabled", digest=False,
                        detail="firewall disabled by configuration ([firewall] enabled = false)")
    if not is_firewallable_tool(tool, policy):
        return Decision(reason="not_firewallable", digest=False,
                        detail=f"tool `{tool}` is not in firewallable_tools")
    if command_class is None:
        command_class = classify_command(command, policy.dataset_commands,
                                         line_selectors=policy.line_selectors)
    ceiling = policy.verbatim_max_tokens
    if command_class:
        if ceiling and gauge.reaches(ceiling):
            return Decision(reason="digest", digest=True,
                            detail=f"{command_class.describe()}, but at or over "
                                   f"verbatim_max_tokens ({ceiling:,})")
        return Decision(reason="dataset", digest=False,
                        detail=f"{command_class.describe()}: the caller already narrowed it")
    if should_inline(inline, output_bytes, policy):
        if ceiling and gauge.reaches(ceiling):
            return Decision(reason="digest", digest=True,
                            detail=f"inline requested, but at or over verbatim_max_tokens "
                                   f"({ceiling:,})")
        return Decision(reason="inline", digest=False,
                        detail=f"inline requested and {output_bytes:,} bytes <= "
                               f"inline_max_bytes ({policy.inline_max_bytes:,})")
    over_inline = (f"inline requested but {output_bytes:,} bytes > inline_max_bytes "
                   f"({policy.inline_max_bytes:,}); " if inline else "")
    if not gauge.reaches(policy.min_tokens):
        return Decision(reason="below_threshold", digest=False,
                        detail=f"{over_inline}fewer than min_tokens ({policy.min_tokens:,}) tokens")
    return Decision(reason="digest", digest=True,
                    detail=f"{over_inline}at least min_tokens ({policy.min_tokens:,}) tokens")


def _norm(tool: str) -> str:
    return tool.strip().lower()
