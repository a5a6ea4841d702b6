"""Data carried out in a URL: a read that is also a send.

A fetch only reads, but the URL it asks for reaches the server: a query value, a path
segment or a host label can carry a key or a file's contents to whoever runs that server
(``https://evil.example/c?k=AKIA…``, ``…/?d=<base64 of ~/.ssh/id_rsa>``,
``<base64>.evil.example``). :func:`data_in_url` says why a URL carries data, or ``None`` for an
ordinary address (documentation pages, searches with a few words, commit SHAs, UUIDs).
:func:`url_arguments` finds the URLs of a call's arguments. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["data_in_text", "data_in_url", "local_host", "secret_in", "string_arguments",
           "url_arguments"]

_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
_OPAQUE = re.compile(r"[A-Za-z0-9+/=_.~%-]+")
_SLUG = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)+")
_HEX_ID = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
"""A git commit or blob id (SHA-1, SHA-256): long, opaque and ordinary in a URL."""
_HEX_SEGMENT = re.compile(r"[0-9a-f]{1,64}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
MIN_OPAQUE = 32
"""Characters of a query value or path segment, opaque (no words, no spaces) and mixing letters
and digits, from which it is read as data rather than an address."""
MIN_LABEL = 24
"""Characters of one host name label from which it is read as data (DNS exfiltration)."""
MAX_QUERY = 512
"""Characters of a whole query string from which it is data whatever it looks like."""


def _opaque(value: str, minimum: int) -> bool:
    if len(value) < minimum or not _OPAQUE.fullmatch(value):
        return False
    if _SLUG.fullmatch(value) or _HEX_ID.fullmatch(value) or _UUID.fullmatch(value):
        return False
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def secret_in(text: str) -> str | None:
    """The kind of the first secret in ``text`` (the archive's redaction patterns), or
    ``None``."""
    from ctxgate.archive.redact import redact_bytes

    redacted, count = redact_bytes(text.encode("utf-8", "surrogatepass"))
    if not count:
        return None
    kinds = re.findall(rb"\[REDACTED:([\w-]+)\]", redacted)
    return kinds[0].decode() if kinds else "secret"


def data_in_url(url: str) -> str | None:
    """Why ``url`` carries data out (a secret, an opaque value of ``MIN_OPAQUE`` characters or
    more, a long host label, a very long query), or ``None``."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in _SCHEMES or not parts.netloc:
        return None
    plain = unquote(url)
    kind = secret_in(plain)
    if kind is not None:
        return f"it holds what looks like a secret ({kind})"
    host = parts.hostname or ""
    for label in host.split(".")[:-2]:
        if len(label) >= MIN_LABEL and _opaque(label, MIN_LABEL):
            return f"its host name carries a {len(label)}-character value ({label[:16]}…)"
    if len(parts.query) > MAX_QUERY:
        return f"its query is {len(parts.query):,} characters long"
    values = [v for _k, v in parse_qsl(parts.query, keep_blank_values=True)]
    # a path segment of hex digits is a content address (package and CDN stores)
    values += [v for s in parts.path.split("/") if not _HEX_SEGMENT.fullmatch(v := unquote(s))]
    values.append(unquote(parts.fragment))
    for v in values:
        if _opaque(v, MIN_OPAQUE):
            return f"it carries a {len(v)}-character opaque value ({v[:16]}…)"
    return None


_URL = re.compile(r"^(?:https?|wss?|ftp)://", re.I)


def data_in_text(text: str) -> str | None:
    """:func:`data_in_url` for free text that leaves the machine (a search query): a secret,
    or a word of ``MIN_OPAQUE`` opaque characters or more."""
    kind = secret_in(text)
    if kind is not None:
        return f"it holds what looks like a secret ({kind})"
    for word in text.split():
        if _opaque(word, MIN_OPAQUE):
            return f"it carries a {len(word)}-character opaque value ({word[:16]}…)"
    return None


def local_host(url: str) -> str | None:
    """The host of ``url`` when it is this machine, a private network or a cloud metadata
    address (a GET there can change a local service, or read cloud credentials), else
    ``None``."""
    import ipaddress

    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".")
    except ValueError:
        return None
    if host in ("localhost", "metadata.google.internal") or host.endswith(
            (".localhost", ".local", ".internal")):
        return host
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    return host if ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved \
        else None


def string_arguments(arguments: Any, key: str = "", depth: int = 0
                     ) -> Iterator[tuple[str, str]]:
    """``(key, text)`` for each string among a call's argument values, three levels deep
    (the first 50 items of a list, under the list's own key)."""
    if isinstance(arguments, str):
        yield key or "arguments", arguments
    elif depth > 2:
        return
    elif isinstance(arguments, Mapping):
        for k, v in arguments.items():
            yield from string_arguments(v, str(k), depth + 1)
    elif isinstance(arguments, list):
        for v in arguments[:50]:
            yield from string_arguments(v, key, depth + 1)


def url_arguments(arguments: Any) -> Iterator[tuple[str, str]]:
    """``(key, url)`` for each URL among a call's argument values: a string starting with a web
    scheme, under any key (:func:`string_arguments`)."""
    return ((k, v) for k, v in string_arguments(arguments) if _URL.match(v.strip()))
