"""Framework-independent glue shared by the agent-framework adapters.

Every framework adapter (pydantic-ai, LangChain, the OpenAI Agents SDK) does the same four
things around a tool call, in its own framework's types:

* :func:`judge` — ask the gate about one call and **never raise**: an exception or a hang
  past the deadline anywhere in the decision becomes a deny verdict with the gate's own
  failure sentence (the gate fails closed);
* :func:`result_text` — the text of a tool result that the firewall sees (a string as is,
  anything JSON-like serialized; binary and multimodal results are not text);
* :func:`screen` — that text through the firewall, with the tool's class (ordinary,
  protected read, dataset) from :class:`ToolClasses`; an output too small to be digested is
  returned whole (redacted like any verbatim output) without an archive round trip;
* :func:`expand_view` — an ``expand`` tool call (the same arguments as the MCP ``expand``
  tool) answered from the archive.

Nothing here imports a framework.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ctxgate.errors import CtxgateError, DecisionModelError, DecisionTimeout, UsageError

if TYPE_CHECKING:
    from ctxgate.archive import Archive
    from ctxgate.firewall import FirewallPolicy
    from ctxgate.gate import ToolCall, ToolGate, Verdict

__all__ = ["EXPAND_ARGUMENTS", "EXPAND_DESCRIPTION", "Screened", "ToolClasses", "expand_view",
           "judge", "result_text", "screen"]

EXPAND_ARGUMENTS: Mapping[str, str] = {
    "lines": "lines", "head": "head", "tail": "tail", "grep": "grep",
    "ignore_case": "ignore_case", "literal": "fixed_strings", "context": "context",
    "before": "before", "after": "after", "max_matches": "max_matches", "bytes": "byte_range",
    "json": "json_pointer", "keys": "keys", "max_tokens": "max_tokens",
}
"""``expand`` tool argument → :meth:`ctxgate.archive.Archive.expand` keyword (besides ``id``)."""

EXPAND_DESCRIPTION = (
    "Read part of a tool output that ctxgate archived and replaced by a digest. `id` is the "
    "archive id the digest names; choose one selector: `lines` 'A:B' (1-based, inclusive; "
    "negative counts from the end), `head`/`tail` N lines, `grep` a regular expression (with "
    "`ignore_case`, `literal`, `context`/`before`/`after`, `max_matches`), `bytes` "
    "'OFFSET:LENGTH' for very long lines, `json` an RFC 6901 pointer or `keys` for the "
    "structure of a JSON output. Every view is bounded and ends with the next page.")
"""What the model reads about the expand tool."""


@dataclass(frozen=True, kw_only=True)
class ToolClasses:
    """How the firewall treats each tool of an agent, by tool name.

    Args:
        protected_reads: explicit file reads, never digested at any size.
        datasets: tools whose output the caller already narrowed (query results): verbatim
            up to the firewall's ``verbatim_max_tokens``, digested above it.
        firewalled: the tools whose large outputs are digested; ``None`` (default) means
            every tool not listed above.
    """

    protected_reads: Collection[str] = ()
    datasets: Collection[str] = ()
    firewalled: Collection[str] | None = None
    _cache: dict[tuple[str, int], tuple[Any, Any, str | None]] = field(
        default_factory=dict, repr=False, compare=False)

    def policy_for(self, tool: str, policy: FirewallPolicy) -> tuple[FirewallPolicy, str | None]:
        """The firewall policy for ``tool`` and the ``command`` to pass with its output.

        A dataset tool is passed as a command named after the tool, with the policy's
        dataset programs set to that name, so the firewall's own dataset rule decides.
        """
        key = (tool, id(policy))
        hit = self._cache.get(key)
        if hit is not None and hit[0] is policy:
            return hit[1], hit[2]
        command: str | None = None
        if tool in self.protected_reads:
            tuned = replace(policy, protected_read_tools=(*policy.protected_read_tools, tool))
        elif tool in self.datasets:
            tuned = replace(policy, dataset_commands=(tool,),
                            firewallable_tools=(*policy.firewallable_tools, tool))
            command = tool
        elif self.firewalled is not None and tool not in self.firewalled:
            tuned = policy  # the policy's own firewallable_tools decide (usually: not digested)
        else:
            tuned = replace(policy, firewallable_tools=(*policy.firewallable_tools, tool))
        self._cache[key] = (policy, tuned, command)
        return tuned, command


@dataclass(frozen=True, kw_only=True)
class Screened:
    """What the model gets for one tool result."""

    text: str
    """The digest, or the output itself (redacted like any verbatim output)."""
    reason: str
    """The firewall's reason (``digest``, ``below_threshold``, ``protected_read`` …)."""
    digested: bool = False
    redacted: bool = False
    """Secrets were masked in an output shown whole."""
    archive_id: str | None = None
    """The archive id the digest names (``None`` when not archived)."""


