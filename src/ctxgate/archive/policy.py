"""Archive configuration values: retention, redaction, storage and view budgets (frozen, with units)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_ARCHIVE_POLICY", "ArchivePolicy"]

HOUR = 3600


@dataclass(frozen=True, kw_only=True)
class ArchivePolicy:
    """How the archive stores, keeps and shows entries."""

    backend: str = "sqlite"
    """Store backend: ``"sqlite"`` (embedded default), ``"memory"`` or ``"redis"`` (shared by
    several hosts; ``pip install 'ctxgate[redis]'``)."""
    redis_url: str = "redis://127.0.0.1:6379/0"
    """Redis URL when ``backend == "redis"`` (the shared archive of several hosts)."""
    redis_prefix: str = "ctxgate:"
    """Key prefix of the Redis archive (several archives can share one database)."""
    ttl_seconds: int = 48 * HOUR
    """Time to live of an entry in seconds, refreshed on read and re-store."""
    max_disk_bytes: int = 500_000_000
    """Disk cap of stored (compressed) bytes; least-recently-used entries are evicted past it."""
    redact: bool = True
    """Redact secrets (keys, tokens, private keys, passwords) before storage."""
    extra_redact_patterns: tuple[str, ...] = ()
    """Additional regular expressions whose matches are redacted."""
    expand_max_tokens: int = 4_000
    """Token budget of one ``expand`` view (o200k_base, or an estimate); the view pages past it."""
    tokenizer: str = "o200k_base"
    """Tokenizer named in token counts; ``"estimate"`` counts from bytes."""
    chunk_bytes: int = 1_048_576
    """Raw bytes per stored chunk (a slice decompresses only the chunks it touches)."""
    compression_level: int = 1
    """zstd level of stored chunks (1 = fastest of the normal levels; up to 19)."""
    exact_tokens_max_bytes: int = 65_536
    """Entries up to this many bytes get an exact token count (the shipped tokenizer is pure
    Python, ~2 MB/s); larger ones, and text with very long runs without whitespace, a labelled
    estimate."""
    grep_max_matches: int = 200
    """Matching lines shown by ``--grep`` when ``--max-matches`` is not given (the total is
    always counted)."""
    grep_timeout_seconds: float = 20.0
    """Wall-time limit of one ``--grep`` scan, seconds (a regex that backtracks is stopped)."""
    json_max_bytes: int = 64 * 1_048_576
    """Largest single JSON document ``--json``/``--keys`` parse, bytes (JSON Lines: per line)."""
    touch_interval_seconds: float = 60.0
    """Reads refresh an entry's expiry at most this often, seconds (fewer write transactions)."""
    upload_lease_seconds: float = 300.0
    """Lease of an upload in progress, seconds: its writer refreshes it every tenth of this
    (at most every 30 s) while the command runs; an upload not refreshed for this long is from a
    crashed or killed writer, and the next store reclaims its chunks."""


    def __post_init__(self) -> None:
        from ctxgate.errors import ConfigError

        checks = [
            ("ttl_seconds", self.ttl_seconds >= 0, ">= 0"),
            ("max_disk_bytes", self.max_disk_bytes >= 0, ">= 0"),
            ("expand_max_tokens", self.expand_max_tokens >= 100, ">= 100"),
            ("chunk_bytes", 64 <= self.chunk_bytes <= 64 * 1_048_576, "between 64 and 67108864"),
            ("compression_level", -7 <= self.compression_level <= 22, "between -7 and 22"),
            ("exact_tokens_max_bytes", self.exact_tokens_max_bytes >= 0, ">= 0"),
            ("grep_max_matches", self.grep_max_matches >= 1, ">= 1"),
            ("grep_timeout_seconds", self.grep_timeout_seconds > 0, "> 0"),
            ("json_max_bytes", self.json_max_bytes >= 1, ">= 1"),
            ("touch_interval_seconds", self.touch_interval_seconds >= 0, ">= 0"),
            ("upload_lease_seconds", self.upload_lease_seconds >= 1, ">= 1"),
        ]
        for name, ok, want in checks:
            if not ok:
                raise ConfigError(f"archive.{name} must be {want}, got {getattr(self, name)!r}")


DEFAULT_ARCHIVE_POLICY = ArchivePolicy()
