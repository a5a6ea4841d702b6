"""One output through the firewall: archive first, scan and meter on the way, then decide.

:class:`OutputPipeline` is fed the output chunk by chunk. Each chunk is redacted once (the
archive's secret patterns, streaming) and the redacted bytes go to the archive writer, the
streaming scanner and the token meter, so nothing is held but the scanner's bounded buffers,
and the digest, built from the scan, shows exactly the bytes the archive stores: no secret,
and the same line numbers (redaction never removes a newline). The command line and the notes
shown in the digest header are redacted too. :meth:`OutputPipeline.finish` makes the one decision, commits the archive
entry with its reason, and renders the digest or returns the verbatim text.
:func:`firewall` does the same for an output the caller already has.

The archive never stops an output from reaching the model. When it could not be opened (an
archive over :class:`~ctxgate.archive.failure.UnavailableStore`) or fails while storing (disk
full, a locked or corrupt file, an upload swept), the pipeline keeps scanning and metering, drops the
partial upload, and :meth:`OutputPipeline.finish` renders the digest (or the verbatim output
when the scanner kept all of it) with the note ``not archived (<why>; fix: <what to do>)`` and
how many bytes it leaves out. Nothing is spooled elsewhere: a full disk or a read-only home
would fail a spool file too, so the bounded view is all that is kept, and it says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxgate.firewall.commands import CommandClass, classify_command
from ctxgate.firewall.decide import Decision, decide
from ctxgate.firewall.meter import TokenMeter
from ctxgate.firewall.policy import DEFAULT_FIREWALL_POLICY, FirewallPolicy
from ctxgate.firewall.scan import OutputScanner
from ctxgate.tokens import MAX_TOKEN_BYTES, TokenCount

if TYPE_CHECKING:
    from ctxgate.archive import Archive, Entry
    from ctxgate.archive.failure import StoreFailure
    from ctxgate.firewall.digest import Digest

__all__ = ["FirewallResult", "OutputPipeline", "firewall"]

_FEED_BYTES = 1 << 20
_TUNE_AFTER_BYTES = 4 << 20
"""Past this many output bytes the allocator is tuned (:mod:`ctxgate.firewall.memtune`)."""


@dataclass(frozen=True, kw_only=True)
class FirewallResult:
    """What the firewall made of one output."""

    text: str | None
    """What the model gets: the digest, or the verbatim output (None when it was already
    streamed live, as for ``run --raw``)."""
    decision: Decision
    entry: Entry | None
    """The archive entry (None only for empty output)."""
    digest: Digest | None = None
    output_bytes: int = 0
    """Size of the output, bytes as produced (before redaction)."""
    output_lines: int = 0
    tokens: TokenCount | None = None
    """Tokens of the output: exact when fully counted, else a labelled estimate."""
    tokens_text: str = ""
    """Human token description (``">=2,000 tokens (o200k_base, counting stopped) · ~…"``)."""
    notes: tuple[str, ...] = ()
    data: bytes | None = field(default=None, repr=False)
    """The verbatim output as bytes, exactly as produced, when it was kept in memory."""

    @property
    def archive_id(self) -> str | None:
        """The short archive id shown to models."""
        return self.entry.short_id if self.entry is not None else None

    @property
    def reason(self) -> str:
        return self.decision.reason

    @property
    def digested(self) -> bool:
        return self.decision.digest

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the text)."""
        return {
            "reason": self.decision.reason, "digest": self.decision.digest,
            "detail": self.decision.detail, "archive_id": self.archive_id,
            "output_bytes": self.output_bytes, "output_lines": self.output_lines,
            "tokens": self.tokens_text,
            "digest_bytes": self.digest.size_bytes if self.digest else None,
            "notes": list(self.notes),
        }


