"""Tool results through the firewall: one per-tool policy and one small-output rule.

Per tool name (the same rule in every adapter):

* ``protected_reads`` — explicit file reads, never digested at any size (added to the
  policy's ``protected_read_tools``);
* ``datasets`` — tools whose output the caller already narrowed (query results): judged by
  the firewall's own dataset rule, as a dataset command named like the tool (verbatim up to
  ``verbatim_max_tokens``, digested above it);
* ``firewalled`` — the tools whose large outputs are digested; ``None`` (the default) means
  every tool, since a framework's tools have arbitrary names; a tool not named is never
  digested. Datasets and protected reads are judged by their own rule either way.

The expand tool's own views are never firewalled again. An output with fewer UTF-8 bytes
than ``min_tokens`` (and than ``verbatim_max_tokens``) has fewer tokens than either (a token
is at least one byte), so no rule can digest it: it is shown whole, redacted exactly as the
firewall shows verbatim output (``redact_verbatim``), without an archive write — there is
nothing to expand in an output the model sees whole.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ctxgate.integrations._adapter.expand import EXPAND_TOOL

if TYPE_CHECKING:
    from ctxgate.archive import Archive
    from ctxgate.firewall import FirewallPolicy

__all__ = ["THREAD_CHARS", "ResultFirewall", "Screened"]

THREAD_CHARS = 64 * 1024
"""Results of at least this many code points are screened in a worker thread by
:meth:`ResultFirewall.screen` (the digest of a large output takes milliseconds; the event
loop keeps serving parallel calls meanwhile)."""


@dataclass(frozen=True, kw_only=True)
class Screened:
    """What the model gets for one tool result."""

    text: str
    """The digest, or the output itself (redacted like any verbatim output)."""
    reason: str
    """The firewall's reason (``digest``, ``below_threshold``, ``protected_read`` …), or
    ``not_firewalled`` for the expand tool's own views."""
    digested: bool = False
    redacted: bool = False
    """Secrets were masked in an output shown whole."""
    archive_id: str | None = None
    """The archive id the digest names (``None`` when not digested)."""

    @property
    def changed(self) -> bool:
        """Whether the model must see :attr:`text` instead of the tool's own result."""
        return self.digested or self.redacted


@dataclass(kw_only=True)
class ResultFirewall:
    """The firewall applied to one agent's tool results, with the tool classes per tool name
    (see the module docstring).

    Raises:
        ConfigError: a tool named both a protected read and a dataset.
    """

    archive: Archive
    policy: FirewallPolicy | None = None
    protected_reads: Collection[str] = ()
    datasets: Collection[str] = ()
    firewalled: Collection[str] | None = None
    expand_tool: str = EXPAND_TOOL
    _policies: dict[str, FirewallPolicy] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.policy is None:
            from ctxgate.firewall import DEFAULT_FIREWALL_POLICY

            self.policy = DEFAULT_FIREWALL_POLICY
        self.protected_reads = frozenset(self.protected_reads)
        self.datasets = frozenset(self.datasets)
        if self.firewalled is not None:
            self.firewalled = frozenset(self.firewalled)
        overlap = sorted(self.protected_reads & self.datasets)  # type: ignore[operator]
        if overlap:
            from ctxgate.errors import ConfigError

            raise ConfigError(f"tool(s) {overlap} are both protected_reads and datasets; "
                              "name each tool in one of them at most")

    def policy_for(self, tool: str) -> FirewallPolicy:
        """The firewall policy for ``tool``'s results (cached per tool name)."""
        found = self._policies.get(tool)
        if found is not None:
            return found
        p = self.policy
        assert p is not None
        if tool in self.protected_reads:
            found = replace(p, protected_read_tools=(*p.protected_read_tools, tool))
        elif tool in self.datasets:
            found = replace(p, firewallable_tools=(*p.firewallable_tools, tool),
                            dataset_commands=(*p.dataset_commands, tool))
        elif self.firewalled is None or tool in self.firewalled:
            found = replace(p, firewallable_tools=(*p.firewallable_tools, tool))
        else:
            found = replace(p, firewallable_tools=tuple(
                t for t in p.firewallable_tools if t != tool))
        self._policies[tool] = found
        return found

    def command_for(self, tool: str) -> str | None:
        """The ``command`` passed with ``tool``'s output: its own name for a dataset tool."""
        return tool if tool in self.datasets else None

    def apply(self, tool: str, text: str, *, session_id: str | None = None) -> Screened:
        """What the model is shown of one tool output (see the module docstring)."""
        if tool == self.expand_tool:
            return Screened(text=text, reason="not_firewalled")
        policy = self.policy_for(tool)
        command = self.command_for(tool)
        data = text.encode("utf-8", "surrogatepass")
        if len(data) < min(policy.min_tokens, policy.verbatim_max_tokens or len(data) + 1):
            return self._whole(tool, text, data, policy, command)
        from ctxgate.firewall import firewall

        result = firewall(tool, text, archive=self.archive, policy=policy, command=command,
                          session_id=session_id, expand_tool=self.expand_tool)
        shown = result.text if result.text is not None else text
        return Screened(text=shown, reason=result.reason, digested=result.digested,
                        redacted=not result.digested and shown != text,
                        archive_id=result.archive_id if result.digested else None)

    async def screen(self, tool: str, text: str, *, session_id: str | None = None) -> Screened:
        """:meth:`apply` from async code: in a worker thread for outputs of at least
        :data:`THREAD_CHARS` code points, inline for smaller ones."""
        if len(text) < THREAD_CHARS:
            return self.apply(tool, text, session_id=session_id)
        return await asyncio.to_thread(self.apply, tool, text, session_id=session_id)

    def _whole(self, tool: str, text: str, data: bytes, policy: FirewallPolicy,
               command: str | None) -> Screened:
        from ctxgate.firewall.decide import decide

        decision = decide(tool=tool, output_bytes=len(data),
                          gauge=_FewerTokensThanBytes(len(data)), policy=policy, command=command)
        redactor = self.archive.new_redactor() if policy.redact_verbatim != "none" else None
        if redactor is None:
            return Screened(text=text, reason=decision.reason)
        shown = redactor.feed(data) + redactor.flush()
        if shown == data:
            return Screened(text=text, reason=decision.reason)
        return Screened(text=shown.decode("utf-8", "surrogatepass"), reason=decision.reason,
                        redacted=True)


class _FewerTokensThanBytes:
    """A token gauge for an output of ``size`` bytes asked only about thresholds above it."""

    def __init__(self, size: int) -> None:
        self.size = size

    def reaches(self, threshold: int) -> bool:
        return threshold <= 0  # every token is at least one byte: size < threshold here

    def count(self) -> Any:
        from ctxgate.tokens import estimate_tokens

        return estimate_tokens(self.size)
