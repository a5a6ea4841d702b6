"""Architecture rules: the core never imports the CLI, MCP or framework packages; the root
package's table of contents is sorted and resolves."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ctxgate

CORE_EXCLUDED = ("ctxgate.cli", "ctxgate.integrations", "ctxgate.__main__")


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(ctxgate.__path__, prefix="ctxgate."):
        if not info.name.startswith(CORE_EXCLUDED):
            names.append(info.name)
    return sorted(names)


def test_core_modules_exist() -> None:
    names = core_modules()
    for package in ("ctxgate.archive", "ctxgate.firewall", "ctxgate.gate", "ctxgate.bound"):
        assert package in names


def test_core_imports_no_cli_mcp_or_framework_package() -> None:
    imports = "; ".join(f"import {name}" for name in core_modules())
    forbidden = ("typer", "click", "mcp", "mcp_types", "fastmcp", "pydantic_ai", "langchain",
                 "agents", "openai",
                 "ctxgate.cli", "ctxgate.integrations")
    code = (f"import sys; {imports}; "
            f"print(sorted(m for m in {forbidden!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_root_table_of_contents() -> None:
    assert ctxgate.__all__ == sorted(ctxgate.__all__)
    for name in ctxgate.__all__:
        assert getattr(ctxgate, name) is not None


def test_every_module_has_a_docstring() -> None:
    import importlib

    missing = []
    for info in pkgutil.walk_packages(ctxgate.__path__, prefix="ctxgate."):
        if info.name in ("ctxgate.__main__",):
            continue
        module = importlib.import_module(info.name)
        if getattr(module, "__file__", None) is None:  # a data directory, not a module
            continue
        if not (module.__doc__ or "").strip():
            missing.append(info.name)
    assert missing == []


def test_lazy_names_never_collide_with_submodules() -> None:
    """Importing a submodule sets it as the package attribute and would shadow a lazy name."""
    import importlib

    for _info in pkgutil.walk_packages(ctxgate.__path__, prefix="ctxgate."):
        pass  # the walk imports every package, as a real process eventually may
    for name in ("ctxgate", "ctxgate.archive", "ctxgate.firewall", "ctxgate.gate",
                 "ctxgate.gate.backends"):
        package = importlib.import_module(name)
        subs = {i.name for i in pkgutil.iter_modules(package.__path__)}
        assert not set(package._LAZY) & subs, name
        for exported in package.__all__:
            assert not isinstance(getattr(package, exported), type(package)), (name, exported)
