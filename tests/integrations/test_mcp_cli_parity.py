"""The MCP tools' schemas and the CLI options of the same views agree, derived from both sides.

Every property of ``expand``, ``read``, ``list`` and ``search`` has a CLI option (or argument)
feeding the same library parameter, every CLI option of those commands has a property, and
integer bounds and required-ness match. A property added on one side only fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
import typer

from ctxgate.cli import build_app
from ctxgate.integrations.mcp import tools

# MCP property -> CLI parameter name, where the two are spelled differently
_RENAMED = {
    "expand": {"id": "entry_id", "literal": "fixed_strings", "bytes": "byte_range",
               "json": "json_pointer"},
    "read": {},
    "list": {},
    "search": {},
}
_CLI = {"expand": ("expand",), "read": ("read",), "list": ("archive", "ls"),
        "search": ("archive", "search")}
_SCHEMAS = {"expand": tools.EXPAND_SCHEMA, "read": tools.READ_SCHEMA,
            "list": tools.LIST_SCHEMA, "search": tools.SEARCH_SCHEMA}
_CLI_ONLY = {"json_output"}
"""Output format options: a CLI concern, not a view."""


def _command(path: tuple[str, ...]) -> Any:
    """The click command typer builds (typer may ship its own click: duck-typed)."""
    cmd = typer.main.get_command(build_app())
    for name in path:
        cmd = cmd.commands[name]
    return cmd


@pytest.mark.parametrize("tool", sorted(_SCHEMAS))
def test_schema_properties_and_cli_options_are_the_same_set(tool: str) -> None:
    schema = _SCHEMAS[tool]
    cmd = _command(_CLI[tool])
    cli = {p.name: p for p in cmd.params if p.name not in _CLI_ONLY}
    renamed = _RENAMED[tool]
    mapped = {renamed.get(prop, prop): prop for prop in schema["properties"]}
    assert set(mapped) == set(cli), (tool, set(mapped) ^ set(cli))
    required = set(schema.get("required", ()))
    for cli_name, prop in mapped.items():
        param, spec = cli[cli_name], schema["properties"][prop]
        if param.param_type_name == "argument":
            assert prop in required, (tool, prop)
        else:
            assert prop not in required, (tool, prop)
        kind = spec.get("type")
        if kind == "boolean":
            assert getattr(param, "is_flag", False), (tool, prop)
        if kind == "integer":
            assert "int" in str(param.type_descriptor.annotation), (tool, prop)


def test_search_and_list_limits_agree_with_the_library() -> None:
    from ctxgate.archive.search import MAX_LIMIT

    for schema in (tools.SEARCH_SCHEMA, tools.LIST_SCHEMA):
        assert schema["properties"]["limit"]["maximum"] == MAX_LIMIT


def test_read_default_ceiling_is_the_policy_verbatim_ceiling() -> None:
    from ctxgate.firewall.policy import FirewallPolicy

    assert "25,000" in tools.READ_SCHEMA["properties"]["max_tokens"]["description"]
    assert FirewallPolicy().verbatim_max_tokens == 25_000
