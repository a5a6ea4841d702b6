"""Build a decision model from the ``[gate] backend`` setting.

``backend`` is a built-in name (``local``, ``openai``, ``structured``, ``fallback``), whose
module exposes ``from_policy(policy) -> DecisionModel``, or ``"package.module:attr"``, where
``attr`` is a DecisionModel or a factory called with the policy. Nothing falls back to
allowing: a backend that cannot be built raises, and the caller denies or exits non-zero.
"""

from __future__ import annotations

import importlib
from typing import Any

from ctxgate.errors import ConfigError, GateError
from ctxgate.gate.policy import GatePolicy

__all__ = ["BUILTIN_BACKENDS", "build_tool_gate", "load_decision_model"]

BUILTIN_BACKENDS = {
    "local": "ctxgate.gate.backends.local",
    "openai": "ctxgate.gate.backends.openai_logprobs",
    "structured": "ctxgate.gate.backends.structured",
    "fallback": "ctxgate.gate.backends.fallback",
}
"""Backend names and the module providing each one's ``from_policy``."""


def load_decision_model(spec: str, policy: GatePolicy) -> Any:
    """The decision model ``spec`` names, built for ``policy``.

    Raises:
        ConfigError: ``spec`` is neither a built-in name nor ``module:attr``.
        GateError: the backend's module cannot be imported (a missing extra) or has no
            factory; the message says what to install or configure.
    """
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
    elif spec in BUILTIN_BACKENDS:
        module_name, attr = BUILTIN_BACKENDS[spec], "from_policy"
    else:
        raise ConfigError(
            f"unknown gate backend {spec!r}; use one of {sorted(BUILTIN_BACKENDS)} or "
            "'package.module:factory'"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise GateError(
            f"the decision backend {spec!r} is not available ({exc}); install the "
            "package that provides it, or choose another with --backend / [gate] backend. "
            "The gate never allows a call without a backend"
        ) from exc
    target = getattr(module, attr, None)
    if target is None:
        raise GateError(
            f"the decision backend module {module_name!r} has no {attr!r}; it must provide "
            f"{attr}(policy) returning a DecisionModel"
        )
    if hasattr(target, "evaluate"):
        return target
    if callable(target):
        try:
            return target(policy)
        except ImportError as exc:
            raise GateError(
                f"the decision backend {spec!r} could not be built ({exc}); install its extra "
                "or choose another backend. The gate never allows a call without a backend"
            ) from exc
    raise GateError(f"{spec!r} is neither a DecisionModel nor a factory of one")


def build_tool_gate(config: Any, *, approver: Any = None, load_model: Any = None,
                    consume_grants: bool = True) -> Any:
    """The :class:`~ctxgate.gate.gate.ToolGate` every front end uses, built from ``config``.

    The decision model loads lazily (on the first call that needs it), through
    ``load_model(spec, policy)`` (default :func:`load_decision_model`; the decision daemon
    passes one that keeps models loaded); the audit log is opened in the home when
    ``[gate] audit`` is on, and an unusable one records nothing but never changes a verdict.
    ``consume_grants=False`` lets a dry run (``gate check``) see a one-time ``gate approve``
    grant without using up the approval meant for the real call.
    """
    from ctxgate.gate.gate import ToolGate

    policy = config.gate
    audit = None
    if policy.audit:
        from ctxgate.gate.audit import open_audit_log

        audit = open_audit_log(config.home)  # unusable: decide anyway, record nothing
    load = load_decision_model if load_model is None else load_model
    return ToolGate(lambda: load(policy.backend, policy), policy, audit=audit,
                    approver=approver, home=config.home, consume_grants=consume_grants)
