"""Firewall configuration values: thresholds, tool classes, dataset commands, digest budget.

Every size names its unit: UTF-8 bytes, tokens of the named tokenizer, or lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxgate.errors import ConfigError

__all__ = ["DEFAULT_FIREWALL_POLICY", "MIN_DIGEST_BYTES", "REDACT_VERBATIM_MODES", "FirewallPolicy"]

MIN_DIGEST_BYTES = 1_024
"""Smallest accepted ``digest_max_bytes``: the header and drill-down lines need about 700 bytes."""
REDACT_VERBATIM_MODES = ("all", "except_reads", "none")
"""Values of ``redact_verbatim``."""


@dataclass(frozen=True, kw_only=True)
class FirewallPolicy:
    """When a tool output is digested, and how large the digest may be."""

    enabled: bool = True
    """Master switch; when off every output is returned verbatim (and still archived)."""
    min_tokens: int = 2_000
    """Outputs of at least this many tokens (inclusive) are digested."""
    tokenizer: str = "o200k_base"
    """Tokenizer for ``min_tokens``; ``"estimate"`` uses UTF-8 bytes / 4, labelled as such."""
    inline_max_bytes: int = 32_768
    """Explicitly requested inline results are verbatim up to this many UTF-8 bytes."""
    verbatim_max_tokens: int = 25_000
    """Implicit verbatim (dataset, inline, bare ``cat FILE``) still becomes a digest at this many
    tokens or more; ``0`` disables the ceiling. Explicit raw is never capped. 25,000 is what a
    harness lets one read bring in (Claude Code's Read tool stops at about 25,000 tokens)."""
    digest_max_bytes: int = 6_000
    """Hard budget of a digest, UTF-8 bytes; no input shape exceeds it."""
    firewallable_tools: tuple[str, ...] = (
        "shell", "bash", "execute", "exec", "run", "search", "grep", "tree", "ls", "mcp",
    )
    """Tool names whose large outputs are digested (``mcp`` and ``mcp__*`` match MCP results)."""
    protected_read_tools: tuple[str, ...] = (
        "read", "read_file", "view", "cat_file", "read_text_file", "read_multiple_files",
        "read_media_file", "notebookread",
    )
    """Explicit file-read tools: never digested, never replaced by a stub. An MCP tool
    ``mcp__server__NAME`` is one when ``NAME`` is listed."""
    dataset_commands: tuple[str, ...] = ("sqlite3", "psql", "duckdb", "jq", "mysql", "yq", "gh")
    """Programs whose stdout is a dataset (``gh`` only with ``--json``/``--jq``); ``()`` disables."""
    line_selectors: bool = True
    """Treat explicit line selections (``sed -n 'A,Bp'``, ``head -n N``/``tail -n N`` at the end
    of a pipeline, ``awk 'NR==…'``) and a bare ``cat FILE`` as already-narrowed output:
    verbatim up to ``verbatim_max_tokens`` like dataset commands."""
    digest_head_lines: int = 20
    """Lines shown from the start of a digested output (fewer when the byte budget is tight)."""
    digest_tail_lines: int = 10
    """Lines shown from the end of a digested output."""
    digest_line_max_bytes: int = 240
    """Each excerpt line is cut to this many UTF-8 bytes, with its own ``…[+N bytes]`` marker."""
    digest_error_lines: int = 12
    """Most "lines that matter" (errors, failures, tracebacks, warnings) listed from the
    omitted range; the digest says how many more there are."""
    long_line_bytes: int = 4_096
    """A longest line of at least this many UTF-8 bytes triggers the paging warning."""
    json_preview_max_bytes: int = 8_388_608
    """Whole-output JSON/JSON Lines previews are built for outputs up to this many bytes."""
    redact_verbatim: str = "except_reads"
    """Which outputs shown whole (below the threshold) get the archive's secret redaction too:
    ``"all"``, ``"except_reads"`` (not explicit file reads: bare ``cat FILE`` and line
    selections, whose exact bytes an agent may edit) or ``"none"``. Digests are always redacted."""

    def __post_init__(self) -> None:
        if self.redact_verbatim not in REDACT_VERBATIM_MODES:
            raise ConfigError(
                f"invalid [firewall] redact_verbatim={self.redact_verbatim!r}; use one of "
                + ", ".join(repr(m) for m in REDACT_VERBATIM_MODES))
        checks = {
            "min_tokens": self.min_tokens >= 0,
            "inline_max_bytes": self.inline_max_bytes >= 0,
            "verbatim_max_tokens": self.verbatim_max_tokens >= 0,
            "digest_max_bytes": self.digest_max_bytes >= MIN_DIGEST_BYTES,
            "digest_head_lines": self.digest_head_lines >= 0,
            "digest_tail_lines": self.digest_tail_lines >= 0,
            "digest_line_max_bytes": self.digest_line_max_bytes >= 16,
            "digest_error_lines": self.digest_error_lines >= 0,
            "long_line_bytes": self.long_line_bytes >= 64,
            "json_preview_max_bytes": self.json_preview_max_bytes >= 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            values = ", ".join(f"{k}={getattr(self, k)!r}" for k in bad)
            raise ConfigError(
                f"invalid [firewall] setting(s): {values}; sizes must be >= 0, "
                f"digest_max_bytes >= {MIN_DIGEST_BYTES}, digest_line_max_bytes >= 16, "
                "long_line_bytes >= 64"
            )


DEFAULT_FIREWALL_POLICY = FirewallPolicy()
