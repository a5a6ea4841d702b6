"""Run a small stdio MCP server from a list of tools and one call handler (the test servers
``inbox_server`` and ``ops_server`` are such servers)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

CallHandler = Callable[[Any, types.CallToolRequestParams], Awaitable[types.CallToolResult]]


def serve(name: str, tools: list[types.Tool], on_call_tool: CallHandler) -> None:
    """Serve ``tools`` over stdin/stdout until the client closes them."""

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def main() -> None:
        server = Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
