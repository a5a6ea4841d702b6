"""Effect classes: what a tool call does to the world, and where that knowledge came from.

Every call the gate judges gets one :class:`EffectClass`, with the :class:`EffectSource` that
decided it (strongest first: the user's configuration, MCP annotations, the harness's own
tools, the shell parser, rules over an unknown tool's name and arguments, a learned
classifier) and a short evidence text for ``--explain`` and
the audit log. The classes are ordered by how much harm an unrequested call can do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["SEVERITY", "Effect", "EffectClass", "EffectSource", "combine", "most_severe"]


class EffectClass(StrEnum):
    """What a call changes, least to most harmful if nobody asked for it."""

    READ_ONLY = "read_only"
    """Reads only: nothing changes anywhere."""
    LOCAL_RECOVERABLE = "local_recoverable"
    """Changes local state that can be restored (a git-tracked file in the working tree,
    untracked build output inside it)."""
    LOCAL_IRREVERSIBLE = "local_irreversible"
    """Changes local state that cannot be restored (dotfiles, history rewrites, deletes outside
    the working tree, database drops)."""
    EXTERNAL = "external"
    """A side effect outside this machine: sends, pays, publishes, invites, shares, deploys,
    pushes."""
    UNTRUSTED_CODE = "untrusted_code"
    """Runs code from an untrusted source (``curl … | sh``, a downloaded script)."""

    @property
    def destructive(self) -> bool:
        """True for the classes an unrequested call must not perform."""
        return self in (EffectClass.LOCAL_IRREVERSIBLE, EffectClass.EXTERNAL,
                        EffectClass.UNTRUSTED_CODE)


class EffectSource(StrEnum):
    """Where an effect class came from, strongest evidence first."""

    CONFIG = "config"
    MCP_ANNOTATIONS = "mcp_annotations"
    HARNESS_TOOL = "harness_tool"
    SHELL_PARSER = "shell_parser"
    SQL_PARSER = "sql_parser"
    """SQL that an argument of an unknown tool runs (``execute_sql``, ``mcp__db__query``),
    classified statement by statement (:mod:`.sql`)."""
    CODE_SCAN = "code_scan"
    """Calls that delete, send or spawn in code an argument runs (``python_repl``,
    ``jupyter_execute_cell``; :mod:`.code`)."""
    FAST_PATH = "fast_path"
    """The read-only fast path proved the shell command read-only (no model call)."""
    TOOL_NAME = "tool_name"
    """Rules over an unknown tool's name, description and argument names (:mod:`.names`)."""
    LEARNED = "learned"
    RULES_FAILED = "rules_failed"
    """A rule raised an error on this call: it is judged destructive (a clear request still
    runs it), never left to the model alone, since the rule that failed may be the one that
    would have seen the harm (fail closed)."""


@dataclass(frozen=True, kw_only=True)
class Effect:
    """The effect class of one call, its source and the evidence behind it."""

    effect: EffectClass
    source: EffectSource
    evidence: str
    """One line a person can check, e.g. ``"redirection > ~/.bashrc writes a dotfile"``."""
    confidence: float = 1.0
    """1.0 for rule-based sources; the classifier's probability for ``learned``."""
    details: tuple[str, ...] = field(default=())
    """Further evidence lines (every effect the shell parser found, …)."""
    needs_model: bool = False
    """The class is known, but the decision model must still judge the call: a read of a
    secret-looking path, or a web request (its URL or query carries data out)."""

    @property
    def rule_based(self) -> bool:
        """True when a rule (not the learned classifier) decided the class."""
        return self.source is not EffectSource.LEARNED

    def to_dict(self) -> dict[str, object]:
        """Plain JSON types, for verdicts and the audit log."""
        return {"effect": self.effect.value, "source": self.source.value,
                "evidence": self.evidence, "confidence": self.confidence,
                "details": list(self.details), "needs_model": self.needs_model}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Effect:
        """The inverse of :meth:`to_dict` (the verdict cache stores effects as JSON)."""
        return cls(effect=EffectClass(data["effect"]), source=EffectSource(data["source"]),
                   evidence=str(data.get("evidence", "")),
                   confidence=float(data.get("confidence", 1.0)),
                   details=tuple(str(d) for d in data.get("details", ())),
                   needs_model=bool(data.get("needs_model", False)))


SEVERITY: tuple[EffectClass, ...] = tuple(EffectClass)
"""The classes from least to most harmful (the enum's order)."""


def most_severe(classes: Iterable[EffectClass]) -> EffectClass | None:
    """The most harmful class of ``classes`` (``None`` when empty)."""
    found = list(classes)
    return max(found, key=SEVERITY.index) if found else None


def combine(findings: Iterable[tuple[EffectClass, str]], source: EffectSource) -> Effect | None:
    """One effect from several ``(class, evidence)`` findings: the most severe class, the first
    evidence of that class, every finding in ``details``; ``None`` when there are none."""
    found = list(findings)
    worst = most_severe(c for c, _e in found)
    if worst is None:
        return None
    first = next(e for c, e in found if c is worst)
    return Effect(effect=worst, source=source, evidence=first,
                  details=tuple(f"{c.value}: {e}" for c, e in found))
