#!/usr/bin/env python3
"""Generate the README's configuration reference and docs/cli.md from the code itself.

The configuration table comes from the policy dataclasses (field, default, attribute
docstring); the CLI reference from each command's ``--help``. ``--check`` exits 1 when the
README or docs/cli.md is out of date (a test runs it), ``--write`` rewrites them.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = {
    "archive": ("ctxgate.archive.policy", "ArchivePolicy"),
    "firewall": ("ctxgate.firewall.policy", "FirewallPolicy"),
    "gate": ("ctxgate.gate.policy", "GatePolicy"),
    "bound": ("ctxgate.bound.policy", "BoundPolicy"),
    "daemon": ("ctxgate.gate.daemon.policy", "DaemonPolicy"),
}
START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"


def field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings: the string literal right after each annotated field."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in zip(body, body[1:] + [None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if (isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str)):
                docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def default_of(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        value = field.default_factory()  # type: ignore[misc]
    else:
        return "(required)"
    if isinstance(value, tuple):
        value = list(value)
    if dataclasses.is_dataclass(value) or (isinstance(value, list) and value
                                           and dataclasses.is_dataclass(value[0])):
        return "(see docs)"
    text = repr(value).replace("|", "\\|")
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"


def config_reference() -> str:
    lines = []
    for section, (module, name) in SECTIONS.items():
        cls = getattr(importlib.import_module(module), name)
        docs = field_docs(cls)
        lines += [f"**`[{section}]`** (environment: `CTXGATE_{section.upper()}__<KEY>`)", "",
                  "| key | default | meaning |", "|---|---|---|"]
        for field in dataclasses.fields(cls):
            doc = docs.get(field.name, "").replace("``", "`").replace("|", "\\|")
            lines.append(f"| `{field.name}` | {default_of(field)} | {doc} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def cli_reference() -> str:
    from typer.testing import CliRunner

    from ctxgate.cli import app

    runner = CliRunner()
    out = ["# CLI reference", "", "Generated from `--help` by `scripts/gen_reference.py --write`;",
           "a test fails when it is out of date.", ""]
    for path in commands():
        result = runner.invoke(app, [*path, "--help"], prog_name="ctxgate", terminal_width=100,
                               env={"COLUMNS": "100"})
        out += [f"## `ctxgate {' '.join(path)}`", "", "```text", result.output.rstrip(), "```", ""]
    return "\n".join(out)


def commands() -> list[list[str]]:
    """Every leaf command path, in registration order."""
    import typer.main

    from ctxgate.cli import app

    root = typer.main.get_command(app)
    found: list[list[str]] = []

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        elif path:
            found.append(path)

    walk(root, [])
    return found


def render_readme(text: str) -> str:
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{config_reference()}{END}{tail}"


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "--check"
    readme = ROOT / "README.md"
    cli_md = ROOT / "docs" / "cli.md"
    wanted = {readme: render_readme(readme.read_text(encoding="utf-8")), cli_md: cli_reference()}
    stale = [p for p, text in wanted.items()
             if not p.exists() or p.read_text(encoding="utf-8") != text]
    if mode == "--write":
        for p in stale:
            p.write_text(wanted[p], encoding="utf-8")
            print(f"wrote {p.relative_to(ROOT)}")
        return 0
    for p in stale:
        print(f"{p.relative_to(ROOT)} is out of date: run scripts/gen_reference.py --write")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
