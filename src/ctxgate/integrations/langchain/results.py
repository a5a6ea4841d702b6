"""A tool's ``ToolMessage`` through the firewall, then the per-result byte bound.

A large result is archived and its content replaced by the digest (non-text blocks such as
images are kept after it); the archive id and the firewall's reason go in
``response_metadata["ctxgate"]``. Then the content (and a string or JSON ``artifact``, which
LangGraph persists too) is bounded to ``max_result_bytes``: an oversized result is cut with
ctxgate's marker (full original in the archive), never dropped. A ``Command`` returned by a
tool is passed through untouched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage

from ctxgate.integrations._adapter import ResultFirewall, bound_result, result_parts

__all__ = ["ResultStep"]


@dataclass(frozen=True, kw_only=True)
class ResultStep:
    """Firewall and bound one tool result."""

    firewall: ResultFirewall
    max_result_bytes: int | None = None
    """Bound of a result's content (and of its artifact), UTF-8 bytes of its JSON string;
    ``None``: no per-result bound."""

    def apply(self, message: Any, tool: str, *, session_id: str | None = None) -> Any:
        """The message the model (and the checkpointer) gets instead of ``message``."""
        if not isinstance(message, ToolMessage):
            return message
        text, others = result_parts(message.content)
        shown = self.firewall.apply(tool, text or "", session_id=session_id)
        meta: dict[str, Any] = {"firewall": shown.reason}
        content: Any = message.content
        if shown.changed:
            content = shown.text if not others else [{"type": "text", "text": shown.text},
                                                     *others]
        if shown.archive_id:
            meta["archive_id"] = shown.archive_id
        artifact = message.artifact
        if self.max_result_bytes is not None:
            content, cut = self._bound(content)
            if cut is not None:
                meta["bound"] = {"original_bytes": cut.original_bytes,
                                 "kept_bytes": cut.kept_bytes, "archive_id": cut.archive_id}
            artifact = self._bound_artifact(artifact, meta)
        updates: dict[str, Any] = {
            "response_metadata": {**message.response_metadata,
                                  "ctxgate": {**message.response_metadata.get("ctxgate", {}),
                                              **meta}}}
        if content is not message.content:
            updates["content"] = content
        if artifact is not message.artifact:
            updates["artifact"] = artifact
        return message.model_copy(update=updates)

    def _bound(self, content: Any) -> tuple[Any, Any]:
        limit = self.max_result_bytes
        assert limit is not None
        archive = self.firewall.archive
        if isinstance(content, str):
            if len(content) * 6 + 2 <= limit:  # no code point escapes to more than 6 bytes
                return content, None
            return bound_result(content, max_bytes=limit, archive=archive)
        text, others = result_parts(content)
        if text is None or len(text) * 6 + 2 <= limit:
            return content, None
        cut_text, cut = bound_result(text, max_bytes=limit, archive=archive)
        if cut is None:
            return content, None
        return [{"type": "text", "text": cut_text}, *others], cut

    def _bound_artifact(self, artifact: Any, meta: dict[str, Any]) -> Any:
        if artifact is None:
            return None
        limit = self.max_result_bytes
        assert limit is not None
        if isinstance(artifact, str):
            text = artifact
        else:
            try:
                text = json.dumps(artifact, ensure_ascii=False)
            except (TypeError, ValueError):
                return artifact  # not JSON: LangGraph's serializer decides, we cannot measure
        if len(text) * 6 + 2 <= limit:
            return artifact
        cut_text, cut = bound_result(text, max_bytes=limit, archive=self.firewall.archive)
        if cut is None:
            return artifact
        meta["artifact_bound"] = {"original_bytes": cut.original_bytes,
                                  "kept_bytes": cut.kept_bytes, "archive_id": cut.archive_id}
        return cut_text
