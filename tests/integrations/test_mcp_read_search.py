"""`read`, `list` and `search` of `ctxgate mcp serve`, through the real MCP SDK stdio client,
over the SQLite archive and a real Redis (issue 11 item 5)."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import anyio
import pytest

from .test_mcp import client, text_of

ID = re.compile(r"\b[0-9a-f]{12}\b")
REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """The archive the server process uses (it inherits the environment)."""
    if request.param == "redis":
        import redis

        prefix = f"ctxgate-mcp-test-{uuid.uuid4().hex}:"
        monkeypatch.setenv("CTXGATE_ARCHIVE_BACKEND", "redis")
        monkeypatch.setenv("CTXGATE_REDIS_URL", REDIS_URL)
        monkeypatch.setenv("CTXGATE_ARCHIVE__REDIS_PREFIX", prefix)
        yield request.param
        conn = redis.Redis.from_url(REDIS_URL)
        for key in conn.scan_iter(match=f"{prefix}*"):
            conn.delete(key)
        return
    yield request.param


def test_read_list_and_search_through_a_real_client(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("".join(f"[INFO] compiling module {i}\n" for i in range(20_000))
                   + "[ERROR] Connection refused: db.internal:5432 (attempt 3)\n"
                   + "".join(f"[INFO] cleanup {i}\n" for i in range(300)))
    small = tmp_path / "notes.txt"
    small.write_text("alpha\nbeta\ngamma\n")
    big = tmp_path / "big.txt"
    big.write_text("".join(f"row {i} " + "word " * 30 + "\n" for i in range(4_000)))

    async def main() -> None:
        async with client(["serve", "--no-gate"]) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"run", "expand", "read", "list", "search"} <= names
            # read: the file itself, never a digest, line ranges, a clear next page
            whole = await s.call_tool("read", {"path": str(small)})
            assert not whole.is_error
            assert text_of(whole).splitlines()[1:] == ["alpha", "beta", "gamma"]
            part = await s.call_tool("read", {"path": str(small), "lines": "2:2"})
            assert text_of(part).splitlines()[1:] == ["beta"]
            first = await s.call_tool("read", {"path": str(big)})
            page = text_of(first)
            assert "digest" not in page and "row 0 word" in page
            nxt = re.search(r'next: read\(path="[^"]+", lines="(\d+):"\)', page)
            assert nxt, page[-300:]
            start = int(nxt.group(1))
            assert 100 < start < 4_000  # stopped at the 25,000-token ceiling, on a line
            second = await s.call_tool("read", {"path": str(big), "lines": f"{start}:"})
            assert text_of(second).splitlines()[1].startswith(f"row {start - 1} ")
            tight = await s.call_tool("read", {"path": str(big), "max_tokens": 500})
            assert len(text_of(tight)) < 4_000
            for bad, what in ((str(tmp_path / "missing.txt"), "no such file"),
                              (str(tmp_path), "is a directory"),
                              (str(_binary(tmp_path)), "binary file")):
                res = await s.call_tool("read", {"path": bad})
                assert res.is_error and what in text_of(res), text_of(res)
            wrong = await s.call_tool("read", {"path": str(small), "bogus": 1})
            assert wrong.is_error and "unknown argument" in text_of(wrong)
            # archive two outputs, then list and search them
            run = await s.call_tool("run", {"command": f"cat {log} | cat"})
            entry = ID.search(text_of(run)).group(0)
            await s.call_tool("run", {"command": "seq 1 40000 | sed 's/^/n=/'"})
            listed = text_of(await s.call_tool("list", {"limit": 5}))
            assert entry in listed and "seq 1 40000" in listed
            found = await s.call_tool("search", {"query": "connection REFUSED 5432"})
            hit = text_of(found)
            assert not found.is_error
            m = re.search(rf"--- ({entry}) .*\n\s*(\d+)\| \[ERROR\] Connection refused", hit)
            assert m, hit
            line = int(m.group(2))
            assert line == 20_001
            view = await s.call_tool("expand", {"id": entry, "lines": f"{line}:{line}"})
            assert "Connection refused" in text_of(view)
            few = text_of(await s.call_tool("search", {"query": "n=3999", "limit": 3}))
            assert few.count("| n=3999") == 3 and "more matches" in few
            none = text_of(await s.call_tool("search", {"query": "no-such-text-anywhere"}))
            assert "no matching lines" in none
            empty = await s.call_tool("search", {"query": "  "})
            assert empty.is_error and "give a query" in text_of(empty)
            method = "fts5" if backend == "sqlite" else "scan"
            assert method in hit

    anyio.run(main)


def _binary(tmp_path: Path) -> Path:
    path = tmp_path / "blob.bin"
    path.write_bytes(os.urandom(4096) + b"\x00" * 100)
    return path
