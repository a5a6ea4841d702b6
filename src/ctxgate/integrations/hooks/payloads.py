"""Hook payloads of Claude Code and Codex (one payload shape), parsed and checked.

A hook receives one JSON object on stdin: ``hook_event_name``, ``tool_name``, ``tool_input``,
and for ``PostToolUse`` the ``tool_response``; plus ``session_id``, ``transcript_path``,
``cwd`` and ``tool_use_id``. Anything else is malformed and raises :class:`HookPayloadError`
naming the field — the pre-tool hook then blocks the call (fail closed).

The transcript (JSON Lines) is where the user's request comes from: each line with a
``message`` of role ``user`` or ``assistant`` (Claude Code), or a ``response_item`` message
(a Codex rollout), becomes one message; meta lines the harness
injected (``isMeta``, and a sub-agent's ``<task-notification>``) and lines of any other ``type`` (``api-request-blob``, attachments,
queue operations) are dropped, and a compaction summary (``isCompactSummary`` or a
``summary`` line) becomes a boundary message, so nothing before it is trusted.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgate.errors import UsageError

__all__ = [
    "COMPACTION_TEXT",
    "MAX_PAYLOAD_BYTES",
    "MAX_SHELL_COMMAND_BYTES",
    "TRANSCRIPT_WAIT_SECONDS",
    "HookPayload",
    "HookPayloadError",
    "check_shell_command",
    "parse_payload",
    "read_transcript",
]

MAX_PAYLOAD_BYTES = 256 * 1024 * 1024
"""Largest payload read from stdin, UTF-8 bytes (a tool response can be large)."""

MAX_TRANSCRIPT_MESSAGES = 400
"""Messages kept from the end of a transcript (the request is near the end)."""

TRANSCRIPT_WAIT_SECONDS = 2.0
"""How long a hook waits for a transcript file that does not exist yet, seconds.

Claude Code writes its transcript asynchronously: measured with the warm daemon, the first
``PreToolUse`` of a new ``claude -p`` session can arrive before the file exists."""

COMPACTION_TEXT = "[Context compacted]"
"""Text of the boundary message a compaction summary becomes (a default gate marker)."""

MAX_SHELL_COMMAND_BYTES = 1024 * 1024
"""Largest shell command the pre-tool hook judges, UTF-8 bytes; a larger one is blocked."""

EVENTS = ("PreToolUse", "PostToolUse")


class HookPayloadError(UsageError):
    """The hook payload is not what a harness sends; the message names the field."""


@dataclass(frozen=True, kw_only=True)
class HookPayload:
    """One hook invocation."""

    event: str
    """``PreToolUse`` or ``PostToolUse``."""
    tool: str
    """The harness's tool name (``Bash``, ``Read``, ``mcp__server__tool`` ...)."""
    tool_input: dict[str, Any]
    tool_response: Any = None
    """The tool's result (``PostToolUse`` only): a string, a dict or content parts."""
    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    tool_use_id: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


