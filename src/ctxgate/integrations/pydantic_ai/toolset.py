"""GatedToolset: a pydantic-ai ``WrapperToolset`` that gates each call and firewalls its result.

``call_tool`` runs, for every call of the wrapped toolset:

1. **Gate**, before the tool runs, on its validated arguments (as JSON) and the run's user
   request from ``ctx.messages`` (see :mod:`.messages`); nothing that goes wrong lets it run
   (:func:`ctxgate.integrations._adapter.judge`).
2. The verdict, mapped natively:

   * ``allow`` — the tool runs;
   * ``deny`` — by default :class:`pydantic_ai.exceptions.ToolFailed` with the gate's reason:
     the model gets a failed tool result and the run goes on, without spending the tool's
     retries (``on_deny="retry"``: a ``ModelRetry`` retry prompt instead; ``"raise"``:
     :class:`ctxgate.errors.ToolDenied` ends the run);
   * ``ask`` — :class:`pydantic_ai.exceptions.ApprovalRequired` with the verdict in its
     metadata: the run ends with ``DeferredToolRequests``; resumed with
     ``DeferredToolResults(approvals={id: True})`` the identical call comes back approved
     (``ctx.tool_call_approved``), the gate records a person's approval of exactly these
     arguments and the tool runs; ``False``/``ToolDenied`` never reach the tool.

3. **Firewall** the result: its text (:func:`~ctxgate.integrations._adapter.result_parts`) is
   screened; a digest replaces the text (non-text parts of a list are kept after it), anything
   else is returned unchanged. Binary results and pydantic-ai media are not touched. The ``expand`` tool of
   :mod:`.expand` passes straight through (it only reads the archive).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolFailed
from pydantic_ai.messages import BinaryContent, FileUrl, ToolReturn, UploadedFile
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset

from ctxgate.archive import Archive
from ctxgate.errors import ToolDenied
from ctxgate.gate import ToolCall, ToolGate, Verdict
from ctxgate.integrations._adapter import ResultFirewall, denial_text, judge, result_parts
from ctxgate.integrations.pydantic_ai.expand import ExpandToolset
from ctxgate.integrations.pydantic_ai.messages import gate_conversation, run_prompts

__all__ = ["DenyMode", "GatedToolset"]

DenyMode = Literal["tool_failed", "retry", "raise"]
"""How a deny reaches the model: a failed tool result, a retry prompt, or an exception."""

_MEDIA = (BinaryContent, FileUrl, UploadedFile)
"""pydantic-ai's own media types (typed parts the shared rule does not know): never text."""


@dataclass
class GatedToolset(WrapperToolset[Any]):
    """Gate every call of ``wrapped`` and firewall its results (see the module docstring).

    Args:
        wrapped: the toolset whose calls are gated.
        gate: the :class:`~ctxgate.gate.ToolGate`.
        archive: where large results go (their digests name its ids), when ``firewall`` is
            not given (default: an in-memory archive).
        firewall: the shared :class:`~ctxgate.integrations._adapter.ResultFirewall`
            (policy, protected reads, datasets, firewalled tools, expand tool name).
        on_deny: ``"tool_failed"`` (default), ``"retry"`` or ``"raise"``.
        deadline: seconds for a whole gate decision (``None``: the gate's backend timeout).
    """

    gate: ToolGate
    archive: Archive | None = None
    firewall: ResultFirewall | None = None
    on_deny: DenyMode = "tool_failed"
    deadline: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.gate, ToolGate):
            raise TypeError("GatedToolset needs gate=ToolGate(...); e.g. ctxgate.App().gate")
        if self.on_deny not in ("tool_failed", "retry", "raise"):
            raise ValueError(f"on_deny={self.on_deny!r}; use 'tool_failed', 'retry' or 'raise'")
        if self.firewall is None:
            self.firewall = ResultFirewall(archive=self.archive or Archive())

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        if isinstance(tool.toolset, ExpandToolset):
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        verdict = await self.verdict(name, tool_args, ctx)
        if verdict.outcome == "ask":
            raise ApprovalRequired(metadata={"ctxgate": _ask_metadata(verdict)})
        if not verdict.allowed:
            self._refuse(verdict)
        result = await self.wrapped.call_tool(name, tool_args, ctx, tool)
        return await self.screen(name, result)

    async def verdict(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any]) -> Verdict:
        """The gate's verdict on this call, against the run's history; never raises."""
        from pydantic_core import to_jsonable_python

        try:
            arguments = to_jsonable_python(tool_args, fallback=str)
        except Exception:  # noqa: BLE001 - the gate denies what it cannot serialize
            arguments = tool_args
        call = ToolCall(tool=name, arguments=arguments, call_id=ctx.tool_call_id or "")
        if ctx.tool_call_approved:
            try:
                self.gate.approve(call)  # a person approved this exact call (deferred approval)
            except (TypeError, ValueError):
                pass  # arguments that are not JSON: the gate denies them as unserializable
        policy = self.gate.policy
        conversation = gate_conversation(ctx.messages,
                                         compaction_markers=policy.compaction_markers,
                                         injected_prefixes=policy.injected_prefixes,
                                         prompt=ctx.prompt)
        return await judge(self.gate, call, conversation=conversation,
                           run_prompts=run_prompts(ctx.prompt), deadline=self.deadline)

    def _refuse(self, verdict: Verdict) -> None:
        text = denial_text(verdict)
        if self.on_deny == "raise":
            raise ToolDenied(text, verdict=verdict)
        if self.on_deny == "retry":
            raise ModelRetry(text)
        raise ToolFailed(text)

    async def screen(self, name: str, result: Any) -> Any:
        """``result`` with its text replaced by the digest when the firewall digests it."""
        value = result.return_value if isinstance(result, ToolReturn) else result
        if isinstance(value, _MEDIA) or (isinstance(value, (list, tuple)) and
                                         any(isinstance(v, _MEDIA) for v in value)):
            return result
        text, kept = result_parts(value)
        if text is None:
            return result
        assert self.firewall is not None
        screened = await self.firewall.screen(name, text)
        if not screened.changed:
            return result
        shown: Any = [screened.text, *kept] if kept else screened.text
        if isinstance(result, ToolReturn):
            return replace(result, return_value=shown)
        return shown


def _ask_metadata(verdict: Verdict) -> dict[str, Any]:
    return {"code": verdict.code, "reason": verdict.reason, "tool": verdict.tool,
            "args_sha256": verdict.args_sha256, "probabilities": dict(verdict.probabilities),
            "user_request": verdict.user_request}
