"""Framework-independent glue every framework adapter shares (no framework imported here).

* :func:`judge` — one fail-closed gate decision: anything that goes wrong while deciding (a
  backend that cannot even be built, a bug) becomes a ``deny`` verdict, never an exception.
* :func:`denial_text` — what a denied or asked call shows the model instead of its result.
* :func:`result_text` — a tool's return value as the text the firewall reads (or ``None``).
* :class:`ResultFirewall` — tool result text → what the model sees (:class:`Screened`), with
  per-tool-name protected reads and dataset tools, over one archive.
* :func:`expand_view` and :data:`EXPAND_PARAMETERS` — the ``expand`` tool every adapter adds.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxgate.archive import Archive
    from ctxgate.firewall.policy import FirewallPolicy
    from ctxgate.gate.call import ToolCall
    from ctxgate.gate.gate import ToolGate
    from ctxgate.gate.verdict import Verdict

__all__ = ["EXPAND_DESCRIPTION", "EXPAND_PARAMETERS", "EXPAND_TOOL", "ResultFirewall",
           "Screened", "denial_text", "expand_view", "judge", "result_text"]

log = logging.getLogger("ctxgate.integrations")
log.addHandler(logging.NullHandler())

EXPAND_TOOL = "expand"
"""The expand tool's name (the digest's drill-down lines call it by this name)."""

EXPAND_DESCRIPTION = (
    "Read any part of a tool output that ctxgate archived and replaced by a digest. "
    "Pass the archive id from the digest and one selector: lines ('A:B', 1-based, inclusive; "
    "negative counts from the end), head/tail (N lines), grep (a regular expression, with "
    "ignore_case, literal, context), bytes ('OFFSET:LENGTH'), json (an RFC 6901 pointer) or "
    "keys (the structure of a JSON output). The view is bounded and ends with the next page.")

EXPAND_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Archive id (or a unique prefix) from a digest."},
        "lines": {"type": "string", "description": "A:B, 1-based inclusive; negative from the end."},
        "head": {"type": "integer", "minimum": 0},
        "tail": {"type": "integer", "minimum": 0},
        "grep": {"type": "string", "description": "Regular expression; the lines that match."},
        "ignore_case": {"type": "boolean"},
        "literal": {"type": "boolean", "description": "grep is a literal string."},
        "context": {"type": "integer", "minimum": 0},
        "max_matches": {"type": "integer", "minimum": 1},
        "bytes": {"type": "string", "description": "OFFSET:LENGTH in UTF-8 bytes."},
        "json": {"type": "string", "description": "RFC 6901 JSON pointer."},
        "keys": {"type": "boolean", "description": "Structural view of a JSON output."},
    },
    "required": ["id"],
    "additionalProperties": False,
}
"""JSON Schema of the expand tool's arguments (not strict: every selector is optional)."""

_EXPAND_KWARGS = {"lines": "lines", "head": "head", "tail": "tail", "grep": "grep",
                  "ignore_case": "ignore_case", "literal": "fixed_strings", "context": "context",
                  "max_matches": "max_matches", "bytes": "byte_range", "json": "json_pointer",
                  "keys": "keys"}


async def judge(
    gate: ToolGate,
    call: ToolCall,
    *,
    conversation: Sequence[Mapping[str, Any]] | None = None,
    run_prompts: Sequence[str] = (),
) -> Verdict:
    """``gate.decide`` that never raises: a failure to decide at all is a deny (fail closed).

    ``ToolGate.decide`` already denies on backend errors, timeouts and unusable answers; this
    adds the cases it raises for — a decision model that cannot be built (a missing extra, a
    bad ``[gate] backend``) and anything unexpected — so no adapter can run a call it could
    not judge.
    """
    try:
        return await gate.decide(call, conversation=conversation, run_prompts=run_prompts)
    except Exception as exc:  # noqa: BLE001 - fail closed: never run a call that was not judged
        from ctxgate.gate.verdict import Verdict

        log.warning("tool gate could not judge a call to %s: %s", call.tool, exc)
        return Verdict(
            outcome="deny", code="backend_error", tool=call.tool,
            reason=(f"Tool gate: this call was not run because the gate could not judge it "
                    f"({type(exc).__name__}: {exc}). The gate fails closed; ask the user how "
                    "to proceed."))


def denial_text(verdict: Verdict) -> str:
    """The text a denied (or asked) call returns to the model in place of its result.

    The same words for every framework: ``Error: `` and the gate's reason (which starts with
    ``Tool gate:`` and says what would let the call run), as in
    :func:`ctxgate.gate.render_denial`.
    """
    from ctxgate.gate.verdict import render_denial

    return str(render_denial(verdict)["content"])


def _part_type(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, Mapping) else getattr(value, "type", None)
    return kind if isinstance(kind, str) else None


