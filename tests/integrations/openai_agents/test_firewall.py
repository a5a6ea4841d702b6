"""Tool results through the firewall: a big output reaches the model as a digest, ``expand``
reads the asked lines back, protected reads and dataset tools stay whole, a session batch is
bounded with the marker and the turn kept. Real SDK, real HTTP to a scripted local server."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from agents import Agent, Runner, SQLiteSession, ToolOutputImage, ToolOutputText, function_tool

from ctxgate.bound import parse_marker
from ctxgate.integrations.openai_agents import AgentGuard, BoundedSession

from .conftest import model_for
from .responses_server import ResponsesServer, call, function_outputs, text

BUILD_LOG = "\n".join(
    ("module_1712.c:88: error: undefined reference to link_table" if i == 1712
     else f"[INFO] compiling module_{i}.c") for i in range(1, 3001)) + "\n"


def tools(ran: list[str]):
    @function_tool
    def run_build(target: str) -> str:
        """Build a target and return its log."""
        ran.append(f"run_build {target}")
        return BUILD_LOG

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(f"read_file {path}")
        return BUILD_LOG

    @function_tool
    def query_db(sql: str) -> str:
        """Run a read-only SQL query."""
        ran.append(f"query_db {sql}")
        return "\n".join(f"{i}|user_{i}|active" for i in range(1, 1501))

    return [run_build, read_file, query_db]


def allow_all(tool_call, request):
    return {"destructive": 0.05, "requested": 0.9}


def _archive_id(digest: str) -> str:
    found = re.search(r"archive id ([0-9a-f]{12})", digest)
    assert found, digest[:400]
    return found.group(1)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_big_output_is_a_digest_and_expand_returns_the_asked_lines(store, tmp_path) -> None:
    from ctxgate.archive import Archive

    from .conftest import scripted_gate

    archive = Archive() if store == "memory" else Archive.open(tmp_path / "home")

    ran: list[str] = []
    seen: dict[str, str] = {}

    def ask_expand(body):
        seen["digest"] = function_outputs(body)["c1"]
        return [call("expand", {"id": _archive_id(seen["digest"]), "lines": "1711:1713"}, "c2")]

    def finish(body):
        seen["view"] = function_outputs(body)["c2"]
        return [text("The build fails at module_1712.c:88.")]

    with ResponsesServer([[call("run_build", {"target": "all"}, "c1")], ask_expand,
                          finish]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive)
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=tools(ran)))
        assert [t.name for t in agent.tools] == ["run_build", "read_file", "query_db", "expand"]
        result = Runner.run_sync(agent, "build everything and tell me what failed")
    digest = seen["digest"]
    assert digest.startswith("[ctxgate digest: run_build output")
    assert len(digest.encode()) <= 6000 < len(BUILD_LOG.encode())
    assert "1712| module_1712.c:88: error: undefined reference to link_table" in digest
    assert 'expand(id="' in digest
    view = seen["view"]
    assert "1711| [INFO] compiling module_1711.c" in view
    assert "1712| module_1712.c:88: error: undefined reference to link_table" in view
    assert "1713| [INFO] compiling module_1713.c" in view
    assert "1710|" not in view and "1714|" not in view
    assert result.final_output == "The build fails at module_1712.c:88."
    assert archive.read(_archive_id(digest)).decode() == BUILD_LOG


def test_expand_errors_reach_the_model_as_text(archive) -> None:
    from .conftest import scripted_gate

    with ResponsesServer([[call("expand", {"id": "0123456789ab", "lines": "1:5"}, "c1")],
                          [text("That id is gone.")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive)
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=[]))
        Runner.run_sync(agent, "show me the log")
    seen = function_outputs(server.requests[1])["c1"]
    assert seen.startswith("Error: EntryNotFound:") and "0123456789ab" in seen


def test_protected_reads_and_datasets_stay_whole(archive) -> None:
    from .conftest import scripted_gate

    ran: list[str] = []
    with ResponsesServer([[call("read_file", {"path": "build.log"}, "c1"),
                           call("query_db", {"sql": "select * from users"}, "c2"),
                           call("run_build", {"target": "all"}, "c3")],
                          [text("ok")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive,
                           protected_reads={"read_file"}, datasets={"query_db"})
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=tools(ran)))
        Runner.run_sync(agent, "read the log, list the users and build")
    outputs = function_outputs(server.requests[1])
    assert outputs["c1"] == BUILD_LOG  # explicit file read: never digested
    assert outputs["c2"].splitlines()[1499] == "1500|user_1500|active"  # dataset: whole
    assert outputs["c3"].startswith("[ctxgate digest:")


def test_a_dataset_tool_above_the_ceiling_is_digested(archive) -> None:
    from dataclasses import replace

    from ctxgate.settings import load_config

    from .conftest import scripted_gate

    config = load_config()
    config = replace(config, firewall=replace(config.firewall, verbatim_max_tokens=3000))
    with ResponsesServer([[call("query_db", {"sql": "select *"}, "c1")],
                          [text("ok")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive,
                           datasets={"query_db"}, config=config)
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=tools([])))
        Runner.run_sync(agent, "list the users")
    seen = function_outputs(server.requests[1])["c1"]
    assert seen.startswith("[ctxgate digest: query_db output")
    assert "verbatim_max_tokens (3,000)" in seen


def test_streaming_run_gets_the_digest(archive) -> None:
    from .conftest import scripted_gate

    with ResponsesServer([[call("run_build", {"target": "all"}, "c1")],
                          [text("done")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive)
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=tools([])))

        async def go():
            result = Runner.run_streamed(agent, "build")
            outputs = [e.item.output async for e in result.stream_events()
                       if e.type == "run_item_stream_event" and e.name == "tool_output"]
            return outputs

        outputs = asyncio.run(go())
    assert len(outputs) == 1 and outputs[0].startswith("[ctxgate digest: run_build output")
    assert function_outputs(server.requests[1])["c1"] == outputs[0]


def test_session_batch_is_bounded_and_the_turn_kept(archive, tmp_path) -> None:
    from .conftest import scripted_gate

    big = "".join(f"line {i:06d} of a large file\n" for i in range(20_000))  # ~540 KB

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return big

    batches: list[int] = []

    class Recording(SQLiteSession):
        async def add_items(self, items):
            batches.append(len(json.dumps({"items": items}, ensure_ascii=False,
                                          separators=(",", ":")).encode()))
            await super().add_items(items)

    inner = Recording("bounded", str(tmp_path / "s.db"))
    with ResponsesServer([[call("read_file", {"path": "big.txt"}, "c1")],
                          [text("It is a big file.")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive,
                           protected_reads={"read_file"})
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=[read_file]))
        session = guard.session(inner, max_bytes=64 * 1024)
        assert isinstance(session, BoundedSession)
        Runner.run_sync(agent, "read big.txt", session=session)
    assert function_outputs(server.requests[1])["c1"] == big  # the model got it whole
    items = asyncio.run(inner.get_items())
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message", "function_call", "function_call_output", "message"]
    assert items[0]["content"] == "read big.txt"
    assert items[-1]["content"][0]["text"] == "It is a big file."
    stored = items[2]["output"]
    marker = parse_marker(stored)
    assert marker is not None and marker.original_bytes == len(big.encode())
    assert batches and max(batches) <= 64 * 1024  # every batch the store got fits
    assert stored.startswith("line 000000 of a large file\n")
    assert archive.read(marker.archive_id).decode() == big


def test_real_local_gate_backend(archive) -> None:
    """The default offline decision model, no scripted answers."""
    from ctxgate.gate import GatePolicy, ToolGate
    from ctxgate.gate.loader import load_decision_model

    policy = GatePolicy(cache_ttl_seconds=0)
    gate = ToolGate(load_decision_model("local", policy), policy)
    ran: list[str] = []

    @function_tool
    def delete_database(name: str) -> str:
        """Drop a production database and all of its data."""
        ran.append(name)
        return f"dropped {name}"

    def step(body):
        return [call("delete_database", {"name": "customers"}, f"c{len(ran) + 1}")]

    with ResponsesServer([step, [text("Refused.")], step, [text("Dropped.")]]) as server:
        agent = AgentGuard(gate=gate, archive=archive).agent(
            Agent(name="dba", model=model_for(server), tools=[delete_database]))
        Runner.run_sync(agent, "show me how many rows the customers table has")
        assert ran == []
        denied = function_outputs(server.requests[1])["c1"]
        Runner.run_sync(agent, "delete the customers database, we do not need it any more")
    assert denied.startswith("Error: Tool gate:")
    assert ran == ["customers"]


def test_small_results_are_shown_whole_with_secrets_redacted(archive) -> None:
    from .conftest import scripted_gate

    @function_tool
    def show_config(name: str) -> str:
        """Show a config file."""
        return "deploy_user=ci\ntoken=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"

    @function_tool
    def show_settings(name: str) -> dict:
        """Show settings as JSON."""
        return {"region": "eu", "password": "hunter2hunter2"}

    with ResponsesServer([[call("show_config", {"name": "ci"}, "c1"),
                           call("show_settings", {"name": "ci"}, "c2")],
                          [text("ok")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive)
        agent = guard.agent(Agent(name="dev", model=model_for(server),
                                  tools=[show_config, show_settings]))
        Runner.run_sync(agent, "show the ci config")
    outputs = function_outputs(server.requests[1])
    assert outputs["c1"] == "deploy_user=ci\ntoken=[REDACTED:secret]\n"
    assert "hunter2" not in outputs["c2"] and '"region": "eu"' in outputs["c2"]
    assert archive.list() == []  # shown whole: nothing to expand, nothing archived


def test_an_image_result_reaches_the_model_untouched(archive) -> None:
    from .conftest import scripted_gate

    url = "data:image/png;base64," + "iVBORw0KGgo" * 5000  # ~55 KB, far over min_tokens

    @function_tool
    def screenshot(page: str) -> ToolOutputImage:
        """Take a screenshot."""
        return ToolOutputImage(image_url=url)

    with ResponsesServer([[call("screenshot", {"page": "home"}, "c1")],
                          [text("looks fine")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive)
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=[screenshot]))
        Runner.run_sync(agent, "check the home page")
    [item] = [i for i in server.requests[1]["input"] if i.get("type") == "function_call_output"]
    assert item["output"][0]["type"] == "input_image"
    assert item["output"][0]["image_url"] == url
    assert archive.list() == []


def test_a_mixed_text_and_image_result_has_its_text_digested_and_keeps_the_image(archive) -> None:
    from ctxgate.integrations._adapter import result_parts

    from .conftest import scripted_gate

    url = "data:image/png;base64," + "iVBORw0KGgo" * 500
    log = "".join(f"[INFO] step {i} ok\n" for i in range(4000))
    image = ToolOutputImage(image_url=url)
    assert result_parts(ToolOutputText(text="hi")) == ("hi", [])
    assert result_parts(image) == (None, [image])
    assert result_parts([ToolOutputText(text="see"), image]) == ("see", [image])

    @function_tool
    def capture(page: str) -> list[ToolOutputText | ToolOutputImage]:
        """Capture the page's log and a screenshot."""
        return [ToolOutputText(text=log), ToolOutputImage(image_url=url)]

    with ResponsesServer([[call("capture", {"page": "home"}, "c1")],
                          [text("done")]]) as server:
        guard = AgentGuard(gate=scripted_gate(allow_all), archive=archive)
        agent = guard.agent(Agent(name="dev", model=model_for(server), tools=[capture]))
        Runner.run_sync(agent, "capture the home page")
    [item] = [i for i in server.requests[1]["input"] if i.get("type") == "function_call_output"]
    first, second = item["output"]
    assert first["type"] == "input_text" and first["text"].startswith("[ctxgate digest: capture")
    assert len(first["text"].encode()) < len(log.encode()) // 4
    assert second["type"] == "input_image" and second["image_url"] == url
    [entry] = archive.list()
    assert archive.read(entry.id) == log.encode()
