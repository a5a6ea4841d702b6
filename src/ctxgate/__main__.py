"""``python -m ctxgate``."""

from ctxgate.cli import main

main()
