"""bound package."""
