"""bound_record(): scan, plan, store originals, cut, verify.

Steps, each a single pass: (1) one walk measures the record, checks the structural limits and
collects truncatable strings; (2) if it fits, it is returned as is; (3) the plan turns the
overflow into a target size per string (numbers only); (4) when an archive is given, each
string that will be cut is stored whole first, so its marker can name the id; (5) the cut
strings are built and placed into copies of only the containers on their paths, so the input
is never mutated and untouched subtrees are shared; (6) the result is measured once more as
a guard. Termination is structural: no step loops on the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ctxgate.bound.limits import Limits, refuse
from ctxgate.bound.marker import Marker, cut_string, marker_block, parse_marker
from ctxgate.bound.measure import escaped_size, measure, text_bytes
from ctxgate.bound.policy import DEFAULT_BOUND_POLICY, BoundPolicy
from ctxgate.bound.scan import Candidate, scan
from ctxgate.bound.selectors import parse_selectors
from ctxgate.bound.trim import cut_text, plan_level, plan_widest
from ctxgate.errors import BoundError

__all__ = ["BoundResult", "Cut", "OriginalsArchive", "bound_record"]

_PLACEHOLDER_ID_CHARS = 12  # the archive's short id length; re-planned if an id is longer


class OriginalsArchive(Protocol):
    """Where full originals go: anything with ``put(data, meta)`` returning an entry that has
    ``id`` and ``short_id`` (:class:`ctxgate.archive.Archive` is one)."""

    def put(self, data: bytes, meta: Any) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class Cut:
    """One string that was cut."""

    path: str
    """JSON pointer of the string."""
    original_bytes: int
    """UTF-8 bytes of the original text."""
    kept_bytes: int
    """UTF-8 bytes of the original text still present (head plus tail)."""
    keep: str
    """``head``, ``tail``, ``both`` or ``drop`` (binary data replaced whole)."""
    archive_id: str | None = None
    """Full id of the stored original, or ``None`` when not stored."""
    archive_error: str | None = None
    """Why storing the original failed, when it did (the cut is made anyway)."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"path": self.path, "original_bytes": self.original_bytes,
                "kept_bytes": self.kept_bytes, "keep": self.keep,
                "archive_id": self.archive_id, "archive_error": self.archive_error}


@dataclass(frozen=True, kw_only=True)
class BoundResult:
    """A record that fits, and what was cut to make it fit."""

    record: Any
    """The bounded record (the input object itself when nothing was cut)."""
    cuts: list[Cut] = field(default_factory=list)
    """Every cut, in document order."""
    serialized_bytes: int
    """UTF-8 bytes of the bounded record's serialization."""
    original_bytes: int
    """UTF-8 bytes of the input's serialization."""
    max_bytes: int
    """The bound applied (bytes)."""

    @property
    def changed(self) -> bool:
        """Whether anything was cut."""
        return bool(self.cuts)

    def marker(self, path: str) -> Marker | None:
        """The marker the bound wrote in the string at JSON pointer ``path``, or ``None``.

        ``None`` unless a cut was made at ``path`` and the string there ends in the marker of
        exactly that cut (counts, keep mode, bound and archive id): an uncut tool output that
        itself ends in marker-shaped text is never taken for a cut.
        """
        cut = next((c for c in self.cuts if c.path == path), None)
        if cut is None:
            return None
        value = _at_pointer(self.record, path)
        if not isinstance(value, str):
            return None
        marker = parse_marker(value)
        if marker is None or (marker.kept_bytes, marker.original_bytes, marker.bound_bytes,
                              marker.keep) != (cut.kept_bytes, cut.original_bytes,
                                               self.max_bytes, cut.keep):
            return None
        if (marker.archive_id is None) != (cut.archive_id is None) or (
                cut.archive_id is not None and marker.archive_id is not None
                and not cut.archive_id.startswith(marker.archive_id)):
            return None
        return marker

    def to_dict(self) -> dict[str, object]:
        """JSON-ready report (without the record)."""
        return {"changed": self.changed, "serialized_bytes": self.serialized_bytes,
                "original_bytes": self.original_bytes, "max_bytes": self.max_bytes,
                "cuts": [c.to_dict() for c in self.cuts]}


