"""Settings: TOML file < ``CTXGATE_*`` environment < CLI flags, turned into policy objects.

Only entry points (``cli/``, ``integrations/``) call :func:`load_config`; everything below
them receives the frozen policy objects it returns, and never reads ``os.environ``.

Sources, lowest precedence first:

1. built-in defaults (the ``DEFAULT_*`` constants of each policy module);
2. the TOML file ``$CTXGATE_CONFIG``, else ``<platform config dir>/ctxgate/config.toml``,
   with one table per section (``[archive]``, ``[firewall]``, ``[gate]``, ``[bound]``,
   ``[daemon]``);
3. environment variables ``CTXGATE_<SECTION>__<KEY>`` (for example
   ``CTXGATE_FIREWALL__MIN_TOKENS=3000``), plus the short aliases in ``ENV_ALIASES``;
4. overrides passed by the caller (CLI flags).

``CTXGATE_HOME`` sets the data directory (archive database); the default is the platform's
user data dir. Validation is pydantic-settings'. Because ``ctxgate`` starts once per tool
call, the common case — no config file, no ``CTXGATE_*`` setting — skips importing pydantic
entirely and returns the defaults, which are the same values (a test pins the parity).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxgate.archive.policy import ArchivePolicy
from ctxgate.bound.policy import BoundPolicy
from ctxgate.errors import ConfigError
from ctxgate.firewall.policy import FirewallPolicy
from ctxgate.gate.daemon.policy import DaemonPolicy
from ctxgate.gate.policy import GatePolicy

__all__ = ["ENV_ALIASES", "Config", "config_path", "home_dir", "load_config"]

ENV_PREFIX = "CTXGATE_"
SECTIONS = ("archive", "firewall", "gate", "bound", "daemon")

ENV_ALIASES: dict[str, tuple[str, str]] = {
    "CTXGATE_MIN_TOKENS": ("firewall", "min_tokens"),
    "CTXGATE_TOKENIZER": ("firewall", "tokenizer"),
    "CTXGATE_ARCHIVE_BACKEND": ("archive", "backend"),
    "CTXGATE_REDIS_URL": ("archive", "redis_url"),
}
"""Short environment variables and the ``(section, key)`` each one sets."""

_NOT_SETTINGS = {"CTXGATE_HOME", "CTXGATE_CONFIG", "CTXGATE_RUNTIME_DIR", "CTXGATE_NO_DAEMON"}


@dataclass(frozen=True, kw_only=True)
class Config:
    """Everything an entry point needs: the data directory and one policy per capability."""

    home: Path
    """Data directory holding the archive database (created 0700)."""
    archive: ArchivePolicy = field(default_factory=ArchivePolicy)
    firewall: FirewallPolicy = field(default_factory=FirewallPolicy)
    gate: GatePolicy = field(default_factory=GatePolicy)
    bound: BoundPolicy = field(default_factory=BoundPolicy)
    daemon: DaemonPolicy = field(default_factory=DaemonPolicy)
    source: str = "defaults"
    """Where the values came from: ``"defaults"`` or ``"settings"`` (file/env/flags)."""


def home_dir(environ: dict[str, str] | None = None) -> Path:
    """The data directory: ``$CTXGATE_HOME`` or the platform's user data dir for ctxgate."""
    env = os.environ if environ is None else environ
    if env.get("CTXGATE_HOME"):
        return Path(env["CTXGATE_HOME"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("ctxgate", appauthor=False))


def config_path(environ: dict[str, str] | None = None) -> Path:
    """The TOML file read: ``$CTXGATE_CONFIG`` or ``<user config dir>/ctxgate/config.toml``."""
    env = os.environ if environ is None else environ
    if env.get("CTXGATE_CONFIG"):
        return Path(env["CTXGATE_CONFIG"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("ctxgate", appauthor=False)) / "config.toml"


def load_config(
    overrides: dict[str, dict[str, Any]] | None = None,
    *,
    environ: dict[str, str] | None = None,
) -> Config:
    """Build the :class:`Config` from defaults, the TOML file, the environment and overrides.

    Args:
        overrides: ``{section: {key: value}}`` from CLI flags; ``None`` values are ignored.
        environ: the environment to read (default ``os.environ``); tests pass their own.

    Raises:
        ConfigError: the file is not valid TOML, or a value fails validation; the message
            names the file or variable and the key.
    """
    env = dict(os.environ if environ is None else environ)
    clean = {s: {k: v for k, v in (overrides or {}).get(s, {}).items() if v is not None}
             for s in SECTIONS}
    path = config_path(env)
    has_env = any(k.startswith(ENV_PREFIX) and k not in _NOT_SETTINGS for k in env)
    home = home_dir(env)
    if not has_env and not path.is_file():
        # Fast path: no pydantic import. Overrides are applied with dataclasses.replace,
        # and checked by the same validation as the slow path when present.
        if not any(clean.values()):
            return Config(home=home)
    return _load_with_pydantic(env, path, clean, home)


def _load_with_pydantic(
    env: dict[str, str], path: Path, overrides: dict[str, dict[str, Any]], home: Path
) -> Config:
    import tomllib

    from pydantic import ValidationError
    from pydantic_settings import BaseSettings, SettingsConfigDict

    file_data: dict[str, Any] = {}
    if path.is_file():
        try:
            file_data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}; fix or remove it") from exc
        unknown = sorted(set(file_data) - set(SECTIONS))
        if unknown:
            raise ConfigError(
                f"config file {path} has unknown section(s) {unknown}; known: {list(SECTIONS)}"
            )

    env_for_pydantic = dict(env)
    for alias, (section, key) in ENV_ALIASES.items():
        if alias in env and f"CTXGATE_{section.upper()}__{key.upper()}" not in env:
            env_for_pydantic[f"CTXGATE_{section.upper()}__{key.upper()}"] = env[alias]

    class Settings(BaseSettings):
        model_config = SettingsConfigDict(
            env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore",
            case_sensitive=False,
        )
        archive: ArchivePolicy = ArchivePolicy()
        firewall: FirewallPolicy = FirewallPolicy()
        gate: GatePolicy = GatePolicy()
        bound: BoundPolicy = BoundPolicy()
        daemon: DaemonPolicy = DaemonPolicy()

        @classmethod
        def settings_customise_sources(cls, settings_cls, init_settings, env_settings,
                                       dotenv_settings, file_secret_settings):
            from pydantic_settings import EnvSettingsSource

            env_source = EnvSettingsSource(settings_cls)
            env_source.env_vars = {k.lower(): v for k, v in env_for_pydantic.items()}
            return (init_settings, env_source)

    # Merge file data below env: pass the file as init data and let env override per key.
    try:
        from_env = Settings()
        merged: dict[str, Any] = {}
        for section in SECTIONS:
            base = dict(file_data.get(section, {}))
            env_keys = _env_keys(env_for_pydantic, section)
            current = getattr(from_env, section)
            for key in env_keys:
                if hasattr(current, key):
                    base[key] = getattr(current, key)
            base.update(overrides.get(section, {}))
            merged[section] = base
        # Each merged section is validated once, against its own policy class.
        from pydantic import TypeAdapter

        sections = {s: TypeAdapter(type(getattr(from_env, s))).validate_python(merged[s])
                    for s in SECTIONS}
    except ValidationError as exc:
        raise ConfigError(f"invalid ctxgate settings (file {path}, CTXGATE_* env): {exc}") from exc
    return Config(home=home, source="settings", **sections)


def _env_keys(env: dict[str, str], section: str) -> set[str]:
    prefix = f"{ENV_PREFIX}{section.upper()}__"
    return {k[len(prefix):].lower() for k in env if k.upper().startswith(prefix)}


def with_overrides(config: Config, section: str, **values: Any) -> Config:
    """A copy of ``config`` with some keys of one section replaced (``None`` ignored)."""
    values = {k: v for k, v in values.items() if v is not None}
    if not values:
        return config
    return replace(config, **{section: replace(getattr(config, section), **values)})
