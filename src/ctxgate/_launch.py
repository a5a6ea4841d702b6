"""Start the ``ctxgate`` command line from its file path, without the ``site`` module.

``python -S /path/to/ctxgate/_launch.py hook pre`` is what ``ctxgate hook install`` writes:
a hook process starts once per tool call, and ``site`` (site-packages and every ``.pth`` file in
them) can cost more than the rest of a daemon-answered hook. This file puts its package's
parent directory first on ``sys.path`` (instead of its own directory) and runs
:func:`ctxgate.cli.main` (``run`` first tries :func:`ctxgate.firewall.passthrough.quick_run`,
which is what the hooks rewrite shell commands into); whatever needs the installed packages (the in-process fallback, typer
for ``--help``) loads ``site`` first (:func:`ensure_site`).
"""

from __future__ import annotations

import os
import sys

__all__ = ["ensure_site"]


def ensure_site() -> None:
    """Load ``site`` (site-packages, ``.pth`` files) if the interpreter was started with -S."""
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()


if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if sys.argv[1:2] == ["run"]:  # the hooks' wrapper: small outputs never load the CLI
        from ctxgate.firewall.passthrough import quick_run

        code = quick_run(sys.argv[2:])
        if code is not None:
            sys.exit(code)
    if sys.argv[1:3] == ["hook", "post"] and not {"--help", "-h"} & set(sys.argv[3:]):
        import io

        from ctxgate.integrations.hooks.wrapped import skip_post

        raw = sys.stdin.buffer.read()
        if skip_post(raw):  # its `ctxgate run` already digested and archived the output
            sys.exit(0)
        sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    from ctxgate.cli import main

    main()
