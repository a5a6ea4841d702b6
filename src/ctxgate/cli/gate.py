"""`ctxgate gate` commands (thin: options in, one :class:`ctxgate.app.App` call, print)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ctxgate.cli._options import JsonOption

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
    explain: Annotated[bool, typer.Option(
        "--explain", help="Also print the effect class, its source and evidence, the "
        "model's probabilities, and for a fast-path allow whether it runs sandboxed here.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Judge one tool call: exit 0 allow, 1 deny, 3 ask (a person decides), 2 usage error.

    Example:
        ctxgate gate check --request "list the repo" --tool bash --args '{"command": "ls -la"}'
    """
    import json

    from ctxgate.app.application import App
    from ctxgate.app.errors import VERDICT_EXIT
    from ctxgate.errors import UsageError

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
    approver = None
    if ask:
        from ctxgate.gate.approval import prompt_approver

        approver = prompt_approver()
    # a check only asks what would happen: it must not use up a `gate approve` grant that is
    # meant for the real call
    with App(settings={"gate": {"backend": backend}}, approver=approver,
             consume_grants=False) as app:
        verdict = app.check(tool, arguments, request=request, conversation=conversation)
    sandbox = _sandbox_line(verdict) if explain else ""
    if json_out:
        record = verdict.to_dict()
        if sandbox:
            record["sandbox"] = sandbox
        typer.echo(json.dumps(record, ensure_ascii=False))
    else:
        typer.echo(f"{verdict.outcome}: {verdict.reason}")
        if explain:
            typer.echo(explain_verdict(verdict))
            if sandbox:
                typer.echo(f"  sandbox: {sandbox}")
    if VERDICT_EXIT[verdict.outcome]:  # deny 1, ask 3
        raise typer.Exit(VERDICT_EXIT[verdict.outcome])


def _sandbox_line(verdict) -> str:
    """For a fast-path allow: whether it runs sandboxed on this machine (else empty)."""
    if not (verdict.allowed and verdict.fast_path):
        return ""
    from ctxgate.cli.doctor import sandbox_sentence
    from ctxgate.sandbox import detect

    return sandbox_sentence(detect())


def explain_verdict(verdict) -> str:
    """The decision record for a person: code, effect and evidence, probabilities, model."""
    lines = [f"  code: {verdict.code}"]
    effect = verdict.effect
    if effect is None:
        lines.append("  effect: not classified (no rule knew this call, or the decision came "
                     "before classification)")
    else:
        conf = "" if effect.rule_based else f", p={effect.confidence:.2f}"
        lines.append(f"  effect: {effect.effect.value} (source {effect.source.value}{conf})")
        lines.append(f"    evidence: {effect.evidence}")
        lines.extend(f"    - {d}" for d in effect.details)
    probs = " ".join(f"{k}={v:.3f}" for k, v in verdict.probabilities.items())
    lines.append(f"  probabilities: {probs or 'not asked'}")
    if verdict.model_id:
        lines.append(f"  model: {verdict.model_id}")
    lines.append(f"  args sha256: {verdict.args_sha256}")
    return "\n".join(lines)


@gate_app.command("approve")
def approve(
    call_id: Annotated[str, typer.Argument(
        help="The audit row id (`gate log`) or a prefix of the call's args sha256 "
             "(at least 6 hex digits).")],
    json_out: JsonOption = False,
) -> None:
    """Approve one denied or asked call once: the identical call then runs one time.

    Example:
        ctxgate gate approve 3f2a9c01be77
    """
    import json

    from ctxgate.app.application import App

    with App() as app:
        tool, digest = app.approve(call_id)
    if json_out:
        typer.echo(json.dumps({"tool": tool, "args_sha256": digest, "approved_runs": 1}))
    else:
        typer.echo(f"approved once: {tool} with args sha256 {digest[:12]}; the identical call "
                   "now runs one time")


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

    from ctxgate.app.application import App
    from ctxgate.errors import UsageError
    from ctxgate.gate.audit import parse_since

    if verdict is not None and verdict not in ("allow", "deny", "ask"):
        raise UsageError(f"--verdict {verdict!r}: use allow, deny or ask")
    try:
        since_ts = parse_since(since, time.time()) if since else None
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    with App() as app:
        rows = app.audit.query(tool=tool, verdict=verdict, since=since_ts, limit=limit)
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
        if r.effect:
            flags = ",".join(x for x in (flags, f"{r.effect['effect']}/{r.effect['source']}") if x)
        typer.echo(f"{when}  #{r.id} {r.verdict:<5}  {r.tool:<12} {r.code:<24} {probs} "
                   f"{r.latency_ms:.1f}ms {flags} {r.args_sha256[:12]}".rstrip())
        typer.echo(f"    {r.reason}")


def register(app: typer.Typer) -> None:
    """Add the ``gate`` sub-app to the top-level app."""
    app.add_typer(gate_app, name="gate")
    from ctxgate.cli import gate_models

    gate_models.register_gate(gate_app)
