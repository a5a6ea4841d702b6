"""The daemon's own checks: it reports itself stale when its config file or loaded code changes
(even if a client's identity missed the change), and restores the daemon's environment."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ctxgate.integrations.hooks import served


def test_a_changed_config_file_makes_the_service_stale(monkeypatch, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[daemon]\nidle_seconds = 30\n", encoding="utf-8")
    monkeypatch.setenv("CTXGATE_CONFIG", str(config))
    service = served.start({})
    assert service.idle_seconds == 30 and service.enabled
    assert service.stale() is None
    config.write_text("[daemon]\nidle_seconds = 31\n", encoding="utf-8")
    assert "changed" in (service.stale() or "")


def test_changed_code_makes_the_service_stale(monkeypatch, tmp_path: Path) -> None:
    service = served.start({})
    service._checked = -1e9
    assert service.stale() is None
    path = served.__file__
    st = os.stat(path)
    try:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        service._checked = -1e9
        assert f"{path} changed" in (service.stale() or "")
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_client_context_runs_in_the_hooks_env_and_directory(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXGATE_TEST_DAEMON_OWN", "daemon")
    before = os.getcwd()
    with served.client_context({"PATH": "/bin", "ONLY_IN_HOOK": "1"}, str(tmp_path)):
        assert os.getcwd() == str(tmp_path)
        assert os.environ.get("ONLY_IN_HOOK") == "1"
        assert "CTXGATE_TEST_DAEMON_OWN" not in os.environ
    assert os.getcwd() == before and "ONLY_IN_HOOK" not in os.environ
    assert os.environ["CTXGATE_TEST_DAEMON_OWN"] == "daemon"
    assert sys.modules[served.__name__] is served


def test_warm_up_loads_the_local_model_files(monkeypatch, tmp_path) -> None:
    """`preload` must leave the model loaded (its 7.8 MB file read and SHA-256 checked), not
    only constructed: the local model is lazy, and the first hook would pay inside its
    deadline."""
    from ctxgate.integrations.hooks.served import HookService

    monkeypatch.setenv("CTXGATE_HOME", str(tmp_path / "home"))
    service = HookService({})
    if not service.preload:
        service.preload = True
    service.warm()
    models = list(service._models.values())
    assert models and all(getattr(m, "_loaded", None) is not None for m in models)
