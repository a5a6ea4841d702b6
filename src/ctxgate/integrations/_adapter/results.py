"""A tool's return value as the text the firewall reads, and the parts it must keep.

One rule for every adapter: a string is itself; ``bytes`` are binary, never text; a typed
content part (a mapping or object whose ``type`` is one of :data:`CONTENT_TYPES`, such as LangChain content
blocks or the Agents SDK's ``ToolOutputText``/``ToolOutputImage``) is text when its type is
``"text"``, else a part kept as it is (images, files, audio); a list holding typed parts is
content: its text parts (and plain strings) joined by newlines, the others kept after the
digest; anything else (mappings, lists, numbers, dataclasses, pydantic models) is its JSON,
non-ASCII kept, what JSON cannot hold as its ``str``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["CONTENT_TYPES", "result_parts", "result_text"]


CONTENT_TYPES = frozenset({"text", "image", "image_url", "file", "audio", "input_text",
                           "input_image", "input_file", "input_audio"})
"""The ``type`` values that make a mapping or object a content part rather than data."""


def _part_type(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, Mapping) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in CONTENT_TYPES else None


def _part_text(value: Any) -> str | None:
    text = value.get("text") if isinstance(value, Mapping) else getattr(value, "text", None)
    return text if isinstance(text, str) else None


def result_parts(value: Any) -> tuple[str | None, list[Any]]:
    """``(text, kept)``: the text the firewall judges (``None``: nothing to judge) and the
    non-text parts that stay as they are, after the text (see the module docstring)."""
    if isinstance(value, str):
        return value, []
    if isinstance(value, (bytes, bytearray, memoryview)):
        return None, []
    kind = _part_type(value)
    if kind is not None:
        text = _part_text(value) if kind == "text" else None
        return (text, []) if text is not None else (None, [value])
    if isinstance(value, (list, tuple)) and value and \
            any(_part_type(v) is not None for v in value) and \
            all(isinstance(v, str) or _part_type(v) is not None for v in value):
        texts: list[str] = []
        kept: list[Any] = []
        for part in value:
            text = part if isinstance(part, str) else \
                (_part_text(part) if _part_type(part) == "text" else None)
            if text is None:
                kept.append(part)
            else:
                texts.append(text)
        return ("\n".join(texts) if texts else None), kept
    return _json(value), []


def result_text(value: Any) -> str | None:
    """The text of a result that is text alone, else ``None`` (binary, or with media parts)."""
    text, kept = result_parts(value)
    return text if not kept else None


def _json(value: Any) -> str | None:
    try:
        from pydantic_core import to_jsonable_python

        return json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)
    except (TypeError, ValueError):
        return None
