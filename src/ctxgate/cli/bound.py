"""`ctxgate bound` commands (thin over :meth:`ctxgate.app.App.bound`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the top-level app."""
    app.command("bound")(bound)


def bound(
    file: Annotated[Path | None, typer.Argument(
        help="JSON record to bound; stdin when omitted or '-'.", show_default=False)] = None,
    max_bytes: Annotated[int | None, typer.Option(
        "--max-bytes", help="Bound in UTF-8 bytes of the compact JSON [default: bound.max_bytes, 1048576].",
        show_default=False)] = None,
    strategy: Annotated[str | None, typer.Option(
        "--strategy", help="level (water-filling) or widest (widest result first).",
        show_default=False)] = None,
    archive: Annotated[bool | None, typer.Option(
        "--archive/--no-archive", help="Store each cut result's full original in the archive "
        "[default: bound.archive, on].", show_default=False)] = None,
    report: Annotated[bool, typer.Option(
        "--report", help="Print what was cut as JSON on stderr.")] = False,
) -> None:
    """Fit a JSON record into its byte bound by cutting only tool output; print it compact.

    On refusal exit 1 with the structured error as JSON on stderr.

    Example: ctxgate bound turn.json --max-bytes 1048576 --report > bounded.json
    """
    import json
    import sys

    from ctxgate.app.application import App
    from ctxgate.app.errors import exit_code
    from ctxgate.bound import emit_bytes
    from ctxgate.errors import RecordBoundError, UsageError

    app = App(settings={"bound": {"max_bytes": max_bytes, "strategy": strategy,
                                  "archive": archive}})
    config = app.config
    if file is None or str(file) == "-":
        data = sys.stdin.buffer.read()
        source = "stdin"
    else:
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {file}: {exc.strerror}; pass a readable JSON file "
                             "or pipe the record on stdin") from exc
        source = str(file)
    try:
        record = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{source} is not a JSON document ({exc}); pass one JSON record "
                         "(UTF-8)") from exc

    store = None
    if config.bound.archive:
        try:
            store = app.archive
        except Exception as exc:  # noqa: BLE001 - a broken archive never fails the bound
            typer.echo(f"ctxgate bound: warning: the archive cannot be opened "
                       f"({type(exc).__name__}: {exc}); cutting without storing originals "
                       "(markers say the full original was not stored)", err=True)
    try:
        result = app.bound(record, archive=store)
    except RecordBoundError as exc:
        typer.echo(json.dumps(exc.to_dict(), ensure_ascii=False), err=True)
        raise typer.Exit(exit_code(exc)) from None
    finally:
        app.close()
    failed = [c for c in result.cuts if c.archive_error]
    if failed:
        typer.echo(f"ctxgate bound: warning: {len(failed)} of {len(result.cuts)} cut originals "
                   f"were not stored ({failed[0].archive_error}); their markers say the full "
                   "original was not stored", err=True)
    # bytes go to the binary stream untouched (typer.echo passes bytes through)
    typer.echo(emit_bytes(result.record))
    if report:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False), err=True)