@dataclass
class OutputPipeline:
    """Feed an output in chunks, then :meth:`finish`. See the module docstring."""

    archive: Archive
    tool: str
    policy: FirewallPolicy = DEFAULT_FIREWALL_POLICY
    command: str | None = None
    raw: bool = False
    inline: bool = False
    source: str | None = None
    session_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    expand_tool: str = "expand"

    def __post_init__(self) -> None:
        from ctxgate.archive import EntryMeta

        p = self.policy
        self.command_class: CommandClass = classify_command(
            self.command, p.dataset_commands, line_selectors=p.line_selectors)
        implicit = bool(self.command_class) or self.inline
        limit = max(p.min_tokens, p.verbatim_max_tokens if implicit else 0)
        # tokens are counted only where bytes cannot decide: outputs of min_tokens to
        # limit * MAX_TOKEN_BYTES bytes (never for bytes the model will not see whole)
        self.meter = TokenMeter(p.tokenizer, limit, defer_bytes=p.min_tokens,
                                hold_bytes=limit * MAX_TOKEN_BYTES)
        from ctxgate.firewall.scanproc import ScanSink

        self.scanner = ScanSink(OutputScanner(  # a large output is scanned on the other core
            keep_bytes=max(p.json_preview_max_bytes, p.min_tokens * MAX_TOKEN_BYTES,
                           p.inline_max_bytes if self.inline else 0),
            long_line_bytes=p.long_line_bytes, line_max_bytes=p.digest_line_max_bytes,
        ))
        self._meta = EntryMeta(tool=self.tool, command=self.command, source=self.source,
                               session_id=self.session_id, extra=dict(self.extra))
        self._redactor = self.archive.new_redactor()
        self._raw_bytes = 0
        self._tuned = False
        self._shown_redacted = self._redactor is not None and (
            p.redact_verbatim == "all" or (p.redact_verbatim == "except_reads" and
                                           self.command_class.kind not in ("file_read",
                                                                           "line_selection")))
        """An output shown whole is shown redacted (``policy.redact_verbatim``)."""
        self._raw_prefix = (bytearray() if self._redactor is not None
                            and not self._shown_redacted else None)
        """The first bytes as produced, kept only when an output shown whole is shown
        unredacted while the scanner sees redacted bytes; otherwise what is shown whole is the
        scanner's own prefix."""
        self._store_error: StoreFailure | None = None
        """Why the archive could not store the output; the run goes on without it."""
        self._writer: Any = None
        try:
            self._writer = self.archive.writer(self._meta, redacted_by=self._redactor,
                                              background_flush=True)
        except Exception as exc:  # noqa: BLE001 - the run goes on without the archive
            self._fail(exc)
        self._finished: FirewallResult | None = None

    def _fail(self, exc: BaseException) -> None:
        """The store failed: remember why, drop what was uploaded (best effort)."""
        from ctxgate.archive.failure import describe_failure

        self._store_error = describe_failure(exc)
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.abort()
            except Exception:  # noqa: BLE001, S110 - the lease sweep reclaims it later
                pass

    @property
    def store_failure(self) -> StoreFailure | None:
        """Why this output is not (going to be) archived, or None."""
        return self._store_error

    def feed(self, data: bytes) -> None:
        """Add a chunk of output (redacted, then archived, scanned and metered)."""
        if not data:
            return
        self._raw_bytes += len(data)
        if self._raw_bytes > _TUNE_AFTER_BYTES and not self._tuned:
            from ctxgate.firewall.memtune import keep_heap

            self._tuned = True
            keep_heap()  # large output: reuse freed 1 MiB blocks (no page faults per block)
        if self._raw_prefix is not None:
            room = self.scanner.keep_bytes - len(self._raw_prefix)
            if room > 0:
                self._raw_prefix += data[:room]
        if self._redactor is not None:
            data = self._redactor.feed(data)
        self._consume(data)

    def _consume(self, data: bytes) -> None:
        if not data:
            return
        if self._writer is not None:
            try:
                self._writer.write(data)
            except Exception as exc:  # noqa: BLE001 - the store failed (disk full, locked)
                self._fail(exc)
        self.scanner.feed(data)
        self.meter.feed(data)

    def tick(self) -> None:
        """Keep the upload's lease alive while the command runs (call every few seconds)."""
        if self._writer is not None:
            try:
                self._writer.heartbeat()
            except Exception as exc:  # noqa: BLE001 - swept or store gone: not archived
                self._fail(exc)

    def finish(self, *, exit_code: int | None = None, notes: tuple[str, ...] = (),
               truncated: bool = False, verbatim: bytes | None = None,
               streamed: bool = False, interrupted: str | None = None) -> FirewallResult:
        """Decide, commit the archive entry with the reason, and render the result.

        Args:
            exit_code: the producing command's exit status, when there is one.
            notes: header notes (``"killed after the 5 s timeout"``), also recorded.
            truncated: the output was cut before its end (recorded with the entry).
            verbatim: the whole output, when the caller holds it (saves a read-back).
            streamed: the output was already delivered live; ``text`` is None if verbatim.
            interrupted: why the producing command was stopped before it ended (recorded
                as the entry's ``interrupted``; the entry is then ``truncated``).
        """
        if self._finished is not None:
            return self._finished
        if self._redactor is not None:
            self._consume(self._redactor.flush())
        meter = self.meter.close()
        decision = decide(tool=self.tool, output_bytes=self.scanner.total_bytes, gauge=meter,
                          policy=self.policy, command=self.command, raw=self.raw,
                          inline=self.inline, command_class=self.command_class)
        extra = {"decision": decision.to_dict(), "notes": list(notes),
                 "tokens_text": meter.describe()}
        entry = None
        if self._writer is not None:
            _give_tokens(self._writer, meter.count())
            try:
                entry = self._writer.finish(exit_code=exit_code, reason=decision.reason,
                                            truncated=truncated, extra=extra,
                                            interrupted=interrupted)
            except Exception as exc:  # noqa: BLE001 - shown bounded, marked not archived
                self._fail(exc)
        held_whole = (len(self._raw_prefix) == self._raw_bytes if self._raw_prefix is not None
                      else self.scanner.holds_all)
        # Not stored and not held whole: only a bounded view can be shown.
        bounded = entry is None and not streamed and verbatim is None and not held_whole
        # what is shown whole needs no analysis of what is left unscanned
        scan = self.scanner.close(analyse=decision.digest or bounded)
        if self.scanner.lost is not None:
            a, b = self.scanner.lost
            notes = (*notes, f"the scan missed bytes {a:,}-{b:,} (its process stopped); line "
                             "numbers after them may be low: the archive holds every byte")
        if self._store_error is not None:
            notes = (*notes, self._lost_note(self._raw_bytes, decision.digest or bounded,
                                             streamed))
        digest = None
        data: bytes | None = None
        if decision.digest or bounded:
            from ctxgate.firewall.commands import is_search_command
            from ctxgate.firewall.digest import DigestContext, build_digest

            ctx = DigestContext(
                tool=self.tool, archive_id=entry.short_id if entry else "unavailable",
                expires_at=entry.expires_at if entry else None, archived=entry is not None,
                command=self._redact(self.command), exit_code=exit_code,
                tokens=meter.describe(), reason=decision.reason, detail=decision.detail,
                notes=tuple(self._redact(n) or "" for n in notes),
                expand_tool=self.expand_tool, group_by_file=is_search_command(self.command),
            )
            digest = build_digest(scan, ctx, self.policy)  # scan and header are redacted
            text: str | None = digest.text
        elif streamed:
            text = None
        else:
            shown = bytes(self._raw_prefix) if self._raw_prefix is not None else scan.prefix
            if verbatim is not None and not self._shown_redacted:
                data = verbatim
            elif held_whole or entry is None:  # whole; or not stored (the note says so)
                data = shown
            else:  # larger than the scanner kept: read back (redacted)
                data = self.archive.read(entry.id)
            text = data.decode("utf-8", "replace")
        self._finished = FirewallResult(
            text=text, decision=decision, entry=entry, digest=digest,
            output_bytes=self._raw_bytes, output_lines=scan.lines, tokens=meter.count(),
            tokens_text=meter.describe(), notes=notes, data=data,
        )
        return self._finished

    def _lost_note(self, total: int, digested: bool, streamed: bool) -> str:
        """The ``not archived (…)`` note: why, what to do, and what of the output is lost."""
        assert self._store_error is not None
        marker = self._store_error.marker()
        if streamed:
            return f"{marker}: the output above is complete; it was not stored"
        if not digested:
            return f"{marker}: the output is shown whole; it was not stored"
        budget = self.policy.digest_max_bytes
        if total > budget:
            return (f"{marker}: this digest is all that is kept; at least "
                    f"{total - budget:,} of the {total:,} output bytes are omitted below and lost")
        return f"{marker}: this digest is all that is kept; what it omits is lost"

    def _redact(self, text: str | None) -> str | None:
        """``text`` with the archive's secret patterns applied (as stored in the entry)."""
        if text is None or self._redactor is None:
            return text
        from ctxgate.archive.redact import redact_text

        return redact_text(text, self._redactor.patterns)[0]


