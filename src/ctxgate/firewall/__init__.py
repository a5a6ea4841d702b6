"""firewall package."""
