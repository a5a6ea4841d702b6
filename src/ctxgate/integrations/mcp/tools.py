"""The MCP tools ctxgate itself offers (``run``, ``expand``, ``read``, ``list``, ``search``) and
the shared call pipeline.

Everything here is plain Python (dicts in, text out) so the server and the proxy stay thin:
``gate → handler → firewall`` is :class:`CallPipeline`, used by both.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxgate.app.errors import mcp_error
from ctxgate.app.options import EXPAND, LIST, READ, RUN, SEARCH, from_mcp, mcp_schema
from ctxgate.errors import CtxgateError, UsageError
from ctxgate.gate.provenance import MAX_TOOL_TEXT_CHARS

if TYPE_CHECKING:
    from ctxgate.app.application import App

__all__ = ["EXPAND_SCHEMA", "EXPAND_TOOL", "LIST_SCHEMA", "LIST_TOOL", "READ_SCHEMA", "READ_TOOL",
           "RUN_SCHEMA", "RUN_TOOL", "SEARCH_SCHEMA", "SEARCH_TOOL", "AskPerson", "CallOutcome",
           "CallPipeline", "expand_text", "list_text", "mcp_reason", "read_text", "search_text"]

EXPAND_TOOL = "expand"
"""Name of the expand tool (the firewall's drill-down instructions name it)."""
RUN_TOOL = "run"

EXPAND_SCHEMA: dict[str, Any] = mcp_schema(EXPAND)
"""The ``expand`` tool's input schema, from :data:`ctxgate.app.options.EXPAND`."""

RUN_SCHEMA: dict[str, Any] = mcp_schema(RUN)
"""The ``run`` tool's input schema, from :data:`ctxgate.app.options.RUN` (``command`` is
``ctxgate run --shell``; the CLI-only options are left out)."""

READ_TOOL = "read"
LIST_TOOL = "list"
SEARCH_TOOL = "search"

READ_SCHEMA: dict[str, Any] = mcp_schema(READ)
LIST_SCHEMA: dict[str, Any] = mcp_schema(LIST)
SEARCH_SCHEMA: dict[str, Any] = mcp_schema(SEARCH)
"""The read-only tools' input schemas, from :mod:`ctxgate.app.options` (as the CLI's
``read``, ``archive ls`` and ``archive search`` options)."""


def expand_text(app: App, arguments: Mapping[str, Any]) -> str:
    """Run an ``expand`` tool call against the archive; the view is never firewalled again
    (the framework adapters' :func:`~ctxgate.integrations._adapter.expand.expand_view`).

    Raises:
        UsageError: unknown argument or missing id.
        EntryNotFound, AmbiguousId: as :meth:`Archive.expand`.
    """
    from ctxgate.integrations._adapter.expand import expand_view

    with app.open_archive() as archive:
        return expand_view(archive, arguments)


def read_text(app: App, arguments: Mapping[str, Any]) -> str:
    """A ``read`` call: one page of a text file, never digested (see
    :mod:`ctxgate.firewall.fileread`)."""
    values = from_mcp(READ, arguments)
    return app.read(values.pop("path"), tool=READ_TOOL, **values).text


def list_text(app: App, arguments: Mapping[str, Any]) -> str:
    """A ``list`` call: the archive's entries, most recently used first."""
    import time

    from ctxgate.archive.search import render_list

    limit = from_mcp(LIST, arguments).get("limit") or 20
    if not 1 <= limit <= 200:
        raise UsageError(f"list: limit must be 1..200, got {limit}")
    entries = app.list()
    return render_list(entries[:limit], len(entries), time.time())


def search_text(app: App, arguments: Mapping[str, Any]) -> str:
    """A ``search`` call: matching lines across archived outputs, with ids and line numbers."""
    from ctxgate.archive.search import render_search

    values = from_mcp(SEARCH, arguments)
    result = app.search(values["query"], limit=values.get("limit") or 20)
    return render_search(result, tool=EXPAND_TOOL)


@dataclass(frozen=True, kw_only=True)
class CallOutcome:
    """What the MCP client receives for one call."""

    text: str
    is_error: bool = False
    parts: tuple[Mapping[str, Any], ...] | None = None
    """Non-text content parts to keep (images ...), when the handler returned any."""
    reason: str = ""
    """The firewall decision reason or the gate code, for logs and tests."""
    digested: bool = False
    """True when the text is a digest replacing the handler's output."""


Handler = Callable[[str, dict[str, Any]], Awaitable[tuple[list[Mapping[str, Any]], bool]]]
"""``handler(tool, arguments)`` → (content parts, is_error) — the wrapped tool execution."""

AskPerson = Callable[[str], Awaitable["bool | None"]]
"""``ask(message)`` → ``True`` (a person approved), ``False`` (declined), ``None`` (the client
cannot ask: no elicitation)."""


def mcp_reason(verdict: Any) -> str:
    """A denial written for an MCP client: the model behind it can never change the request
    this server judges against (its ``--request``), so the reason never says "restate"."""
    approve = f"`ctxgate gate approve {verdict.args_sha256[:12]}`"
    if verdict.code == "no_user_request":
        return ("Tool gate: this call was not run. This MCP server cannot see the "
                "conversation and was started without a user request (`--request`), so it runs "
                "only calls its rules prove read-only (such as `ls`, `git status`, `cat FILE`). "
                "Retrying will not help. Tell the user; they can allow this exact call once "
                f"with {approve}, or give the server the task: add `--request \"…\"` to its "
                "command in the MCP client's configuration (`ctxgate mcp install --request` "
                "writes it) and restart the client.")
    if verdict.code not in ("destructive_unrequested", "ask", "awaiting_approval"):
        return verdict.reason
    effect = verdict.effect
    if effect is not None and effect.rule_based and effect.effect.destructive:
        what = f"is destructive by the gate's rules ({effect.effect.value}: {effect.evidence})"
    else:
        what = (f"looks destructive or irreversible "
                f"(p={verdict.probabilities.get('destructive', float('nan')):.2f})")
    return (f"Tool gate: this call {what} and the request this MCP server judges calls against "
            "does not clearly ask for it, so it was not run. This client cannot ask a person "
            f"here; a person can allow this exact call once with {approve}, after which the "
            "identical call runs. Do not retry it before then.")


RECENT_OUTPUTS = 32
"""Tool results a :class:`CallPipeline` keeps for the provenance check (their text, the end of
each at most :data:`~ctxgate.gate.provenance.MAX_TOOL_TEXT_CHARS` code points)."""


class CallPipeline:
    """gate → handler → firewall, the one composition every MCP path uses.

    Args:
        app: the :class:`~ctxgate.app.App` whose settings, archive and gate (``None``
            when built with ``gated=False``: calls run ungated) every call uses.
        request: the run's own prompt, the user request the gate judges against (an MCP
            server never sees the conversation).
        tool_prefix: prefix of firewall tool names (``mcp__<server>__``).
    """

    def __init__(self, app: App, *, request: str | None = None,
                 tool_prefix: str = "mcp__ctxgate__", server: str = "") -> None:
        self.app = app
        self.config = app.config
        self.gate = app.gate
        self.request = request
        self.tool_prefix = tool_prefix
        self.server = server
        """The proxied server's name: its remembered annotations apply to its calls."""
        from collections import deque

        self.outputs: deque[str] = deque(maxlen=RECENT_OUTPUTS)
        """The text of the latest tool results, as ``tool`` messages for the gate's
        provenance check: an MCP server never sees the conversation, but it does see what its
        own tools returned (a send aimed at an address only a result named is asked about)."""

    async def call(self, tool: str, arguments: dict[str, Any], handler: Handler, *,
                   ask: AskPerson | None = None) -> CallOutcome:
        """Judge, run and digest one call; a ctxgate failure becomes an error result.

        ``ask`` asks a person (MCP elicitation) when the gate's outcome is ``ask``; a client
        without elicitation gets a denial written for MCP.
        """
        if self.gate is not None:
            from ctxgate.gate.gate import ToolCall

            call = ToolCall(tool=tool, arguments=arguments, server=self.server)
            prompts = [self.request] if self.request else []
            try:
                seen = [{"role": "tool", "content": t} for t in self.outputs]
                verdict = await self.gate.decide(call, conversation=seen, run_prompts=prompts)
                if verdict.outcome == "ask" and ask is not None:
                    answer = await ask(_ask_message(tool, arguments, verdict))
                    if answer is True:
                        self.gate.approve(call)
                        verdict = await self.gate.decide(call, conversation=seen,
                                                         run_prompts=prompts)
                    elif answer is False:
                        return CallOutcome(
                            text="Tool gate: a person declined this call; do not retry it, "
                                 "continue without it.", is_error=True, reason="declined")
            except CtxgateError as exc:  # the backend cannot even be built: never run the call
                text, reason = mcp_error(exc, judging=True)
                return CallOutcome(text=text, is_error=True, reason=reason)
            if not verdict.allowed:
                return CallOutcome(text=mcp_reason(verdict), is_error=True, reason=verdict.code)
        try:
            parts, is_error = await handler(tool, arguments)
        except CtxgateError as exc:
            text, reason = mcp_error(exc)
            return CallOutcome(text=text, is_error=True, reason=reason)
        texts = [str(p.get("text", "")) for p in parts if p.get("type") == "text"]
        others = tuple(p for p in parts if p.get("type") != "text")
        if not texts:
            return CallOutcome(text="", is_error=is_error, parts=others, reason="no_text")
        output = "\n".join(texts)
        self.outputs.append(output[-MAX_TOOL_TEXT_CHARS:])
        result = await _to_thread(self._firewall, self.tool_prefix + tool, output)
        return CallOutcome(text=result.text if result.text is not None else output,
                           is_error=is_error, parts=others or None, reason=result.reason,
                           digested=result.digested)

    def _firewall(self, tool: str, output: str):
        return self.app.firewall(tool, output, expand_tool=EXPAND_TOOL)  # broken: not archived


async def _to_thread(fn: Callable[..., Any], *args: Any) -> Any:
    import anyio

    return await anyio.to_thread.run_sync(fn, *args)


def run_shell(app: App, arguments: Mapping[str, Any]) -> tuple[str, int]:
    """Run the ``run`` tool's command through the firewall; returns (text, exit code)."""
    import io

    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        raise UsageError("run: 'command' must be a non-empty shell command string")
    values = from_mcp(RUN, arguments)  # command → shell; unknown or mistyped arguments refused
    out = io.BytesIO()
    result = app.run(tool="bash", stdout=out, stderr=out, expand_tool=EXPAND_TOOL,
                     **values)  # a broken archive: not archived
    return out.getvalue().decode("utf-8", "replace"), result.exit_code


def _ask_message(tool: str, arguments: Mapping[str, Any], verdict: Any) -> str:
    args = json.dumps(arguments, ensure_ascii=False, default=repr)
    if len(args) > 1_500:
        args = args[:1_500] + f"… ({len(args) - 1_500} more characters)"
    return (f"The tool gate stopped a call to {tool!r} with arguments {args}.\n{verdict.reason}\n"
            "Run this exact call once?")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
