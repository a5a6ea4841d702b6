"""`ctxgate mcp` commands: serve ctxgate's own tools, or proxy another MCP server ([mcp] extra)."""

from __future__ import annotations

from typing import Annotated

import typer

mcp_app = typer.Typer(
    name="mcp",
    help="MCP server (run + expand) and a gating, digesting proxy for any stdio MCP server.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

RequestOption = Annotated[str | None, typer.Option(
    "--request", help="The run's prompt: the user request the gate judges calls against "
    "(an MCP server never sees the conversation; without it only read-only calls pass).")]
GateOption = Annotated[bool, typer.Option(
    "--gate/--no-gate", help="Judge every call before it runs (default on).")]
BackendOption = Annotated[str | None, typer.Option(
    "--backend", help="Decision backend (default: [gate] backend).")]


def _pipeline(config, *, gate: bool, request: str | None, prefix: str, server: str = ""):
    from ctxgate.app.application import App
    from ctxgate.integrations.mcp.tools import CallPipeline

    return CallPipeline(App(config, gated=gate), request=request, tool_prefix=prefix,
                        server=server)


@mcp_app.command("serve")
def serve(request: RequestOption = None, gate: GateOption = True,
          backend: BackendOption = None) -> None:
    """Serve `run` and `expand` over stdio.

    Example:
        ctxgate mcp serve --request "fix the failing test"
    """
    import anyio

    from ctxgate.cli._options import build_config
    from ctxgate.integrations.mcp.server import build_server, serve_stdio
    from ctxgate.integrations.mcp.tools import RUN_TOOL

    config = build_config(gate={"backend": backend})
    if RUN_TOOL not in config.gate.shell_tools:  # `run`'s command is a shell string: the
        # read-only fast path and the shell rules judge it, so `ls` runs without --request
        config = build_config(gate={"backend": backend, "shell_tools": {
            **config.gate.shell_tools, RUN_TOOL: "/command"}})
    pipeline = _pipeline(config, gate=gate, request=request, prefix="")
    anyio.run(serve_stdio, build_server(pipeline))


@mcp_app.command("proxy", context_settings={"allow_interspersed_args": False})
def proxy(
    command: Annotated[list[str], typer.Argument(help="The downstream server command, after --.")],
    name: Annotated[str, typer.Option(
        "--name", help="Server name used in firewall tool names (mcp__NAME__tool).")] = "proxy",
    request: RequestOption = None, gate: GateOption = True, backend: BackendOption = None,
) -> None:
    """Put the gate and the firewall in front of a stdio MCP server.

    Example:
        ctxgate mcp proxy --name fs -- npx @modelcontextprotocol/server-filesystem /srv
    """
    import anyio

    from ctxgate.cli._options import build_config
    from ctxgate.integrations.mcp.proxy import Downstream, build_proxy
    from ctxgate.integrations.mcp.server import serve_stdio

    config = build_config(gate={"backend": backend})
    pipeline = _pipeline(config, gate=gate, request=request, prefix=f"mcp__{name}__",
                         server=name)

    async def main() -> None:
        async with Downstream(list(command)) as downstream:
            await serve_stdio(build_proxy(pipeline, downstream))

    anyio.run(main)


@mcp_app.command("learn", context_settings={"allow_interspersed_args": False})
def learn(
    command: Annotated[list[str], typer.Argument(help="The server command, after --.")],
    name: Annotated[str, typer.Option(
        "--name", help="The server's name in the MCP client (tools are mcp__NAME__tool).")],
    timeout: Annotated[float, typer.Option(
        "--timeout", help="Seconds to wait for the server's tool list.")] = 60.0,
) -> None:
    """List a stdio MCP server's tools once and remember their annotations for the hooks.

    A server that runs through `ctxgate mcp proxy` is remembered on every start; one that the
    MCP client runs itself never reaches ctxgate, so a hook judging its `mcp__NAME__tool`
    calls sees only the name. This starts the server, asks for `tools/list` (no tool is
    called), stores the answer, and stops it. Annotations may raise caution for any server
    and lower it only for servers in [gate] trusted_mcp_servers.

    Example:
        ctxgate mcp learn --name playwright -- npx @playwright/mcp@latest
    """
    import anyio

    from ctxgate.cli._options import build_config
    from ctxgate.gate.effects.annotations import AnnotationStore
    from ctxgate.integrations.mcp.proxy import list_tools

    config = build_config()
    try:
        tools = anyio.run(lambda: list_tools(list(command), timeout=timeout))
    except TimeoutError:
        typer.echo(f"ctxgate mcp learn: {' '.join(command)!r} did not list its tools within "
                   f"{timeout:g} s (it may wait for credentials or a network; nothing was "
                   "stored); run it by hand to see, or give it more --timeout", err=True)
        raise typer.Exit(2) from None
    except Exception as exc:  # noqa: BLE001 - any start-up failure: say what and what to do
        typer.echo(f"ctxgate mcp learn: could not list the tools of {' '.join(command)!r} "
                   f"({type(exc).__name__}: {exc}); run that command by hand to see why it "
                   "does not start, and pass its arguments and environment as the MCP client "
                   "does", err=True)
        raise typer.Exit(2) from None
    store = AnnotationStore.in_home(config.home)
    store.record(name, tools)
    # the hints as the store normalised them (what the hooks will read)
    hinted = [h for t in tools if (h := (store.lookup(name, t.name) or {}).get("annotations"))]
    reads = sum(1 for h in hinted if h.get("readOnlyHint"))
    typer.echo(f"remembered {len(tools)} tools of {name!r} in {store.path}: {len(hinted)} "
               f"annotated ({reads} read-only, {len(hinted) - reads} may change state); hooks "
               f"now judge mcp__{name}__* calls with them")


@mcp_app.command("install")
def install(
    client: Annotated[str, typer.Option(
        "--client", help="MCP client: claude-code or codex.")] = "claude-code",
    scope: Annotated[str, typer.Option(
        "--scope", help="user: ~/.claude.json or ~/.codex/config.toml; project: .mcp.json or "
        ".codex/config.toml in the project.")] = "user",
    write: Annotated[bool, typer.Option(
        "--write", help="Merge into the file (backup beside it); without it, print the new "
        "file and where it goes.")] = False,
    uninstall: Annotated[bool, typer.Option(
        "--uninstall", help="Remove the ctxgate server entry (and nothing else).")] = False,
    request: RequestOption = None,
    project: Annotated[str | None, typer.Option(
        "--project", help="Project directory for --scope project (default: current "
        "directory).")] = None,
) -> None:
    """Add (or --uninstall) `ctxgate mcp serve` in an MCP client's configuration.

    Example:
        ctxgate mcp install --client codex --write
    """
    import sys
    from pathlib import Path

    from ctxgate.cli._options import apply_install_plan
    from ctxgate.integrations.mcp import install as inst

    path = inst.config_file(client, scope, home=Path.home(),
                            project=Path(project).resolve() if project else Path.cwd())
    change = inst.plan(client, path, inst.server_entry(sys.executable, request),
                       uninstall=uninstall)
    written = apply_install_plan(change, change.after, inst.write, write=write,
                                 uninstall=uninstall, what="the ctxgate server", verb="write")
    if written and not uninstall:
        typer.echo("verify: `claude mcp list` shows ctxgate" if client == "claude-code" else
                   "verify: `codex mcp list` shows ctxgate")


def register(app: typer.Typer) -> None:
    """Add the ``mcp`` sub-app to the top-level app."""
    app.add_typer(mcp_app, name="mcp")
