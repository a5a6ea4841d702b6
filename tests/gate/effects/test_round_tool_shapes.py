"""Probed tool shapes that ran unrequested: Anthropic's text editor and computer-use tools,
the Responses API's ``local_shell`` action, IPython's shell magics, GraphQL mutations."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.resolve import resolve_effect
from ctxgate.gate.policy import DEFAULT_GATE_POLICY

RO, R, IRR = EffectClass.READ_ONLY, EffectClass.LOCAL_RECOVERABLE, EffectClass.LOCAL_IRREVERSIBLE
X = EffectClass.EXTERNAL


def effect(cwd: Path, tool: str, args: dict):
    return resolve_effect(tool, args, policy=DEFAULT_GATE_POLICY, cwd=str(cwd))


@pytest.mark.parametrize(("tool", "args", "expected"), [
    ("str_replace_based_edit_tool", {"command": "view", "path": "src/app.py"}, RO),
    ("str_replace_editor", {"command": "view", "path": "/etc/hosts"}, RO),
    ("str_replace_based_edit_tool", {"command": "create", "path": "~/.bashrc",
                                     "file_text": "alias x=y"}, IRR),
    ("text_editor", {"command": "str_replace", "path": "src/app.py", "old_str": "hello",
                     "new_str": "bye"}, R),
    ("str_replace_based_edit_tool", {"command": "create", "path": "conftest.py",
                                     "file_text": "import shutil\nshutil.rmtree('/srv')\n"}, IRR),
    ("str_replace_based_edit_tool", {"command": "rename", "path": "src/app.py"}, IRR),
    ("local_shell", {"action": {"type": "exec", "command": ["rm", "-rf", "~"]}}, IRR),
    ("local_shell", {"action": {"type": "exec", "command": ["ls", "-la"],
                                "working_directory": "/tmp"}}, RO),
    ("computer", {"action": "screenshot"}, RO),
    ("computer", {"action": "key", "text": "ctrl+alt+Delete"}, X),
    ("computer", {"action": "left_click", "coordinate": [10, 10]}, X),
    ("computer", {"action": "type", "text": "rm -rf ~\n"}, X),
])
def test_harness_tool_shapes(repo: Path, tool: str, args: dict, expected) -> None:
    e = effect(repo, tool, args)
    assert e is not None and e.effect is expected, (tool, args, e)


@pytest.mark.parametrize("code", [
    "%rm -rf ~/work", "%system rm -rf ~/work", "files = %sx rm -rf ~/work", "!!rm -rf ~/work",
    "out = !rm -rf ~/work", "%mv ~/work /dev/null",
])
def test_ipython_shell_magics_are_shell_commands(repo: Path, code: str) -> None:
    e = effect(repo, "ipython", {"code": code})
    assert e is not None and e.effect is IRR, (code, e)


def test_an_ipython_listing_is_not_a_change(repo: Path) -> None:
    e = effect(repo, "ipython", {"code": "%ls -la\nx = 1"})
    assert e is None or not e.effect.destructive, e


@pytest.mark.parametrize(("tool", "query", "words"), [
    ("graphql", 'mutation { deleteRepository(input:{repositoryId:"R1"}) { clientMutationId } }',
     "deletes something for good"),
    ("graphql", "mutation M($i: ID!) { addStar(input:{starrableId:$i}) { clientMutationId } }",
     "addStar"),
    ("mcp__github__graphql", "# merge it\nmutation {\n  m: mergePullRequest(input:{pullRequestId:"
     '"P"}) { clientMutationId }\n}', "mergePullRequest"),
    ("api_call", 'mutation { removeMember(id: "u1") { ok } }', "removeMember"),
])
def test_a_graphql_mutation_changes_a_remote_service(repo: Path, tool: str, query: str,
                                                      words: str) -> None:
    e = effect(repo, tool, {"query": query})
    assert e is not None and e.effect is X and words in e.evidence, e


@pytest.mark.parametrize("query", ["query { viewer { login } }",
                                   '{ repository(owner:"a", name:"b") { name } }',
                                   "# mutation later\nquery { viewer { login } }"])
def test_a_graphql_query_is_not_taken_for_a_mutation(repo: Path, query: str) -> None:
    e = effect(repo, "graphql", {"query": query})
    assert e is None or e.effect is not X, e


@pytest.mark.parametrize(("args", "expected"), [
    ({"server_name": "github", "tool_name": "delete_repository",
      "arguments": '{"owner": "a", "repo": "b"}'}, X),
    ({"server_name": "fs", "tool_name": "read_file", "arguments": '{"path": "README.md"}'}, RO),
    ({"server_name": "shell", "tool_name": "execute", "arguments": {"command": "rm -rf ~"}},
     IRR),
])
def test_a_tool_that_calls_an_mcp_tool_is_judged_as_that_call(repo: Path, args: dict,
                                                                expected) -> None:
    e = effect(repo, "use_mcp_tool", args)
    assert e is not None and e.effect is expected, e


@pytest.mark.parametrize("tool", ["update_plan", "finish", "think"])
def test_agent_bookkeeping_tools_only_read(repo: Path, tool: str) -> None:
    e = effect(repo, tool, {"plan": [{"step": "delete everything", "status": "pending"}]})
    assert e is not None and e.effect is RO, e
