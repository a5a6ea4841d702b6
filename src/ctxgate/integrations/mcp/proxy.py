"""``ctxgate mcp proxy -- CMD ...``: any stdio MCP server, gated and firewalled.

The proxy starts the downstream server, lists its tools and offers them unchanged plus
``expand``. Each call is judged by the gate (on the exact arguments forwarded), forwarded,
and its text result put through the firewall; non-text parts (images, resources) pass
through. Denials and downstream errors come back as error results the model can read.
"""

from __future__ import annotations

import os
from contextlib import AsyncExitStack
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel import Server

from ctxgate import __version__
from ctxgate.integrations.mcp.server import INSTRUCTIONS, expand_result, person_asker, result_of
from ctxgate.integrations.mcp.tools import (
    EXPAND_SCHEMA,
    EXPAND_TOOL,
    CallOutcome,
    CallPipeline,
)
from ctxgate.settings import Config

__all__ = ["Downstream", "build_proxy", "list_tools"]


def _server_params(command: list[str], *, cwd: str | None = None) -> StdioServerParameters:
    """How to start a stdio server: ``command`` with this process's whole environment (the
    MCP client configured it for the server, e.g. ``GITHUB_PERSONAL_ACCESS_TOKEN``; the
    SDK's default would pass only ``HOME``, ``PATH`` and a few others)."""
    if not command:
        raise ValueError("the server command is empty; pass it after --")
    return StdioServerParameters(command=command[0], args=command[1:], cwd=cwd,
                                 env=dict(os.environ))


async def _all_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool of an initialised session, following ``tools/list`` cursors."""
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = getattr(page, "next_cursor", None)
        if not cursor:
            return tools


class Downstream:
    """A connected downstream MCP server (a client session over its stdio)."""

    def __init__(self, command: list[str], *, cwd: str | None = None) -> None:
        self.params = _server_params(command, cwd=cwd)
        self.stack = AsyncExitStack()
        self.session: ClientSession | None = None
        self.tools: list[types.Tool] = []

    async def __aenter__(self) -> Downstream:
        read, write = await self.stack.enter_async_context(stdio_client(self.params))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        # Output schemas are dropped: a digested result has no structured content, and
        # clients reject a result without it when the tool declares a schema.
        self.tools = [t.model_copy(update={"output_schema": None})
                      for t in await _all_tools(self.session)]
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stack.aclose()

    async def call(self, tool: str, arguments: dict[str, Any]):
        assert self.session is not None
        result = await self.session.call_tool(tool, arguments)
        parts = [p.model_dump(mode="json", by_alias=True, exclude_none=True)
                 for p in getattr(result, "content", [])]
        return parts, bool(getattr(result, "is_error", False)), getattr(
            result, "structured_content", None)


async def list_tools(command: list[str], *, timeout: float) -> list[types.Tool]:
    """Start a stdio MCP server, ask for ``initialize`` and ``tools/list`` (following
    cursors), stop it. No tool is called.

    Raises:
        TimeoutError: no complete list within ``timeout`` seconds (the server is stopped).
    """
    import anyio

    params = _server_params(command)
    with anyio.fail_after(timeout):  # entered and left in this task, around both contexts
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await _all_tools(session)
    return tools


def _remember_annotations(config: Config, server: str, tools: list[types.Tool]) -> None:
    """Record the downstream's tool annotations, so hooks judging ``mcp__<server>__<tool>``
    calls in other processes know them (a failure to write only loses that knowledge)."""
    import logging

    from ctxgate.gate.effects.annotations import AnnotationStore

    try:
        AnnotationStore.in_home(config.home).record(server, tools)
    except OSError as exc:
        logging.getLogger("ctxgate.mcp").warning(
            "could not remember the MCP tool annotations of %r: %s", server, exc)


def build_proxy(pipeline: CallPipeline, downstream: Downstream) -> Server:
    """The proxy server: the downstream's tools (gated, firewalled) plus ``expand``."""
    config = pipeline.config
    names = {t.name for t in downstream.tools}
    tools = list(downstream.tools)
    if pipeline.server:
        _remember_annotations(config, pipeline.server, downstream.tools)
    if EXPAND_TOOL not in names:
        tools.append(types.Tool(name=EXPAND_TOOL, description=(
            "Read an archived output by id (lines, grep, bytes, json pointer, keys)."),
            input_schema=EXPAND_SCHEMA))

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name == EXPAND_TOOL and EXPAND_TOOL not in names:
            return await expand_result(pipeline.app, arguments)
        if params.name not in names:
            return result_of(CallOutcome(text=f"unknown tool {params.name!r}", is_error=True))

        structured: list[Any] = [None]

        async def handler(tool: str, args: dict[str, Any]):
            try:
                parts, is_error, structured[0] = await downstream.call(tool, args)
            except Exception as exc:  # noqa: BLE001 - a downstream failure is a tool error
                return [{"type": "text", "text": f"downstream server failed: {exc}"}], True
            return parts, is_error

        return result_of(await pipeline.call(params.name, arguments, handler,
                                             ask=person_asker(ctx)), structured[0])

    return Server("ctxgate-proxy", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)
