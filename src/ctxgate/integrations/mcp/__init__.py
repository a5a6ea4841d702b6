"""MCP integration ([mcp] extra): a ctxgate server (run + expand) and a gating, digesting proxy.

``ctxgate mcp serve`` exposes ``run`` and ``expand``; ``ctxgate mcp proxy -- CMD ...`` sits in
front of any stdio MCP server. Both gate each call before it runs and put each result through
the firewall; the logic is the core's, these modules only translate MCP messages.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the MCP integration needs the mcp package: pip install 'ctxgate[mcp]'"
    ) from exc
