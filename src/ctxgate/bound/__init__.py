"""Record bound: a record over its byte bound is trimmed in its tool output, never discarded.

:func:`bound_record` returns a record whose serialization (:mod:`ctxgate.bound.measure`)
fits ``max_bytes`` UTF-8 bytes, cutting only tool output (:mod:`ctxgate.bound.selectors`),
by a closed-form plan (:mod:`ctxgate.bound.trim`), with a marker naming true byte counts
(:mod:`ctxgate.bound.marker`), or raises a structured
:class:`~ctxgate.errors.RecordBoundError`. The input is never mutated.

Names other than the three of :mod:`ctxgate.bound.measure` resolve lazily: the settings import :mod:`ctxgate.bound.policy` on every ``ctxgate``
start, which runs this file, and the bound itself (about 10 ms of imports) is loaded only
when a name from it is used.
"""

from __future__ import annotations

from ctxgate._lazy import lazy_exports

# Eager, unlike the rest: the function ``measure`` shares its name with its module, and a lazy
# name would lose to the submodule attribute that importing ``ctxgate.bound.measure`` from
# anywhere sets on this package. It is small (the run path has loaded json already).
from ctxgate.bound.measure import emit as emit
from ctxgate.bound.measure import emit_bytes as emit_bytes
from ctxgate.bound.measure import measure as measure

_LAZY: dict[str, str] = {
    "bound_record": "ctxgate.bound.bound",
    "BoundPolicy": "ctxgate.bound.policy",
    "BoundResult": "ctxgate.bound.bound",
    "Cut": "ctxgate.bound.bound",
    "DEFAULT_BOUND_POLICY": "ctxgate.bound.policy",
    "format_marker": "ctxgate.bound.marker",
    "Limits": "ctxgate.bound.limits",
    "Marker": "ctxgate.bound.marker",
    "OriginalsArchive": "ctxgate.bound.bound",
    "parse_marker": "ctxgate.bound.marker",
    "parse_selectors": "ctxgate.bound.selectors",
    "Selector": "ctxgate.bound.selectors",
}

__all__ = sorted([*_LAZY, "emit", "emit_bytes", "measure"])

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
