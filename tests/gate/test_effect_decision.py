"""How the effect class enters the decision: rules over the model, learned with it, ask, and
approvals that persist across processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import types
from pathlib import Path

import pytest

from ctxgate.errors import ConfigError
from ctxgate.gate import GatePolicy, ToolCall, ToolGate
from ctxgate.gate.audit import AuditLog
from ctxgate.gate.effects.annotations import AnnotationStore
from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource
from ctxgate.gate.grants import GrantStore
from ctxgate.gate.policy import ToolRule

from .conftest import scripted

PUSH = ToolCall(tool="bash", arguments={"command": "git push --force origin main"})


def decide(gate, call, request="show me the log"):
    return asyncio.run(gate.decide(call, user_request=request))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hello')\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", "-C", str(root), "-c", "user.email=t@e", "-c", "user.name=t",
                        *args], check=True, capture_output=True)
    return root


def test_a_rule_destructive_class_needs_a_request_whatever_the_model_says():
    model = scripted(0.05, 0.1)
    v = decide(ToolGate(model), PUSH)
    assert v.outcome == "deny" and v.code == "destructive_unrequested"
    assert v.effect is not None and v.effect.effect is EffectClass.EXTERNAL
    assert v.probabilities == {"destructive": 0.05, "requested": 0.1}  # asked and recorded
    assert "force-pushes" in v.reason and "gate approve" in v.reason
    # a request the model finds clear (the request must say force: the scope check)
    assert decide(ToolGate(scripted(0.05, 0.9)), PUSH, "force-push main to the remote").allowed
    assert decide(ToolGate(scripted(0.05, 0.9)), PUSH).code == "beyond_request"
    assert v.to_dict()["effect"]["source"] == "shell_parser"


def test_the_grey_band_asks_a_person():
    v = decide(ToolGate(scripted(0.05, 0.5)), PUSH)
    assert v.outcome == "ask" and v.code == "ask"
    assert "a person must decide" in v.reason
    off = ToolGate(scripted(0.05, 0.5), GatePolicy(ask_threshold=0.7))
    assert decide(off, PUSH).outcome == "deny"
    with pytest.raises(ConfigError, match="ask_threshold"):
        GatePolicy(ask_threshold=0.8)


def test_a_rule_recoverable_class_is_not_destructive(repo: Path):
    call = ToolCall(tool="write", arguments={"file_path": "src/app.py", "content": "x"},
                    cwd=str(repo))
    v = decide(ToolGate(scripted(0.95, 0.1)), call)
    assert v.allowed and v.effect.effect is EffectClass.LOCAL_RECOVERABLE
    assert "local recoverable by the gate's rules" in v.reason


def test_strong_read_only_needs_no_model_and_no_request():
    model = scripted(0.95, 0.1)
    v = asyncio.run(ToolGate(model).decide(ToolCall(tool="Read", arguments={"file_path": "x"}),
                                           conversation=[]))
    assert v.allowed and v.code == "read_only_effect" and model.calls == []
    for call in (ToolCall(tool="Read", arguments={"file_path": "~/.ssh/id_rsa"}),
                 ToolCall(tool="WebFetch", arguments={"url": "http://127.0.0.1:8080/x"})):
        v = decide(ToolGate(model), call)  # a secret, or a GET on this machine: the model
        assert v.code == "destructive_unrequested" and v.effect.needs_model
    assert len(model.calls) == 2
    v = decide(ToolGate(model), ToolCall(tool="WebFetch", arguments={
        "url": "https://example.com/?k=v"}))  # a plain page: a read by rule
    assert v.code == "read_only_effect" and len(model.calls) == 2


def test_shell_parser_read_only_still_asks_the_model():
    model = scripted(0.95, 0.1)
    gate = ToolGate(model, GatePolicy(fast_path=False))
    v = decide(gate, ToolCall(tool="bash", arguments={"command": "ls -la"}))
    assert v.allowed and v.code == "allowed" and len(model.calls) == 1
    assert v.effect.effect is EffectClass.READ_ONLY


def test_a_missing_script_run_by_its_path_is_judged_by_the_model(tmp_path: Path):
    """``./wipe.sh prod --help``: a script need not honour ``--help``, and one that is not
    there to read (yet) is an unknown run, not a read the rules could claim."""
    model = scripted(0.95, 0.1)
    v = decide(ToolGate(model), ToolCall(tool="bash", arguments={
        "command": "./wipe.sh prod --help"}, cwd=str(tmp_path)))
    assert v.effect is None and v.outcome == "deny" and len(model.calls) == 1, v


@pytest.mark.parametrize("command", [
    "cat $REPORT",  # the fast path does not model expansions
    "kubectl get pods --kubeconfig /tmp/k.yaml",  # a kubeconfig may name an exec plugin
    "bash -c 'less \"$F\"'",
    "export PYTHONPATH=/tmp/evil",  # decides what a later python imports
    "export NODE_OPTIONS='--require /tmp/x.js'",
])
def test_a_read_only_the_rules_only_claim_is_judged_by_the_model(command, tmp_path: Path):
    """The rules list what changes state, so a program or option they do not list looked
    read-only to them (``less '+!cmd'``, ``rg --pre`` did) and the gate allowed it
    unrequested, whatever the model said. Unproved, that claim now leaves the destructive test
    to the model."""
    model = scripted(0.95, 0.1)
    v = decide(ToolGate(model), ToolCall(tool="bash", arguments={"command": command},
                                         cwd=str(tmp_path)))
    assert v.effect.effect is EffectClass.READ_ONLY and v.effect.needs_model, v.effect
    assert v.outcome == "deny" and v.code == "destructive_unrequested" and len(model.calls) == 1
    assert "the model judges" in v.effect.evidence


@pytest.mark.parametrize("command", ["rm --help", "git help reset", "man rm",
                                     "git reset --help", "kubectl get pods", "aws s3 ls",
                                     "kubectl get pods && rm --version", "export Y=3",
                                     "unset X", "set -euo pipefail", "local i=0"])
def test_a_proved_or_vouched_read_only_stays_allowed_whatever_the_model_says(
        command, tmp_path: Path):
    """Mentions of a destructive program are proved by the fast path; read verbs of the CLIs
    the rules know by verb are vouched for by the rules (the model scores both high)."""
    model = scripted(0.99, 0.01)
    v = decide(ToolGate(model), ToolCall(tool="bash", arguments={"command": command},
                                         cwd=str(tmp_path)))
    assert v.allowed, v.reason
    assert v.fast_path or (v.effect.effect is EffectClass.READ_ONLY
                           and not v.effect.needs_model), v.effect


def test_configuration_wins_and_sets_thresholds():
    policy = GatePolicy(tool_rules={
        "send_*": ToolRule(effect="external", requested_threshold=0.95),
        "lookup_*": ToolRule(effect="read_only"),
        "bash": ToolRule(effect="local_recoverable"),
    })
    send = ToolCall(tool="send_email", arguments={"to": "a@example.com"})
    v = decide(ToolGate(scripted(0.01, 0.9), policy), send)
    assert v.outcome == "ask" and v.effect.source is EffectSource.CONFIG  # 0.3 <= 0.9 < 0.95
    assert decide(ToolGate(scripted(0.01, 0.96), policy), send).allowed
    model = scripted(0.99, 0.0)
    v = decide(ToolGate(model, policy), ToolCall(tool="lookup_user", arguments={"id": 1}))
    assert v.code == "read_only_effect" and model.calls == []
    assert decide(ToolGate(scripted(0.99, 0.1), policy), PUSH).allowed  # the user's word
    with pytest.raises(ConfigError, match="not an effect class"):
        ToolRule(effect="harmless")


def _learned(monkeypatch, effect):
    module = types.ModuleType("ctxgate.gate.effects.learned")
    seen = []

    def classify(tool, arguments, *, description=None, input_schema=None):
        seen.append((tool, dict(arguments), description, input_schema))
        return effect

    module.classify = classify
    monkeypatch.setitem(sys.modules, "ctxgate.gate.effects.learned", module)
    return seen


def test_the_learned_source_is_combined_with_the_model(monkeypatch):
    call = ToolCall(tool="frobnicate_funds", arguments={"amount": 5})
    seen = _learned(monkeypatch, Effect(effect=EffectClass.EXTERNAL,
                                        source=EffectSource.LEARNED, evidence="pays",
                                        confidence=0.8))
    v = decide(ToolGate(scripted(0.1, 0.2)), call)
    assert v.outcome == "deny" and v.effect.source is EffectSource.LEARNED  # max(0.1, 0.8)
    assert seen == [("frobnicate_funds", {"amount": 5}, None, None)]
    _learned(monkeypatch, Effect(effect=EffectClass.EXTERNAL, source=EffectSource.LEARNED,
                                 evidence="pays", confidence=0.3))
    assert decide(ToolGate(scripted(0.1, 0.2)), call).allowed  # max(0.1, 0.3) < 0.5
    _learned(monkeypatch, Effect(effect=EffectClass.READ_ONLY, source=EffectSource.LEARNED,
                                 evidence="reads", confidence=0.99))
    assert not decide(ToolGate(scripted(0.9, 0.2)), call).allowed  # never lowers the model


def test_a_missing_learned_classifier_is_skipped(monkeypatch):
    monkeypatch.setitem(sys.modules, "ctxgate.gate.effects.learned", None)  # ImportError
    v = decide(ToolGate(scripted(0.1, 0.2)), ToolCall(tool="frobnicate_funds", arguments={}))
    assert v.allowed and v.effect is None


def test_annotations_from_the_store_and_trusted_servers(tmp_path: Path, monkeypatch):
    home = tmp_path / "home"
    AnnotationStore.in_home(home).record("fs", [
        {"name": "read_file", "annotations": {"readOnlyHint": True}},
        {"name": "file_contents", "annotations": {"readOnlyHint": True}},
        {"name": "write_file", "description": "Write a file",
         "annotations": {"readOnlyHint": False, "openWorldHint": False}}])
    seen = _learned(monkeypatch, None)
    model = scripted(0.05, 0.1)
    gate = ToolGate(model, home=home)
    v = decide(gate, ToolCall(tool="mcp__fs__write_file", arguments={"path": "a"}))
    assert v.outcome == "deny" and v.effect.source is EffectSource.MCP_ANNOTATIONS
    # an untrusted read-only claim lowers nothing: the later sources and the model judge
    v = decide(gate, ToolCall(tool="file_contents", arguments={"path": "a"}, server="fs"))
    assert v.allowed and v.code == "allowed"
    assert seen[-1][0] == "file_contents"  # a name without a verb: the learned classifier
    v = decide(gate, ToolCall(tool="read_file", arguments={"path": "a"}, server="fs"))
    assert v.allowed and v.code == "allowed" and v.effect.source is EffectSource.TOOL_NAME
    trusted = ToolGate(scripted(0.99, 0.0), GatePolicy(trusted_mcp_servers=("fs",)), home=home)
    v = decide(trusted, ToolCall(tool="mcp__fs__read_file", arguments={"path": "a"}))
    assert v.code == "read_only_effect"
    # a trusted server's write is recoverable as annotated, unless it plants code a tool
    # runs on its own (pytest imports conftest.py)
    AnnotationStore.in_home(home).record("fs", [
        {"name": "write_file", "annotations": {"readOnlyHint": False,
                                               "destructiveHint": False,
                                               "openWorldHint": False}}])
    calm = ToolGate(scripted(0.05, 0.0), GatePolicy(trusted_mcp_servers=("fs",)), home=home)
    v = decide(calm, ToolCall(tool="mcp__fs__write_file", cwd=str(tmp_path),
                              arguments={"path": "notes.md", "content": "x"}))
    assert v.allowed and v.effect.source is EffectSource.MCP_ANNOTATIONS
    v = decide(calm, ToolCall(tool="mcp__fs__write_file", cwd=str(tmp_path), arguments={
        "path": "conftest.py", "content": "import shutil\nshutil.rmtree('/srv/x')\n"}))
    assert v.outcome == "deny" and v.effect.effect is EffectClass.LOCAL_IRREVERSIBLE
    assert "pytest imports it" in v.effect.evidence


def test_approvals_persist_across_gates_once(tmp_path: Path):
    home = tmp_path / "home"
    first = ToolGate(scripted(0.05, 0.1), home=home)
    v = decide(first, PUSH)
    assert not v.allowed
    GrantStore.in_home(home).grant(PUSH.tool, v.args_sha256)
    again = ToolGate(scripted(0.05, 0.1), home=home)  # a new process, e.g. the next hook
    v2 = decide(again, PUSH)
    assert v2.allowed and v2.code == "approved"
    assert not decide(ToolGate(scripted(0.05, 0.1), home=home), PUSH).allowed
    assert GrantStore.in_home(home).pending() == []


def test_audit_rows_and_the_cache_carry_the_effect(repo: Path, tmp_path: Path):
    audit = AuditLog(tmp_path / "audit.db")
    gate = ToolGate(scripted(0.95, 0.1), audit=audit)
    rm = ToolCall(tool="bash", arguments={"command": "rm src/app.py"}, cwd=str(repo))
    v = decide(gate, rm)
    assert v.allowed and v.effect.effect is EffectClass.LOCAL_RECOVERABLE
    assert decide(gate, rm).cached
    (repo / "src" / "app.py").write_text("uncommitted work\n")  # now rm would lose it
    v = decide(gate, rm)
    assert not v.allowed and not v.cached
    assert v.effect.effect is EffectClass.LOCAL_IRREVERSIBLE
    rows = audit.query(limit=5)
    assert rows[0].effect["effect"] == "local_irreversible"
    assert rows[-1].effect["effect"] == "local_recoverable"
    assert audit.query(args_prefix=v.args_sha256[:8])[0].id == rows[0].id
    assert audit.query(row_id=rows[0].id)[0].args_sha256 == v.args_sha256


def _model_with_detail(d: float, r: float, detail_effect: dict | None):
    from ctxgate.gate.backends.base import Answer
    from ctxgate.gate.backends.function import FunctionDecisionModel

    def fn(state, questions):
        detail = {"effect": detail_effect} if detail_effect is not None else None
        return [Answer(question_id="destructive", p=d, model_id="m", detail=detail),
                Answer(question_id="requested", p=r, model_id="m")]

    return FunctionDecisionModel(fn=fn, model_id="m", threaded=False)


def test_the_learned_confidence_counts_once(monkeypatch):
    """The local backend's P(destructive) for a function call *is* the learned classifier's
    answer; the gate must not add the same classifier's confidence again through max()."""
    learned = Effect(effect=EffectClass.EXTERNAL, source=EffectSource.LEARNED,
                     evidence="pays", confidence=0.8)
    _learned(monkeypatch, learned)
    call = ToolCall(tool="frobnicate_funds", arguments={"amount": 5})
    # the backend says its 0.4 already weighed that very classifier: 0.4 alone decides
    counted = _model_with_detail(0.4, 0.2, learned.to_dict())
    v = decide(ToolGate(counted), call)
    assert v.allowed and v.probabilities["destructive"] == 0.4
    # an independent backend (no such detail): the learned class is a second evidence
    assert not decide(ToolGate(_model_with_detail(0.4, 0.2, None)), call).allowed
    # a detail naming a rule-based effect is not the learned classifier: still combined
    rule = {**learned.to_dict(), "source": "shell_parser"}
    assert not decide(ToolGate(_model_with_detail(0.4, 0.2, rule)), call).allowed


