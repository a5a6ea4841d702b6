"""One declaration per command: the typer CLI, the argparse fast path and the MCP / adapter
schemas agree on every option's name, type and default (each read from what the front end
really builds, not from the declaration)."""

from __future__ import annotations

import argparse
import types
import typing
from typing import Any

import pytest
import typer

from ctxgate.app import options
from ctxgate.app.options import (
    EXPAND,
    HOOK_POST,
    HOOK_PRE,
    LIST,
    READ,
    RUN,
    SEARCH,
    argparse_parser,
)
from ctxgate.cli import build_app
from ctxgate.integrations._adapter.expand import EXPAND_PARAMETERS
from ctxgate.integrations.mcp import tools

CLI_PATHS = {
    "expand": ("expand",),
    "read": ("read",),
    "list": ("archive", "ls"),
    "search": ("archive", "search"),
    "run": ("run",),
    "pre": ("hook", "pre"),
    "post": ("hook", "post"),
}
SERVED = {
    "expand": tools.EXPAND_SCHEMA,
    "read": tools.READ_SCHEMA,
    "list": tools.LIST_SCHEMA,
    "search": tools.SEARCH_SCHEMA,
    "run": tools.RUN_SCHEMA,
}
COMMANDS = {c.name: c for c in (EXPAND, READ, LIST, SEARCH, RUN, HOOK_PRE, HOOK_POST)}
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
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):  # X | None
            (annotation,) = [a for a in typing.get_args(annotation) if a is not type(None)]
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
        flags = frozenset(action.option_strings)
        if isinstance(action, argparse._StoreFalseAction):  # --no-X: the pair's second flag
            kind, default, on_flags = shape[action.dest]
            shape[action.dest] = (kind, default, on_flags | flags)
            continue
        if isinstance(action, argparse._StoreTrueAction):
            kind: type = bool
        else:
            kind = action.type or str
        shape[action.dest] = (kind, action.default, flags)
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


@pytest.mark.parametrize(
    ("module", "function", "call"),
    [
        ("fast", "run_main", "argparse_parser(RUN"),
        ("fast", "expand_main", "argparse_parser(EXPAND"),
        ("fast_hook", "_parse", "declared.argparse_parser(declaration"),
    ],
)
def test_the_argparse_twins_build_their_parser_from_the_declaration(
    module: str, function: str, call: str
) -> None:
    import importlib
    import inspect

    source = inspect.getsource(getattr(importlib.import_module(f"ctxgate.cli.{module}"), function))
    assert call in source


def test_the_hook_twins_parse_with_the_declarations_parser() -> None:
    from ctxgate.cli import fast_hook

    ns = fast_hook._parse(["--no-rewrite", "--deadline", "x"], {}, {}, "pre")
    assert ns == 2  # the quick parser gave up (empty table); argparse refused `x`
    ns = fast_hook._parse(["--harness", "codex"], {}, {}, "post")
    assert vars(ns) == {"harness": "codex"}


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


@pytest.mark.parametrize("name", sorted(SERVED))
def test_the_served_mcp_schema_matches_the_cli(name: str) -> None:
    command = COMMANDS[name]
    cli_only = {opt.name for opt in command.options if opt.mcp_name is None}
    schema = SERVED[name]
    assert _without_flags(mcp_shape(command, schema)) == _without_flags(
        typer_shape(CLI_PATHS[name]), cli_only
    )
    required = [opt.mcp_name for opt in command.options if opt.required]
    assert schema.get("required", []) == required
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


def test_the_mcp_run_tool_is_ctxgate_run_shell() -> None:
    """``command`` is ``--shell``, required in MCP though optional on the CLI (where CMD ARGS
    may replace it); ``timeout`` must be more than 0."""
    assert tools.RUN_SCHEMA["required"] == ["command"]
    assert tools.RUN_SCHEMA["properties"]["timeout"]["exclusiveMinimum"] == 0
    assert options.from_mcp(RUN, {"command": "ls", "timeout": 2}) == {"shell": "ls", "timeout": 2}
    from ctxgate.errors import UsageError

    with pytest.raises(UsageError, match="'command' is required"):
        options.from_mcp(RUN, {"raw": True})
    with pytest.raises(UsageError, match="'timeout' must be more than 0"):
        options.from_mcp(RUN, {"command": "ls", "timeout": 0})
    with pytest.raises(UsageError, match="'timeout' must be a number"):
        options.from_mcp(RUN, {"command": "ls", "timeout": "5"})
    with pytest.raises(UsageError, match=r"unknown argument\(s\) \['session'\]"):
        options.from_mcp(RUN, {"command": "ls", "session": "s"})


