"""The argparse twins of `hook pre` and `hook post` parse exactly what the typer commands parse,
and a call the daemon answers imports neither typer nor the gate."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import typer.main

from ctxgate.cli import fast_hook
from ctxgate.cli.fast_hook import HOOK_POST_OPTIONS, HOOK_PRE_OPTIONS
from ctxgate.cli.hook import hook_app, post, pre


def _declared(function, name: str) -> set[str]:
    info = typing.get_type_hints(function, include_extras=True)[name].__metadata__[0]
    decls = set(info.param_decls) | ({info.default} if str(info.default).startswith("-")
                                     else set())
    flags = set()
    for decl in decls:  # "--rewrite/--no-rewrite" is a pair of flags
        flags.update(decl.split("/"))
    return flags


@pytest.mark.parametrize(("function", "options"), [(pre, HOOK_PRE_OPTIONS),
                                                   (post, HOOK_POST_OPTIONS)])
def test_options_match_the_typer_command(function, options) -> None:
    assert set(options) == set(inspect.signature(function).parameters)
    for name, (flags, _kind) in options.items():
        assert set(flags) == _declared(function, name), name


def _typer_parse(command: str, argv: list[str]) -> dict:
    click_group = typer.main.get_command(hook_app)
    ctx = click_group.commands[command].make_context(command, list(argv))
    return dict(ctx.params)


def _fast_parse(command: str, argv: list[str]) -> dict:
    options = HOOK_PRE_OPTIONS if command == "pre" else HOOK_POST_OPTIONS
    defaults = (fast_hook.HOOK_PRE_DEFAULTS if command == "pre"
                else fast_hook.HOOK_POST_DEFAULTS)
    ns = fast_hook._parse(argv, options, defaults, command)
    if isinstance(ns, int):  # argparse's usage error (or --help), as pre_main returns it
        raise SystemExit(ns)
    return vars(ns)


@pytest.mark.parametrize(("command", "argv"), [
    ("pre", []),
    ("pre", ["--harness", "codex"]),
    ("pre", ["--harness=codex", "--no-rewrite", "--approve"]),
    ("pre", ["--no-rewrite", "--rewrite"]),
    ("pre", ["--backend", "pkg.mod:factory", "--deadline", "2.5"]),
    ("pre", ["--deadline=7"]),
    ("post", []),
    ("post", ["--harness", "codex"]),
])
def test_both_parsers_give_the_same_values(command: str, argv: list[str]) -> None:
    assert _fast_parse(command, argv) == _typer_parse(command, argv)


@pytest.mark.parametrize("argv", [["--deadline", "soon"], ["--bogus"], ["extra"], ["--harn", "codex"],
                                  ["--dead", "5"]])
def test_both_parsers_refuse_the_same_bad_arguments(argv: list[str]) -> None:
    with pytest.raises(Exception) as refused:  # typer's own (vendored) click UsageError
        _typer_parse("pre", argv)
    assert "UsageError" in {c.__name__ for c in type(refused.value).__mro__}
    with pytest.raises(SystemExit) as exc:
        _fast_parse("pre", argv)
    assert exc.value.code == 2


def test_service_name_is_the_served_module() -> None:
    from ctxgate.integrations.hooks import served

    assert fast_hook.SERVICE == served.SERVICE == served.__name__


def test_config_file_the_identity_watches_is_the_one_settings_reads(monkeypatch,
                                                                     tmp_path: Path) -> None:
    from ctxgate.gate.daemon.protocol import _config_file
    from ctxgate.settings import config_path

    monkeypatch.delenv("CTXGATE_CONFIG")
    for xdg in (None, "", "  ", str(tmp_path / "xdg")):
        if xdg is None:
            monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
        assert _config_file(os.environ) == str(config_path())
    monkeypatch.setenv("CTXGATE_CONFIG", "~/x/ctxgate.toml")
    assert _config_file(os.environ) == str(config_path())


def test_a_call_the_daemon_answers_imports_no_typer_settings_or_gate(tmp_path: Path) -> None:
    import tempfile

    run_dir = tempfile.mkdtemp(prefix="cgf", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if k != "CTXGATE_NO_DAEMON"}
    env["CTXGATE_RUNTIME_DIR"] = run_dir
    data = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "ls"}, "cwd": str(tmp_path)}).encode()
    try:
        first = subprocess.run([sys.executable, "-m", "ctxgate", "hook", "pre"], input=data,
                               capture_output=True, env=env, timeout=120, cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        launcher = Path(fast_hook.__file__).resolve().parent.parent / "_launch.py"
        for start in (["-m", "ctxgate"], ["-S", str(launcher)]):
            probe = subprocess.run([sys.executable, "-X", "importtime", *start, "hook", "pre"],
                                   input=data, capture_output=True, env=env, timeout=120,
                                   cwd=tmp_path)
            assert probe.returncode == 0 and probe.stdout == first.stdout, probe.stderr[-2000:]
            imported = {line.rsplit("|", 1)[-1].strip()
                        for line in probe.stderr.decode().splitlines()
                        if line.startswith("import time:")}
            assert "ctxgate.gate.daemon.client" in imported  # the probe did see the imports
            heavy = ["typer", "click", "pydantic", "ctxgate.settings", "ctxgate.gate.gate",
                     "ctxgate.shell", "bashlex", "numpy"]
            if start[0] == "-S":
                heavy += ["site", "typing"]  # and nothing the site-packages .pth files load
                heavy += ["re", "enum", "argparse", "json", "shutil", "signal", "subprocess"]
                heavy += ["ctxgate.app.options"]  # the quick parser keeps its own table
            for name in heavy:
                assert name not in imported, (start, name)
    finally:
        for lock in Path(run_dir).glob("g-*.lock"):
            pid = lock.read_text().strip()
            if pid.isdigit():
                try:
                    os.kill(int(pid), 9)
                except OSError:
                    pass
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.mark.parametrize("argv", [
    [], ["--harness", "codex"], ["--harness=codex"], ["--no-rewrite"], ["--rewrite"],
    ["--no-rewrite", "--rewrite"], ["--approve"], ["--backend", "m:f"], ["--deadline", "2.5"],
    ["--deadline=inf"], ["--deadline", "x"], ["--deadline"], ["--harn", "codex"],
    ["--approve=1"], ["--deadline", "-1"], ["--bogus"], ["x"], ["-h"],
    ["--harness", "codex", "--approve", "--deadline", "7", "--backend", "a:b", "--no-rewrite"],
])
def test_the_simple_hook_parser_agrees_with_argparse(argv: list[str]) -> None:
    """`_parse_simple` answers only what argparse would answer the same way (else None)."""
    from ctxgate.app.options import HOOK_POST, HOOK_PRE, argparse_parser
    from ctxgate.cli.fast_hook import HOOK_POST_DEFAULTS, HOOK_PRE_DEFAULTS, _parse_simple

    for options, defaults, command in ((HOOK_PRE_OPTIONS, HOOK_PRE_DEFAULTS, HOOK_PRE),
                                       (HOOK_POST_OPTIONS, HOOK_POST_DEFAULTS, HOOK_POST)):
        simple = _parse_simple(argv, options, defaults)
        parser = argparse_parser(command, "p", allow_abbrev=False)
        try:
            parsed = vars(parser.parse_args(argv))
        except SystemExit:
            parsed = None
        if simple is not None:
            assert vars(simple) == parsed