def test_the_local_backend_and_the_gate_agree_on_a_learned_call():
    """With the real local backend the gate's destructive score is the backend's own."""
    from ctxgate.gate.loader import load_decision_model

    gate = ToolGate(load_decision_model("local", GatePolicy()))
    v = decide(gate, ToolCall(tool="acme_widget", arguments={
        "url": "https://hooks.example/in", "payload": "x"}))  # no rule knows this name
    assert v.effect is not None and v.effect.source is EffectSource.LEARNED
    assert v.effect.effect is EffectClass.EXTERNAL
    assert v.outcome == "deny" and v.probabilities["destructive"] == v.effect.confidence


def test_the_local_backend_says_its_function_call_score_is_the_learned_one():
    """The contract single counting relies on: for a function call the local backend's
    destructive answer carries the learned effect it used (if that detail went away, the gate
    would count the learned confidence twice again)."""
    from ctxgate.gate.backends.local import LocalDecisionModel
    from ctxgate.gate.effects.learned import classify
    from ctxgate.gate.gate import _model_counted_learned

    args = {"url": "https://hooks.example/in", "payload": "x"}
    answers = LocalDecisionModel().decide(
        {"user_request": "show the log", "tool_call": {"tool": "acme_widget", "arguments": args}},
        ["destructive", "requested"])
    by_id = {a.question_id: a for a in answers}
    effect = classify("acme_widget", args)
    assert effect.source is EffectSource.LEARNED
    assert _model_counted_learned(by_id, effect)
    shell = LocalDecisionModel().decide(
        {"user_request": "show the log", "tool_call": {"tool": "bash",
                                                      "arguments": {"command": "ls"}}},
        ["destructive", "requested"])
    assert not _model_counted_learned({a.question_id: a for a in shell}, effect)


