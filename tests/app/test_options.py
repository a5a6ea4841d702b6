"""One declaration per command: the typer CLI, the argparse fast path and the MCP / adapter
schemas agree on every option's name, type and default (each read from what the front end
really builds, not from the declaration)."""

from __future__ import annotations

import argparse
import typing
from typing import Any

import pytest
import typer

from ctxgate.app import options
from ctxgate.app.options import EXPAND, LIST, READ, SEARCH, argparse_parser
from ctxgate.cli import build_app
from ctxgate.integrations._adapter.expand import EXPAND_PARAMETERS
from ctxgate.integrations.mcp import tools

CLI_PATHS = {
    "expand": ("expand",),
    "read": ("read",),
    "list": ("archive", "ls"),
    "search": ("archive", "search"),
}
SERVED = {
    "expand": tools.EXPAND_SCHEMA,
    "read": tools.READ_SCHEMA,
    "list": tools.LIST_SCHEMA,
    "search": tools.SEARCH_SCHEMA,
}
COMMANDS = {c.name: c for c in (EXPAND, READ, LIST, SEARCH)}
_JSON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool}

Shape = dict[str, tuple[type, Any, frozenset[str]]]
"""option name → (type, default, CLI flags); positional arguments have no flags."""


def typer_shape(path: tuple[str, ...]) -> Shape:
    cmd = typer.main.get_command(build_app())
    for name in path:
        cmd = cmd.commands[name]
    shape: Shape = {}
    for p in cmd.params:
        annotation = p.type_descriptor.annotation
        many = typing.get_origin(annotation) is list
        kind = typing.get_args(annotation)[0] if many else annotation
        flags = (
            frozenset(p.opts + p.secondary_opts) if p.param_type_name == "option" else frozenset()
        )
        default = None if p.param_type_name == "argument" else p.default
        shape[p.name] = (kind, default, flags)
    return shape


def argparse_shape(parser: argparse.ArgumentParser) -> Shape:
    shape: Shape = {}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._StoreTrueAction):
            kind: type = bool
        else:
            kind = action.type or str
        shape[action.dest] = (kind, action.default, frozenset(action.option_strings))
    return shape


def mcp_shape(command: options.Command, schema: dict[str, Any]) -> Shape:
    """The schema's properties, by the CLI name the declaration gives each (flags unknown)."""
    cli_name = {opt.mcp_name: opt.name for opt in command.options}
    shape: Shape = {}
    for prop, spec in schema["properties"].items():
        kind = _JSON_TYPES[spec["type"]]
        default = spec.get("default", False if kind is bool else None)
        shape[cli_name.get(prop, prop)] = (kind, default, frozenset())
    return shape


def _without_flags(shape: Shape, drop: set[str] = frozenset()) -> dict[str, tuple[type, Any]]:
    return {k: (kind, default) for k, (kind, default, _) in shape.items() if k not in drop}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_typer_and_argparse_options_are_equal(name: str) -> None:
    parser = argparse_parser(COMMANDS[name], f"ctxgate {name}")
    assert typer_shape(CLI_PATHS[name]) == argparse_shape(parser)


def test_the_fast_path_parses_expand_as_typer_does() -> None:
    """cli.fast's own parser (the one `ctxgate expand` runs) is the declaration's."""
    import inspect

    from ctxgate.cli import fast

    assert "argparse_parser(EXPAND" in inspect.getsource(fast.expand_main)
    ns = argparse_parser(EXPAND, "x").parse_args(["abcd", "-g", "x", "-C", "2", "-iF"])
    assert (ns.entry_id, ns.grep, ns.context, ns.ignore_case, ns.fixed_strings, ns.head) == (
        "abcd",
        "x",
        2,
        True,
        True,
        None,
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_served_mcp_schema_matches_the_cli(name: str) -> None:
    command = COMMANDS[name]
    cli_only = {opt.name for opt in command.options if opt.mcp_name is None}
    schema = SERVED[name]
    assert _without_flags(mcp_shape(command, schema)) == _without_flags(
        typer_shape(CLI_PATHS[name]), cli_only
    )
    positional = [opt.mcp_name for opt in command.options if opt.positional]
    assert schema.get("required", []) == positional
    assert schema["additionalProperties"] is False


def test_the_adapters_expand_schema_is_the_mcp_servers() -> None:
    assert dict(EXPAND_PARAMETERS) == tools.EXPAND_SCHEMA


def test_a_property_added_on_one_side_only_is_seen() -> None:
    schema = {
        **tools.READ_SCHEMA,
        "properties": {**tools.READ_SCHEMA["properties"], "encoding": {"type": "string"}},
    }
    assert _without_flags(mcp_shape(READ, schema)) != _without_flags(typer_shape(("read",)))


def test_from_mcp_maps_names_and_refuses_what_the_schema_does_not_offer() -> None:
    from ctxgate.errors import UsageError

    assert options.from_mcp(
        EXPAND, {"id": "abcd", "literal": True, "bytes": "0:10", "head": None}
    ) == {"entry_id": "abcd", "fixed_strings": True, "byte_range": "0:10"}
    with pytest.raises(UsageError, match=r"unknown argument\(s\) \['json_output'\]"):
        options.from_mcp(EXPAND, {"id": "abcd", "json_output": True})
    with pytest.raises(UsageError, match="'query' is required"):
        options.from_mcp(SEARCH, {"limit": 3})
    with pytest.raises(UsageError, match="'limit' must be an integer"):
        options.from_mcp(LIST, {"limit": True})


def test_declared_bounds_are_the_librarys() -> None:
    from ctxgate.archive.search import MAX_LIMIT
    from ctxgate.archive.views import MIN_VIEW_TOKENS

    assert EXPAND.option("max_tokens").minimum == MIN_VIEW_TOKENS
    assert tools.EXPAND_SCHEMA["properties"]["max_tokens"]["minimum"] == MIN_VIEW_TOKENS
    assert LIST.option("limit").maximum == SEARCH.option("limit").maximum == MAX_LIMIT


def test_the_mcp_run_tool_offers_a_subset_of_ctxgate_run() -> None:
    """``run``'s options are declared by cli/run.py and its argparse twin (held equal in
    tests/cli/test_fast.py); the MCP ``run`` tool offers some of them, with the same types
    (``command`` is ``--shell``)."""
    cli = typer_shape(("run",))
    schema = tools.RUN_SCHEMA["properties"]
    renamed = {"command": "shell"}
    for prop, spec in schema.items():
        kind, _default, _flags = cli[renamed.get(prop, prop)]
        assert _JSON_TYPES[spec["type"]] is kind, prop
