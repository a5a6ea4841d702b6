"""gate package."""