SCRIPT_RUN = "cat > repro.py << 'EOF'\nimport sys\nprint(sys.version)\nEOF\npython repro.py"


def test_the_model_is_told_which_writes_the_rules_judged_recoverable(repo: Path):
    """A repro script written and run in one command: the run is unknown, so the model
    judges; the state it sees says the write (a new file in the working tree) was judged
    recoverable. Nothing is said when a write is destructive (the rules decide alone) or
    when the command writes nothing."""
    seen = []

    def fn(state, questions):
        from ctxgate.gate.backends.base import Answer

        seen.append(state)
        return [Answer(question_id=q.id, p=0.1, model_id="s") for q in questions]

    from ctxgate.gate.backends.function import FunctionDecisionModel

    gate = ToolGate(FunctionDecisionModel(fn=fn, model_id="s", threaded=False))
    v = decide(gate, ToolCall(tool="bash", arguments={"command": SCRIPT_RUN}, cwd=str(repo)))
    assert v.effect is None and v.allowed
    rules = seen[-1]["effect_rules"]
    assert rules["writes"] == "recoverable"
    assert "creates a new file inside the working tree" in rules["evidence"][0]
    decide(gate, ToolCall(tool="bash", arguments={"command": "python repro.py"}, cwd=str(repo)))
    assert "effect_rules" not in seen[-1]
    c = "cat > main.c << 'EOF'\nint main(){}\nEOF\ncc main.c -o m && ./m"  # scans cannot read C
    decide(gate, ToolCall(tool="bash", arguments={"command": c}, cwd=str(repo)))
    assert "effect_rules" not in seen[-1]
    go = "cat > main.go << 'EOF'\npackage main\nEOF\ngo run main.go"  # Go is read now
    decide(gate, ToolCall(tool="bash", arguments={"command": go}, cwd=str(repo)))
    assert seen[-1]["effect_rules"]["writes"] == "recoverable"
    (repo / "notes.txt").write_text("mine, never committed\n")
    v = decide(gate, ToolCall(tool="bash", arguments={
        "command": "echo x > notes.txt; python repro.py"}, cwd=str(repo)))
    assert v.effect.effect is EffectClass.LOCAL_IRREVERSIBLE and not v.allowed