def _give_tokens(writer: Any, tokens: TokenCount) -> None:
    """Hand our count to the writer so the archive does not tokenize the output again.

    ``EntryWriter.finish`` has no ``tokens`` argument yet; the count is known only at the
    end, so it goes into the writer's metadata when that attribute exists.
    """
    from dataclasses import replace

    meta = getattr(writer, "_meta", None)
    if meta is not None and hasattr(meta, "tokens"):
        writer._meta = replace(meta, tokens=tokens)


def firewall(
    tool: str,
    output: str | bytes,
    *,
    archive: Archive | None = None,
    policy: FirewallPolicy = DEFAULT_FIREWALL_POLICY,
    command: str | None = None,
    raw: bool = False,
    inline: bool = False,
    exit_code: int | None = None,
    source: str | None = None,
    session_id: str | None = None,
    expand_tool: str = "expand",
) -> FirewallResult:
    """Put an output the caller already has through the firewall.

    The output is archived first (lossless), then :func:`~ctxgate.firewall.decide.decide`
    picks digest or verbatim and the entry records the reason.

    Args:
        tool: the tool that produced the output (``shell``, ``read_file``, ``mcp__x__y``).
        output: the output; ``str`` is encoded as UTF-8.
        archive: where to store it; default an in-memory archive (ids die with the process).
        policy: the firewall policy.
        command: the shell command, for dataset-command detection and the header.
        raw: explicit raw (archived, never digested).
        inline: explicit inline (verbatim up to ``inline_max_bytes``).
        exit_code: the command's exit status, shown in the header.
        source: another origin (file path, URL) recorded with the entry.
        session_id: recorded with the entry.
        expand_tool: the MCP expand tool's name in drill-down calls.

    Returns:
        A :class:`FirewallResult`; ``.text`` is what the model should see.
    """
    if archive is None:
        from ctxgate.archive import Archive

        archive = Archive()
    data = output.encode("utf-8", "surrogatepass") if isinstance(output, str) else bytes(output)
    pipe = OutputPipeline(archive=archive, tool=tool, policy=policy, command=command, raw=raw,
                          inline=inline, source=source, session_id=session_id,
                          expand_tool=expand_tool)
    for start in range(0, len(data), _FEED_BYTES):
        pipe.feed(data[start:start + _FEED_BYTES])
    result = pipe.finish(exit_code=exit_code, verbatim=data)
    if isinstance(output, str) and not result.decision.digest and result.data == data:
        return _replace_text(result, output)  # shown as given (lone surrogates included)
    return result


def _replace_text(result: FirewallResult, text: str) -> FirewallResult:
    from dataclasses import replace

    return replace(result, text=text)
