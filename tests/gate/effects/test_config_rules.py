"""Tool rules and trusted servers from the TOML file and the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.errors import ConfigError
from ctxgate.gate.effects.config import config_effect, match_rule
from ctxgate.gate.effects.model import EffectClass, EffectSource
from ctxgate.gate.policy import ToolRule
from ctxgate.settings import load_config


def test_patterns_exact_then_longest() -> None:
    rules = {"send_*": ToolRule(effect="external"), "send_test_*": ToolRule(effect="read_only"),
             "send_test_ping": ToolRule(requested_threshold=0.9),
             "mcp__github__*": ToolRule(effect="external")}
    assert match_rule("send_email", rules)[0] == "send_*"
    assert match_rule("SEND_TEST_mail", rules)[0] == "send_test_*"
    assert match_rule("send_test_ping", rules)[0] == "send_test_ping"
    assert config_effect("send_test_ping", rules) is None  # thresholds only, no class
    e = config_effect("mcp__github__create_issue", rules)
    assert e.effect is EffectClass.EXTERNAL and e.source is EffectSource.CONFIG
    assert "mcp__github__*" in e.evidence
    assert match_rule("read_file", rules) is None


def test_toml_and_environment(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('''
[gate]
ask_threshold = 0.4
trusted_mcp_servers = ["fs"]

[gate.tool_rules."send_*"]
effect = "external"
requested_threshold = 0.9

[gate.tool_rules."mcp__github__*"]
effect = "external"
''')
    config = load_config(environ={"CTXGATE_CONFIG": str(cfg), "CTXGATE_HOME": str(tmp_path)})
    gate = config.gate
    assert gate.ask_threshold == 0.4 and gate.trusted_mcp_servers == ("fs",)
    assert gate.tool_rules["send_*"] == ToolRule(effect="external", requested_threshold=0.9)
    env = {"CTXGATE_CONFIG": str(cfg), "CTXGATE_HOME": str(tmp_path),
           "CTXGATE_GATE__EFFECTS": "false", "CTXGATE_GATE__ASK_THRESHOLD": "0.5"}
    gate = load_config(environ=env).gate
    assert gate.effects is False and gate.ask_threshold == 0.5
    assert "send_*" in gate.tool_rules  # tables stay in the file (patterns are no env names)
    cfg.write_text('[gate.tool_rules."x"]\neffect = "harmless"\n')
    with pytest.raises(ConfigError, match="not an effect class"):
        load_config(environ={"CTXGATE_CONFIG": str(cfg), "CTXGATE_HOME": str(tmp_path)})
