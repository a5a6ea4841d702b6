"""What ctxgate does at each hook event: gate before the tool, firewall after it.

``PreToolUse`` judges the call with the gate. A deny is returned as the harness's
``permissionDecision: deny`` with the gate's reason, which the model reads. In an allowed shell
call, the parts that produce output are rewritten to run through ``ctxgate run``
(``updatedInput``), so their output is archived and digested when large, while statements
that change the shell's state (``cd``, ``export``, ``source``, assignments …) stay in the
harness's own shell (:mod:`.shellsplit`): ``cd sub && make`` → ``cd sub && ctxgate run -c
make``. The gate judged the original command. Output-producing parts of a command the fast
path allowed (proved read-only, no model call) are wrapped with ``--sandbox read-only`` so
they run where they cannot write. How each reply is said depends on the harness
(:mod:`.harness`). Any failure —
malformed payload, a shell call whose ``command`` is missing, ``null``, blank or over 1 MiB,
unreadable transcript, a backend that cannot load, a timeout — blocks the call (exit 2 with
the reason on stderr): a hook that fails open is the weakness peers' users report, so ctxgate
never does. Signals, a closed stdout and the deadline are handled by
:mod:`ctxgate.integrations.hooks.supervisor`.

``PostToolUse`` puts a firewallable tool's output (search, MCP results …) through the
firewall and, when it was digested, returns the digest as the replacement output
(``updatedToolOutput``; ``updatedMCPToolOutput`` for MCP tools). Protected reads and small
outputs pass untouched (nothing is printed).
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxgate.integrations.hooks.harness import ClaudeCode, Harness
from ctxgate.integrations.hooks.payloads import (
    MAX_PAYLOAD_BYTES,
    TRANSCRIPT_WAIT_SECONDS,
    HookPayload,
    check_shell_command,
    read_transcript,
)
from ctxgate.integrations.hooks.supervisor import BLOCK_EXIT  # the one definition
from ctxgate.integrations.hooks.wrapped import SHELL_TOOLS, is_wrapped  # the one definition

__all__ = ["BLOCK_EXIT", "HookResponse", "gate_tool_name", "post_tool_use", "pre_tool_use",
           "response_text", "rewrite_shell_command", "run_prefix", "wrap_shell_command"]


_CLAUDE_CODE = ClaudeCode()


@dataclass(frozen=True, kw_only=True)
class HookResponse:
    """What the hook process prints and exits with."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


def gate_tool_name(tool: str) -> str:
    """The gate's name for a harness tool: lowercased, so ``Bash`` meets the ``bash`` full view."""
    name = tool.lower()
    return "bash" if name in SHELL_TOOLS else name


def wrap_shell_command(command: str, *, python: str = sys.executable,
                       read_only: bool = False) -> str:
    """The shell command that runs ``command`` through ``ctxgate run`` (same exit status).

    ``read_only`` adds ``--sandbox read-only``: the hook sets it for a fast-path allow (a
    command proved read-only without a model call), so a wrong proof still cannot write.
    """
    sandbox = " --sandbox read-only" if read_only else ""
    return (f"{run_prefix(python)} run --tool bash{sandbox} "
            f"-c {shlex.quote(command)}")


def run_prefix(python: str = sys.executable) -> str:
    """``PYTHON -S …/ctxgate/_launch.py``: the wrapper starts without ``site`` (a small output
    then never loads more than the interpreter's built-in modules; see
    :mod:`ctxgate.firewall.passthrough`); ``PYTHON -m ctxgate`` where the package is not a
    plain directory."""
    import os

    import ctxgate

    launcher = os.path.join(os.path.dirname(os.path.abspath(ctxgate.__file__)), "_launch.py")
    if not os.path.isfile(launcher):
        return f"{shlex.quote(python)} -m ctxgate"
    return f"{shlex.quote(python)} -S {shlex.quote(launcher)}"


def _already_wrapped(command: str) -> bool:
    return is_wrapped(command)


def rewrite_shell_command(command: str, *, python: str = sys.executable,
                          read_only: bool = False) -> str | None:
    """``command`` with its output-producing parts run through ``ctxgate run``, its
    state-changing statements left in the harness's shell; ``None`` when nothing can be
    wrapped without changing what that shell keeps (see :mod:`.shellsplit`)."""
    from ctxgate.integrations.hooks.shellsplit import wrap_outputs

    return wrap_outputs(command, lambda part: wrap_shell_command(
        part, python=python, read_only=read_only))


