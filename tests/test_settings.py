"""Settings precedence: defaults < TOML < CTXGATE_* env < overrides, and the fast path's parity."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.errors import ConfigError
from ctxgate.settings import Config, load_config


def test_defaults_fast_path_equals_pydantic_path(tmp_path: Path) -> None:
    fast = load_config(environ={"CTXGATE_HOME": str(tmp_path),
                                "CTXGATE_CONFIG": str(tmp_path / "none.toml")})
    assert fast.source == "defaults"
    cfg = tmp_path / "empty.toml"
    cfg.write_text("")
    slow = load_config(environ={"CTXGATE_HOME": str(tmp_path), "CTXGATE_CONFIG": str(cfg)})
    assert slow.source == "settings"
    for section in ("archive", "firewall", "gate", "bound"):
        assert getattr(fast, section) == getattr(slow, section)


def test_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[firewall]\nmin_tokens = 3000\ninline_max_bytes = 100\n[gate]\ntimeout_seconds = 9\n")
    env = {"CTXGATE_HOME": str(tmp_path), "CTXGATE_CONFIG": str(cfg),
           "CTXGATE_FIREWALL__INLINE_MAX_BYTES": "7"}
    c: Config = load_config({"gate": {"timeout_seconds": 2.5}}, environ=env)
    assert c.firewall.min_tokens == 3000  # file
    assert c.firewall.inline_max_bytes == 7  # env beats file
    assert c.gate.timeout_seconds == 2.5  # flag beats file
    assert c.home == tmp_path


def test_short_alias_min_tokens(tmp_path: Path) -> None:
    c = load_config(environ={"CTXGATE_HOME": str(tmp_path), "CTXGATE_MIN_TOKENS": "123",
                             "CTXGATE_CONFIG": str(tmp_path / "none.toml")})
    assert c.firewall.min_tokens == 123


def test_bad_values_raise_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="min_tokens"):
        load_config(environ={"CTXGATE_HOME": str(tmp_path), "CTXGATE_FIREWALL__MIN_TOKENS": "abc",
                             "CTXGATE_CONFIG": str(tmp_path / "none.toml")})
    bad = tmp_path / "bad.toml"
    bad.write_text("[firewall\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(environ={"CTXGATE_HOME": str(tmp_path), "CTXGATE_CONFIG": str(bad)})
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("[firewal]\nmin_tokens=1\n")
    with pytest.raises(ConfigError, match="unknown section"):
        load_config(environ={"CTXGATE_HOME": str(tmp_path), "CTXGATE_CONFIG": str(unknown)})
