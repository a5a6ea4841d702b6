"""Structural JSON preview that is itself valid JSON, for JSON, JSON Lines and JSON + noise.

A byte-cut of a JSON document is invalid JSON and hides the middle (lean-ctx #1245); a
preview made only of types and sizes says nothing (#1453). This preview keeps the structure
with values: every node is ``{"type": …}`` plus ``value`` for numbers, booleans and short
strings, ``chars`` and a ``preview`` for long strings, ``keys``/``fields``/``omitted_keys``
for objects (document order) and ``items``/``sample`` for arrays. It is shrunk step by step
(fewer fields, shallower, shorter strings, fewer samples) until it fits its byte budget, so
the same input always gives the same bytes.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["JsonPreview", "json_preview", "jsonl_preview_from_lines"]

_LINE_BREAKERS = re.compile("[\x80-\x9f\u2028\u2029\ud800-\udfff]")
"""Characters some readers treat as line breaks, and lone surrogates (not encodable as
UTF-8); escaped so the preview stays one line of valid UTF-8 JSON."""
_TRAILING_MAX_BYTES = 4_096
"""Noise after a JSON document (``[exit:1]``, a log line) still previewed up to this size, bytes
(or a tenth of the document, if larger)."""

# (fields per object, depth, string chars, array samples), most generous first
_LEVELS = ((32, 3, 120, 3), (16, 2, 80, 2), (8, 2, 48, 2), (8, 1, 32, 1), (4, 1, 16, 1),
           (0, 0, 0, 0))


@dataclass(frozen=True, kw_only=True, slots=True)
class JsonPreview:
    """A structural preview and what it describes."""

    format: str
    """``"json"``, ``"json+trailing"`` or ``"jsonl"``."""
    text: str
    """The preview: one line of compact, valid JSON."""
    records: int = 1
    """Values described (JSON Lines records)."""


def json_preview(text: str, *, max_bytes: int) -> JsonPreview | None:
    """Preview ``text`` if it is a JSON document, JSON followed by noise, or JSON Lines.

    Returns None for other text, or when not even the smallest preview fits ``max_bytes``.
    """
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[\"0123456789-tfn":
        return None
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    try:
        value, end = decoder.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError):
        return None
    trailing = text[end:].strip()
    if not trailing:
        return _fit("json", {"root": value}, max_bytes, records=1)
    if not isinstance(value, dict | list):
        return None  # `00001 compiling …` is not a JSON document followed by noise
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 2:
        records = _parse_lines(lines)
        if records is not None:
            return jsonl_preview_from_lines(records, total_records=len(records),
                                            max_bytes=max_bytes)
    trailing_bytes = len(trailing.encode("utf-8", "surrogatepass"))
    if trailing_bytes > max(_TRAILING_MAX_BYTES, (len(text) - len(trailing)) // 10):
        return None  # a JSON value at the start of mostly other text
    note = {"bytes": trailing_bytes, "text": trailing[:200]}
    return _fit("json+trailing", {"root": value, "trailing": note}, max_bytes, records=1)


def jsonl_preview_from_lines(records: list[Any], *, total_records: int,
                             max_bytes: int) -> JsonPreview | None:
    """Preview JSON Lines from parsed ``records`` (all, or a head/tail sample of them)."""
    key_counts: dict[str, int] = {}
    for rec in records:
        if isinstance(rec, dict):
            for key in rec:
                key_counts[key] = key_counts.get(key, 0) + 1
    sample = records[:2] + (records[-1:] if len(records) > 2 else [])
    body: dict[str, Any] = {"records": total_records, "sampled": len(records)}
    if key_counts:
        body["keys"] = key_counts
    body["sample"] = sample
    return _fit("jsonl", body, max_bytes, records=total_records)


def _parse_lines(lines: list[str]) -> list[Any] | None:
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except (json.JSONDecodeError, RecursionError):
            return None
    return out


def _fit(fmt: str, body: dict[str, Any], max_bytes: int, *, records: int) -> JsonPreview | None:
    for fields, depth, chars, samples in _LEVELS:
        doc: dict[str, Any] = {"preview": "structural", "format": fmt}
        for key, val in body.items():
            if key == "root":
                doc["root"] = _shape(val, fields, depth, chars, samples)
            elif key == "sample":
                doc["sample"] = [_shape(v, fields, depth, chars, samples)
                                 for v in val[: max(samples, 1)]] if samples else []
            elif key == "keys":
                items = list(val.items())
                keep = items[: max(fields, 4)]
                doc["keys"] = dict(keep)
                if len(items) > len(keep):
                    doc["omitted_keys"] = len(items) - len(keep)
            elif key == "trailing":
                doc["trailing"] = {"bytes": val["bytes"], "text": _cut(val["text"],
                                                                       max(chars, 24))}
            else:
                doc[key] = val
        rendered = _LINE_BREAKERS.sub(lambda m: f"\\u{ord(m.group()):04x}",
                                      json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
        if len(rendered.encode("utf-8", "surrogatepass")) <= max_bytes:
            return JsonPreview(format=fmt, text=rendered, records=records)
    return None


def _shape(value: Any, fields: int, depth: int, chars: int, samples: int) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if value is None:
        return {"type": "null"}
    if isinstance(value, float) and not math.isfinite(value):
        return {"type": "number", "text": str(value)}  # NaN/Infinity are not valid JSON
    if isinstance(value, int | float):
        return {"type": "number", "value": value}
    if isinstance(value, str):
        n = len(value)
        if n <= chars:
            return {"type": "string", "value": value}
        out: dict[str, Any] = {"type": "string", "chars": n}
        if chars:
            out["preview"] = _cut(value, chars)
        return out
    if isinstance(value, list):
        arr: dict[str, Any] = {"type": "array", "items": len(value)}
        if depth > 0 and samples and value:
            arr["sample"] = [_shape(v, fields, depth - 1, chars, samples)
                             for v in value[:samples]]
        return arr
    if isinstance(value, dict):
        obj: dict[str, Any] = {"type": "object", "keys": len(value)}
        if depth > 0 and fields:
            items = list(value.items())[:fields]
            obj["fields"] = {k: _shape(v, fields, depth - 1, chars, samples) for k, v in items}
            if len(value) > len(items):
                obj["omitted_keys"] = len(value) - len(items)
        return obj
    return {"type": type(value).__name__}


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(0, chars - 1)] + "…"
