"""``ctxgate mcp serve``: an MCP server offering ``run`` (gated, firewalled), ``expand``, and the
read-only ``read``, ``list`` and ``search``."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from ctxgate import __version__
from ctxgate.app.application import App
from ctxgate.app.errors import mcp_error
from ctxgate.errors import CtxgateError
from ctxgate.integrations.mcp.tools import (
    EXPAND_SCHEMA,
    EXPAND_TOOL,
    LIST_SCHEMA,
    LIST_TOOL,
    READ_SCHEMA,
    READ_TOOL,
    RUN_SCHEMA,
    RUN_TOOL,
    SEARCH_SCHEMA,
    SEARCH_TOOL,
    CallOutcome,
    CallPipeline,
    expand_text,
    list_text,
    read_text,
    run_shell,
    search_text,
)

__all__ = ["APPROVE_SCHEMA", "build_server", "expand_result", "person_asker", "result_of",
           "serve_stdio"]

INSTRUCTIONS = (
    "Large tool outputs are replaced by a digest with an archive id; call `expand` with that id "
    "and a selector (lines, grep, bytes, json) to read the omitted parts. Tool calls are judged "
    "before they run; a denial comes back as an error with the reason — ask the user then."
)


def result_of(outcome: CallOutcome, structured: Any = None) -> types.CallToolResult:
    """The MCP result for a pipeline outcome (text first, then kept non-text parts).

    ``structured`` (a downstream's ``structuredContent``) is forwarded only with verbatim
    text: a digested result must not bring the same bytes back through another field.
    """
    content: list[Any] = [types.TextContent(type="text", text=outcome.text)]
    for part in outcome.parts or ():
        try:
            content.append(types.ImageContent.model_validate(part) if part.get("type") == "image"
                           else types.EmbeddedResource.model_validate(part))
        except Exception:  # noqa: BLE001 - an unknown part is shown as JSON text instead
            import json

            content.append(types.TextContent(type="text", text=json.dumps(part)[:2000]))
    keep = structured if structured is not None and not outcome.digested else None
    return types.CallToolResult(content=content, is_error=outcome.is_error,
                                structured_content=keep)


APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Run this exact call once"}},
    "required": ["approve"],
}


def person_asker(ctx: Any):
    """``ask(message)`` over MCP elicitation for this request, or ``None`` when the client
    did not declare elicitation (then the gate's ask becomes a deny written for MCP)."""
    session = getattr(ctx, "session", None)
    if session is None:
        return None
    try:
        can = session.check_client_capability(
            types.ClientCapabilities(elicitation=types.ElicitationCapability()))
    except Exception:  # noqa: BLE001 - an old session without capabilities cannot ask
        can = False
    if not can:
        return None

    async def ask(message: str) -> bool | None:
        try:
            result = await session.elicit_form(message, APPROVE_SCHEMA,
                                               related_request_id=getattr(ctx, "request_id", None))
        except Exception:  # noqa: BLE001 - a failed question is no approval
            return None
        content = result.content or {}
        return result.action == "accept" and content.get("approve") is True

    return ask


async def expand_result(app: App, arguments: dict[str, Any]) -> types.CallToolResult:
    """An ``expand`` call: never gated (it only reads) and never firewalled again."""
    return await _reading(expand_text, app, arguments)


async def _reading(fn: Any, *args: Any) -> types.CallToolResult:
    """A read-only tool (expand, read, list, search): bounded by itself, never firewalled."""
    try:
        text = await anyio.to_thread.run_sync(fn, *args)
    except CtxgateError as exc:
        text, reason = mcp_error(exc)
        return result_of(CallOutcome(text=text, is_error=True, reason=reason))
    return result_of(CallOutcome(text=text))


def build_server(pipeline: CallPipeline) -> Server:
    """The low-level MCP server with its five tools (their calls go to ``pipeline.app``)."""
    app = pipeline.app
    tools = [
        types.Tool(name=RUN_TOOL, description=(
            "Run a shell command. Large output comes back as a digest plus an archive id; "
            "dataset commands (sqlite3, psql, jq, gh --json) come back whole."),
            input_schema=RUN_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                              open_world_hint=True)),
        types.Tool(name=EXPAND_TOOL, description=(
            "Read an archived output by id: lines A:B, head/tail N, grep REGEX (+context), "
            "bytes OFFSET:LENGTH, json POINTER or keys. The view is bounded and says how to get "
            "the next page."), input_schema=EXPAND_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
        types.Tool(name=READ_TOOL, description=(
            "Read a text file you name: its lines as they are, never digested, one page of at "
            "most 25,000 tokens (max_tokens) from lines A:B; the page says how to get the next. "
            "Binary files, directories and missing paths are errors."),
            input_schema=READ_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
        types.Tool(name=LIST_TOOL, description=(
            "List archived outputs (id, tool, size, lines, age, command), most recently used "
            "first."), input_schema=LIST_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
        types.Tool(name=SEARCH_TOOL, description=(
            "Search every archived output for lines holding all the query's words "
            "(case-insensitive); each match names its archive id and line number, so "
            "expand(id, lines=…) can show it in context. Bounded (limit)."),
            input_schema=SEARCH_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
    ]
    readers = {READ_TOOL: lambda args: _reading(read_text, app, args),
               LIST_TOOL: lambda args: _reading(list_text, app, args),
               SEARCH_TOOL: lambda args: _reading(search_text, app, args)}

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name == EXPAND_TOOL:
            return await expand_result(app, arguments)
        if params.name in readers:
            return await readers[params.name](arguments)
        if params.name != RUN_TOOL:
            names = ", ".join(repr(t.name) for t in tools)
            return result_of(CallOutcome(
                text=f"unknown tool {params.name!r}; this server has {names}", is_error=True))

        async def handler(tool: str, args: dict[str, Any]):
            # run_command digests by itself; the pipeline's firewall then sees a small text.
            text, code = await anyio.to_thread.run_sync(run_shell, app, args)
            suffix = "" if code == 0 else f"\n[exit code {code}]"
            return [{"type": "text", "text": text + suffix}], code != 0

        return result_of(await pipeline.call("bash", arguments, handler, ask=person_asker(ctx)))

    return Server("ctxgate", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve_stdio(server: Server) -> None:
    """Serve over this process's stdin/stdout until the client disconnects."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