def bound_record(
    record: Any,
    max_bytes: int | None = None,
    *,
    truncatable: tuple[str, ...] | list[str] | None = None,
    strategy: str | None = None,
    policy: BoundPolicy = DEFAULT_BOUND_POLICY,
    archive: OriginalsArchive | None = None,
) -> BoundResult:
    """Return ``record`` bounded to ``max_bytes`` serialized UTF-8 bytes, or refuse it.

    Args:
        record: a JSON value (dicts with string keys, lists/tuples, str, int, finite float,
            bool, None). Never mutated.
        max_bytes: the bound in bytes (default ``policy.max_bytes``).
        truncatable: selectors of cuttable tool output (default ``policy.selectors``).
        strategy: ``"level"`` or ``"widest"`` (default ``policy.strategy``).
        policy: limits, selectors and cut settings.
        archive: where to store each cut string's full original (its id goes in the marker).

    Returns:
        A :class:`BoundResult`; ``record`` is the input itself when it already fits.

    Raises:
        RecordBoundError: the overflow is not in tool output (``record_too_large``), a
            structural limit is broken (``record_limit_exceeded``) or a value is not JSON
            (``record_not_json``); it names the rule, the JSON pointer, observed and limit.
        ConfigError: an invalid bound, strategy or selector.
    """
    overrides = {k: v for k, v in (("max_bytes", max_bytes), ("strategy", strategy),
                                    ("selectors", truncatable)) if v is not None}
    if overrides:
        if "selectors" in overrides:
            overrides["selectors"] = tuple(overrides["selectors"])
        from dataclasses import replace

        policy = replace(policy, **overrides)
    bound = policy.max_bytes
    found = scan(record, Limits.from_policy(policy), parse_selectors(policy.selectors))
    if found.size <= bound:
        return BoundResult(record=record, serialized_bytes=found.size,
                           original_bytes=found.size, max_bytes=bound)

    cands = found.candidates
    allowance = bound - (found.size - sum(c.size for c in cands))
    originals = [text_bytes(c.text) for c in cands]
    atomic = [c.keep == "drop" for c in cands]
    planner = plan_level if policy.strategy == "level" else plan_widest
    ids: dict[int, tuple[str | None, str | None, str | None]] = {}  # index -> id, short, error

    def marker_size(i: int) -> int:
        short = ids[i][1] if i in ids else ("x" * _PLACEHOLDER_ID_CHARS if archive else None)
        return escaped_size(marker_block(kept_bytes=originals[i], original_bytes=originals[i],
                                         bound_bytes=bound, keep=cands[i].keep,
                                         archive_id=short))

    markers = [marker_size(i) for i in range(len(cands))]
    for _attempt in range(3):  # ids can only lengthen markers once; 3 passes always settle
        targets = planner([c.size for c in cands], [2 + m for m in markers], atomic, allowance)
        if targets is None:
            raise refuse("max_bytes", found.fixed_path, found.size, bound)
        cut_set = [i for i, c in enumerate(cands) if targets[i] < c.size]
        if archive is None:
            break
        for i in cut_set:
            if i not in ids:
                ids[i] = _store(archive, cands[i])
        grown = False
        for i in cut_set:
            size = marker_size(i)
            grown = grown or size > markers[i]
            markers[i] = size
        if not grown:
            break
    else:  # pragma: no cover - guarded by the loop bound above
        raise BoundError("record bound plan did not settle; report this as a bug")

    new_record, cuts = _apply(record, cands, targets, cut_set, markers, originals, ids, bound,
                              policy.line_snap_bytes)
    size = measure(new_record)
    if size > bound:  # pragma: no cover - the plan is exact; this guards the arithmetic
        raise BoundError(f"bounded record is {size} bytes, over {bound}; report this as a bug")
    return BoundResult(record=new_record, cuts=cuts, serialized_bytes=size,
                       original_bytes=found.size, max_bytes=bound)


def _store(archive: OriginalsArchive, cand: Candidate) -> tuple[str | None, str | None, str | None]:
    """Store the original; a failing archive is reported on the cut, never fatal.

    Any ``Exception`` from the archive counts as a failure to store (a full disk is an
    ``OSError``, a broken database a ``sqlite3.Error``, a lost Redis a ``redis`` error):
    the cut is made without an id and ``Cut.archive_error`` says why.
    """
    data = cand.text.encode("utf-8", "surrogatepass")
    try:
        entry = archive.put(data, _entry_meta(cand))
    except Exception as exc:  # noqa: BLE001 - a failing archive never fails the bound
        return None, None, f"{type(exc).__name__}: {exc}"
    return str(entry.id), str(entry.short_id), None


def _entry_meta(cand: Candidate) -> Any:
    from ctxgate.archive import EntryMeta

    return EntryMeta(tool=cand.tool, reason="bound",
                     extra={"path": cand.path, "keep": cand.keep})


def _apply(record, cands, targets, cut_set, markers, originals, ids, bound, snap):
    """Build the new strings and place them into path copies of the record."""
    root = _shallow(record)
    copies: dict[tuple, Any] = {(): root}
    cuts: list[Cut] = []
    for i in cut_set:
        cand = cands[i]
        archive_id, short, error = ids.get(i, (None, None, None))
        budget = targets[i] - 2 - markers[i]
        head, tail, kept = cut_text(cand.text, budget, cand.keep, snap)
        text = cut_string(head, tail, kept_bytes=kept, original_bytes=originals[i],
                          bound_bytes=bound, keep=cand.keep, archive_id=short)
        container = root
        for depth in range(len(cand.tokens) - 1):
            prefix = cand.tokens[:depth + 1]
            if prefix not in copies:
                copies[prefix] = _shallow(container[prefix[-1]])
                container[prefix[-1]] = copies[prefix]
            container = copies[prefix]
        container[cand.tokens[-1]] = text
        cuts.append(Cut(path=cand.path, original_bytes=originals[i], kept_bytes=kept,
                        keep=cand.keep, archive_id=archive_id, archive_error=error))
    return root, cuts


def _at_pointer(record: Any, path: str) -> Any:
    """The value at JSON pointer ``path`` (RFC 6901), or ``None`` when there is none."""
    node = record
    for raw in path.split("/")[1:] if path else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            if token not in node:
                return None
            node = node[token]
        elif isinstance(node, list | tuple) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _shallow(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else list(value)