def parse_payload(raw: bytes | str, *, expect: str | None = None) -> HookPayload:
    """Parse a hook payload.

    Args:
        raw: stdin as received.
        expect: the event this hook was installed for; a payload of another event is an error.

    Raises:
        HookPayloadError: not UTF-8 JSON, not an object, a required field missing or of the
            wrong type, or an unexpected event; the message says which and what is expected.
    """
    if isinstance(raw, bytes):
        if len(raw) > MAX_PAYLOAD_BYTES:
            raise HookPayloadError(
                f"hook payload is {len(raw):,} bytes, over the {MAX_PAYLOAD_BYTES:,}-byte limit")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HookPayloadError(f"hook payload is not UTF-8 ({exc}); the harness must send "
                                   "JSON text on stdin") from exc
    else:
        text = raw
    if not text.strip():
        raise HookPayloadError("hook payload is empty; run this command as a harness hook, "
                               "which sends one JSON object on stdin")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookPayloadError(f"hook payload is not valid JSON ({exc.msg} at line {exc.lineno} "
                               f"column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise HookPayloadError(f"hook payload is a JSON {type(data).__name__}, not an object")
    event = data.get("hook_event_name", expect)
    if event not in EVENTS:
        raise HookPayloadError(f"hook_event_name is {event!r}; ctxgate handles {list(EVENTS)}")
    if expect is not None and event != expect:
        raise HookPayloadError(f"this hook handles {expect}, but the payload is {event}; "
                               "check the event the hook is installed under")
    tool = data.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise HookPayloadError("tool_name is missing or not a non-empty string")
    tool_input = data.get("tool_input", {})
    if not isinstance(tool_input, dict):
        raise HookPayloadError(f"tool_input is {_json_type(tool_input)}, not an object")
    for key in ("session_id", "transcript_path", "cwd", "tool_use_id"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise HookPayloadError(f"{key} must be a string")
    if event == "PreToolUse" and "tool_input" not in data:
        raise HookPayloadError("PreToolUse payload has no tool_input; the gate cannot judge a "
                               "call it cannot see")
    if event == "PostToolUse" and "tool_response" not in data:
        raise HookPayloadError("PostToolUse payload has no tool_response")
    known = {"hook_event_name", "tool_name", "tool_input", "tool_response", "session_id",
             "transcript_path", "cwd", "tool_use_id"}
    return HookPayload(
        event=event, tool=tool, tool_input=tool_input, tool_response=data.get("tool_response"),
        session_id=data.get("session_id") or "", transcript_path=data.get("transcript_path") or "",
        cwd=data.get("cwd") or "", tool_use_id=data.get("tool_use_id") or "",
        extra={k: v for k, v in data.items() if k not in known},
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "an array", dict: "an object"}
    return names.get(type(value), f"a {type(value).__name__}")


def check_shell_command(tool: str, tool_input: Mapping[str, Any]) -> str | list[str]:
    """The command of a shell tool call, or :class:`HookPayloadError` naming the field.

    A shell call's ``tool_input.command`` must be a non-blank string of at most
    :data:`MAX_SHELL_COMMAND_BYTES` UTF-8 bytes; Codex's ``shell``/``local_shell``/
    ``exec_command`` may send it as an argv array, which must then be a non-empty list of
    strings. Anything else — missing, ``null``, a number, empty — cannot be judged, so the
    pre-tool hook blocks it.
    """
    command = tool_input.get("command")
    where = "tool_input.command"
    if isinstance(command, list) and tool.lower() != "bash":
        if not command or not all(isinstance(part, str) for part in command):
            raise HookPayloadError(f"{where} of a {tool} call is an array that is empty or holds "
                                   "non-strings; the gate judges only a command it can read")
        size = sum(len(part.encode("utf-8", "surrogatepass")) + 1 for part in command)
    elif not isinstance(command, str):
        found = "missing" if "command" not in tool_input else _json_type(command)
        raise HookPayloadError(f"{where} of a {tool} call is {found}, not a string; the gate "
                               "judges only a command it can read")
    elif not command.strip():
        raise HookPayloadError(f"{where} of a {tool} call is empty; there is nothing to run")
    else:
        size = len(command.encode("utf-8", "surrogatepass"))
    if size > MAX_SHELL_COMMAND_BYTES:
        raise HookPayloadError(
            f"{where} is {size:,} bytes, over the {MAX_SHELL_COMMAND_BYTES:,}-byte limit for a "
            "shell command (a shell cannot even pass one argument over 128 KiB on Linux); "
            "write long content to a file with a file tool and run a short command")
    return command


def _codex_message(entry: dict[str, Any]) -> dict[str, Any] | None:
    """One Codex rollout line (``{"type": "response_item", "payload": {"type": "message",
    "role": …, "content": [{"type": "input_text", …}]}}``) as a message; a ``compacted``
    line as the compaction boundary; ``None`` for tool calls, reasoning and the rest."""
    payload = entry.get("payload")
    if not isinstance(payload, dict):
        return None
    if entry.get("type") == "compacted":
        return {"role": "user", "content": [
            {"type": "text", "text": f"{COMPACTION_TEXT} {payload.get('message', '')}"}]}
    if payload.get("type") in ("function_call_output", "custom_tool_call_output"):
        # a tool's output: never a request; the gate's provenance check reads its text
        from ctxgate.gate.provenance import MAX_TOOL_TEXT_CHARS  # its regexes: only here

        output = payload.get("output")
        if isinstance(output, dict):
            output = output.get("content", "")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return {"role": "tool", "content": text[-MAX_TOOL_TEXT_CHARS:]}
    if payload.get("type") != "message" or payload.get("role") not in ("user", "assistant"):
        return None
    parts = payload.get("content")
    if not isinstance(parts, list):
        return None
    texts = [{"type": "text", "text": str(p.get("text", ""))} for p in parts
             if isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text")]
    return {"role": payload["role"], "content": texts}


def _open_when_written(path: str | Path, wait_seconds: float) -> Any:
    """``path`` opened for reading, waiting up to ``wait_seconds`` for it to be created."""
    import time

    give_up = time.monotonic() + wait_seconds
    while True:
        try:
            return open(path, encoding="utf-8", errors="replace")
        except FileNotFoundError:
            if time.monotonic() >= give_up:
                raise
            time.sleep(0.02)


def _harness_turn(entry: Mapping[str, Any]) -> bool:
    """A user-role line the harness wrote, not the user: Claude Code's ``<task-notification>``
    (``promptSource: "system"``, ``origin.kind: "task-notification"``), whose ``<result>`` is
    a sub-agent's own final text. Taken as the user's words, it made whatever a sub-agent
    said (a web page it read, say) the request the next calls were judged against."""
    origin = entry.get("origin")
    kind = origin.get("kind") if isinstance(origin, Mapping) else None
    return entry.get("promptSource") == "system" or kind == "task-notification" or \
        entry.get("turnOrigin") == "task_notification"


def read_transcript(path: str | Path, *, keep: int = MAX_TRANSCRIPT_MESSAGES,
                    wait_seconds: float = 0.0) -> list[dict[str, Any]]:
    """The conversation in a harness transcript, as Anthropic-style messages, oldest first.

    Streams the file line by line and keeps only the last ``keep`` messages, so a long
    session costs no more memory than its tail. Lines that are not JSON objects are skipped
    (a transcript being appended to may end in a partial line). A file that does not exist
    yet is waited for up to ``wait_seconds`` (the harness may not have written it).

    Raises:
        HookPayloadError: the file cannot be read (or did not appear in time).
    """
    messages: deque[dict[str, Any]] = deque(maxlen=keep)
    try:
        with _open_when_written(path, wait_seconds) as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if not isinstance(entry, dict):
                    continue
                if entry.get("type") == "summary" or entry.get("isCompactSummary"):
                    messages.append({"role": "user", "content": [
                        {"type": "text", "text": f"{COMPACTION_TEXT} {entry.get('summary', '')}"}]})
                    continue
                if entry.get("isMeta") or _harness_turn(entry):
                    continue
                if entry.get("type") in ("response_item", "compacted"):  # a Codex rollout
                    codex = _codex_message(entry)
                    if codex is not None:
                        messages.append(codex)
                    continue
                if entry.get("type") not in (None, "user", "assistant"):
                    # not a turn of the conversation: Claude Code 2.1.332 also logs the API
                    # requests it sends (``api-request-blob``), whose user-role "message" is
                    # an injected <system-reminder>; taken as a turn, it hid the request
                    continue
                msg = entry.get("message")
                if isinstance(msg, dict) and msg.get("role") in ("user", "assistant"):
                    messages.append({"role": msg["role"], "content": msg.get("content", "")})
                elif entry.get("role") in ("user", "assistant"):  # Codex-style flat lines
                    messages.append({"role": entry["role"], "content": entry.get("content", "")})
    except FileNotFoundError as exc:
        waited = f" (waited {wait_seconds:g} s for the harness to write it)" if wait_seconds else ""
        raise HookPayloadError(
            f"cannot read transcript_path {str(path)!r}: it does not exist{waited}; the "
            "user's request is read from it, so a call that needs the request is blocked") from exc
    except OSError as exc:
        raise HookPayloadError(f"cannot read transcript_path {str(path)!r}: {exc}") from exc
    return list(messages)