async def judge(
    gate: ToolGate,
    call: ToolCall,
    *,
    conversation: Sequence[Mapping[str, Any]] = (),
    run_prompts: Sequence[str] = (),
    deadline: float | None = None,
) -> Verdict:
    """The gate's verdict on ``call``; never raises (fail closed).

    Args:
        gate: the tool gate.
        call: the tool and the JSON arguments that will run.
        conversation: OpenAI-shaped messages, oldest first (see :mod:`ctxgate.gate.request`).
        run_prompts: this run's own prompts.
        deadline: seconds for the whole decision, model loading included (``None``: only the
            gate's own backend timeout applies). Past it the call is denied (``timeout``); a
            step that blocks the event loop (loading the local model) is not interrupted, so
            the deny then comes when it ends.

    Returns:
        The verdict; an exception from the gate (a backend that cannot be built, a bug) is a
        deny with code ``backend_error``, a hang past ``deadline`` one with code ``timeout``.
    """
    from ctxgate.gate import reasons

    try:
        decision = gate.decide(call, conversation=conversation, run_prompts=run_prompts)
        if deadline is None:
            return await decision
        return await asyncio.wait_for(decision, deadline)
    except TimeoutError:
        after = f" after {deadline:g} s" if deadline is not None else ""
        code, reason = reasons.failure(DecisionTimeout(f"timed out{after}"))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - the call must not run, whatever went wrong
        err = exc if isinstance(exc, DecisionModelError) else DecisionModelError(
            f"the gate raised {type(exc).__name__}: {exc}")
        code, reason = reasons.failure(err)
    from ctxgate.gate.verdict import Verdict

    return Verdict(outcome="deny", code=code, reason=reason, tool=call.tool)


def result_text(value: Any) -> str | None:
    """The text of a tool result the firewall sees, or ``None`` when it is not text.

    A string is itself; ``bytes`` are not text (binary results reach the model untouched);
    anything else (dicts, lists, numbers, dataclasses, pydantic models) is its JSON, as the
    frameworks send it (non-ASCII kept; what JSON cannot hold becomes its ``str``).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return None
    try:
        from pydantic_core import to_jsonable_python

        return json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def screen(
    tool: str,
    text: str,
    *,
    archive: Archive,
    policy: FirewallPolicy,
    classes: ToolClasses,
    expand_tool: str = "expand",
) -> Screened:
    """Put one tool result's text through the firewall.

    An output with fewer UTF-8 bytes than ``min_tokens`` (and than ``verbatim_max_tokens``)
    has fewer tokens than either, so no rule can digest it: it is returned whole, redacted as
    the firewall would show it (``redact_verbatim``), without an archive entry — there is
    nothing to expand in an output the model sees whole. Everything else goes through
    :func:`ctxgate.firewall.firewall` (archived first, then digest or verbatim).
    """
    tuned, command = classes.policy_for(tool, policy)
    data = text.encode("utf-8", "surrogatepass")
    ceiling = tuned.verbatim_max_tokens or len(data) + 1
    if len(data) < min(tuned.min_tokens, ceiling):
        return _small(tool, text, data, archive, tuned, command)
    from ctxgate.firewall import firewall

    result = firewall(tool, text, archive=archive, policy=tuned, command=command,
                      expand_tool=expand_tool)
    shown = result.text if result.text is not None else text
    return Screened(text=shown, reason=result.reason, digested=result.digested,
                    archive_id=result.archive_id if result.digested else None)


class _FewerTokensThanBytes:
    """A token gauge for an output of ``size`` bytes asked only about thresholds above it."""

    def __init__(self, size: int) -> None:
        self.size = size

    def reaches(self, threshold: int) -> bool:
        return threshold <= 0  # every token is at least one byte: size < threshold here

    def count(self) -> Any:
        from ctxgate.tokens import estimate_tokens

        return estimate_tokens(self.size)


def _small(tool: str, text: str, data: bytes, archive: Archive, policy: FirewallPolicy,
           command: str | None) -> Screened:
    from ctxgate.firewall.decide import decide

    decision = decide(tool=tool, output_bytes=len(data), gauge=_FewerTokensThanBytes(len(data)),
                      policy=policy, command=command)
    redactor = archive.new_redactor() if policy.redact_verbatim != "none" else None
    if redactor is None:
        return Screened(text=text, reason=decision.reason)
    shown = redactor.feed(data) + redactor.flush()
    if shown == data:
        return Screened(text=text, reason=decision.reason)
    return Screened(text=shown.decode("utf-8", "surrogatepass"), reason=decision.reason,
                    redacted=True)


def expand_view(archive: Archive, arguments: Mapping[str, Any]) -> str:
    """Answer an ``expand`` tool call from the archive (the view is never firewalled again).

    Raises:
        UsageError: a missing id or an unknown argument (the message lists the known ones).
        CtxgateError: as :meth:`~ctxgate.archive.Archive.expand` (unknown or ambiguous id —
            the message lists recent ids —, conflicting selectors, a bad regex).
    """
    unknown = sorted(set(arguments) - set(EXPAND_ARGUMENTS) - {"id"})
    if unknown:
        raise UsageError(f"expand: unknown argument(s) {unknown}; known: id, "
                         f"{', '.join(EXPAND_ARGUMENTS)}")
    entry_id = arguments.get("id")
    if not isinstance(entry_id, str) or not entry_id.strip():
        raise UsageError("expand: 'id' is required (the archive id the digest names)")
    kwargs = {EXPAND_ARGUMENTS[k]: v for k, v in arguments.items()
              if k != "id" and v is not None and v is not False}
    try:
        return archive.expand(entry_id.strip(), **kwargs).text
    except CtxgateError:
        raise
    except (TypeError, ValueError) as exc:
        raise UsageError(f"expand: {exc}") from exc
