"""`ctxgate read PATH`: one page of a text file, never digested (the MCP ``read`` tool's twin)."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add ``read`` to the top-level app."""
    app.command("read")(read)


def read(
    path: Annotated[str, typer.Argument(metavar="PATH", help="The text file to read.")],
    lines: Annotated[str | None, typer.Option(
        "--lines", "-n", help="A:B, 1-based inclusive; A: or -N: to the end.")] = None,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", help="Page ceiling in o200k_base tokens (default: "
                             "[firewall] verbatim_max_tokens, 25,000).")] = None,
) -> None:
    """Print a page of a text file as it is, under a token ceiling, with the next page's lines.

    Example: ctxgate read src/app.py --lines 120:200
    """
    import sys

    from ctxgate.cli._options import build_config
    from ctxgate.firewall.fileread import read_file

    config = build_config()
    view = read_file(path, lines=lines,
                     max_tokens=max_tokens or config.firewall.verbatim_max_tokens,
                     tokenizer=config.firewall.tokenizer, tool="read", cli=True)
    sys.stdout.buffer.write(view.text.encode("utf-8"))
    sys.stdout.flush()
