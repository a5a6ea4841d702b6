"""Tool results through the firewall in real pydantic-ai runs: digest, expand, tool classes."""

from __future__ import annotations

import json

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturn

from ctxgate.integrations.pydantic_ai import Ctxgate

from .conftest import archive_id, build_log, make_agent, scripted_gate, tool_returns


def test_a_big_output_reaches_the_model_as_a_digest_and_expand_returns_the_asked_lines(archive):
    seen: list[str] = []

    def turn(messages, info):
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("build", {})])
        if len(returns) == 1:
            seen.append(returns[0].content)
            return ModelResponse(parts=[ToolCallPart(
                "expand", {"id": archive_id(returns[0].content), "lines": "1712:1713"})])
        seen.append(returns[1].content)
        return ModelResponse(parts=[TextPart("found it")])

    log = build_log()
    agent = make_agent(turn, Ctxgate(gate=scripted_gate(), archive=archive))
    ran = []

    @agent.tool_plain
    def build() -> str:
        ran.append(1)
        return log

    result = agent.run_sync("build the project and find the error")
    assert result.output == "found it" and ran == [1]
    digest, view = seen
    assert digest.startswith("[ctxgate digest: build output, ")
    assert len(digest.encode()) <= 6000 < len(log.encode())
    assert "1713| module_1712.c:88: error: undefined reference to link_table" in digest
    assert "expand(id=" in digest  # the drill-down names the added tool
    assert "1712| [INFO] compiling module_1712.c" in view
    assert "1713| module_1712.c:88: error: undefined reference to link_table" in view
    assert "1714|" not in view
    # the archive holds the whole output, byte for byte
    assert archive.read(archive_id(digest)) == log.encode()


def test_expand_is_offered_to_the_model_and_a_bad_id_is_a_failed_result_not_a_crash(archive):
    offered: list[list[str]] = []

    def turn(messages, info):
        offered.append([t.name for t in info.function_tools])
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("expand", {"id": "ffffffffffff"})])
        return ModelResponse(parts=[TextPart(returns[0].content)])

    result = make_agent(turn, Ctxgate(gate=scripted_gate(), archive=archive)).run_sync("x")
    assert "expand" in offered[0]
    assert result.output.startswith("Error: EntryNotFound: ")
    assert "ffffffffffff" in result.output
    failed = tool_returns(result.all_messages())[0]
    assert failed.outcome == "failed"


def _one_call_agent(tool_name: str, output: object, capability: Ctxgate):
    def turn(messages, info):
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart(tool_name, {})])
        content = returns[0].content
        return ModelResponse(parts=[TextPart(content if isinstance(content, str)
                                             else json.dumps(content))])

    agent = make_agent(turn, capability)
    agent.tool_plain(name=tool_name)(lambda: output)
    return agent


def test_protected_reads_are_never_digested_and_datasets_stay_whole_below_the_ceiling(archive):
    log = build_log()
    cap = Ctxgate(gate=scripted_gate(), archive=archive, protected_reads=["read_file"],
                  datasets=["run_sql"])
    assert _one_call_agent("read_file", log, cap).run_sync("read it").output == log
    rows = "\n".join(f"{i}|customer_{i}|{i * 7 % 1000}" for i in range(1, 2500))  # ~7k tokens
    assert _one_call_agent("run_sql", rows, cap).run_sync("query").output == rows
    assert _one_call_agent("other", rows, cap).run_sync("x").output.startswith("[ctxgate digest")


def test_a_dataset_over_the_verbatim_ceiling_is_digested(archive):
    from ctxgate.firewall import FirewallPolicy

    rows = "\n".join(f"{i}|customer_{i}" for i in range(1, 3000))
    cap = Ctxgate(gate=scripted_gate(), archive=archive, datasets=["run_sql"],
                  firewall_policy=FirewallPolicy(verbatim_max_tokens=3000))
    text = _one_call_agent("run_sql", rows, cap).run_sync("query").output
    assert text.startswith("[ctxgate digest: run_sql output")
    assert "verbatim_max_tokens" in text


def test_firewalled_limits_digesting_to_the_named_tools(archive):
    log = build_log()
    cap = Ctxgate(gate=scripted_gate(), archive=archive, firewalled=["build"])
    assert _one_call_agent("fetch", log, cap).run_sync("x").output == log
    assert _one_call_agent("build", log, cap).run_sync("x").output.startswith("[ctxgate digest")


def test_structured_and_tool_return_results_are_digested_by_their_json(archive):
    big = {"items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(3000)]}
    cap = Ctxgate(gate=scripted_gate(), archive=archive)
    digest = _one_call_agent("list_items", big, cap).run_sync("list").output
    assert digest.startswith("[ctxgate digest: list_items output")
    assert json.loads(archive.read(archive_id(digest))) == big
    small = {"ok": True, "count": 3}
    assert json.loads(_one_call_agent("count", small, cap).run_sync("c").output) == small
    wrapped = ToolReturn(return_value=build_log(), metadata={"k": 1})
    text = _one_call_agent("build", wrapped, cap).run_sync("b").output
    assert text.startswith("[ctxgate digest: build output")


def test_a_small_output_is_shown_whole_but_redacted_and_unchanged_otherwise(archive):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    cap = Ctxgate(gate=scripted_gate(), archive=archive)
    shown = _one_call_agent("env", f"GITHUB_TOKEN={secret}\nok", cap).run_sync("x").output
    assert secret not in shown and "REDACTED" in shown and shown.endswith("\nok")
    plain = "three short lines\nof output\nno secrets"
    assert _one_call_agent("cat", plain, cap).run_sync("x").output == plain
