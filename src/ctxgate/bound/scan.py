"""One walk over a record: its exact size, its structural limits, and its tool output.

The walk measures every node with :mod:`ctxgate.bound.measure`, refuses the first broken
structural limit (:mod:`ctxgate.bound.limits`), and collects the strings the selectors mark
as truncatable (:class:`Candidate`) together with the largest leaf that may not be cut (the
path a ``max_bytes`` refusal names).

Inside a selected structured result, binary content parts (an object whose ``type`` is
``image`` or ``audio``, whose ``data`` is base64; or any ``blob`` field) are *atomic*: half a
base64 payload is useless, so such a string is kept whole or replaced by its marker alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxgate.bound.limits import Limits, json_pointer, not_json, refuse
from ctxgate.bound.measure import scalar_size, string_size
from ctxgate.bound.selectors import Selector

__all__ = ["Candidate", "Scan", "scan"]

_BINARY_TYPES = frozenset({"image", "audio"})
_TOOL_KEYS = ("toolName", "tool", "name")


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A truncatable string found by the walk."""

    tokens: tuple[str | int, ...]
    """Path from the root (keys and indexes)."""
    text: str
    """The string as found (never modified)."""
    size: int
    """Serialized bytes, quotes included."""
    keep: str
    """``head``, ``tail``, ``both``, or ``drop`` (atomic binary data)."""
    tool: str | None
    """Name of the enclosing tool invocation, when one is named (for the archive entry)."""

    @property
    def path(self) -> str:
        """JSON pointer of the string."""
        return json_pointer(self.tokens)


@dataclass(frozen=True, kw_only=True)
class Scan:
    """What the walk found."""

    size: int
    """Serialized bytes of the whole record."""
    nodes: int
    """JSON values in the record."""
    candidates: list[Candidate]
    """Truncatable strings in document order."""
    fixed_path: str
    """Pointer of the largest leaf that may not be cut (``""`` when there is none)."""
    fixed_bytes: int
    """Serialized bytes of that leaf."""


class _Walker:
    def __init__(self, limits: Limits, selectors: tuple[Selector, ...]):
        self.limits = limits
        self.selectors = selectors
        self.depth_cap = limits.depth_cap
        self.path: list[str | int] = []
        self.nodes = 0
        self.candidates: list[Candidate] = []
        self.fixed_bytes = -1
        self.fixed_path = ""
        self.open: set[int] = set()  # ids of the containers on the current path

    def advance(self, states, best, token):
        """Step the selector states over ``token``; ``best`` is (length, -index, keep)."""
        nxt = []
        for index, position in states:
            selector = self.selectors[index]
            if selector.step_matches(position, token):
                if position + 1 == len(selector.steps):
                    rank = (len(selector.steps), -index, selector.keep)
                    if best is None or rank[:2] > best[:2]:
                        best = rank
                else:
                    nxt.append((index, position + 1))
        return nxt, best

    def visit(self, value, depth, states, best, atomic, tool) -> int:
        self.nodes += 1
        limits = self.limits
        if limits.max_nodes and self.nodes > limits.max_nodes:
            raise refuse("max_nodes", json_pointer(self.path), self.nodes, limits.max_nodes)
        if isinstance(value, str):
            size = string_size(value)
            if best is not None:
                keep = "drop" if atomic else best[2]
                self.candidates.append(Candidate(
                    tokens=tuple(self.path), text=value, size=size, keep=keep, tool=tool))
            elif size > self.fixed_bytes:
                self.fixed_bytes, self.fixed_path = size, json_pointer(self.path)
            return size
        if isinstance(value, dict | list | tuple):
            if depth + 1 > self.depth_cap:
                raise refuse("max_depth", json_pointer(self.path), depth + 1, self.depth_cap)
            if id(value) in self.open:
                raise not_json(json_pointer(self.path), "a cycle (a container inside itself)")
            self.open.add(id(value))
            if isinstance(value, dict):
                size = self.visit_object(value, depth + 1, states, best, tool)
            else:
                size = self.visit_array(value, depth + 1, states, best, tool)
            self.open.discard(id(value))
            return size
        try:
            size = scalar_size(value)
        except (TypeError, ValueError):
            raise not_json(json_pointer(self.path), _describe(value)) from None
        if size > self.fixed_bytes:
            self.fixed_bytes, self.fixed_path = size, json_pointer(self.path)
        return size

    def visit_object(self, value: dict, depth, states, best, tool) -> int:
        limits = self.limits
        if limits.max_object_entries and len(value) > limits.max_object_entries:
            raise refuse("max_object_entries", json_pointer(self.path), len(value),
                         limits.max_object_entries)
        binary: tuple[str, ...] = ()
        if best is None:
            for key in _TOOL_KEYS:
                name = value.get(key)
                if isinstance(name, str) and name:
                    tool = name
                    break
        else:
            binary = ("data", "blob") if value.get("type") in _BINARY_TYPES else ("blob",)
        total = 1 + len(value) if value else 2
        path = self.path
        for key, item in value.items():
            if not isinstance(key, str):
                raise not_json(json_pointer(path), f"an object with a {type(key).__name__} key")
            if limits.max_key_length and len(key) > limits.max_key_length:
                raise refuse("max_key_length", json_pointer([*path, key]), len(key),
                             limits.max_key_length)
            sub_states, sub_best = self.advance(states, best, key) if states else ((), best)
            path.append(key)
            total += string_size(key) + 1 + self.visit(
                item, depth, sub_states, sub_best, key in binary, tool)
            path.pop()
        return total

    def visit_array(self, value, depth, states, best, tool) -> int:
        limits = self.limits
        if limits.max_array_length and len(value) > limits.max_array_length:
            raise refuse("max_array_length", json_pointer(self.path), len(value),
                         limits.max_array_length)
        total = 1 + len(value) if value else 2
        path = self.path
        for index, item in enumerate(value):
            sub_states, sub_best = self.advance(states, best, index) if states else ((), best)
            path.append(index)
            total += self.visit(item, depth, sub_states, sub_best, False, tool)
            path.pop()
        return total


def _describe(value: object) -> str:
    if isinstance(value, float):
        return "a non-finite number"
    if isinstance(value, int):
        return "an integer too long to convert"
    return f"a {type(value).__name__}"


def scan(record: object, limits: Limits, selectors: tuple[Selector, ...]) -> Scan:
    """Walk ``record`` once.

    Raises:
        RecordBoundError: a structural limit is broken (code ``record_limit_exceeded``) or a
            value is not JSON (code ``record_not_json``).
    """
    walker = _Walker(limits, selectors)
    states = [(i, 0) for i, sel in enumerate(selectors) if sel.steps]
    size = walker.visit(record, 0, states, None, False, None)
    return Scan(
        size=size, nodes=walker.nodes, candidates=walker.candidates,
        fixed_path=walker.fixed_path, fixed_bytes=max(walker.fixed_bytes, 0),
    )
