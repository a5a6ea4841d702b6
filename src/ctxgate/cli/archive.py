"""`ctxgate archive ...`: list, inspect, store, pin and purge archive entries (thin over
:class:`ctxgate.archive.Archive`)."""

from __future__ import annotations

import re
from typing import Annotated

import typer

from ctxgate.app.options import LIST, SEARCH
from ctxgate.cli._options import with_options

archive_app = typer.Typer(
    name="archive", help="List, inspect, store, pin and purge archived tool outputs.",
    no_args_is_help=True, rich_markup_mode=None,
)

IdArg = Annotated[str, typer.Argument(metavar="ID", help="Archive id or unique prefix.")]
JsonOut = Annotated[bool, typer.Option("--json-output", help="Print JSON.")]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def register(app: typer.Typer) -> None:
    """Add this module's commands to the top-level app."""
    app.add_typer(archive_app)


def parse_duration(text: str) -> float:
    """``"90s"``, ``"15m"``, ``"2h"``, ``"3d"``, ``"1w"`` or plain seconds → seconds."""
    from ctxgate.errors import UsageError

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not m:
        raise UsageError(f"{text!r} is not a duration; use e.g. 90s, 15m, 2h, 3d")
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]


def _open():
    """The home's archive for one command (closed when the ``with`` block ends)."""
    from ctxgate.app.application import App

    return App().open_archive()


