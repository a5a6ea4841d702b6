"""Large results reach the model as a digest; the added expand tool reads them back."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from ctxgate.integrations.langchain import CtxgateMiddleware

from .conftest import ScriptedChatModel, archive_id, call, scripted_gate, steps, tool_messages

LOG = "".join(f"[INFO] compiling module_{i}.c\n" + (
    "module_1712.c:88: error: undefined reference to link_table\n" if i == 1712 else "")
    for i in range(1, 3001))


@tool
def build() -> str:
    """Run the build and return its log."""
    return LOG


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return LOG


@tool
def run_sql(query: str) -> str:
    """Run a SQL query."""
    return "\n".join(f"{i}|customer_{i}|paid" for i in range(1, 1501))


def _agent(model, archive, judged=None, **kwargs):
    def allow(state):
        if judged is not None:
            judged.append(state["tool_call"]["tool"])
        return {"destructive": 0.0, "requested": 1.0}

    gate, _ = scripted_gate(allow)
    return create_agent(model, [build, read_file, run_sql], middleware=[
        CtxgateMiddleware(gate, archive=archive, **kwargs)])


def test_big_output_reaches_the_model_as_a_digest_and_expand_returns_the_lines(archive):
    shown: dict[str, str] = {}

    def expand_the_error(messages):
        digest = messages[-1].content
        shown["digest"] = digest
        return AIMessage(content="", tool_calls=[call("expand", id=archive_id(digest),
                                                      lines="1712:1713")])

    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=[call("build")]),
                                           expand_the_error, AIMessage(content="found it")))
    judged: list[str] = []
    result = _agent(model, archive, judged).invoke(
        {"messages": [HumanMessage("why did the build fail?")]})
    assert judged == ["build"]  # the adapter's own expand is not gated

    assert "expand" in model.bound  # the middleware added its tool to the agent
    digest = shown["digest"]
    assert digest.startswith("[ctxgate digest: build output")
    assert len(digest.encode()) <= 6000 < len(LOG.encode())
    assert "module_1712.c:88: error: undefined reference to link_table" in digest
    build_msg, expand_msg = tool_messages(result["messages"])
    assert build_msg.content == digest  # the persisted state holds the digest, not the log
    assert build_msg.response_metadata["ctxgate"]["firewall"] == "digest"
    assert build_msg.response_metadata["ctxgate"]["archive_id"] == archive_id(digest)
    assert expand_msg.status == "success"
    assert "1712| [INFO] compiling module_1712.c" in expand_msg.content
    assert "1713| module_1712.c:88: error: undefined reference to link_table" in expand_msg.content
    assert "1714|" not in expand_msg.content
    assert result["messages"][-1].content == "found it"


def test_expand_with_a_bad_id_is_an_error_result_and_the_run_goes_on(archive):
    model = ScriptedChatModel(script=steps(
        AIMessage(content="", tool_calls=[call("expand", id="0123456789ab", lines="1:5")]),
        AIMessage(content="ok")))
    result = _agent(model, archive).invoke({"messages": [HumanMessage("show me")]})
    (msg,) = tool_messages(result["messages"])
    assert msg.status == "error"
    assert "EntryNotFound" in msg.content and "0123456789ab" in msg.content
    assert result["messages"][-1].content == "ok"


def test_protected_reads_and_datasets_are_configured_per_tool(archive):
    model = ScriptedChatModel(script=steps(
        AIMessage(content="", tool_calls=[call("read_file", path="build.log"),
                                          call("run_sql", query="select * from customers")]),
        AIMessage(content="ok")))
    result = _agent(model, archive, protected_reads=["read_file"],
                    datasets=["run_sql"]).invoke({"messages": [HumanMessage("read it")]})
    read, rows = tool_messages(result["messages"])
    assert read.content == LOG  # an explicit file read is never digested
    assert read.response_metadata["ctxgate"]["firewall"] == "protected_read"
    assert rows.content.startswith("1|customer_1|paid") and "750|customer_750|paid" in rows.content
    assert rows.response_metadata["ctxgate"]["firewall"] == "dataset"  # verbatim below the ceiling

    # without the configuration the same outputs are digested
    model = ScriptedChatModel(script=steps(
        AIMessage(content="", tool_calls=[call("read_file", path="build.log"),
                                          call("run_sql", query="select * from customers")]),
        AIMessage(content="ok")))
    result = _agent(model, archive).invoke({"messages": [HumanMessage("read it")]})
    read, rows = tool_messages(result["messages"])
    assert read.response_metadata["ctxgate"]["firewall"] == "protected_read"  # a default name
    assert rows.response_metadata["ctxgate"]["firewall"] == "digest"


def test_small_results_are_shown_whole_with_secrets_redacted(archive):
    @tool
    def env() -> str:
        """Print the environment."""
        return "PATH=/usr/bin\nDB_PASSWORD=hunter2hunter2\n"

    gate, _ = scripted_gate({"destructive": 0.0, "requested": 1.0})
    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=[call("env")])))
    agent = create_agent(model, [env], middleware=[CtxgateMiddleware(gate, archive=archive)])
    (msg,) = tool_messages(agent.invoke({"messages": [HumanMessage("env?")]})["messages"])
    assert msg.content.startswith("PATH=/usr/bin\nDB_PASSWORD=")
    assert "hunter2hunter2" not in msg.content and "[REDACTED:" in msg.content
    assert msg.response_metadata["ctxgate"]["firewall"] == "below_threshold"


def test_a_broken_archive_never_blocks_a_result(tmp_path, monkeypatch):
    """The default archive (CTXGATE_HOME) under a regular file cannot open: the big result is
    still bounded by the digest budget and says it was not archived; the run goes on."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("CTXGATE_HOME", str(blocker / "home"))
    gate, _ = scripted_gate({"destructive": 0.0, "requested": 1.0})
    model = ScriptedChatModel(script=steps(AIMessage(content="", tool_calls=[call("build")]),
                                           AIMessage(content="ok")))
    agent = create_agent(model, [build], middleware=[CtxgateMiddleware(gate)])
    result = agent.invoke({"messages": [HumanMessage("build it")]})
    (msg,) = tool_messages(result["messages"])
    assert "not archived" in msg.content and len(msg.content.encode()) <= 6001
    assert "archive_id" not in msg.response_metadata["ctxgate"]
    assert result["messages"][-1].content == "ok"
