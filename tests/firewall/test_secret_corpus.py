"""A corpus of 200+ fake secrets of 20+ kinds through the real `ctxgate run` path: nothing is
stored unredacted (read back raw from the SQLite file), nothing reaches a digest or the
metadata, digest line numbers are the archive's, JSON stays JSON, no line is lost."""

from __future__ import annotations

import io
import json
import os
import random
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
import zstandard

from ctxgate.archive import Archive, ArchivePolicy
from ctxgate.archive.secret_kinds import SECRET_KINDS
from ctxgate.firewall import FirewallPolicy, run_command
from ctxgate.firewall.pipeline import OutputPipeline

from .secret_corpus import Placed, documents, secret_parts

DOCS = documents()
ALL_PLACED = [p for _, placed in DOCS.values() for p in placed]
# every line of the output shown in the digest: the strictest check of what a digest shows
SHOW_ALL = FirewallPolicy(min_tokens=0, verbatim_max_tokens=0, digest_max_bytes=4_000_000,
                          digest_head_lines=1_000_000, digest_tail_lines=0,
                          digest_line_max_bytes=1_000_000)
_EXCERPT = re.compile(r"^ *(\d+)\| (.*)$")


def raw_entries(home: Path) -> list[tuple[str, bytes]]:
    """``(meta JSON text, content)`` of every entry, read from the SQLite file itself."""
    con = sqlite3.connect(home / "archive.db")
    try:
        out = []
        for blob, meta in con.execute("SELECT blob, meta FROM archive_entries").fetchall():
            rows = con.execute("SELECT data FROM archive_chunks WHERE blob = ? ORDER BY seq",
                               (blob,)).fetchall()
            d = zstandard.ZstdDecompressor()
            content = b"".join(d.decompress(bytes(r[0]), max_output_size=1 << 26)
                               for r in rows)
            out.append((meta, content))
        return out
    finally:
        con.close()


def leaks(data: bytes | str, placed: list[Placed]) -> list[str]:
    raw = data.encode() if isinstance(data, str) else data
    return [f"{p.kind}: {part[:24]}" for p in placed for part in secret_parts(p.secret)
            if part.encode() in raw]


def test_corpus_size() -> None:
    kinds = {p.kind for p in ALL_PLACED}
    assert len(ALL_PLACED) >= 200 and len(kinds) >= 20, (len(ALL_PLACED), len(kinds))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _excerpts_match_archive(digest: str, stored: bytes) -> int:
    """Every ``N| text`` excerpt line equals line N of the stored content (up to a cut)."""
    lines = stored.decode("utf-8", "replace").split("\n")
    checked = 0
    for line in digest.split("\n"):
        m = _EXCERPT.match(line)
        if not m:
            continue
        n, text = int(m.group(1)), m.group(2)
        text = re.sub(r"…\[(?:\+[\d,]+ bytes|line continues)\]$", "", text)
        assert lines[n - 1].startswith(text), (n, text[:80], lines[n - 1][:80])
        checked += 1
    return checked


@pytest.mark.parametrize("policy", [SHOW_ALL, FirewallPolicy()], ids=["all-lines", "default"])
def test_corpus_through_run_command(tmp_path: Path, policy: FirewallPolicy) -> None:
    home = tmp_path / "home"
    archive = Archive.open(home, ArchivePolicy())
    shown = json_docs = digested = 0
    try:
        for name, (text, placed) in DOCS.items():
            path = tmp_path / f"{name}.out"
            path.write_text(text)
            out = io.BytesIO()
            result = run_command(shell=f"cat {path} | cat", archive=archive, policy=policy,
                                 stdout=out, stderr=io.BytesIO())
            r = result.result
            assert r.digested or policy is not SHOW_ALL, name
            if r.digested:  # (a small output goes to the model verbatim, as produced)
                digested += 1
                assert leaks(out.getvalue(), placed) == [], name
            stored = archive.read(r.entry.id)
            assert stored.count(b"\n") == text.count("\n") and r.entry.lines == len(
                text.splitlines()), name
            n_shown = _excerpts_match_archive(r.text, stored)
            if policy is SHOW_ALL and r.digest.form == "lines":
                assert n_shown == text.count("\n"), name  # every line, at its number
                shown += n_shown
            if _is_json(text):
                assert json.loads(stored) != json.loads(text)  # redacted, and still JSON
                json_docs += 1
    finally:
        archive.close()
    assert json_docs >= 4 and digested >= 2
    entries = raw_entries(home)
    assert len(entries) >= 10  # content-addressed: equal redacted outputs share an entry
    for meta, content in entries:
        assert leaks(content, ALL_PLACED) == []
        assert leaks(meta, ALL_PLACED) == []
    if policy is SHOW_ALL:  # JSON gets a structural preview, the rest every line
        assert shown >= 1000


