""":class:`App`: the application object every front end goes through.

Built from the settings (``load_config``), it owns the archive, the audit log and a lazily
built tool gate, and has one method per command: :meth:`~App.expand`,
:meth:`~App.read`, :meth:`~App.list`, :meth:`~App.search`, :meth:`~App.check`
(judge one call), :meth:`~App.approve`, :meth:`~App.run`, :meth:`~App.firewall`,
:meth:`~App.bound`.
The typer CLI, the argparse fast paths, the hooks and the MCP server and proxy only turn
their input into these calls and the results (or :mod:`ctxgate.app.errors`) into their
output, so the gate is assembled in one place.

Nothing is imported or opened before it is used: an ``App`` costs nothing to build, the
configuration is read on first use, the gate (and its decision model) on the first call
that needs it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the fast paths must not import typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from contextlib import AbstractContextManager
    from typing import Any

    from ctxgate.archive.archive import Archive
    from ctxgate.gate.audit import AuditLog
    from ctxgate.gate.gate import ToolGate
    from ctxgate.gate.verdict import Verdict
    from ctxgate.settings import Config

__all__ = ["App"]


class App:
    """ctxgate as one object: settings in, archive / gate / firewall operations out.

    Args:
        config: a :class:`~ctxgate.settings.Config`; default ``load_config(settings)`` on
            first use.
        settings: ``{section: {key: value}}`` overrides (CLI flags; ``None`` values are
            ignored) applied over the file and the environment when ``config`` is not given.
        load_model: ``load_model(spec, policy)`` builds the decision model (default
            :func:`ctxgate.gate.loader.load_decision_model`; the decision daemon passes one
            that keeps models loaded).
        approver: asks a person about a denied call (``gate check --ask``).
        consume_grants: ``False`` for a dry run (``gate check``): a one-time ``gate
            approve`` grant is seen but not used up.
        gated: ``False`` builds no gate (:attr:`gate` is then ``None``).
        failsafe_archive: an archive that cannot be opened is replaced by one whose every
            operation fails (runs and digests go on unarchived, and say so) instead of
            raising; :meth:`run` and :meth:`firewall` always work that way.

    Example::

        from ctxgate.app import App

        with App() as app:
            verdict = app.check("bash", {"command": "rm -rf build"}, request="clean the build")
            view = app.expand("3fa9c2e1", grep="error", context=2)
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
        load_model: Callable[..., Any] | None = None,
        approver: Any = None,
        consume_grants: bool = True,
        gated: bool = True,
        failsafe_archive: bool = False,
    ) -> None:
        self._config = config
        self._settings = {k: dict(v) for k, v in (settings or {}).items()}
        self._load_model = load_model
        self._approver = approver
        self._consume_grants = consume_grants
        self._gated = gated
        self._failsafe = failsafe_archive
        self._gate: ToolGate | None = None
        self._gate_built = False
        self._archive: Archive | None = None
        self._audit: AuditLog | None = None

    @classmethod
    def from_settings(cls, **sections: Mapping[str, Any]) -> App:
        """``App(settings=sections)``: e.g. ``App.from_settings(gate={"backend":
        "openai"})``."""
        return cls(settings=sections)

    # ------------------------------------------------------------------ resources

    @property
    def config(self) -> Config:
        """The configuration (read on first use; :class:`~ctxgate.errors.ConfigError` when
        invalid)."""
        if self._config is None:
            from ctxgate.settings import load_config

            self._config = load_config(self._settings)
        return self._config

    @property
    def archive(self) -> Archive:
        """The home's archive, opened on first use and kept until :meth:`close` (raises
        :class:`~ctxgate.errors.StoreUnavailable` when it cannot be opened, unless built with
        ``failsafe_archive``)."""
        if self._archive is None:
            self._archive = self._open(self._failsafe)
        return self._archive

    def _open(self, failsafe: bool) -> Archive:
        if failsafe:
            from ctxgate.archive.failure import open_archive

            return open_archive(self.config.home, self.config.archive)[0]
        from ctxgate.archive.archive import Archive

        return Archive.open(self.config.home, self.config.archive)

    def open_archive(self, *, failsafe: bool | None = None) -> AbstractContextManager[Archive]:
        """A context manager over an archive for one operation: :attr:`archive` when it is
        open (left open), else a new one closed at the end (one per thread is safe).

        ``failsafe`` (default: as built): an archive that cannot be opened is replaced by one
        whose every operation fails, so a run or a digest goes on unarchived (and says so).
        """
        import contextlib

        @contextlib.contextmanager
        def borrowed() -> Iterator[Archive]:
            if self._archive is not None:
                yield self._archive
                return
            archive = self._open(self._failsafe if failsafe is None else failsafe)
            try:
                yield archive
            finally:
                archive.close()

        return borrowed()

    @property
    def audit(self) -> AuditLog:
        """The gate's audit log in the home (``gate log``, ``gate approve``), opened on first
        use and kept until :meth:`close`."""
        if self._audit is None:
            from ctxgate.gate.audit import AuditLog

            self._audit = AuditLog.in_home(self.config.home)
        return self._audit

    @property
    def gate(self) -> ToolGate | None:
        """The tool gate, built on first use: the ``[gate]`` policy, the configured decision
        backend (loaded on the first call that needs it) and, when ``[gate] audit`` is on,
        an audit log in the home (an unusable one records nothing and never changes a
        verdict). ``None`` when built with ``gated=False``."""
        if not self._gate_built:
            if self._gated:
                from ctxgate.gate.loader import build_tool_gate

                self._gate = build_tool_gate(
                    self.config,
                    approver=self._approver,
                    load_model=self._load_model,
                    consume_grants=self._consume_grants,
                )
            self._gate_built = True
        return self._gate

    def close(self) -> None:
        """Close what was opened (archive, audit log, the gate's audit log)."""
        if self._gate is not None and self._gate.audit is not None:
            self._gate.audit.close()
        for resource in (self._archive, self._audit):
            if resource is not None:
                resource.close()
        self._archive = self._audit = None

    def __enter__(self) -> App:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ commands

    def expand(self, entry_id: str, **view: Any) -> Any:
        """``ctxgate expand``: a bounded view of an archived output
        (:meth:`ctxgate.archive.Archive.expand`; the keywords are
        :data:`ctxgate.app.options.EXPAND`'s)."""
        with self.open_archive() as archive:
            return archive.expand(entry_id, **view)

    def read(
        self,
        path: str,
        *,
        lines: str | None = None,
        max_tokens: int | None = None,
        tool: str = "read",
        cli: bool = False,
    ) -> Any:
        """``ctxgate read``: one page of a text file, never digested, under ``max_tokens``
        (default ``[firewall] verbatim_max_tokens``)."""
        from ctxgate.firewall.fileread import read_file

        policy = self.config.firewall
        return read_file(
            path,
            lines=lines,
            max_tokens=max_tokens or policy.verbatim_max_tokens,
            tokenizer=policy.tokenizer,
            tool=tool,
            cli=cli,
        )

    def list(self, limit: int | None = None) -> Any:
        """``ctxgate archive ls``: archived entries, most recently used first."""
        with self.open_archive() as archive:
            return archive.list() if limit is None else archive.list(limit=limit)

    def search(self, query: str, *, limit: int = 20) -> Any:
        """``ctxgate archive search``: lines holding all the query's words, across entries."""
        from ctxgate.archive.search import search

        with self.open_archive() as archive:
            return search(archive, query, limit=limit)

    def check(
        self,
        tool: str,
        arguments: Any,
        *,
        request: str | None = None,
        conversation: Sequence[Mapping[str, Any]] | None = None,
    ) -> Verdict:
        """``ctxgate gate check``: the gate's verdict on one call (never raises for a backend
        failure: it denies)."""
        from ctxgate.gate.gate import ToolCall

        gate = self.gate
        if gate is None:
            raise ValueError("this App was built with gated=False")
        return gate.decide_sync(
            ToolCall(tool=tool, arguments=arguments),
            user_request=request,
            conversation=conversation,
        )

    def approve(self, call_id: str) -> tuple[str, str]:
        """``ctxgate gate approve``: let one recorded denied (or asked) call run once more.

        ``call_id`` is an audit row id or a hex prefix (at least 6 digits) of the call's args
        sha256. Returns ``(tool, args_sha256)`` of the call granted.

        Raises:
            UsageError: ``call_id`` is neither, matches no recorded decision, or matches
                several different calls.
        """
        import re

        from ctxgate.errors import UsageError
        from ctxgate.gate.grants import GrantStore

        audit = self.audit
        if call_id.isdigit() and len(call_id) < 6:
            rows = audit.query(row_id=int(call_id), limit=1)
        elif re.fullmatch(r"[0-9a-fA-F]{6,64}", call_id):
            rows = audit.query(args_prefix=call_id, limit=200)
            if not rows and call_id.isdigit():
                rows = audit.query(row_id=int(call_id), limit=1)
        else:
            raise UsageError(
                f"{call_id!r} is neither an audit row id nor a hex prefix of an "
                "args sha256 (at least 6 digits); see `ctxgate gate log`"
            )
        calls = sorted({(r.tool, r.args_sha256) for r in rows})
        if not calls:
            raise UsageError(
                f"no recorded gate decision matches {call_id!r}; see `ctxgate gate "
                "log --verdict deny` for the ids"
            )
        if len(calls) > 1:
            shown = ", ".join(f"{t} {h[:12]}" for t, h in calls[:5])
            raise UsageError(
                f"{call_id!r} matches {len(calls)} different calls ({shown}); give "
                "more digits of the sha256 or the audit row id"
            )
        tool, digest = calls[0]
        GrantStore.in_home(self.config.home).grant(tool, digest)
        return tool, digest

    def run(self, argv: Sequence[str] | None = None, **options: Any) -> Any:
        """``ctxgate run``: run a command through the firewall (keywords of
        :func:`ctxgate.firewall.run.run_command`); an archive that cannot be opened never
        blocks the run."""
        from ctxgate.firewall.run import run_command

        with self.open_archive(failsafe=True) as archive:
            return run_command(argv, archive=archive, policy=self.config.firewall, **options)

    def firewall(self, tool: str, output: str | bytes, **options: Any) -> Any:
        """One tool output through the firewall (digest + archive id when large; keywords of
        :func:`ctxgate.firewall.pipeline.firewall`); an archive that cannot be opened only
        leaves it unarchived."""
        from ctxgate.firewall.pipeline import firewall

        with self.open_archive(failsafe=True) as archive:
            return firewall(tool, output, archive=archive, policy=self.config.firewall, **options)

    def bound(self, record: Any, *, archive: Archive | None = None) -> Any:
        """``ctxgate bound``: fit a JSON record into ``[bound] max_bytes`` by cutting only
        tool output (:func:`ctxgate.bound.bound_record`)."""
        from ctxgate.bound import bound_record

        return bound_record(record, policy=self.config.bound, archive=archive)
