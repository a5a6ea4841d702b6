"""The ``[daemon]`` settings: whether hooks use the warm decision daemon, and when it exits."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_DAEMON_POLICY", "DaemonPolicy"]


@dataclass(frozen=True, kw_only=True)
class DaemonPolicy:
    """How the per-user decision daemon behaves (see :mod:`ctxgate.gate.daemon`)."""

    enabled: bool = True
    """Hooks ask a warm daemon (started on demand) instead of loading the gate themselves;
    ``false`` makes every hook decide in-process (``CTXGATE_NO_DAEMON=1`` does too)."""
    idle_seconds: float = 600.0
    """The daemon exits after this many seconds without a request."""
    preload: bool = True
    """Load the decision model as soon as the daemon starts (not at its first model call)."""

    def __post_init__(self) -> None:
        from ctxgate.errors import ConfigError

        if not 1.0 <= self.idle_seconds <= 86_400.0:
            raise ConfigError(f"daemon.idle_seconds must be between 1 and 86400, got "
                              f"{self.idle_seconds!r}")


DEFAULT_DAEMON_POLICY = DaemonPolicy()