def test_chunk_boundaries_inside_every_secret(tmp_path: Path) -> None:
    """The whole corpus as one output, fed in pieces cut inside every secret, stored in 4 KiB
    chunks: the same redacted bytes as one piece, and no secret."""
    text = "".join(t for t, _ in DOCS.values()).encode()
    cuts = sorted({text.find(part.encode()) + len(part) // 2 for p in ALL_PLACED
                   for part in secret_parts(p.secret) if text.find(part.encode()) >= 0})
    assert len(cuts) >= 200
    bounds = [0, *cuts, len(text)]
    results = []
    for pieces in ([text], [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)],
                   [text[i:i + 1013] for i in range(0, len(text), 1013)]):
        home = tmp_path / f"h{len(results)}"
        archive = Archive.open(home, ArchivePolicy(chunk_bytes=4096))
        try:
            pipe = OutputPipeline(archive=archive, tool="shell", policy=SHOW_ALL,
                                  command="corpus-dump --all")
            for piece in pieces:
                pipe.feed(piece)
            r = pipe.finish(exit_code=0)
            stored = archive.read(r.entry.id)
            assert leaks(stored, ALL_PLACED) == [] and leaks(r.text, ALL_PLACED) == []
            assert stored.count(b"\n") == text.count(b"\n")
            assert _excerpts_match_archive(r.text, stored) > 1000
            results.append(stored)
        finally:
            archive.close()
        assert all(leaks(c, ALL_PLACED) == [] for _, c in raw_entries(home))
    assert results[0] == results[1] == results[2]


def test_binary_output_strings(tmp_path: Path) -> None:
    rnd = random.Random(7)
    parts = []
    placed = []
    for kind in SECRET_KINDS:  # strings as a binary holds them: config lines, URLs, tokens
        for text, secret in kind.vectors():
            if "\n" in text:
                continue
            parts.append(bytes(rnd.randrange(256) for _ in range(40)) + b"\x00")
            parts.append(text.encode() + b"\x00")
            placed.append(Placed(kind.name, secret))
    assert len(placed) >= 60
    blob = b"\x7fELF\x02\x01\x01\x00" + b"".join(parts)
    path = tmp_path / "prog.bin"
    path.write_bytes(blob)
    home = tmp_path / "home"
    archive = Archive.open(home, ArchivePolicy())
    try:
        out = io.BytesIO()
        result = run_command(shell=f"cat {path} | cat", archive=archive, stdout=out,
                             stderr=io.BytesIO())
        r = result.result
        assert r.digest is not None and r.digest.form == "binary"
        assert "printable strings" in r.text and "[REDACTED:" in r.text
        assert leaks(out.getvalue(), placed) == []
    finally:
        archive.close()
    assert [leaks(c, placed) for _, c in raw_entries(home)] == [[]]


def test_command_lines_and_metadata(tmp_path: Path) -> None:
    pw = "FAKEpgpw9aa8bb7cc"
    token = "FAKEtok" + "x1y2z3" * 5
    key = "sk-proj-FAKE" + "a1B2c3D4" * 6
    shell = (f"PGPASSWORD={pw} bash -c 'seq 1 3000' ; : curl -s -H 'Authorization: Bearer "
             f"{token}' --api-key {key} https://api.example.com")
    home = tmp_path / "home"
    archive = Archive.open(home, ArchivePolicy())
    try:
        out = io.BytesIO()
        result = run_command(shell=shell, archive=archive, policy=FirewallPolicy(min_tokens=100),
                             stdout=out, stderr=io.BytesIO())
        r = result.result
        assert r.digested
        header = next(line for line in r.text.split("\n") if line.startswith("$ "))
        assert "PGPASSWORD=[REDACTED:password]" in header and "seq 1 3000" in header
        for secret in (pw, token, key):
            assert secret not in r.text and secret not in (r.entry.command or "")
            assert secret not in json.dumps(r.entry.extra)
    finally:
        archive.close()
    [(meta, content)] = raw_entries(home)
    assert all(s not in meta for s in (pw, token, key)) and "[REDACTED:" in meta
    assert json.loads(meta)["redactions"] >= 3


def test_real_cli_subprocess(tmp_path: Path) -> None:
    """`ctxgate run -c 'cat FILE'` as an agent runs it: digest and archive hold no secret."""
    text = "".join(t for t, _ in DOCS.values())
    path = tmp_path / "dump.txt"
    path.write_text(text)
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(CTXGATE_HOME=str(home), CTXGATE_CONFIG=str(tmp_path / "none.toml"),
               CTXGATE_FIREWALL__VERBATIM_MAX_TOKENS="100")  # a file read is digested too
    done = subprocess.run(["ctxgate", "run", "-c", f"cat {path}"], capture_output=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.startswith(b"[ctxgate digest: ")
    assert leaks(done.stdout, ALL_PLACED) == [] and leaks(done.stderr, ALL_PLACED) == []
    [(meta, content)] = raw_entries(home)
    assert leaks(content, ALL_PLACED) == [] and leaks(meta, ALL_PLACED) == []
    assert content.count(b"\n") == text.count("\n")
    _excerpts_match_archive(done.stdout.decode(), content)
