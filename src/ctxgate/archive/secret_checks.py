"""Rules a regular expression cannot express well: is this name a credential, is this value one.

The secret kinds in :mod:`ctxgate.archive.secret_kinds` call these after their expression
matched: :func:`resolve_assignment` for ``NAME=value`` / ``"name": "value"`` / ``name: value``
(the name is read back from the match start, the value parsed forward), :func:`resolve_flag`
for ``--password value``, :func:`basic_auth_ok` for ``Basic <base64 of user:pass>``.

A resolver returns a :class:`Found` (where the match ends, which spans are secret, which kind)
or None when the text only looks like a credential (``PWD=/home/x``, ``password: str``,
``token: MAVEN_TOKEN``, ``max_tokens=5``).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

__all__ = ["Found", "basic_auth_ok", "token_shape", "credential_kind", "resolve_assignment", "resolve_flag",
           "split_words"]

_NAME_RUN = re.compile(rb"[A-Za-z0-9_.\-]*")
_NOT_LOWER = re.compile(rb"[^a-z]")
_CODE = re.compile(rb"[(){}<>\[\]]|=(?!=*$)")
_NAME_MAX = 64
"""Bytes of a variable name read back from the keyword, bytes."""
_VALUE_MAX = 1024
"""Longest value taken as one secret, bytes (a longer one is cut there, the rest kept)."""
_WORDS = re.compile(rb"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_PASSWORD_ENDINGS = (b"password", b"passwd", b"passphrase")
_KEY_PAIRS = frozenset({
    b"api", b"access", b"secret", b"private", b"encryption", b"signing", b"master", b"auth",
    b"account", b"app", b"client", b"storage", b"subscription", b"shared", b"sas", b"service",
    b"license", b"webhook", b"session", b"consumer", b"admin", b"deploy", b"root",
})
_KEY_WORDS = frozenset(w + b"key" for w in _KEY_PAIRS)
_STOP_VALUES = frozenset({
    b"true", b"false", b"null", b"none", b"nil", b"undefined", b"yes", b"no", b"on", b"off",
    b"required", b"optional", b"str", b"string", b"int", b"bytes", b"bool", b"secretstr",
    b"any", b"object", b"redacted", b"hidden", b"masked", b"unset", b"empty", b"notset",
})
_DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\([^)]*\)?)?|"
                     rb"[A-Za-z_][A-Za-z0-9_.]*\([^)]*\)?")
_ENV_REF = re.compile(rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_REF_WORDS = (b"PASS", b"PWD", b"SECRET", b"TOKEN", b"KEY")


@dataclass(frozen=True, slots=True)
class Found:
    """A resolved match."""

    end: int
    """Where the match ends in the buffer (overlap resolution), bytes."""
    spans: tuple[tuple[int, int, bool], ...]
    """``(start, end, quote)``: secret byte ranges; ``quote`` wraps the marker in ``"``."""
    kind: str


def split_words(name: bytes) -> list[bytes]:
    """``DB_PASSWORD`` -> ``[b"db", b"password"]``; ``clientSecret`` -> ``[b"client", b"secret"]``."""
    return [w.lower() for w in _WORDS.findall(name)]


def credential_kind(name: bytes) -> str | None:
    """``"password"`` or ``"secret"`` when ``name`` names a credential, else None."""
    words = split_words(name)
    if not words:
        return None
    last = words[-1]
    if last.endswith(_PASSWORD_ENDINGS) or name.lower().endswith(_PASSWORD_ENDINGS):
        return "password"  # DB_PASSWORD, PGPASSWORD, PassWord
    if last == b"pass" and len(words) >= 2:  # DB_PASS, smtpPass; not `pass: 3`
        return "password"
    if last == b"pwd":
        return "password"
    if last.endswith((b"secret", b"token")) or last in _KEY_WORDS:
        return "secret"
    if last == b"key" and len(words) >= 2 and words[-2] in _KEY_PAIRS:
        return "secret"
    return None


def _name_before(buf: bytes, start: int) -> int:
    """Start of the variable name that ends at ``start`` (read back over name bytes)."""
    m = _NAME_RUN.match(buf[max(0, start - _NAME_MAX):start][::-1])
    return start - m.end()


