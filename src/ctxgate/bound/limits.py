"""Structural limits of a record, and the refusal they raise.

Trimming a string cannot fix a record with too many nodes, too deep a nesting, too long an
array, too many object entries or too long a key, so each of these is refused with a
:class:`~ctxgate.errors.RecordBoundError` naming the rule, the JSON pointer of the offending
node, the observed value and the limit (never the value itself). The defaults are those of
the reference validator (8,192 nodes, depth 16, 1,024 elements, 256 entries, 512-long keys);
each limit is configurable and ``0`` disables it.

Units: nodes count every JSON value once (objects, arrays, strings, numbers, booleans, nulls;
the reference also counted each container's exit, we do not); depth counts container nesting
levels, the root container being level 1; key length is in code points.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxgate.errors import RecordBoundError

__all__ = [
    "CODE_LIMIT",
    "CODE_NOT_JSON",
    "CODE_TOO_LARGE",
    "HARD_MAX_DEPTH",
    "Limits",
    "json_pointer",
    "not_json",
    "refuse",
]

HARD_MAX_DEPTH = 200
"""Nesting cap kept even when ``max_depth`` is disabled (the walk recurses per level)."""
CODE_TOO_LARGE = "record_too_large"
"""Error code: the byte overflow is not in tool output (rule ``max_bytes``)."""
CODE_LIMIT = "record_limit_exceeded"
"""Error code: a structural limit is broken (rules ``max_nodes``, ``max_depth`` ...)."""
CODE_NOT_JSON = "record_not_json"
"""Error code: a value JSON cannot represent (rule ``json_value``)."""

_UNITS = {
    "max_nodes": "nodes",
    "max_depth": "levels",
    "max_array_length": "elements",
    "max_object_entries": "entries",
    "max_key_length": "code points",
    "max_bytes": "bytes",
}
_HINTS = {
    "max_nodes": "split the record or raise bound.max_nodes",
    "max_depth": "flatten the record, check it for a cycle, or raise bound.max_depth",
    "max_array_length": "split the array or raise bound.max_array_length",
    "max_object_entries": "split the object or raise bound.max_object_entries",
    "max_key_length": "shorten the key or raise bound.max_key_length",
    "max_bytes": (
        "only tool output (the bound.selectors) is ever cut; shrink this field, add a "
        "selector for it, or raise bound.max_bytes"
    ),
}


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The structural limits in force; ``0`` disables one."""

    max_nodes: int = 8_192
    """JSON values (nodes)."""
    max_depth: int = 16
    """Container nesting levels (levels)."""
    max_array_length: int = 1_024
    """Elements per array."""
    max_object_entries: int = 256
    """Entries per object."""
    max_key_length: int = 512
    """Code points per key."""

    @classmethod
    def from_policy(cls, policy: object) -> Limits:
        """The limits of a :class:`~ctxgate.bound.policy.BoundPolicy`."""
        return cls(**{name: getattr(policy, name) for name in cls.__dataclass_fields__})

    @property
    def depth_cap(self) -> int:
        """The depth actually enforced: ``max_depth``, or :data:`HARD_MAX_DEPTH` if disabled."""
        return min(self.max_depth, HARD_MAX_DEPTH) if self.max_depth else HARD_MAX_DEPTH


def json_pointer(tokens: tuple[str | int, ...] | list[str | int]) -> str:
    """RFC 6901 pointer of a path (``""`` is the root)."""
    return "".join(
        "/" + (str(t) if isinstance(t, int) else t.replace("~", "~0").replace("/", "~1"))
        for t in tokens
    )


def refuse(rule: str, path: str, observed: int, limit: int) -> RecordBoundError:
    """Build the structured refusal for a broken limit (the caller raises it)."""
    unit = _UNITS.get(rule, "")
    where = path or "the record root"
    if rule == "max_bytes":
        message = (
            f"record is {observed} bytes, over the {limit}-byte bound, even with every tool "
            f"output cut to its marker; the largest part that may not be cut is at {where}; "
            + _HINTS[rule]
        )
        code = CODE_TOO_LARGE
    else:
        message = (
            f"{rule} broken at {where}: {observed} {unit} over the limit of {limit} {unit}; "
            + _HINTS[rule]
        )
        code = CODE_LIMIT
    return RecordBoundError(
        message, code=code, rule=rule, path=path, observed=observed, limit=limit, unit=unit
    )


def not_json(path: str, what: str) -> RecordBoundError:
    """The refusal for a value JSON cannot carry (``what`` names its type, never its value)."""
    return RecordBoundError(
        f"value at {path or 'the record root'} is {what}, which JSON cannot represent; "
        "convert it to a string, number, boolean, null, list or dict first",
        code=CODE_NOT_JSON, rule="json_value", path=path, observed=0, limit=0, unit="",
    )