def test_the_local_model_does_not_floor_a_write_the_rules_judged(repo: Path):
    """The local model floors an overwrite at 0.6 (over the deny threshold) because nobody
    looked at it; with the rules' judgement in the state that floor is waived and its own
    head decides (honest work: 7 of 1,425 commands were refused only for it)."""
    from ctxgate.gate.backends.base import Question
    from ctxgate.gate.backends.local import LocalDecisionModel

    model = LocalDecisionModel()
    qs = [Question(id="destructive", kind="noul", text="destructive?")]
    state = {"user_request": "fix the crash on empty input",
             "tool_call": {"tool": "bash", "arguments": {"command": SCRIPT_RUN}}}
    plain = asyncio.run(model.evaluate(state, qs))[0]
    judged = asyncio.run(model.evaluate(
        dict(state, effect_rules={"writes": "recoverable", "evidence": []}), qs))[0]
    assert plain.detail["rule"] == "overwrite_redirect" and plain.p >= 0.6
    assert judged.detail["rule"] is None
    assert judged.detail["write_floor_waived"] == "overwrite_redirect"
    assert judged.p == pytest.approx(judged.detail["head_p"], abs=1e-6)
    rm = {"user_request": "x", "tool_call": {"tool": "bash", "arguments": {
        "command": "rm -rf build > log.txt"}}, "effect_rules": {"writes": "recoverable"}}
    assert asyncio.run(model.evaluate(rm, qs))[0].p >= 0.9  # hard rules are never waived
