"""Every secret kind's test vectors are redacted, line counts stay, JSON stays JSON, and the
stream gives the same bytes whatever the write boundaries."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.archive.redact import (
    BUILTIN_PATTERNS,
    OVERLAP_BYTES,
    Redactor,
    redact_bytes,
    redact_text,
    redact_value,
)
from ctxgate.archive.secret_kinds import SECRET_KINDS

VECTORS = [(k.name, text, secret) for k in SECRET_KINDS for text, secret in k.vectors()]


def secret_parts(secret: str) -> list[str]:
    """The pieces of a secret that must not survive (PEM lines, CSV fields)."""
    return [p for p in re.split(r"[\n,]", secret) if len(p) >= 6]


def test_enough_kinds_each_with_a_vector() -> None:
    assert len(SECRET_KINDS) >= 20
    assert len({k.name for k in SECRET_KINDS}) == len(SECRET_KINDS)
    assert all(k.vectors() for k in SECRET_KINDS)


@pytest.mark.parametrize(("kind", "text", "secret"), VECTORS,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(VECTORS)])
def test_vector_is_redacted_in_place(kind: str, text: str, secret: str) -> None:
    out, n = redact_bytes(text.encode())
    assert n >= 1 and b"[REDACTED:" in out
    for part in secret_parts(secret):
        assert part.encode() not in out, (kind, part)
    assert out.count(b"\n") == text.count("\n")  # never a line removed
    assert redact_bytes(out) == (out, 0)  # idempotent: a marker is never redacted again
    try:
        json.loads(text)
    except ValueError:
        return
    json.loads(out)  # JSON stays JSON (quotes kept)


def test_json_quotes_kept_and_bare_values_quoted() -> None:
    doc = json.dumps({"password": "x", "db": {"api_key": "FAKEabc123def456"}, "pin": 7,
                      "token_count": 3})
    out = redact_text(doc)[0]
    assert json.loads(out) == {"password": "[REDACTED:password]",
                               "db": {"api_key": "[REDACTED:secret]"}, "pin": 7,
                               "token_count": 3}
    bare = redact_text('{"password": 123456, "user": "u"}')[0]
    assert json.loads(bare)["password"] == "[REDACTED:password]"


NOT_SECRETS = [
    "pass: 3", "passed=12 failed=0", "max_tokens=4096", "PWD=/home/runner/work",
    "OLDPWD=/tmp", "def login(password: str) -> None:", "server-password: MAVEN_PASSWORD",
    "password=${DB_PASSWORD}", "token: enabled", "Basic authentication failed for user",
    "key: value", "sort_key=name", "secretName: db-creds", "password = self.password",
    "Authorization: required", "api_key=os.environ", "token_type=bearer",
    "kind: Secret", "token=f(x)", "compass=north", "bypass=1",
]


@pytest.mark.parametrize("line", NOT_SECRETS)
def test_look_alikes_are_left_alone(line: str) -> None:
    assert redact_text(line) == (line, 0)


def _stream(data: bytes, sizes: list[int]) -> bytes:
    r = Redactor()
    out, pos, k = [], 0, 0
    while pos < len(data):
        n = sizes[k % len(sizes)]
        out.append(r.feed(data[pos:pos + n]))
        pos += n
        k += 1
    return b"".join(out) + r.flush()


def test_every_vector_across_write_and_scan_boundaries() -> None:
    filler = b"".join(b"2026-12-01T10:00:%02d INFO step %d ok\n" % (i % 60, i)
                      for i in range(6000))
    doc = bytearray()
    spans = []
    for i, (_, text, _secret) in enumerate(VECTORS):
        lines = filler[: 997 * (i % 40) + 311]
        doc += lines[: lines.rfind(b"\n") + 1]  # whole lines before each vector
        spans.append((len(doc), len(text)))
        doc += text.encode() + b"\n"
    doc = bytes(doc)
    whole = redact_bytes(doc)[0]
    for part in (p for _, _, s in VECTORS for p in secret_parts(s)):
        assert part.encode() not in whole
    assert whole.count(b"\n") == doc.count(b"\n")
    # split inside every secret, and at small and odd sizes: always the same bytes
    cuts = [0] + [start + length // 2 for start, length in spans] + [len(doc)]
    pieces = [doc[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    r = Redactor()
    split = b"".join(r.feed(p) for p in pieces) + r.flush()
    assert split == whole
    for sizes in ([1000], [7777, 13], [OVERLAP_BYTES - 1, OVERLAP_BYTES + 7]):
        assert _stream(doc, sizes) == whole, sizes


def test_secret_straddling_the_held_back_tail() -> None:
    for _, text, secret in VECTORS:
        raw = text.encode()
        total = 200_000
        before = b"x " * ((total - OVERLAP_BYTES - len(raw) // 2) // 2)
        data = before + b"\n" + raw + b"\n" + b"y " * 20_000
        r = Redactor()
        out = r.feed(data) + r.flush()  # the first scan's limit falls inside the secret
        for part in secret_parts(secret):
            assert part.encode() not in out
        assert out.count(b"\n") == data.count(b"\n")


def test_metadata_values_are_redacted_keys_kept() -> None:
    value = {"command": "PGPASSWORD=FAKEpw123 psql -h db", "notes": ["curl -H 'Authorization:"
             " Bearer FAKEtok3n456789'"], "n": 3}
    out, n = redact_value(value)
    assert n == 2 and "FAKEpw123" not in json.dumps(out) and "FAKEtok3n" not in json.dumps(out)
    assert out["n"] == 3 and out["command"].endswith(" psql -h db")


@pytest.mark.parametrize("automaton", [True, False])
def test_prefilter_paths_agree_on_all_vectors(monkeypatch: pytest.MonkeyPatch,
                                              automaton: bool) -> None:
    import ctxgate.archive.redact as redact

    monkeypatch.setattr(redact, "USE_AUTOMATON", automaton)
    text = "\n".join(t for _, t, _ in VECTORS).encode()
    out, n = redact_bytes(text, BUILTIN_PATTERNS)
    assert n >= len(VECTORS)
    assert all(p.encode() not in out for _, _, s in VECTORS for p in secret_parts(s))


_FRAGMENTS = [t for _, t, _ in VECTORS] + ["\n", "\r\n", " ", "password=", '"token": ',
                                           "-----BEGIN RSA PRIVATE KEY-----\n", "=", ":"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=40)), max_size=30),
       st.integers(min_value=1, max_value=5000))
def test_redaction_never_changes_the_newlines(parts: list[str], size: int) -> None:
    data = "".join(parts).encode("utf-8", "surrogatepass")
    out = _stream(data, [size])
    assert out.count(b"\n") == data.count(b"\n")
    assert out.count(b"\r") == data.count(b"\r")
    assert out == redact_bytes(data)[0]


def test_small_buffers_find_the_same_literals_and_anchors_as_the_automata() -> None:
    import ctxgate.archive.redact as redact

    for _, text, _ in VECTORS:
        for lower in (text.encode().lower(), (text + " password= token: akia").encode().lower()):
            table = redact._Literals(BUILTIN_PATTERNS)
            slow = table.find(lower)  # small and not built: literal by literal
            assert not table._built
            table._build()
            fast = table.find(lower)
            assert slow[0] == fast[0]
            assert sorted(slow[1]) == sorted(fast[1])
