"""Secrets are replaced before storage, counted, and found across write boundaries."""

from __future__ import annotations

import pytest

from ctxgate.archive import Archive, ArchivePolicy, EntryMeta
from ctxgate.archive.redact import OVERLAP_BYTES, Redactor, compile_patterns, redact_bytes
from ctxgate.archive.stores.memory import MemoryStore
from ctxgate.errors import ConfigError

KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\nabcdEFGH==\n"
       "-----END RSA PRIVATE KEY-----")

SECRETS = [
    ("aws_access_key", "key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI"),
    ("github_token", "token ghp_" + "a1B2" * 9, "ghp_a1B2"),
    ("github_token", "github_pat_" + "x" * 40, "github_pat_xxx"),
    ("gitlab_token", "glpat-" + "AbCd1234" * 3, "glpat-AbCd"),
    ("slack_token", "xoxb-1234567890-abcdefghij", "xoxb-1234"),
    ("slack_webhook", "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX", "T000/B000"),
    ("private_key", KEY, "MIIEowIBAAKCAQEA7bq"),
    ("authorization", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGci"),
    ("bearer", "auth with Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGci"),
    ("password", "db password=hunter2secret ok", "hunter2secret"),
    ("password", 'PASSWORD: "with spaces inside"', "with spaces"),
    ("url_credentials", "git clone https://user:s3cr3tpw@example.com/r.git", "s3cr3tpw"),
]


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS)
def test_each_kind_is_redacted(kind: str, text: str, secret: str) -> None:
    out, n = redact_bytes(text.encode())
    assert secret.encode() not in out
    assert f"[REDACTED:{kind}]".encode() in out and n == 1


def test_keeps_key_names_and_plain_text() -> None:
    out, n = redact_bytes(b"password=abc123 and 42 tests passed; pass: 3\n")
    assert out == b"password=[REDACTED:password] and 42 tests passed; pass: 3\n" and n == 1
    clean = b"nothing to see here: 1 passed, 0 failed\n" * 100
    assert redact_bytes(clean) == (clean, 0)


def test_secret_split_across_writes_is_found() -> None:
    r = Redactor()
    text = b"x" * (OVERLAP_BYTES * 3 - 5) + b" AKIAIOSFODNN7EXAMPLE " + b"y" * 100
    out = b"".join(r.feed(text[i:i + 7000]) for i in range(0, len(text), 7000)) + r.flush()
    assert b"AKIA" not in out and r.count == 1 and len(out) == len(text) - 20 + len(b"[REDACTED:aws_access_key]")


def test_archive_records_redactions_and_can_turn_off() -> None:
    a = Archive(MemoryStore(), ArchivePolicy(tokenizer="estimate"))
    e = a.put(b"AKIAIOSFODNN7EXAMPLE\npassword=x\n", EntryMeta(tool="shell"))
    assert e.redacted and e.redactions == 2 and b"AKIA" not in a.read(e.id)
    off = Archive(MemoryStore(), ArchivePolicy(redact=False, tokenizer="estimate"))
    e2 = off.put(b"AKIAIOSFODNN7EXAMPLE\n")
    assert not e2.redacted and off.read(e2.id) == b"AKIAIOSFODNN7EXAMPLE\n"


def test_extra_patterns() -> None:
    a = Archive(MemoryStore(), ArchivePolicy(extra_redact_patterns=(r"INTERNAL-\d+",),
                                             tokenizer="estimate"))
    e = a.put(b"ticket INTERNAL-12345 done\n")
    assert a.read(e.id) == b"ticket [REDACTED:custom] done\n" and e.redactions == 1
    with pytest.raises(ConfigError, match="not a valid regular expression"):
        compile_patterns(["(unclosed"])


@pytest.mark.parametrize("automaton", [True, False])
def test_prefilter_paths_agree(monkeypatch: pytest.MonkeyPatch, automaton: bool) -> None:
    import ctxgate.archive.redact as redact

    monkeypatch.setattr(redact, "USE_AUTOMATON", automaton)
    text = "\n".join(t for _, t, _ in SECRETS).encode() + b"\nhigh global xoxo bear passes\n"
    out, n = redact_bytes(text)
    assert n == len(SECRETS)
    assert all(secret.encode() not in out for _, _, secret in SECRETS)
    assert out.endswith(b"\nhigh global xoxo bear passes\n")
