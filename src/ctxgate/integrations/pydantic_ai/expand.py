"""The ``expand`` tool: the model reads back any part of an archived tool output.

A digest names its archive id and the exact calls to make (``expand(id="…", lines="21:220")``);
:class:`ExpandToolset` is a ``FunctionToolset`` holding that one tool, with the arguments of
ctxgate's MCP ``expand`` tool. It only reads the archive, so :class:`.toolset.GatedToolset`
passes its calls through without a gate decision, and its views (already bounded by
``expand_max_tokens``) are never firewalled again. A bad id or selector comes back as a failed
tool result with the archive's message (recent ids, the conflicting selectors), so the model
can correct itself without spending retries.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.toolsets import FunctionToolset

from ctxgate.archive import Archive
from ctxgate.errors import CtxgateError
from ctxgate.integrations._adapter import EXPAND_DESCRIPTION, expand_view

__all__ = ["ExpandToolset", "expand_toolset"]


class ExpandToolset(FunctionToolset[Any]):
    """A ``FunctionToolset`` with the one ``expand`` tool (see the module docstring)."""


def expand_toolset(archive: Archive, *, name: str = "expand") -> ExpandToolset:
    """The toolset that lets the model read ``archive``'s entries back.

    Args:
        archive: the archive the digests were made with.
        name: the tool's name (the digests' drill-down lines use it).
    """
    toolset = ExpandToolset(id="ctxgate-expand")

    @toolset.tool_plain(name=name, description=EXPAND_DESCRIPTION)
    def expand(id: str, lines: str | None = None, head: int | None = None,  # noqa: A002
               tail: int | None = None, grep: str | None = None, ignore_case: bool = False,
               literal: bool = False, context: int | None = None, before: int | None = None,
               after: int | None = None, max_matches: int | None = None,
               bytes: str | None = None, json: str | None = None,  # noqa: A002
               keys: bool = False, max_tokens: int | None = None) -> str:
        arguments = dict(id=id, lines=lines, head=head, tail=tail, grep=grep,
                         ignore_case=ignore_case, literal=literal, context=context,
                         before=before, after=after, max_matches=max_matches, bytes=bytes,
                         json=json, keys=keys, max_tokens=max_tokens)
        try:
            return expand_view(archive, arguments)
        except CtxgateError as exc:
            raise ToolFailed(f"expand: {exc}") from exc

    return toolset