def _age(seconds: float) -> str:
    seconds = abs(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * 2 or (unit == "m" and seconds >= size):
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def _size(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n}B"


def _expiry(entry, now: float) -> str:
    if entry.pinned or entry.expires_at is None:
        return "pinned"
    return f"in {_age(entry.expires_at - now)}"


def _entry_dict(entry) -> dict:
    from dataclasses import asdict

    return asdict(entry)


def _print_json(value) -> None:
    import json

    typer.echo(json.dumps(value, ensure_ascii=False, sort_keys=True))


@archive_app.command("ls")
@with_options(LIST)
def ls(*, limit: int, json_output: bool) -> None:
    """List entries: id, tool, command, size, lines, age, expiry.

    Example: ctxgate archive ls --limit 5
    """
    import time

    from ctxgate.app.application import App

    entries = App().list(limit=limit)
    if json_output:
        _print_json([_entry_dict(e) for e in entries])
        return
    if not entries:
        typer.echo("(archive is empty)")
        return
    now = time.time()
    typer.echo(f"{'ID':<12}  {'TOOL':<10} {'SIZE':>8} {'LINES':>8} {'AGE':>5} {'EXPIRES':>8}  "
               "COMMAND")
    for e in entries:
        what = e.command or e.source or ""
        what = what if len(what) <= 60 else what[:59] + "…"
        typer.echo(f"{e.short_id:<12}  {(e.tool or '-')[:10]:<10} {_size(e.raw_bytes):>8} "
                   f"{e.lines:>8} {_age(now - e.created_at):>5} {_expiry(e, now):>8}  {what}")


@archive_app.command("stat")
def stat(entry_id: IdArg, json_output: JsonOut = False) -> None:
    """Show one entry's metadata, including when it expires.

    Example: ctxgate archive stat 3fa9c2e1d0a4
    """
    import time

    with _open() as archive:
        e = archive.stat(entry_id)
    if json_output:
        _print_json(_entry_dict(e))
        return
    now = time.time()
    expires = ("never (pinned)" if e.expires_at is None else
               f"in {_age(e.expires_at - now)} "
               f"({time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(e.expires_at))})")
    rows = [
        ("id", e.id), ("short id", e.short_id), ("tool", e.tool), ("command", e.command),
        ("source", e.source), ("session", e.session_id), ("exit code", e.exit_code),
        ("reason", e.reason), ("bytes", f"{e.raw_bytes} ({_size(e.raw_bytes)}), stored "
                                        f"{e.stored_bytes} compressed"),
        ("lines", e.lines), ("tokens", e.tokens.label() if e.tokens else None),
        ("redacted", f"{e.redactions} secret(s)" if e.redacted else "no"),
        ("truncated", "yes" if e.truncated else "no"), ("interrupted", e.interrupted),
        ("created", f"{_age(now - e.created_at)} ago"),
        ("last access", f"{_age(now - e.last_access)} ago"), ("expires", expires),
    ]
    for key, value in rows:
        if value is not None:
            typer.echo(f"{key + ':':<13}{value}")
    if e.extra:
        typer.echo(f"{'extra:':<13}{e.extra}")


@archive_app.command("stats")
def stats(json_output: JsonOut = False) -> None:
    """Totals: entries, bytes (raw and compressed), uncommitted uploads, pinned, disk cap, TTL.

    Example: ctxgate archive stats
    """
    from dataclasses import asdict

    with _open() as archive:
        u = archive.stats()
    if json_output:
        _print_json(asdict(u))
        return
    typer.echo(f"entries:      {u.entries} ({u.pinned} pinned)")
    typer.echo(f"raw bytes:    {u.raw_bytes} ({_size(u.raw_bytes)})")
    typer.echo(f"stored bytes: {u.stored_bytes} ({_size(u.stored_bytes)}) of cap "
               f"{u.max_disk_bytes} ({_size(u.max_disk_bytes)})")
    typer.echo(f"uploads:      {u.uploads} uncommitted, {u.upload_bytes} bytes "
               f"({_size(u.upload_bytes)}; runs in progress or killed, counted in the cap)")
    typer.echo(f"ttl:          {u.ttl_seconds} s ({_age(u.ttl_seconds)})")


@archive_app.command("purge")
def purge(
    entry_id: Annotated[str | None, typer.Argument(
        metavar="[ID]", help="Remove this one entry.", show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Remove every entry, pinned too.")] = False,
    older_than: Annotated[str | None, typer.Option(
        "--older-than", help="Remove unpinned entries created longer ago than this (90s, 15m, "
        "2h, 3d).", show_default=False)] = None,
) -> None:
    """Remove entries: all, older than a duration, or one id (exactly one of them).

    Example: ctxgate archive purge --older-than 2h
    """
    from ctxgate.errors import UsageError

    chosen = sum(x is not None and x is not False for x in (entry_id, all_ or None, older_than))
    if chosen != 1:
        raise UsageError("archive purge needs exactly one of: an ID, --all, --older-than "
                         "DURATION")
    seconds = parse_duration(older_than) if older_than is not None else None
    with _open() as archive:
        result = archive.purge(all=all_, older_than_seconds=seconds, entry_id=entry_id)
    typer.echo(f"purged {result.purged} entr{'y' if result.purged == 1 else 'ies'}")


@archive_app.command("pin")
def pin(entry_id: IdArg) -> None:
    """Keep an entry: it never expires and is never evicted.

    Example: ctxgate archive pin 3fa9c2e1d0a4
    """
    with _open() as archive:
        e = archive.pin(entry_id, True)
    typer.echo(f"pinned {e.short_id}")


@archive_app.command("unpin")
def unpin(entry_id: IdArg) -> None:
    """Let a pinned entry expire again (its TTL restarts now).

    Example: ctxgate archive unpin 3fa9c2e1d0a4
    """
    with _open() as archive:
        e = archive.pin(entry_id, False)
    typer.echo(f"unpinned {e.short_id} (expires in {_age(archive.policy.ttl_seconds)})")


@archive_app.command("rm")
def rm(entry_id: IdArg) -> None:
    """Delete one entry.

    Example: ctxgate archive rm 3fa9c2e1d0a4
    """
    with _open() as archive:
        e = archive.delete(entry_id)
    typer.echo(f"removed {e.short_id}")


@archive_app.command("put")
def put(
    tool: Annotated[str | None, typer.Option("--tool", help="Tool name to record.",
                                             show_default=False)] = None,
    command: Annotated[str | None, typer.Option("--command", help="Command line to record.",
                                                show_default=False)] = None,
    source: Annotated[str | None, typer.Option("--source", help="Other origin to record.",
                                               show_default=False)] = None,
    session: Annotated[str | None, typer.Option("--session", help="Session or run id.",
                                                show_default=False)] = None,
    exit_code: Annotated[int | None, typer.Option("--exit-code", help="Exit status to record.",
                                                  show_default=False)] = None,
    json_output: JsonOut = False,
) -> None:
    """Store stdin (streamed, constant memory) and print its id.

    Example: make test 2>&1 | ctxgate archive put --tool shell --command 'make test'
    """
    import sys

    from ctxgate.archive.entry import EntryMeta

    meta = EntryMeta(tool=tool, command=command, source=source, session_id=session,
                     exit_code=exit_code)
    with _open() as archive:
        e = archive.put_stream(sys.stdin.buffer, meta)
    if json_output:
        _print_json(_entry_dict(e))
        return
    red = f", {e.redactions} secret(s) redacted" if e.redacted else ""
    typer.echo(f"{e.short_id} {e.raw_bytes} bytes, {e.lines} lines{red}")


@archive_app.command("verify")
def verify(entry_id: IdArg) -> None:
    """Re-hash an entry against its id (exit 1 on corruption).

    Example: ctxgate archive verify 3fa9c2e1d0a4
    """
    with _open() as archive:
        e = archive.verify(entry_id)
    typer.echo(f"ok {e.short_id} {e.raw_bytes} bytes")


@archive_app.command("search")
@with_options(SEARCH)
def search_cmd(*, query: list[str], limit: int, json_output: bool) -> None:
    """Search every archived output for lines holding all the words (case-insensitive).

    Each match names its entry id and line number; show it in context with
    `ctxgate expand ID --lines A:B`.

    Example: ctxgate archive search connection refused --limit 5
    """
    from ctxgate.app.application import App
    from ctxgate.archive.search import render_search

    result = App().search(" ".join(query), limit=limit)
    if json_output:
        _print_json({"query": result.query, "more": result.more, "method": result.method,
                     "entries_searched": result.entries_searched,
                     "entries_total": result.entries_total, "notes": list(result.notes),
                     "hits": [{"id": h.entry_id, "short_id": h.short_id, "line": h.line,
                               "text": h.text} for h in result.hits]})
        return
    typer.echo(render_search(result, cli=True), nl=False)
