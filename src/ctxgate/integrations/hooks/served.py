"""What the decision daemon serves to hooks: ``pre`` and ``post``, exactly as in-process.

The daemon (:mod:`ctxgate.gate.daemon.server`) is started with this module as its service.
Each request carries the hook's stdin, its options, its interpreter, working directory and
environment; the request runs the very functions an in-process hook runs
(:mod:`.entry`) inside the hook's directory and environment, with a fresh gate (so the audit
log, one-time grants of ``gate approve``, remembered MCP annotations and denial counters behave
as in a new process). Kept warm between requests: the imported modules, the configuration
(the daemon's identity fixes its sources; a changed config file makes the daemon stale) and
the decision models.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["SERVICE", "HookService", "start"]

SERVICE = __name__
"""The service name clients ask for (this module)."""

STALE_CHECK_SECONDS = 1.0
"""How often (at most) the daemon compares its loaded code and config file with the disk."""


def start(identity: dict[str, Any]) -> HookService:
    """The service the daemon runs (called once, before the socket is bound)."""
    return HookService(identity)


@contextmanager
def client_context(env: dict[str, str], cwd: str) -> Iterator[None]:
    """Run with the hook's environment and working directory, then restore the daemon's.

    The fast path and the effect rules read the environment (``PATH``, ``BASH_ENV``,
    ``GIT_*`` …) and the directory (relative paths, git): they must see the hook's, as an
    in-process hook would. Requests are served one at a time, so this is safe.
    """
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.chdir(cwd)
    _become(env)
    try:
        yield
    finally:
        _become(saved_env)
        os.chdir(saved_cwd)


def _become(env: dict[str, str]) -> None:
    """Make ``os.environ`` equal ``env``, touching only the variables that differ."""
    for key in [k for k in os.environ if k not in env]:
        del os.environ[key]
    for key, value in env.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


class HookService:
    """The daemon's state between requests (one configuration, any number of models)."""

    def __init__(self, identity: dict[str, Any]):
        from ctxgate.gate.daemon.policy import DaemonPolicy
        from ctxgate.settings import config_path

        self.identity = identity
        self._configs: dict[str, Any] = {}
        self._models: dict[str, Any] = {}
        self._model_lock = threading.Lock()
        self._config_file = str(config_path())
        self._config_sig = self._config_signature()
        self._code: dict[str, tuple[int, int]] = {}
        self._checked = 0.0
        try:
            policy = self.config({}).daemon
        except Exception:  # noqa: BLE001 - each request then reports the config error
            policy = DaemonPolicy()
        self.enabled = policy.enabled
        self.idle_seconds = policy.idle_seconds
        self.preload = policy.preload
        self._code_changed()  # records the loaded modules

    # -- warm state ---------------------------------------------------------------------

    def config(self, overrides: dict[str, dict[str, Any]]) -> Any:
        """``load_config(overrides)``, once per distinct overrides (errors too)."""
        import json

        from ctxgate.settings import load_config

        key = json.dumps(overrides, sort_keys=True, default=repr)
        if key not in self._configs:
            try:
                self._configs[key] = load_config(overrides)
            except Exception as exc:  # noqa: BLE001 - raised again on every request
                self._configs[key] = exc
        found = self._configs[key]
        if isinstance(found, Exception):
            raise found
        return found

    def model(self, spec: str, policy: Any) -> Any:
        """``load_decision_model(spec, policy)``, kept once built (a failure is retried)."""
        from ctxgate.gate.loader import load_decision_model

        key = f"{spec}\0{policy!r}"
        with self._model_lock:
            if key not in self._models:
                self._models[key] = load_decision_model(spec, policy)
            return self._models[key]

    def warm(self) -> None:
        """Import what a decision needs and, with ``preload``, build the configured model.

        Called before the first request is served (requests queue on the bound socket), not
        beside it: two threads importing the same modules can see them half initialised.
        """
        try:
            import ctxgate.gate.gate  # noqa: F401
            import ctxgate.integrations.hooks.handlers  # noqa: F401

            if self.preload:
                config = self.config({"gate": {"backend": None}})
                model = self.model(config.gate.backend, config.gate)
                warm = getattr(model, "warm", None)  # lazy models load their files here
                if callable(warm):
                    warm()
        except Exception:  # noqa: BLE001 - the request that needs it reports the error
            pass

    # -- staleness ----------------------------------------------------------------------

    def _config_signature(self) -> list[Any]:
        from ctxgate.gate.daemon.protocol import config_signature

        return config_signature(self._config_file)

    def _code_changed(self) -> str | None:
        import ctxgate

        root = os.path.dirname(os.path.abspath(ctxgate.__file__))
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if not (name == "ctxgate" or name.startswith("ctxgate.")) or not path:
                continue
            if not os.path.abspath(path).startswith(root):
                continue
            try:
                st = os.stat(path)
                sig = (st.st_mtime_ns, st.st_size)
            except OSError:
                sig = (-1, -1)
            if self._code.setdefault(path, sig) != sig:
                return f"{path} changed since the daemon loaded it"
        return None

    def stale(self) -> str | None:
        """Why this daemon must not answer (its config file or code changed), or ``None``."""
        if self._config_signature() != self._config_sig:
            return f"the config file {self._config_file} changed"
        now = time.monotonic()
        if now - self._checked < STALE_CHECK_SECONDS:
            return None
        self._checked = now
        return self._code_changed()

    # -- requests -----------------------------------------------------------------------

    def handle(self, op: str, header: dict[str, Any], body: bytes) -> dict[str, Any]:
        """Serve ``pre`` or ``post`` in the hook's context; the reply the client prints.

        What the request writes to stderr (a warning that the audit log or archive cannot be
        opened) is returned as ``early_stderr``, so the hook's stderr is what an in-process
        hook would have written.
        """
        env, cwd = header.get("env"), header.get("cwd")
        if not isinstance(env, dict) or not isinstance(cwd, str):
            raise ValueError("a request needs the hook's env and cwd")
        if not os.path.isdir(cwd):  # another mount namespace, or removed: decide in-process
            return {"unavailable": f"the hook's directory {cwd} is not visible to the daemon"}
        import contextlib
        import io

        written = io.StringIO()  # what an in-process hook would have written to its stderr
        with client_context(env, cwd), contextlib.redirect_stderr(written):
            result = self._handle(op, header, body)
        result["early_stderr"] = written.getvalue()
        return result

    def _handle(self, op: str, header: dict[str, Any], body: bytes) -> dict[str, Any]:
        from ctxgate.integrations.hooks.entry import digest_post, pre_answer

        if op == "pre":
            opts = header.get("options") or {}
            response = pre_answer(
                body, harness=opts.get("harness", "claude-code"),
                rewrite=bool(opts.get("rewrite", True)),
                approve=bool(opts.get("approve", False)), backend=opts.get("backend"),
                python=str(header.get("python") or sys.executable),
                load_config=self.config, load_model=self.model)
            return {"stdout": response.stdout, "stderr": response.stderr,
                    "exit_code": response.exit_code}
        if op == "post":
            try:
                opts = header.get("options") or {}
                response = digest_post(body, harness=opts.get("harness", "claude-code"),
                                       load_config=self.config)
            except Exception as exc:  # noqa: BLE001 - the client reports the fault
                return {"fault": f"{type(exc).__name__}: {exc}"}
            return {"stdout": response.stdout}
        raise ValueError(f"unknown operation {op!r}; use pre or post")
