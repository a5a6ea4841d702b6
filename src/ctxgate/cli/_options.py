"""Options shared by several commands, the typer side of :mod:`ctxgate.app.options`, and the
one helper that builds the Config."""

from __future__ import annotations

from typing import Annotated, Any

import typer

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def apply_install_plan(change: Any, text: str, write_plan: Any, *, write: bool,
                       uninstall: bool, what: str, verb: str) -> bool:
    """The shared ending of ``hook install`` and ``mcp install``: without ``--write``, say
    where and print ``text`` (the file as it would be); with it, write through ``write_plan``
    (backup beside the file) and say what happened. ``what`` names the entries ("ctxgate's
    hooks"), ``verb`` the install action ("merge into"). True when the file was written."""
    import sys

    path = change.path
    if not write:
        action = f"remove {what} from" if uninstall else verb
        sys.stderr.write(f"ctxgate: would {action} {path} (run again with --write):\n")
        sys.stdout.write(text)
        return False
    backup = write_plan(change)
    if not change.changes:
        typer.echo(f"{path}: already {'without' if uninstall else 'with'} {what}; "
                   "nothing written")
        return False
    typer.echo(f"wrote {path}" + (f" (previous version: {backup})" if backup else ""))
    return True


def build_config(**sections: dict[str, Any]):  # -> ctxgate.settings.Config
    """Load the configuration with CLI flag overrides (``None`` values are ignored)."""
    from ctxgate.settings import load_config

    return load_config(sections)


def typer_parameters(command: Any) -> list[Any]:
    """The typer parameters of a :class:`ctxgate.app.options.Command`, in its order (an
    ``inspect.Parameter`` per option, annotated with its ``typer.Option``/``Argument``)."""
    import inspect

    params = []
    for opt in command.options:
        if not opt.cli:
            continue
        kind: Any = list[opt.kind] if opt.many else opt.kind
        if opt.remainder:  # optional: every word left (after `--`)
            info: Any = typer.Argument(metavar=opt.metavar, help=opt.help, show_default=False)
            default: Any = None
            kind = kind | None
        elif opt.positional:
            info = typer.Argument(metavar=opt.metavar, help=opt.help)
            default = inspect.Parameter.empty
        else:
            flags = (f"{opt.flags[0]}/{opt.negation}", *opt.flags[1:]) if opt.negation \
                else opt.flags
            info = typer.Option(*flags, help=opt.help,
                                show_default=opt.default is not None)
            default = opt.default
            if opt.default is None:
                kind = kind | None
        params.append(inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=default, annotation=Annotated[kind, info]))
    return params


def with_options(command: Any) -> Any:
    """Decorate ``def f(**values)`` so that typer reads its parameters from ``command``
    (:mod:`ctxgate.app.options`): the options are declared once, not in the signature."""
    import inspect

    def decorate(fn: Any) -> Any:
        params = typer_parameters(command)
        fn.__signature__ = inspect.Signature(params, return_annotation=None)
        fn.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
        return fn

    return decorate
