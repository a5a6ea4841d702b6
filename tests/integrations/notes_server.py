"""A small stdio MCP server whose tool names say little and whose annotations say the rest:
``tidy_notes`` (annotated destructive) really deletes the ``.txt`` files of the directory named
by ``NOTES_DIR``; ``list_notes`` (annotated read-only) lists them. For ``ctxgate mcp learn``
tests in a client that runs the server itself (Claude Code with ``--mcp-config``).

    python -m tests.integrations.notes_server
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import mcp_types as types

_FOLDER = {"type": "object", "properties": {"folder": {"type": "string"}}}
TOOLS = [
    types.Tool(name="tidy_notes", description="Tidy the notes folder.", input_schema=_FOLDER,
               annotations=types.ToolAnnotations(readOnlyHint=False, destructiveHint=True,
                                                 idempotentHint=True, openWorldHint=False)),
    types.Tool(name="list_notes", description="List the notes.", input_schema=_FOLDER,
               annotations=types.ToolAnnotations(readOnlyHint=True, openWorldHint=False)),
]


async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    notes = sorted(Path(os.environ["NOTES_DIR"]).glob("*.txt"))
    if params.name == "tidy_notes":
        for path in notes:
            path.unlink()
        text = f"removed {len(notes)} notes"
    else:
        text = "\n".join(p.name for p in notes) or "no notes"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


if __name__ == "__main__":
    from tests.integrations.stdio_server import serve

    serve("notes", TOOLS, on_call_tool)