def pre_tool_use(
    payload: HookPayload,
    *,
    decide: Callable[..., Any],
    rewrite_shell: bool = True,
    approve: bool = False,
    python: str = sys.executable,
    harness: Harness = _CLAUDE_CODE,
) -> HookResponse:
    """Judge a call before it runs.

    Args:
        payload: the parsed ``PreToolUse`` payload.
        decide: ``decide(ToolCall, conversation=...) -> Verdict`` (``ToolGate.decide_sync``).
        rewrite_shell: route the output-producing parts of allowed shell commands through
            ``ctxgate run``.
        approve: on allow, also say ``permissionDecision: allow`` (skips the harness's own
            prompt); by default an allowed call goes on to the harness's permission rules.
        python: the interpreter the rewritten command runs ctxgate with.
        harness: the adapter that says the verdict on this harness's wire.

    Returns:
        The response; any exception escaping here must be turned into a block by the caller.
    """
    from ctxgate.gate.gate import ToolCall

    is_shell = gate_tool_name(payload.tool) == "bash"
    if is_shell:
        check_shell_command(payload.tool, payload.tool_input)  # null/empty/huge: block
    path = payload.transcript_path
    # read only when the gate needs the request (a fast-path allow never does); the harness
    # may not have written the file yet when its first call arrives, so wait for it a moment
    conversation = ((lambda: read_transcript(path, wait_seconds=TRANSCRIPT_WAIT_SECONDS))
                    if path else None)
    call = ToolCall(tool=gate_tool_name(payload.tool), arguments=payload.tool_input,
                    call_id=payload.tool_use_id, cwd=payload.cwd)
    verdict = decide(call, conversation=conversation)
    if not verdict.allowed:
        out = harness.deny(verdict.reason, ask=verdict.outcome == "ask")
        return HookResponse(stdout=json.dumps(out, ensure_ascii=False))
    updated = None
    command = payload.tool_input.get("command")
    if (rewrite_shell and is_shell and isinstance(command, str)
            and command.strip() and not _already_wrapped(command)):
        rewritten = rewrite_shell_command(command, python=python, read_only=verdict.fast_path)
        if rewritten is not None:
            # The harness matches its own rules against the rewrite: leave a command its
            # deny/ask rule speaks for as written; carry an allow rule over (permission_rules).
            rule = harness.own_rule(command, payload.cwd)
            if rule in ("deny", "ask", "unknown"):
                rewritten = None
            elif rule == "allow":
                approve = True
        if rewritten is not None:
            updated = {**payload.tool_input, "command": rewritten}
    out = harness.allow(verdict.reason, updated_input=updated, approve=approve)
    if out is None:
        return HookResponse()
    return HookResponse(stdout=json.dumps(out, ensure_ascii=False))


def response_text(tool_response: Any) -> str:
    """The text a tool response shows the model: a string, stdout+stderr, or content parts."""
    if isinstance(tool_response, str):
        return tool_response
    if isinstance(tool_response, dict):
        if "stdout" in tool_response or "stderr" in tool_response:
            out = str(tool_response.get("stdout") or "")
            err = str(tool_response.get("stderr") or "")
            return out + ("\n" if out and err and not out.endswith("\n") else "") + err
        if isinstance(tool_response.get("content"), list):
            return response_text(tool_response["content"])
    if isinstance(tool_response, list) and all(
            isinstance(p, dict) and p.get("type") == "text" for p in tool_response):
        return "\n".join(str(p.get("text", "")) for p in tool_response)
    return json.dumps(tool_response, ensure_ascii=False, indent=1)


def post_tool_use(
    payload: HookPayload, *, firewall: Callable[..., Any], harness: Harness = _CLAUDE_CODE,
) -> HookResponse:
    """Digest a large output after the tool ran.

    Args:
        payload: the parsed ``PostToolUse`` payload.
        firewall: ``firewall(tool, output, command=..., session_id=...) -> FirewallResult``
            with the archive and policy bound.
        harness: the adapter that says the replacement on this harness's wire; a harness
            that cannot replace this tool's output gets nothing (nothing is archived either).
    """
    tool = payload.tool.lower()
    command = payload.tool_input.get("command")
    if tool in SHELL_TOOLS and isinstance(command, str) and _already_wrapped(command):
        return HookResponse()  # ctxgate run already decided and archived this output
    if harness.replace_output(payload.tool, payload.tool_response, "") is None:
        return HookResponse()
    text = _persisted_output(payload.tool_response)
    if text is None:
        text = harness.output_text(payload.tool, payload.tool_response)
    if text is None:
        text = response_text(payload.tool_response)
    result = firewall(tool, text,
                      command=command if isinstance(command, str) else None,
                      session_id=payload.session_id or None)
    if not result.digested or result.text is None:
        return HookResponse()
    out = harness.replace_output(payload.tool, payload.tool_response, result.text)
    return HookResponse(stdout=json.dumps(out, ensure_ascii=False))


def _persisted_output(tool_response: Any) -> str | None:
    """The whole output of a shell call whose harness kept only its start in the payload.

    Claude Code puts at most 30,000 characters of a Bash call's ``stdout`` in the
    ``PostToolUse`` payload and saves the whole output to ``persistedOutputPath`` (its size
    in ``persistedOutputSize``, bytes); the end of a build log, where its error usually is,
    is only in that file. ``None`` when there is no such file or it cannot be read.
    """
    if not isinstance(tool_response, dict):
        return None
    path = tool_response.get("persistedOutputPath")
    if not isinstance(path, str) or not path:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_PAYLOAD_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_PAYLOAD_BYTES:
        return None
    return data.decode("utf-8", "replace")
