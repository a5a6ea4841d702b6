"""The learned effect classifier for unknown tools, on calls it was never trained on."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from ctxgate.errors import GateError
from ctxgate.gate.effects import learned
from ctxgate.gate.effects.model import EffectClass, EffectSource

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(("tool", "arguments", "expected"), [
    ("send_email", {"to": "dana@example.com", "subject": "Report", "body": "Attached."},
     {EffectClass.EXTERNAL}),
    ("transfer_money", {"to_account": "DE89370400440532013000", "amount": 84.2,
                        "currency": "EUR"}, {EffectClass.EXTERNAL}),
    ("invite_user", {"email": "kim@example.com", "role": "admin"}, {EffectClass.EXTERNAL}),
    ("get_weather", {"city": "Lyon", "date": "tomorrow"}, {EffectClass.READ_ONLY}),
    ("list_files", {"path": "src/"}, {EffectClass.READ_ONLY}),
    ("delete_file", {"path": "notes.txt"}, {EffectClass.LOCAL_IRREVERSIBLE}),
    ("create_directory", {"path": "build/out"}, {EffectClass.LOCAL_RECOVERABLE}),
])
def test_classes_of_calls_never_trained_on(tool, arguments, expected):
    eff = learned.classify(tool, arguments)
    assert eff.effect in expected, eff
    assert eff.source is EffectSource.LEARNED
    assert 0.5 <= eff.confidence <= 1.0
    assert "P(changes state)=" in eff.evidence


def test_description_and_schema_are_used():
    plain = learned.p_changes_state("run", {"id": "7"})[0]
    described = learned.p_changes_state(
        "run", {"id": "7"}, description="Permanently deletes the project and all its data.",
        input_schema={"properties": {"id": {}, "confirm": {}}})[0]
    assert described > plain


def test_same_input_same_effect_in_this_and_a_fresh_process():
    args = {"to": "dana@example.com", "body": "hi"}
    a = learned.classify("send_email", args, description="Send an e-mail")
    b = learned.classify("send_email", args, description="Send an e-mail")
    assert a == b
    code = ("import json; from ctxgate.gate.effects import learned; "
            "print(json.dumps(learned.classify('send_email', {'to': 'dana@example.com', "
            "'body': 'hi'}, description='Send an e-mail').to_dict()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert json.loads(out.stdout) == a.to_dict()


def test_heldout_quality_of_the_shipped_head():
    """Held-out providers and MCP servers: destructive AUROC of the learned P(destructive)."""
    from ctxgate.gate.calibrate import auroc

    rows = [json.loads(x) for x in (DATA / "heldout_openapi.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["set"] == "effect"][:150]
    rows += [json.loads(x) for x in (DATA / "heldout_tools.jsonl").read_text().splitlines()
             if '"source": "mcp:' in x]
    ps = [learned.p_destructive(r["tool"], r["arguments"], description=r["description"],
                                input_schema=r.get("input_schema"))[0] for r in rows]
    assert auroc(ps, [r["destructive"] for r in rows]) > 0.85


def test_shipped_effect_head_names_its_data():
    doc = json.loads(resources.files("ctxgate.gate.backends.heads")
                     .joinpath("effect.json").read_text())
    assert doc["features"] == list(learned.EFFECT_FEATURES)
    assert doc["heldout"]["n"] >= 500 and doc["heldout"]["auroc"] > 0.85
    assert doc["counts"]["heldout"] == doc["heldout"]["n"]


def test_a_changed_model_file_is_a_gate_error_with_the_repair_line(monkeypatch):
    from ctxgate.gate.backends import pins

    monkeypatch.setattr(learned, "_model", None)
    monkeypatch.setitem(pins.PINNED_SHA256, "effect.json", "0" * 64)
    with pytest.raises(learned.LearnedUnavailable,
                       match=r"effect.json has SHA-256 .* pins 0000.*--force-reinstall"):
        learned.classify("send_email", {"to": "a@b.example"})
    assert issubclass(learned.LearnedUnavailable, GateError)


def test_name_words_split_every_naming_style():
    assert learned.name_words("repos/create-issue") == ["repos", "create", "issue"]
    assert learned.name_words("sendEmailV2") == ["send", "email", "v", "2"]
    assert learned.name_words("HTTPGetItem") == ["http", "get", "item"]
