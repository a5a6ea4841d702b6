"""The bodies of ``hook pre`` and ``hook post``: stdin bytes in, a :class:`HookResponse` out.

One implementation for every front end: the typer commands (``cli/hook.py``), their argparse
twins (``cli/fast_hook.py``) and the decision daemon (:mod:`.served`), so a verdict through the
daemon is byte-identical to one decided in-process. Nothing here imports typer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ctxgate.integrations.hooks.supervisor import BLOCK_EXIT, BLOCK_PREFIX

__all__ = ["POST_FAULT_EXIT", "block", "decide_pre", "digest_post", "post_fault",
           "pre_answer"]

POST_FAULT_EXIT = 1
"""``hook post`` exit status on any fault: a non-blocking error (the call already ran)."""


def post_fault(message: str) -> NoReturn:
    """End ``hook post`` on a fault: a warning on stderr, nothing (more) on stdout, exit 1.

    Exit 1 is the harness's "non-blocking error": the tool's output reaches the model
    unchanged and the user sees the warning. The harness reads stdout only on exit 0, so
    bytes of an answer already written are never taken as an answer.
    """
    import os

    try:
        os.write(2, f"ctxgate could not digest this output ({message}); it was passed "
                    "through unchanged\n".encode("utf-8", "replace"))
    except OSError:
        pass
    os._exit(POST_FAULT_EXIT)


def block(message: str) -> Any:
    """The response that blocks the call with ``message`` on stderr (exit 2)."""
    from ctxgate.integrations.hooks.handlers import HookResponse

    return HookResponse(stderr=f"{BLOCK_PREFIX}{message}", exit_code=BLOCK_EXIT)


def _default_config(overrides: dict[str, dict[str, Any]]) -> Any:
    from ctxgate.settings import load_config

    return load_config(overrides)


def decide_pre(raw: bytes, *, harness: str = "claude-code", rewrite: bool = True,
               approve: bool = False, backend: str | None = None,
               python: str = sys.executable,
               load_config: Callable[[dict[str, dict[str, Any]]], Any] = _default_config,
               load_model: Callable[..., Any] | None = None) -> Any:
    """Judge the ``PreToolUse`` payload ``raw``; raises on any failure (the caller blocks).

    ``load_config(overrides)`` and ``load_model(spec, policy)`` are the daemon's seams: it
    keeps the configuration and the decision model loaded between calls.
    """
    from ctxgate.app.application import App
    from ctxgate.integrations.hooks.handlers import pre_tool_use
    from ctxgate.integrations.hooks.harness import get_harness
    from ctxgate.integrations.hooks.payloads import parse_payload

    adapter = get_harness(harness)  # an unknown name: UsageError listing the known ones
    payload = parse_payload(raw, expect="PreToolUse")
    app = App(load_config({"gate": {"backend": backend}}), load_model=load_model)
    try:
        return pre_tool_use(payload, decide=app.gate.decide_sync, rewrite_shell=rewrite,
                            approve=approve, python=python, harness=adapter)
    finally:
        app.close()  # the daemon serves many calls: no connection left open


def pre_answer(raw: bytes, **options: Any) -> Any:
    """:func:`decide_pre`, with every failure turned into a block (never raises)."""
    try:
        return decide_pre(raw, **options)
    except Exception as exc:  # noqa: BLE001 - every failure blocks the call (fail closed)
        return block(f"{type(exc).__name__}: {exc}")


def digest_post(raw: bytes, *, harness: str = "claude-code",
                load_config: Callable[[dict[str, dict[str, Any]]], Any] = _default_config
                ) -> Any:
    """Digest the ``PostToolUse`` payload ``raw`` when its output is large; raises on faults."""
    from ctxgate.app.application import App
    from ctxgate.integrations.hooks.handlers import post_tool_use
    from ctxgate.integrations.hooks.harness import get_harness
    from ctxgate.integrations.hooks.payloads import parse_payload

    adapter = get_harness(harness)
    payload = parse_payload(raw, expect="PostToolUse")
    # the archive opens only for an output the firewall reads; broken: digested, not archived
    return post_tool_use(payload, firewall=App(load_config({})).firewall, harness=adapter)
