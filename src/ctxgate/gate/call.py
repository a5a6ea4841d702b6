"""A tool call as the gate sees it, the approval request about one, and argument hashing."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ctxgate.gate.verdict import Verdict

T = TypeVar("T")

__all__ = ["ApprovalRequest", "Approver", "ToolCall", "args_sha256", "canonical_args", "run_sync"]


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call as the agent wants to run it."""

    tool: str
    arguments: Any = field(default_factory=dict)
    """The JSON arguments that will really run (the gate judges these, never a copy)."""
    call_id: str = ""
    cwd: str = ""
    """The directory the call runs in (paths are resolved against it); ``""``: this process's."""
    server: str = ""
    """The MCP server the call goes to, when known (its annotations then apply)."""


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest:
    """What an approval hook is asked: may this exact call run once?"""

    call: ToolCall
    args_sha256: str
    verdict: Verdict
    """The deny verdict a person may overrule."""


Approver = Callable[[ApprovalRequest], "bool | None | Awaitable[bool | None]"]
"""``True`` approves this call once, ``False`` declines, ``None`` leaves it to the host (ask)."""


def canonical_args(arguments: Any) -> str:
    """Canonical JSON of arguments: sorted keys, compact, non-ASCII raw (hashing, caching)."""
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      allow_nan=False)


def args_sha256(arguments: Any) -> str:
    """sha256 (hex) of :func:`canonical_args`, UTF-8 encoded."""
    return hashlib.sha256(canonical_args(arguments).encode("utf-8", "surrogatepass")).hexdigest()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code.

    Uses :func:`asyncio.run`, or — when this thread already runs an event loop (a sync tool
    called from async framework code) — a short-lived worker thread with its own loop.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxgate-gate") as pool:
        return pool.submit(asyncio.run, coro).result()
