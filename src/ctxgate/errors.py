"""The one exception tree of ctxgate.

Every error ctxgate raises derives from :class:`CtxgateError`, so a caller can catch
"anything from ctxgate" in one clause. Caller mistakes (:class:`UsageError`) are kept apart
from runtime failures, because the CLI maps them to different exit codes (2 and 1)::

    CtxgateError
    ├── UsageError                  bad selector, invalid regex, bad configuration (exit 2)
    │   └── ConfigError             invalid settings, raised when the configuration is built
    ├── ArchiveError                the archive could not do what was asked (exit 1)
    │   ├── EntryNotFound           unknown or expired id (exit 2 from `expand`)
    │   ├── AmbiguousId             a prefix that matches several entries (exit 2)
    │   ├── IntegrityError          stored bytes do not hash to their id
    │   └── StoreUnavailable        the backend (SQLite file, Redis) cannot be reached
    │       └── UploadLost          an upload's chunks were swept before it committed
    ├── FirewallError               running or digesting a tool output failed
    ├── GateError                   the tool gate could not be built or run
    │   └── DecisionModelError      a decision backend failed (the gate turns it into a deny)
    │       ├── DecisionTimeout     the backend chain did not answer within its deadline
    │       ├── MalformedAnswer     missing, NaN, out-of-range or unparseable answer
    │       │   └── DecisionRefused the model explicitly refused to answer (ends a fallback chain)
    │       └── RequestTooLarge     the request exceeds the backend's limits (never sent)
    │   └── ToolDenied              a gated Python tool was not run; carries the verdict
    └── BoundError                  a record could not be bounded
        └── RecordBoundError        refused: an overflow that cutting tool output cannot cure

Errors carry fields (id, pointer, limit, actual, unit) and their ``str()`` says what went wrong,
shows the offending value where it is safe to, and says what to do next.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousId",
    "ArchiveError",
    "BoundError",
    "ConfigError",
    "CtxgateError",
    "DecisionModelError",
    "DecisionRefused",
    "DecisionTimeout",
    "EntryNotFound",
    "FirewallError",
    "GateError",
    "IntegrityError",
    "MalformedAnswer",
    "RecordBoundError",
    "RequestTooLarge",
    "StoreUnavailable",
    "ToolDenied",
    "UploadLost",
    "UsageError",
]


class CtxgateError(Exception):
    """Root of every error ctxgate raises."""

    @property
    def exit_code(self) -> int:
        """The CLI exit status for this error (one table: :data:`ctxgate.app.errors.ERROR_TABLE`)."""
        from ctxgate.app.errors import exit_code

        return exit_code(self)


class UsageError(CtxgateError):
    """The caller asked for something invalid (bad selector, regex, option value)."""


class ConfigError(UsageError):
    """Invalid configuration, detected when settings or policies are built."""


class ArchiveError(CtxgateError):
    """The archive could not complete an operation."""


class EntryNotFound(ArchiveError):
    """No entry for an id: unknown, expired, purged or evicted."""

    def __init__(self, message: str, *, entry_id: str = "", recent: list[str] | None = None):
        super().__init__(message)
        self.entry_id = entry_id
        self.recent = recent or []


class AmbiguousId(ArchiveError):
    """An id prefix matches more than one entry."""

    def __init__(self, message: str, *, entry_id: str = "", candidates: list[str] | None = None):
        super().__init__(message)
        self.entry_id = entry_id
        self.candidates = candidates or []


class IntegrityError(ArchiveError):
    """Stored content does not hash to its id (corruption); nothing is returned."""


class StoreUnavailable(ArchiveError):
    """The archive backend cannot be reached, opened or written.

    ``why`` is the cause in a few words (``"archive.db is not a SQLite database"``) and
    ``fix`` what to do about it; both are shown to the model when a run goes on without
    the archive.
    """

    def __init__(self, message: str, *, why: str = "", fix: str = ""):
        super().__init__(message)
        self.why = why or message
        self.fix = fix


class UploadLost(StoreUnavailable):
    """An upload's chunks were swept (its lease lapsed) before it committed; nothing is stored."""


class FirewallError(CtxgateError):
    """Running a tool through the firewall, or digesting its output, failed."""


class GateError(CtxgateError):
    """The tool gate could not be built or run."""


class DecisionModelError(GateError):
    """A decision backend failed; the gate turns this into a deny verdict."""


class DecisionTimeout(DecisionModelError):
    """The decision backend chain did not answer within its deadline."""


class MalformedAnswer(DecisionModelError):
    """An answer was missing, of the wrong kind, NaN or outside [0, 1]."""


class RequestTooLarge(DecisionModelError):
    """The request exceeds a backend's limits; it was not sent."""


class BoundError(CtxgateError):
    """A record could not be bounded."""


class RecordBoundError(BoundError):
    """A record was refused: its overflow is not in tool output, or it breaks a structural limit.

    Attributes:
        code: stable machine-readable code (for example ``"record_too_large"``).
        rule: the rule that failed (``"max_bytes"``, ``"max_depth"`` ...).
        path: JSON pointer (RFC 6901) of the offending node, ``""`` for the root.
        observed: the measured value (bytes, nodes, depth ... as ``unit`` says).
        limit: the configured limit in the same unit.
        unit: the unit of ``observed`` and ``limit``.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        rule: str,
        path: str,
        observed: int,
        limit: int,
        unit: str,
    ):
        super().__init__(message)
        self.code = code
        self.rule = rule
        self.path = path
        self.observed = observed
        self.limit = limit
        self.unit = unit

    def to_dict(self) -> dict[str, object]:
        """The structured form of this error (never contains the offending value)."""
        return {
            "code": self.code,
            "rule": self.rule,
            "path": self.path,
            "observed": self.observed,
            "limit": self.limit,
            "unit": self.unit,
            "message": str(self),
        }


class ToolDenied(GateError):
    """A gated Python tool was not run: the gate denied it (or it awaits approval).

    ``str()`` is the gate's reason, written for the model; ``verdict`` is the full
    :class:`ctxgate.gate.Verdict`.
    """

    def __init__(self, message: str, *, verdict: object = None):
        super().__init__(message)
        self.verdict = verdict


class DecisionRefused(MalformedAnswer):
    """The decision model explicitly refused to answer (a refusal field, a content filter).

    A fallback chain never passes a refused request on to its next member.
    """
