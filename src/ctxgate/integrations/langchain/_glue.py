"""Framework-independent glue every framework adapter shares (no framework imported here).

What a tool result becomes before the firewall sees it, the texts a refusal shows the model,
the per-tool firewall classes (which tools are digested, which are protected reads or
datasets), the ``expand`` tool's arguments mapped onto :meth:`Archive.expand`, and the byte
bound of one tool result. The adapters translate their framework's types to and from these.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ctxgate.errors import UsageError

if TYPE_CHECKING:
    from ctxgate.archive import Archive
    from ctxgate.bound.bound import Cut
    from ctxgate.firewall import FirewallPolicy
    from ctxgate.gate import Verdict

__all__ = [
    "EXPAND_ARGUMENTS",
    "EXPAND_DESCRIPTION",
    "EXPAND_TOOL",
    "ResultFirewall",
    "Shown",
    "bound_result",
    "declined_text",
    "denial_text",
    "expand_view",
    "result_text",
    "unavailable_text",
]

EXPAND_TOOL = "expand"
"""The expand tool's name: the digest's drill-down lines call it (``expand(id=…, lines=…)``)."""

EXPAND_DESCRIPTION = (
    "Read back part of a large tool output that ctxgate archived and replaced by a digest. "
    "Pass the archive id from the digest and one selector: lines='A:B' (1-based, inclusive; "
    "negative from the end), head/tail=N, grep='regex' (with context, ignore_case, literal), "
    "bytes='OFFSET:LENGTH', json='/pointer' or keys=true. The view is bounded and ends with "
    "the exact next page."
)

EXPAND_ARGUMENTS: dict[str, str] = {
    "lines": "lines", "head": "head", "tail": "tail", "grep": "grep",
    "ignore_case": "ignore_case", "literal": "fixed_strings", "context": "context",
    "before": "before", "after": "after", "max_matches": "max_matches", "bytes": "byte_range",
    "json": "json_pointer", "keys": "keys", "max_tokens": "max_tokens",
}
"""The expand tool's argument names (as the digest and the MCP server spell them) and the
:meth:`~ctxgate.archive.Archive.expand` keyword each one sets; ``id`` is the entry."""


def denial_text(verdict: Verdict) -> str:
    """What the model reads for a denied (or asked, unanswered) call: ``Error: Tool gate: …``."""
    from ctxgate.gate import render_denial

    return str(render_denial(verdict)["content"])


def unavailable_text(exc: BaseException) -> str:
    """What the model reads when the gate itself could not run (a backend that cannot load)."""
    return (f"Error: Tool gate: this call was not run because the gate could not decide "
            f"({type(exc).__name__}: {exc}). The gate fails closed; ask the user how to proceed.")


def declined_text(tool: str, message: str | None = None) -> str:
    """What the model reads when a person declined an asked call."""
    why = f" Their reason: {message}" if message else ""
    return (f"Error: Tool gate: a person declined this call to `{tool}`; it was not run.{why} "
            "Do not retry it; continue without it or ask the user what to do instead.")


def result_text(value: Any) -> tuple[str, list[Any]]:
    """A tool result as the text the firewall judges, and the non-text parts it must keep.

    A string is itself; a list of content blocks gives its text blocks joined by newlines and
    keeps the others (images, files) as they are; bytes are decoded as UTF-8 (invalid bytes
    replaced); anything else is its JSON (``default=str`` for what JSON cannot hold).
    """
    if isinstance(value, str):
        return value, []
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace"), []
    if isinstance(value, Sequence):
        texts: list[str] = []
        others: list[Any] = []
        for block in value:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text" and \
                    isinstance(block.get("text"), str):
                texts.append(block["text"])
            else:
                others.append(block)
        return "\n".join(texts), others
    return json.dumps(value, ensure_ascii=False, default=str), []


@dataclass(kw_only=True)
class ResultFirewall:
    """The firewall applied to tool results, with the tool classes set per tool name.

    Args:
        archive: where every large result is stored (its digest names the id).
        policy: the firewall policy (thresholds, digest budget, default tool classes).
        tools: tool names whose large results are digested; ``None`` (default) means every
            tool (a framework's tools have arbitrary names), except the protected reads and
            the expand tool itself.
        protected_reads: tool names whose results are never digested, whatever the size
            (explicit file reads), added to ``policy.protected_read_tools``.
        datasets: tool names whose results are datasets the model already narrowed (SQL
            rows, JSON queries): shown whole up to ``policy.verbatim_max_tokens``, digested
            above it (the firewall's ``inline`` path with no byte cap).
    """

    archive: Archive
    policy: FirewallPolicy | None = None
    tools: Sequence[str] | None = None
    protected_reads: Sequence[str] = ()
    datasets: Sequence[str] = ()
    _policies: dict[str, tuple[FirewallPolicy, bool]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _patterns: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from ctxgate.firewall import DEFAULT_FIREWALL_POLICY

        base = self.policy or DEFAULT_FIREWALL_POLICY
        if self.protected_reads:
            base = replace(base, protected_read_tools=tuple(base.protected_read_tools) +
                           tuple(self.protected_reads))
        self.policy = base
        clash = set(self.protected_reads) & set(self.datasets)
        if clash:
            raise UsageError(f"tool(s) {sorted(clash)} are both protected_reads and datasets; "
                             "name each tool in one of them")

    def policy_for(self, tool: str) -> tuple[FirewallPolicy, bool]:
        """The policy the firewall uses for ``tool``'s results, and whether it is a dataset."""
        found = self._policies.get(tool)
        if found is not None:
            return found
        from ctxgate.firewall import is_firewallable_tool

        policy = self.policy
        assert policy is not None
        dataset = tool in self.datasets
        wanted = self.tools is None or tool in self.tools or dataset
        if wanted and not is_firewallable_tool(tool, policy):
            policy = replace(policy, firewallable_tools=tuple(policy.firewallable_tools) + (tool,))
        elif not wanted and tool in policy.firewallable_tools:
            policy = replace(policy, firewallable_tools=tuple(
                t for t in policy.firewallable_tools if t != tool))
        if dataset:
            policy = replace(policy, inline_max_bytes=max(policy.inline_max_bytes, 1 << 62))
        with self._lock:
            self._policies[tool] = (policy, dataset)
        return policy, dataset

    def apply(self, tool: str, text: str, *, session_id: str | None = None) -> Shown:
        """What the model is shown of one tool output, and why.

        The expand tool's own views are never firewalled again. An output of fewer UTF-8
        bytes than ``min_tokens`` has fewer tokens, so it is below the threshold for sure: it
        is shown whole (redacted like any verbatim output) without an archive write, which
        keeps small results at tens of microseconds.
        """
        if tool == EXPAND_TOOL or not text:
            return Shown(text=text, reason="not_firewalled")
        policy, dataset = self.policy_for(tool)
        if len(text) < policy.min_tokens and len(text.encode("utf-8", "surrogatepass")) < \
                policy.min_tokens:
            return Shown(text=self._redacted(text, policy), reason="below_threshold")
        from ctxgate.firewall import firewall

        result = firewall(tool, text, archive=self.archive, policy=policy, inline=dataset,
                          session_id=session_id, expand_tool=EXPAND_TOOL)
        return Shown(text=result.text if result.text is not None else text,
                     reason=result.reason, digested=result.digested,
                     archive_id=result.archive_id)

    def _redacted(self, text: str, policy: FirewallPolicy) -> str:
        if policy.redact_verbatim == "none" or not self.archive.policy.redact:
            return text
        if self._patterns is None:
            from ctxgate.archive.redact import compile_patterns

            self._patterns = compile_patterns(self.archive.policy.extra_redact_patterns)
        from ctxgate.archive.redact import redact_text

        return redact_text(text, self._patterns)[0]


@dataclass(frozen=True, kw_only=True)
class Shown:
    """What the model is shown of one tool output."""

    text: str
    reason: str
    """The firewall's reason (``digest``, ``below_threshold``, ``protected_read`` …), or
    ``not_firewalled`` for the expand tool's own views."""
    digested: bool = False
    archive_id: str | None = None
    """The short archive id, when the output was archived."""


def expand_view(archive: Archive, arguments: Mapping[str, Any]) -> str:
    """Run one ``expand`` call (``id`` plus the selectors of :data:`EXPAND_ARGUMENTS`).

    Raises:
        UsageError: no id, an unknown argument, bad or conflicting selectors.
        EntryNotFound, AmbiguousId: the id names no entry, or several.
    """
    unknown = sorted(set(arguments) - set(EXPAND_ARGUMENTS) - {"id"})
    if unknown:
        raise UsageError(f"expand: unknown argument(s) {unknown}; known: id, "
                         + ", ".join(EXPAND_ARGUMENTS))
    entry_id = arguments.get("id")
    if not isinstance(entry_id, str) or not entry_id.strip():
        raise UsageError("expand: 'id' is required (the archive id shown in the digest)")
    kwargs = {EXPAND_ARGUMENTS[k]: v for k, v in arguments.items()
              if k != "id" and v is not None and v is not False}
    return archive.expand(entry_id.strip(), **kwargs).text


def bound_result(text: str, *, max_bytes: int, archive: Any = None,
                 keep: str = "both") -> tuple[str, Cut | None]:
    """One tool result bounded to ``max_bytes`` UTF-8 bytes of its JSON string.

    The cut keeps head and tail (``keep``), ends with ctxgate's marker and stores the full
    original in ``archive`` when given. Returns the text and the cut (``None``: it fit).
    """
    from ctxgate.bound import bound_record

    # the record is {"result": text}: its 12 bytes of framing count against the bound
    result = bound_record({"result": text}, max_bytes=max_bytes + 12,
                          truncatable=(f"result={keep}",), archive=archive)
    if not result.changed:
        return text, None
    return result.record["result"], result.cuts[0]