def result_text(value: Any) -> str | None:
    """A tool's return value as text for the firewall, or ``None`` when it is not text.

    ``str`` as is; a text part (a mapping or object whose ``type`` is ``"text"`` with a
    ``text`` string) its text; any other typed part (an image, a file, audio), a list holding
    one, and ``bytes`` are not text (they reach the model untouched); other mappings, lists
    and pydantic models are their JSON.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return None
    kind = _part_type(value)
    if kind is not None:
        text = value.get("text") if isinstance(value, Mapping) else getattr(value, "text", None)
        return text if kind == "text" and isinstance(text, str) else None
    if isinstance(value, (list, tuple)):
        if any(_part_type(v) not in (None, "text") for v in value):
            return None
    if isinstance(value, (Mapping, list, tuple)):
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            return None
    dump = getattr(value, "model_dump_json", None)
    if callable(dump):
        try:
            return str(dump())
        except Exception:  # noqa: BLE001 - not serializable: left alone
            return None
    return None


@dataclass
class ResultFirewall:
    """Tool results through the firewall, with the tool classes configured per tool name.

    Every tool is firewallable (its large results are digested) except ``protected_reads``
    (explicit file reads: never digested, at any size) and ``datasets`` (query results:
    verbatim up to ``verbatim_max_tokens``, as dataset commands are). The expand tool's own
    views are never firewalled again.
    """

    archive: Archive
    policy: FirewallPolicy | None = None
    protected_reads: Collection[str] = ()
    datasets: Collection[str] = ()
    expand_tool: str = EXPAND_TOOL
    _policies: dict[str, FirewallPolicy] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.policy is None:
            from ctxgate.firewall.policy import DEFAULT_FIREWALL_POLICY

            self.policy = DEFAULT_FIREWALL_POLICY
        overlap = sorted(set(self.protected_reads) & set(self.datasets))
        if overlap:
            from ctxgate.errors import ConfigError

            raise ConfigError(f"tool(s) {overlap} are both protected reads and datasets; "
                              "name each tool in one of the two at most")

    def _policy(self, tool: str) -> FirewallPolicy:
        found = self._policies.get(tool)
        if found is None:
            p = self.policy
            assert p is not None
            if tool in self.protected_reads:
                found = replace(p, protected_read_tools=(*p.protected_read_tools, tool))
            elif tool in self.datasets:
                found = replace(p, firewallable_tools=(*p.firewallable_tools, tool),
                                dataset_commands=(*p.dataset_commands, tool))
            else:
                found = replace(p, firewallable_tools=(*p.firewallable_tools, tool))
            self._policies[tool] = found
        return found

    def apply(self, tool: str, text: str) -> Screened:
        """What the model should see for ``text``: the digest, or the text (redacted).

        A text of fewer UTF-8 bytes than ``min_tokens`` (and than ``verbatim_max_tokens``)
        has fewer tokens than either (a token is at least one byte), so no rule can digest
        it: it is shown whole, redacted as the firewall shows verbatim output
        (``redact_verbatim``), and not archived — the model already sees all of it. Anything
        larger goes through :func:`ctxgate.firewall.firewall` (archived first). A dataset
        tool is judged as a dataset command named like the tool (that name is the "command"
        a digest of it shows).
        """
        policy = self._policy(tool)
        data = text.encode("utf-8", "surrogatepass")
        if len(data) < min(policy.min_tokens, policy.verbatim_max_tokens or len(data) + 1):
            return self._whole(text, data, policy)
        from ctxgate.firewall.pipeline import firewall

        result = firewall(tool, text, archive=self.archive, policy=policy,
                          command=tool if tool in self.datasets else None,
                          expand_tool=self.expand_tool)
        shown = result.text if result.text is not None else text
        return Screened(text=shown, digested=result.digested, reason=result.reason,
                        redacted=not result.digested and shown != text,
                        archive_id=result.archive_id)

    def _whole(self, text: str, data: bytes, policy: FirewallPolicy) -> Screened:
        redactor = self.archive.new_redactor() if policy.redact_verbatim != "none" else None
        if redactor is not None:
            shown = redactor.feed(data) + redactor.flush()
            if shown != data:
                return Screened(text=shown.decode("utf-8", "replace"), digested=False,
                                reason="below_threshold", redacted=True)
        return Screened(text=text, digested=False, reason="below_threshold")


@dataclass(frozen=True, kw_only=True)
class Screened:
    """What the model gets for one tool result."""

    text: str
    """The digest, or the output shown whole (secrets redacted)."""
    digested: bool
    reason: str
    """The firewall's reason (``digest``, ``below_threshold``, ``protected_read`` …)."""
    redacted: bool = False
    """An output shown whole had secrets masked."""
    archive_id: str | None = None
    """The archive id (``None`` when not archived: small outputs, or no archive)."""


def expand_view(archive: Archive, arguments: Mapping[str, Any]) -> str:
    """Run an expand call (:data:`EXPAND_PARAMETERS`) against ``archive``; errors become text.

    An unknown or expired id, a bad selector or regex comes back as ``Error: …`` (with the
    recent ids or the next step), so the model can correct its call; the run goes on.
    """
    from ctxgate.errors import CtxgateError

    unknown = sorted(set(arguments) - set(_EXPAND_KWARGS) - {"id"})
    entry_id = arguments.get("id")
    if unknown:
        return (f"Error: expand got unknown argument(s) {unknown}; use id and one of "
                f"{', '.join(_EXPAND_KWARGS)}")
    if not isinstance(entry_id, str) or not entry_id.strip():
        return "Error: expand needs 'id', the archive id a digest names"
    kwargs = {_EXPAND_KWARGS[k]: v for k, v in arguments.items() if k != "id" and v is not None}
    try:
        return archive.expand(entry_id.strip(), **kwargs).text
    except CtxgateError as exc:
        return f"Error: {type(exc).__name__}: {exc}"
