"""Record bound: a record over its byte bound is trimmed in its tool output, never discarded.

:func:`bound_record` returns a record whose serialization (:mod:`ctxgate.bound.measure`)
fits ``max_bytes`` UTF-8 bytes, cutting only tool output (:mod:`ctxgate.bound.selectors`),
by a closed-form plan (:mod:`ctxgate.bound.trim`), with a marker naming true byte counts
(:mod:`ctxgate.bound.marker`), or raises a structured
:class:`~ctxgate.errors.RecordBoundError`. The input is never mutated.
"""

from __future__ import annotations

from ctxgate.bound.bound import BoundResult, Cut, OriginalsArchive, bound_record
from ctxgate.bound.limits import Limits
from ctxgate.bound.marker import Marker, format_marker, parse_marker
from ctxgate.bound.measure import emit, emit_bytes, measure
from ctxgate.bound.policy import DEFAULT_BOUND_POLICY, BoundPolicy
from ctxgate.bound.selectors import Selector, parse_selectors

__all__ = [
    "BoundPolicy",
    "BoundResult",
    "Cut",
    "DEFAULT_BOUND_POLICY",
    "Limits",
    "Marker",
    "OriginalsArchive",
    "Selector",
    "bound_record",
    "emit",
    "emit_bytes",
    "format_marker",
    "measure",
    "parse_marker",
    "parse_selectors",
]
