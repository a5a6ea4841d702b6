"""integrations package."""
