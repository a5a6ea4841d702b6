"""Architecture rules: the core never imports the CLI, MCP or framework packages; the root
package's table of contents is sorted and resolves."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import ctxgate

# entry points (`python -m ctxgate`, the hooks' `-S` launcher) start the CLI; they are not core
CORE_EXCLUDED = ("ctxgate.cli", "ctxgate.integrations", "ctxgate.__main__", "ctxgate._launch")


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(ctxgate.__path__, prefix="ctxgate."):
        if not info.name.startswith(CORE_EXCLUDED):
            names.append(info.name)
    return sorted(names)


SRC = Path(ctxgate.__file__).resolve().parent
# Packages only integrations may import; the core (and the CLI, for the frameworks) never does.
FRAMEWORKS = ("pydantic_ai", "pydantic_graph", "langchain", "langchain_core", "langgraph",
              "agents", "openai")
PROTOCOLS = ("typer", "click", "rich", "mcp", "mcp_types", "fastmcp")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, name: str | None = None) -> set[str]:
    """Every module ``path`` imports, wherever the statement sits: top level, inside functions,
    ``try`` or ``if TYPE_CHECKING`` blocks, and ``importlib.import_module("literal")`` calls.
    Relative imports are resolved against the module's own package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = name or _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return found


def _hits(found: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(m for m in found if any(m == r or m.startswith(r + ".") for r in roots))


def test_the_static_scan_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"  # parsed as if it were ctxgate/firewall/probe.py
    probe.write_text("def f():\n    import typer\n    from ..integrations import mcp\n"
                     "    importlib.import_module('langchain.agents')\n", encoding="utf-8")
    found = imports_of(probe, "ctxgate.firewall.probe")
    assert {"typer", "ctxgate.integrations", "ctxgate.integrations.mcp",
            "langchain.agents"} <= found


def test_core_imports_no_cli_mcp_or_framework_package() -> None:
    """A static scan of every core module's source, function-level imports included (a
    runtime import check misses an import that only runs when a function is called)."""
    bad = {}
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        if name.startswith(CORE_EXCLUDED):
            continue
        hits = _hits(imports_of(path), PROTOCOLS + FRAMEWORKS
                     + ("ctxgate.cli", "ctxgate.integrations"))
        if hits:
            bad[name] = hits
    assert bad == {}


CORE_PACKAGES = ("archive", "firewall", "gate", "bound", "shell", "app")
"""The core: storage, the firewall, the gate, the bound, the shell model and the application
object every front end goes through. None may import a protocol or framework package, the
CLI or the integrations, nor pydantic-settings (settings.py alone loads it, lazily)."""


def test_core_packages_import_no_protocol_framework_or_cli_module() -> None:
    forbidden = PROTOCOLS + FRAMEWORKS + ("pydantic_settings", "ctxgate.cli",
                                          "ctxgate.integrations")
    bad, scanned = {}, set()
    for package in CORE_PACKAGES:
        files = sorted((SRC / package).rglob("*.py"))
        assert files, package  # a package renamed away must not pass silently
        for path in files:
            name = _module_name(path)
            scanned.add(name.split(".")[1])
            hits = _hits(imports_of(path), forbidden)
            if hits:
                bad[name] = hits
    assert scanned == set(CORE_PACKAGES)
    assert bad == {}


def test_the_scan_catches_a_function_level_typer_import_in_the_app(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"  # parsed as if it were ctxgate/app/probe.py
    probe.write_text("def expand():\n    if True:\n        from typer import Option\n",
                     encoding="utf-8")
    assert _hits(imports_of(probe, "ctxgate.app.probe"), PROTOCOLS) == ["typer", "typer.Option"]


def test_only_the_application_object_assembles_a_gate() -> None:
    """One gate assembly: ``build_tool_gate`` is called by :class:`ctxgate.app.App` only
    (every CLI command, hook, MCP server and adapter asks the object for its gate)."""
    callers = set()
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = getattr(func, "id", None) or getattr(func, "attr", None)
                if called == "build_tool_gate":
                    callers.add(_module_name(path))
    assert callers == {"ctxgate.app.application"}


def test_each_adapter_imports_only_its_own_framework() -> None:
    own = {"pydantic_ai": ("pydantic_ai", "pydantic_graph"),
           "langchain": ("langchain", "langchain_core", "langgraph"),
           "openai_agents": ("agents", "openai")}
    bad = {}
    for path in sorted((SRC / "integrations").rglob("*.py")):
        parts = _module_name(path).split(".")
        allowed = own.get(parts[2], ()) if len(parts) > 2 else ()
        hits = [m for m in _hits(imports_of(path), FRAMEWORKS)
                if not any(m == r or m.startswith(r + ".") for r in allowed)]
        if hits:
            bad[".".join(parts)] = hits
    for path in sorted((SRC / "cli").rglob("*.py")):
        hits = _hits(imports_of(path), FRAMEWORKS)
        if hits:
            bad[_module_name(path)] = hits
    assert bad == {}


def test_core_import_at_runtime_loads_no_cli_mcp_or_framework_package() -> None:
    imports = "; ".join(f"import {name}" for name in core_modules())
    forbidden = PROTOCOLS + FRAMEWORKS + ("ctxgate.cli", "ctxgate.integrations")
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
