"""HTTP plumbing shared by the remote decision backends: keys, retries, error mapping, spend.

* :class:`ApiKey` holds a secret read from a *named* environment variable at the edge (the
  CLI or an integration passes ``os.environ``); its ``repr``/``str`` never show the value, and
  errors name the variable, never the key.
* :func:`post_json` sends one JSON request with retries: 429, 529, 5xx and transport errors
  are retried with exponential backoff, a server's ``retry-after`` (seconds or an HTTP date)
  wins, clamped to the backoff cap; nothing waits past the overall deadline.
* :func:`mapped_errors` is the one place where foreign errors (httpx, JSON, OS) become
  ctxgate's tree, always with ``raise … from exc``.
* :class:`Spend` counts requests, failures, timeouts and reported tokens per backend.
* :func:`estimate_tokens` is the labelled estimate used for limits before sending:
  ``ceil(UTF-8 bytes / 4)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import importlib.util
import ipaddress
import json
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ctxgate.errors import DecisionModelError, DecisionTimeout, MalformedAnswer

__all__ = ["ApiKey", "RetryPolicy", "Spend", "estimate_tokens", "is_loopback", "key_from_policy",
           "mapped_errors", "new_client", "post_json", "require_httpx", "state_question_tokens"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
"""HTTP statuses retried with backoff."""
_BODY_SNIPPET_CHARS = 200


def require_httpx() -> None:
    """Raise ImportError naming the extra when httpx is missing (checked when a backend is built).

    Raises:
        ImportError: ``pip install 'ctxgate[http]'`` is the fix.
    """
    if importlib.util.find_spec("httpx") is None:
        raise ImportError("the remote decision backends need httpx; run: "
                          "pip install 'ctxgate[http]'")


@functools.cache
def _ssl_context() -> Any:
    """One verified TLS context per process: building one costs 50–300 ms (CA bundle load)."""
    import ssl

    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:
        return ssl.create_default_context()


def new_client(transport: Any = None) -> Any:
    """An ``httpx.AsyncClient`` for one ``evaluate`` (cheap: the TLS context is shared).

    A client is bound to the event loop it first runs on, so none is kept between calls;
    proxies from the environment are ignored (``trust_env=False``).
    """
    import httpx

    return httpx.AsyncClient(transport=transport, verify=_ssl_context(), trust_env=False)


def state_question_tokens(state: Any, questions: Any, *, batching: bool) -> int:
    """The gate's own estimate of a request: ``ceil((state bytes + question bytes) / 4)``.

    The state is measured as :func:`~ctxgate.gate.backends.base.serialize_state` and each
    question as :func:`~ctxgate.gate.backends.base.question_bytes`: all questions when the
    backend batches, else the longest. Backends check their limits with this same measure,
    so a state the gate fitted to ``capabilities.max_request_tokens`` is never refused.
    """
    from ctxgate.gate.backends.base import question_bytes, state_size

    qb = [question_bytes(q) for q in questions] or [0]
    return math.ceil((state_size(state)[1] + (sum(qb) if batching else max(qb))) / 4)


def estimate_tokens(text: str) -> int:
    """Token estimate for limits: ``ceil(UTF-8 bytes / 4)`` (labelled "estimate" in messages)."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


class ApiKey:
    """A secret API key and the name of the variable it came from; never printed."""

    __slots__ = ("_value", "env_var")

    def __init__(self, value: str, *, env_var: str) -> None:
        self._value = value.strip()
        self.env_var = env_var

    @classmethod
    def from_env(cls, env_var: str, environ: Mapping[str, str]) -> ApiKey:
        """Read ``env_var`` from ``environ`` (the edge passes ``os.environ``).

        Raises:
            DecisionModelError: the variable is unset or blank (its name is in the message).
        """
        value = environ.get(env_var, "")
        if not value.strip():
            raise DecisionModelError(
                f"the decision model's API key variable {env_var} is not set; export it, or set "
                "[gate] api_key_env to the variable that holds the key")
        return cls(value, env_var=env_var)

    def reveal(self) -> str:
        """The secret itself, for an Authorization header only."""
        return self._value

    def __repr__(self) -> str:
        return f"ApiKey(env_var={self.env_var!r}, value=<redacted>)"

    __str__ = __repr__


def key_from_policy(policy: Any, environ: Mapping[str, str] | None) -> ApiKey | None:
    """The key named by ``policy.api_key_env``, or ``None`` when that variable is unset.

    This is an edge: ``environ=None`` reads ``os.environ``. An unset variable sends no
    Authorization header (a local server needs none); a server that then answers 401/403 gets
    an error naming the variable.
    """
    import os

    env = os.environ if environ is None else environ
    name = policy.api_key_env
    if not name or not env.get(name, "").strip():
        return None
    return ApiKey(env[name], env_var=name)


