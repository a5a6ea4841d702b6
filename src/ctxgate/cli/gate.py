"""`ctxgate gate` commands (thin: build settings, call the library, print)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ctxgate.cli._options import JsonOption, build_config

gate_app = typer.Typer(
    name="gate",
    help="Judge tool calls before they run (the tool gate), and read its audit log.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@gate_app.command("check")
def check(
    tool: Annotated[str, typer.Option("--tool", help="Tool name, e.g. bash.")],
    args: Annotated[str, typer.Option("--args", help="The call's arguments as a JSON value.")],
    request: Annotated[str | None, typer.Option(
        "--request", help="What the user asked for (else taken from --messages).")] = None,
    messages: Annotated[Path | None, typer.Option(
        "--messages", help="JSON file: the conversation (OpenAI or Anthropic messages).")] = None,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="Decision backend: local, openai, structured, or module:factory.")] = None,
    ask: Annotated[bool, typer.Option(
        "--ask", help="On a deny, ask on the terminal whether to run this exact call once.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Judge one tool call: exit 0 allow, 1 deny, 2 usage error.

    Example:
        ctxgate gate check --request "list the repo" --tool bash --args '{"command": "ls -la"}'
    """
    import json

    from ctxgate.errors import UsageError
    from ctxgate.gate.gate import ToolCall, ToolGate
    from ctxgate.gate.loader import load_decision_model

    try:
        arguments = json.loads(args)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--args is not valid JSON ({exc}); pass the arguments as JSON, e.g. "
            "--args '{\"command\": \"ls\"}'") from exc
    conversation = None
    if messages is not None:
        try:
            conversation = json.loads(messages.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"--messages {messages}: cannot read a JSON list ({exc})") from exc
        if isinstance(conversation, dict) and "messages" in conversation:
            conversation = conversation["messages"]
        if not isinstance(conversation, list):
            raise UsageError(f"--messages {messages} must hold a JSON list of messages")
    config = build_config(gate={"backend": backend})
    policy = config.gate
    audit = None
    if policy.audit:
        from ctxgate.gate.audit import open_audit_log

        audit = open_audit_log(config.home)  # unusable: decide anyway, record nothing
    approver = None
    if ask:
        from ctxgate.gate.approval import prompt_approver

        approver = prompt_approver()
    gate = ToolGate(lambda: load_decision_model(policy.backend, policy), policy, audit=audit,
                    approver=approver)
    verdict = gate.decide_sync(ToolCall(tool=tool, arguments=arguments),
                               user_request=request, conversation=conversation)
    if json_out:
        typer.echo(json.dumps(verdict.to_dict(), ensure_ascii=False))
    else:
        typer.echo(f"{verdict.outcome}: {verdict.reason}")
    if not verdict.allowed:
        raise typer.Exit(1)


@gate_app.command("log")
def log_(
    tool: Annotated[str | None, typer.Option("--tool", help="Only this tool.")] = None,
    verdict: Annotated[str | None, typer.Option(
        "--verdict", help="Only allow, deny or ask.")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", help="Only since a duration ago (30m, 2h, 7d) or an ISO time.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many rows.")] = 50,
    json_out: JsonOption = False,
) -> None:
    """Show recorded gate decisions, newest first.

    Example:
        ctxgate gate log --verdict deny --since 2h
    """
    import json
    import time
    from datetime import UTC, datetime

    from ctxgate.errors import UsageError
    from ctxgate.gate.audit import AuditLog, parse_since

    if verdict is not None and verdict not in ("allow", "deny", "ask"):
        raise UsageError(f"--verdict {verdict!r}: use allow, deny or ask")
    try:
        since_ts = parse_since(since, time.time()) if since else None
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    config = build_config()
    with AuditLog.in_home(config.home) as audit:
        rows = audit.query(tool=tool, verdict=verdict, since=since_ts, limit=limit)
    if json_out:
        typer.echo(json.dumps([r.to_dict() for r in rows], ensure_ascii=False))
        return
    if not rows:
        typer.echo("no gate decisions recorded (matching these filters)")
        return
    for r in rows:
        when = datetime.fromtimestamp(r.ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        probs = " ".join(f"{k}={v:.2f}" for k, v in r.probabilities.items())
        flags = ",".join(f for f, on in (("cached", r.cached), ("fast-path", r.fast_path),
                                         ("approved", r.approved)) if on)
        typer.echo(f"{when}  {r.verdict:<5}  {r.tool:<12} {r.code:<24} {probs} "
                   f"{r.latency_ms:.1f}ms {flags} {r.args_sha256[:12]}".rstrip())
        typer.echo(f"    {r.reason}")


def register(app: typer.Typer) -> None:
    """Add the ``gate`` sub-app to the top-level app."""
    app.add_typer(gate_app, name="gate")
    from ctxgate.cli import gate_models

    gate_models.register_gate(gate_app)