def _plain_value(value: bytes, kind: str, name: bytes) -> bool:
    """Whether ``value`` is a real value rather than a type, a reference or a placeholder."""
    if kind == "secret":
        # a token is long and not an English word: `token: enabled` is not a secret
        if len(value) < 8 or (len(value) < 24 and not _NOT_LOWER.search(value)):
            return False
    if not value.strip():
        return False
    low = value.lower()
    if low in _STOP_VALUES or value.startswith(b"[REDACTED"):
        return False
    if value[:1] in (b"$", b"<", b"%", b"{", b"@") or value.startswith(b"`"):
        return False  # $VAR, ${VAR}, <placeholder>, %(name)s, {{ template }}, @Value
    if not value.strip(b"*\xe2\x80\xa2.-_ "):  # ****, •••, ...
        return False
    if _DOTTED.fullmatch(value):  # self.password, settings.SECRET_KEY, getpass()
        return False
    if _ENV_REF.fullmatch(value) and any(w in value for w in _REF_WORDS):
        return False  # MAVEN_PASSWORD: the name of a variable, not its value
    if name.lstrip(b"-").lower() in (b"pwd", b"oldpwd") and value[:1] in (b"/", b"~"):
        return False  # the shell's working directory
    return True


_DQ = re.compile(rb'"((?:[^"\\\r\n]|\\[^\r\n]){0,%d})"' % _VALUE_MAX)
_SQ = re.compile(rb"'([^'\r\n]{0,%d})'" % _VALUE_MAX)
_EDQ = re.compile(rb'\\"(.{0,%d}?)\\"' % _VALUE_MAX)
_BARE = re.compile(rb"[^ \t\r\n\"'`;&|,)\x00]{1,%d}" % _VALUE_MAX)
_BARE_JSON = re.compile(rb"[^ \t\r\n\"'`;&|,)\x00}\]]{1,%d}" % _VALUE_MAX)


def _parse_value(buf: bytes, i: int, json_like: bool) -> tuple[int, int, int, bool] | None:
    """The value at ``i``: ``(secret start, secret end, value end, bare_in_json)``."""
    c = buf[i:i + 1]
    if c == b"\\":  # \"escaped JSON\" inside a JSON string
        m = _EDQ.match(buf, i)
        return (m.start(1), m.end(1), m.end(), False) if m else None
    if c == b'"' or c == b"'":
        m = (_DQ if c == b'"' else _SQ).match(buf, i)
        return (m.start(1), m.end(1), m.end(), False) if m else None
    m = (_BARE_JSON if json_like else _BARE).match(buf, i)
    return (i, m.end(), m.end(), json_like) if m else None


def resolve_assignment(m: re.Match[bytes], buf: bytes) -> Found | None:
    """``NAME=value``, ``NAME: value``, ``"name": "value"`` (quotes kept), ``name := v``.

    The match covers the keyword, the name's closing quote and the separator; the full name
    is read back from the match start and must name a credential (:func:`credential_kind`).
    """
    # the cheap rejections first: most anchors in code (`token=f(x)`, `key: 3`) end here
    secretish = m.group("kw")[:1] not in b"pP"  # token / key / secret: never a password
    json_like = m.group("nq") == b'"' and b":" in m.group("sep")
    parsed = _parse_value(buf, m.end(), json_like)
    if parsed is None:
        return None
    s, e, end, bare_json = parsed
    value = buf[s:e]
    if secretish and (len(value) < 8 or (e == end and _CODE.search(value))):
        return None  # a bare token has no brackets: `token=f(x)` is code
    start = _name_before(buf, m.start())
    name = buf[start:m.start("kw")] + m.group("kw")
    kind = credential_kind(name)
    if kind is None or not _plain_value(value, kind, name):
        return None
    return Found(end=end, spans=((s, e, bare_json),), kind=kind)


def resolve_flag(m: re.Match[bytes], buf: bytes) -> Found | None:
    """``--password VALUE``, ``--api-key VALUE``, ``-token VALUE`` (a flag then a space)."""
    start = _name_before(buf, m.start())
    name = buf[start:m.end("kw")]
    if not name.startswith(b"-"):
        return None
    kind = credential_kind(name)
    if kind is None:
        return None
    parsed = _parse_value(buf, m.end(), False)
    if parsed is None:
        return None
    s, e, end, _ = parsed
    if buf[s:s + 1] == b"-" or not _plain_value(buf[s:e], kind, name):
        return None  # the next option, not a value
    return Found(end=end, spans=((s, e, False),), kind=kind)


def token_shape(value: bytes) -> bool:
    """Not an English word: ``Authorization: required`` carries no credential."""
    return len(value) >= 24 or bool(_NOT_LOWER.search(value))


def basic_auth_ok(value: bytes) -> bool:
    """``Basic`` credentials are base64 of ``user:password``: checked, so that the words of
    ``Basic authentication failed`` are not taken for one."""
    try:
        raw = base64.b64decode(value + b"=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw and all(32 <= c < 127 for c in raw)