def check_policy_numbers(policy: Any) -> None:
    """Raise ConfigError for backend settings out of range (units in the message)."""
    from ctxgate.errors import ConfigError

    t = policy.model_temperature
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not (t > 0 and math.isfinite(t)):
        raise ConfigError(f"[gate] model_temperature must be a positive number, got {t!r}")
    if policy.max_request_tokens < 0:
        raise ConfigError(f"[gate] max_request_tokens must be 0 (unchecked) or more tokens, "
                          f"got {policy.max_request_tokens!r}")
    if policy.max_concurrency < 1:
        raise ConfigError(f"[gate] max_concurrency must be at least 1, got "
                          f"{policy.max_concurrency!r}")
    if policy.backend in ("openai", "structured") and not policy.model:
        raise ConfigError(f"[gate] backend = {policy.backend!r} needs [gate] model (the model "
                          "name the server expects)")


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How failed requests are retried."""

    max_retries: int = 3
    """Retries after the first attempt (0 disables)."""
    initial_backoff_seconds: float = 1.0
    multiplier: float = 2.0
    max_backoff_seconds: float = 30.0
    """Cap of one wait, ``retry-after`` included, seconds."""


@dataclass(kw_only=True)
class Spend:
    """What a backend spent: requests sent, failures, timeouts and reported tokens."""

    requests: int = 0
    failures: int = 0
    timeouts: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    unpriced: bool = True
    """No price is known for these backends: the cost is unknown, never a guessed 0."""
    statuses: dict[int, int] = field(default_factory=dict)

    def add_usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            for key, attr in (("prompt_tokens", "input_tokens"), ("input_tokens", "input_tokens"),
                              ("completion_tokens", "output_tokens"),
                              ("output_tokens", "output_tokens")):
                v = usage.get(key)
                if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                    setattr(self, attr, getattr(self, attr) + v)


def is_loopback(url: str) -> bool:
    """True for localhost, ``*.localhost``, 127.0.0.0/8 and ::1 (the state stays local)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _BODY_SNIPPET_CHARS else text[:_BODY_SNIPPET_CHARS] + "…"


@contextlib.contextmanager
def mapped_errors(what: str, key: ApiKey | None = None) -> Iterator[None]:
    """Translate foreign exceptions raised inside the block into ctxgate's error tree.

    ``what`` names the backend and URL for the message; the key's value is scrubbed from any
    message that might echo it.
    """
    import httpx

    def scrub(msg: str) -> str:
        if key is not None and key.reveal():
            msg = msg.replace(key.reveal(), "<redacted>")
        return msg

    try:
        yield
    except (DecisionModelError, asyncio.CancelledError):
        raise
    except httpx.TimeoutException as exc:
        raise DecisionTimeout(f"{what}: no response in time ({type(exc).__name__})") from exc
    except httpx.HTTPError as exc:
        raise DecisionModelError(scrub(f"{what}: {type(exc).__name__}: {exc}; is the server "
                                       "running and the base_url right?")) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedAnswer(f"{what}: the response body is not JSON ({exc})") from exc
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise MalformedAnswer(scrub(f"{what}: unexpected response shape "
                                    f"({type(exc).__name__}: {exc})")) from exc
    except OSError as exc:
        raise DecisionModelError(scrub(f"{what}: {exc}")) from exc


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def post_json(client: Any, url: str, body: Mapping[str, Any], *, headers: Mapping[str, str],
                    deadline: float, retry: RetryPolicy, spend: Spend, what: str,
                    key: ApiKey | None = None,
                    attempt_timeout_seconds: float | None = None) -> Any:
    """POST ``body`` as JSON and return the decoded JSON response, retrying as the policy says.

    ``deadline`` is a :func:`time.monotonic` instant; no attempt or wait runs past it.

    Raises:
        DecisionTimeout: the deadline passed (during an attempt or before a retry).
        DecisionModelError: a non-retryable status (401/403 name the key variable), or retries
            exhausted; the status and a short body snippet are in the message.
        MalformedAnswer: a 2xx body that is not JSON.
    """
    payload = json.dumps(body, ensure_ascii=False).encode()
    hdrs = {"content-type": "application/json", **headers}
    backoff = retry.initial_backoff_seconds
    attempt = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            spend.timeouts += 1
            raise DecisionTimeout(f"{what}: the deadline passed before an answer")
        timeout = min(remaining, attempt_timeout_seconds or remaining)
        spend.requests += 1
        retry_wait: float | None = None
        try:
            with mapped_errors(what, key):
                resp = await client.post(url, content=payload, headers=hdrs, timeout=timeout)
        except DecisionTimeout as exc:
            spend.failures += 1
            spend.timeouts += 1
            if time.monotonic() >= deadline or attempt_timeout_seconds is None:
                raise
            problem = str(exc)  # one attempt's cap passed, the overall budget has not: retry
        except DecisionModelError as exc:  # a transport error (refused, reset): retried
            spend.failures += 1
            problem = str(exc)
        else:
            status = resp.status_code
            spend.statuses[status] = spend.statuses.get(status, 0) + 1
            if 200 <= status < 300:
                try:
                    with mapped_errors(what, key):
                        return json.loads(resp.content)
                except MalformedAnswer:
                    spend.failures += 1
                    raise
            spend.failures += 1
            text = _snippet(resp.text)
            if status in (401, 403):
                var = key.env_var if key else "(no key configured)"
                raise DecisionModelError(
                    f"{what}: HTTP {status}, the API key was rejected; check {var}")
            if status not in RETRY_STATUSES:
                raise DecisionModelError(f"{what}: HTTP {status}: {text}")
            retry_wait = _retry_after(resp.headers.get("retry-after"))
            problem = f"HTTP {status}: {text}"
        if attempt >= retry.max_retries:
            raise DecisionModelError(f"{what}: gave up after {attempt + 1} attempts; last: "
                                     f"{problem}")
        wait = min(retry_wait if retry_wait is not None else backoff, retry.max_backoff_seconds)
        if time.monotonic() + wait >= deadline:
            spend.timeouts += 1
            raise DecisionTimeout(f"{what}: the deadline leaves no time to retry after {problem}"
                                  f" (server asked to wait {wait:.1f} s)")
        spend.retries += 1
        attempt += 1
        backoff *= retry.multiplier
        await asyncio.sleep(wait)


def state_budget(max_request_tokens: int | None, reserve_tokens: int) -> int | None:
    """Tokens left for the state once the prompt around it is reserved (None: no limit)."""
    if max_request_tokens is None:
        return None
    return max(1, max_request_tokens - reserve_tokens)
