"""`hook post` replacements for Claude Code tools other than Bash, in each tool's own shape.

Claude Code 2.1.332 keeps a replacement only when it matches the tool's output schema. This
version offers no Grep or Glob tool in ``-p`` sessions here (search goes through Bash), so
these shapes cannot be driven end to end; the test holds them to the output interfaces the
package itself ships (``sdk-tools.d.ts``: ``GrepOutput``, ``GlobOutput``, ``WebFetchOutput``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxgate.integrations.hooks.handlers import post_tool_use
from ctxgate.integrations.hooks.harness import ClaudeCode
from ctxgate.integrations.hooks.payloads import parse_payload

SDK_TOOLS = (Path(__file__).resolve().parent / "node" / "node_modules" / "@anthropic-ai"
             / "claude-code" / "sdk-tools.d.ts")


def interface(name: str) -> dict[str, bool]:
    """Field → required, of one ``export interface NAME { … }`` in sdk-tools.d.ts."""
    text = SDK_TOOLS.read_text(encoding="utf-8")
    body = re.search(rf"export interface {name} \{{(.*?)\n\}}", text, re.S)
    assert body, f"{name} not in {SDK_TOOLS}"
    fields = re.findall(r"^  ([A-Za-z_]\w*)(\??):", body.group(1), re.M)
    return {f: not optional for f, optional in fields}


class Digested:
    digested = True
    text = "[ctxgate digest: grep output, …]\nFATAL: disk full"


@pytest.mark.parametrize(("tool", "shape", "response", "seen"), [
    ("Grep", "GrepOutput", {"mode": "content", "numFiles": 1, "filenames": ["app.log"],
                            "content": "a\nFATAL: disk full", "numLines": 2}, "FATAL"),
    ("Grep", "GrepOutput", {"mode": "files_with_matches", "numFiles": 2,
                            "filenames": ["a.py", "b.py"]}, "b.py"),
    ("Glob", "GlobOutput", {"durationMs": 3, "numFiles": 2, "filenames": ["a", "b"],
                            "truncated": False}, "b"),
    ("WebFetch", "WebFetchOutput", {"bytes": 10, "code": 200, "codeText": "OK",
                                    "result": "page text", "durationMs": 5,
                                    "url": "http://x"}, "page text"),
])
def test_replacement_has_the_tools_own_shape(tool: str, shape: str, response: dict,
                                             seen: str) -> None:
    fields = interface(shape)
    assert set(response) <= set(fields)  # the fixture itself is a valid output
    payload = parse_payload(json.dumps({"hook_event_name": "PostToolUse", "tool_name": tool,
                                        "tool_input": {}, "tool_response": response}))
    read = []

    def firewall(name, text, **kw):
        read.append(text)
        return Digested()

    out = json.loads(post_tool_use(payload, firewall=firewall, harness=ClaudeCode()).stdout)
    assert seen in read[0] and "{" not in read[0]  # the text, not the JSON envelope
    value = out["hookSpecificOutput"]["updatedToolOutput"]
    assert set(value) <= set(fields), set(value) - set(fields)
    assert {f for f, req in fields.items() if req} <= set(value)
    shown = [v for v in value.values() if v == Digested.text or v == [Digested.text]]
    assert shown, value  # the digest stands where the tool's text was


def test_an_unknown_object_shape_is_left_alone() -> None:
    payload = parse_payload(json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Other",
                                        "tool_input": {}, "tool_response": {"x": "y" * 9}}))
    out = post_tool_use(payload, firewall=lambda *a, **k: Digested(), harness=ClaudeCode())
    assert out.stdout == ""
