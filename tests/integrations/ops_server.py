"""A small stdio MCP server whose tools run what their arguments say, for the proxy's
executed-argument tests: ``run_command`` runs its ``command`` with ``sh -c`` in the directory
named by ``OPS_DIR``; ``execute_sql`` runs its ``sql`` on the SQLite file named by ``OPS_DB``; ``run_python`` runs
its ``code`` with this interpreter in ``OPS_DIR``.
Nothing is simulated: a call the gate lets through really deletes.

    python -m tests.integrations.ops_server
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from typing import Any

import mcp_types as types

TOOLS = [
    types.Tool(name="run_command", description="Run a shell command in the work directory.",
               input_schema={"type": "object", "properties": {"command": {"type": "string"}},
                             "required": ["command"]}),
    types.Tool(name="execute_sql", description="Run SQL on the orders database.",
               input_schema={"type": "object", "properties": {"sql": {"type": "string"}},
                             "required": ["sql"]}),
    types.Tool(name="run_python", description="Run Python code in the work directory.",
               input_schema={"type": "object", "properties": {"code": {"type": "string"}},
                             "required": ["code"]}),
]


async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = dict(params.arguments or {})
    if params.name == "run_command":
        done = subprocess.run(["sh", "-c", str(args["command"])], cwd=os.environ["OPS_DIR"],
                              capture_output=True, text=True, timeout=30)
        text = done.stdout + done.stderr
    elif params.name == "run_python":
        done = subprocess.run([sys.executable, "-c", str(args["code"])],
                              cwd=os.environ["OPS_DIR"], capture_output=True, text=True,
                              timeout=30)
        text = done.stdout + done.stderr
    else:
        with sqlite3.connect(os.environ["OPS_DB"]) as db:
            rows = db.execute(str(args["sql"])).fetchall()
        text = "\n".join("|".join(str(v) for v in row) for row in rows) or "ok"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


if __name__ == "__main__":
    from tests.integrations.stdio_server import serve

    serve("ops", TOOLS, on_call_tool)