# ---------------------------------------------------------------- the hand-written quick parsers


def _quick_table(command: options.Command) -> dict[str, tuple[tuple[str, ...], type | None]]:
    """``command`` as :mod:`ctxgate.cli.fast_hook`'s exact-option table writes it."""
    table: dict[str, tuple[tuple[str, ...], type | None]] = {}
    for opt in command.options:
        if opt.kind is bool:
            table[opt.name] = ((*opt.flags, opt.negation), bool) if opt.negation else (
                opt.flags, None)
        else:
            table[opt.name] = (opt.flags, opt.kind)
    return table


def test_the_hook_quick_tables_are_the_declarations() -> None:
    from ctxgate.cli import fast_hook
    from ctxgate.integrations.hooks.supervisor import DEFAULT_DEADLINE_SECONDS

    for command, table, defaults in (
        (HOOK_PRE, fast_hook.HOOK_PRE_OPTIONS, fast_hook.HOOK_PRE_DEFAULTS),
        (HOOK_POST, fast_hook.HOOK_POST_OPTIONS, fast_hook.HOOK_POST_DEFAULTS),
    ):
        assert table == _quick_table(command)
        # the quick parser gives a plain flag False and an unset option None by itself
        assert defaults == {
            opt.name: opt.default
            for opt in command.options
            if opt.default is not None and not (opt.kind is bool and not opt.negation)
        }
    assert HOOK_PRE.option("deadline").default == DEFAULT_DEADLINE_SECONDS


def test_a_changed_declaration_is_seen_by_the_hook_table_test() -> None:
    from ctxgate.cli import fast_hook

    widened = options.Command(
        "pre", "", (*HOOK_PRE.options, options.Option("quiet", ("--quiet",), bool, False))
    )
    assert fast_hook.HOOK_PRE_OPTIONS != _quick_table(widened)


def test_the_run_quick_parser_knows_only_declared_flags() -> None:
    from ctxgate.firewall import passthrough

    for flag, dest in passthrough._OPTIONS.items():
        assert flag in RUN.option(dest).flags, flag
    known = set(passthrough._OPTIONS.values())
    for opt in RUN.options:  # every flag of a known option is known (`-c` and `--shell`)
        if opt.name in known:
            assert set(opt.flags) <= set(passthrough._OPTIONS), opt.name


@pytest.mark.parametrize(
    "argv",
    [
        ["--", "ls", "-l"],
        ["ls", "-l"],
        ["-c", "echo hi"],
        ["--shell=echo hi"],
        ["--tool", "bash", "--session", "s1", "--", "git", "status"],
        ["--tool=bash", "--min-tokens", "50", "ls"],
        ["--sandbox", "read-only", "-c", "ls"],
        ["--min-tokens=0", "--", "true"],
        ["--session=s2", "x"],
    ],
)
def test_the_run_quick_parser_parses_as_the_declaration(argv: list[str]) -> None:
    """Whatever :func:`ctxgate.firewall.passthrough._parse` answers, ``ctxgate run``'s
    declared parser (argparse, held equal to typer above) answers the same."""
    from ctxgate.firewall import passthrough

    quick = passthrough._parse(argv)
    assert quick is not None, argv
    ns = vars(argparse_parser(RUN, "ctxgate run").parse_args(argv))
    if ns["argv"][:1] == ["--"]:
        ns["argv"] = ns["argv"][1:]
    assert quick == {name: ns[name] for name in quick}


@pytest.mark.parametrize(
    "argv",
    [["--raw", "ls"], ["--help"], ["--timeout", "3", "ls"], ["-c"], ["--min-tokens", "x", "ls"],
     ["--sandbox", "rw", "ls"], ["--separate-stderr", "ls"], ["--explain", "ls"], ["-c", "x", "y"],
     ["--session", "--", "x"], ["--tool", "-x", "ls"]],
)
def test_the_run_quick_parser_leaves_the_rest_to_the_full_parser(argv: list[str]) -> None:
    from ctxgate.firewall import passthrough

    assert passthrough._parse(argv) is None
