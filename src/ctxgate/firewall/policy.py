"""Firewall configuration values: thresholds, tool classes, dataset commands, digest budget."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_FIREWALL_POLICY", "FirewallPolicy"]


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
    verbatim_max_tokens: int = 100_000
    """Implicit verbatim (dataset, inline) still becomes a digest above this many tokens."""
    digest_max_bytes: int = 6_000
    """Hard budget of a digest, UTF-8 bytes; no input shape exceeds it."""
    firewallable_tools: tuple[str, ...] = (
        "shell", "bash", "execute", "exec", "run", "search", "grep", "tree", "ls", "mcp",
    )
    """Tool names whose large outputs are digested (``mcp`` and ``mcp__*`` match MCP results)."""
    protected_read_tools: tuple[str, ...] = ("read", "read_file", "view", "cat_file")
    """Explicit file-read tools: never digested, never replaced by a stub."""
    dataset_commands: tuple[str, ...] = ("sqlite3", "psql", "duckdb", "jq", "mysql", "yq", "gh")
    """Programs whose stdout is a dataset (``gh`` only with ``--json``/``--jq``); ``()`` disables."""


DEFAULT_FIREWALL_POLICY = FirewallPolicy()
