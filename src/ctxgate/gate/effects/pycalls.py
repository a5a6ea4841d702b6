"""Python code read as Python: the calls it makes, resolved through imports and aliases.

The patterns of :mod:`.code` see ``os.remove("f")`` but not ``from os import remove as r;
r("f")``, ``__import__("os").remove("f")``, ``getattr(os, "remove")("f")`` or
``open(file="f", mode="w")``. When the code parses as Python, :func:`python_calls` walks its
tree and names each call by the module function it reaches (``os.remove``), with its literal
path arguments, so that :func:`~ctxgate.gate.effects.code.code_effect` judges them as it
judges the patterns' finds. Code that does not parse (another language, a fragment) gives
nothing here, and the patterns alone judge it.
"""

from __future__ import annotations

import ast
import shlex
from dataclasses import dataclass

__all__ = ["PyCall", "python_calls"]

DELETES = frozenset({"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "shutil.rmtree",
                     "send2trash.send2trash", "os.truncate"})
"""Module functions that lose a file or a tree (``os.truncate`` empties it)."""
MOVES = frozenset({"os.rename", "os.replace", "shutil.move", "os.renames"})
COPIES = frozenset({"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree"})
SPAWNS = frozenset({"os.system", "os.popen", "subprocess.run", "subprocess.call",
                    "subprocess.check_call", "subprocess.check_output", "subprocess.Popen",
                    "subprocess.getoutput", "subprocess.getstatusoutput", "pty.spawn"})
_KNOWN = DELETES | MOVES | COPIES | SPAWNS | frozenset({"os.open", "os.chdir", "os.execv", "os.execvp",
                                                       "os.execl", "os.execlp", "os.spawnlp"})
_MAX_CHARS = 1 << 20
"""Code longer than this (characters) is not parsed (the patterns still judge it)."""


@dataclass(frozen=True)
class PyCall:
    """One call the code makes: ``name`` as the module function it reaches (``os.remove``,
    ``open``), its literal string arguments in order (``None`` for a computed one), and the
    literal ``mode`` of an ``open``."""

    name: str
    args: tuple[str | None, ...]
    mode: str | None = None
    line: int = 0


class _Resolver:
    """Aliases from imports and plain assignments, then each call's module function."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.constants: dict[str, str | None] = {}
        """Names assigned a string the code spells out (``cmd = "rm -rf " + "~"``); a name
        assigned twice, or once to something computed, is ``None``."""

    def literal(self, node: ast.AST) -> str | None:
        """The string ``node`` always is, when the code spells it out: a constant, a list of
        constants (an argv, joined), ``"a" + "b"``, an f-string of constants, a name
        assigned one of those once, ``os.path.expanduser("~/x")``, ``Path.home() / "x"``,
        ``os.path.join`` of such parts."""
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
            left, right = self.literal(node.left), self.literal(node.right)
            if left is None or right is None:  # (Path.home() is "~": Path.home() / "x")
                return None
            return left + right if isinstance(node.op, ast.Add) else f"{left}/{right}"
        if isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) else None for v in node.values]
            return "".join(parts) if all(isinstance(p, str) for p in parts) else None  # type: ignore[arg-type]
        if isinstance(node, ast.Subscript) and self.qualified(node.value) == "os.environ" \
                and self.literal(node.slice) == "HOME":
            return "~"  # os.environ["HOME"]
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            parts = [self.literal(e) for e in node.elts]  # an argv, its paths folded
            if all(p is not None for p in parts):
                return shlex.join(parts)  # type: ignore[arg-type]
            return None
        if isinstance(node, ast.Call):
            name = self.qualified(node.func) or ""
            first = self.literal(node.args[0]) if node.args else None
            if name.endswith("Path.home") and not node.args:
                return "~"
            if name in ("os.getenv", "os.environ.get") and first == "HOME":
                return "~"
            if name in _PATH_TYPES:  # Path("a", "b")
                parts = [self.literal(a) for a in node.args]
                return "/".join(p.rstrip("/") for p in parts) if parts and all(  # type: ignore[union-attr]
                    p is not None for p in parts) else None
            if isinstance(node.func, ast.Attribute) and not name:  # a method of a path
                base = self.literal(node.func.value)
                if base is not None and node.func.attr == "joinpath" and node.args:
                    parts = [self.literal(a) for a in node.args]
                    return "/".join([base.rstrip("/"), *parts]) if all(  # type: ignore[list-item]
                        p is not None for p in parts) else None
                if base is not None and node.func.attr in _SAME_PATH and not node.args:
                    return base  # Path("~/x").expanduser(), .resolve(), .absolute()
            if node.args and (name.endswith("expanduser") or name.endswith("abspath")):
                return first
            if node.args and name.endswith("path.join"):
                parts = [self.literal(a) for a in node.args]
                return "/".join(p.rstrip("/") for p in parts) if all(  # type: ignore[union-attr]
                    p is not None for p in parts) else None
        return _literal(node)

    def imported(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                self.aliases[a.asname or top] = a.name if a.asname else top
        elif node.module:
            for a in node.names:
                if a.name == "*":  # from os import *: every function the rules know by name
                    for known in _KNOWN:
                        module, _, function = known.rpartition(".")
                        if module == node.module:
                            self.aliases[function] = known
                    continue
                self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def assigned(self, node: ast.Assign) -> None:
        text = self.literal(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name):
                seen = target.id in self.constants
                self.constants[target.id] = None if seen else text
        value = self.qualified(node.value)
        if value is not None:  # r = os.remove; o = __import__("os")
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.aliases[target.id] = value

    def qualified(self, node: ast.AST) -> str | None:
        """The dotted module name an expression reaches, if it is one."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id if node.id == "open" else None)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
                node.value.attr == "__dict__":  # os.__dict__["remove"]
            base, key = self.qualified(node.value.value), self.literal(node.slice)
            return f"{base}.{key}" if base and key else None
        if isinstance(node, ast.Call):
            func = node.func
            literal = self.literal(node.args[0]) if node.args else None
            if isinstance(func, ast.Name) and func.id == "__import__" and literal:
                return literal
            name = self.qualified(func)
            if name == "importlib.import_module" and literal:
                return literal
            if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
                base, attr = self.qualified(node.args[0]), self.literal(node.args[1])
                return f"{base}.{attr}" if base and attr else None
        return None

    def call(self, node: ast.Call) -> PyCall | None:
        name = self.qualified(node.func)
        if name is None and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _PATH_WRITES:  # Path.home().joinpath(".bashrc").write_text(…)
            target = self.literal(node.func.value)
            if target is None:
                return None
            line = getattr(node, "lineno", 0)
            if node.func.attr in ("unlink", "rmdir"):
                return PyCall(name=f"os.{node.func.attr}", args=(target,), line=line)
            return PyCall(name="open", args=(target,), mode="w", line=line)
        if name is None:
            return None
        args = tuple(self.literal(a) for a in node.args)
        mode = None
        if name in ("open", "io.open", "codecs.open", "builtins.open"):
            keywords = {k.arg: self.literal(k.value) for k in node.keywords if k.arg}
            name = "open"
            if not args and "file" in keywords:
                args = (keywords["file"],)
            mode = args[1] if len(args) > 1 else keywords.get("mode")
            args = args[:1]
        if name == "os.open" and len(node.args) > 1:  # os.open(path, os.O_WRONLY | os.O_TRUNC)
            flags = ast.unparse(node.args[1])
            mode = "w" if "TRUNC" in flags else "a" if "APPEND" in flags else \
                "r+" if "WRONLY" in flags or "RDWR" in flags else None
            name, args = "open", args[:1]
        return PyCall(name=name, args=args, mode=mode, line=getattr(node, "lineno", 0))


_PATH_TYPES = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath",
                         "pathlib.PurePosixPath"})
_SAME_PATH = frozenset({"expanduser", "resolve", "absolute"})
_PATH_WRITES = frozenset({"write_text", "write_bytes", "unlink", "rmdir"})
"""Methods of a path object that write or remove the file it names."""


def _literal(node: ast.AST) -> str | None:
    """A string constant (lists of parts are joined by :meth:`_Resolver.literal`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def python_calls(code: str) -> list[PyCall] | None:
    """The module-function calls of ``code`` (module docstring), or ``None`` when it does not
    parse as Python or is too large to walk. Aliases are collected first, so a name imported
    inside a function below its use still resolves."""
    if len(code) > _MAX_CHARS:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    resolver = _Resolver()
    calls: list[ast.Call] = []
    try:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                calls.append(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                resolver.imported(node)
            elif isinstance(node, ast.Assign):
                resolver.assigned(node)
        found = [resolver.call(c) for c in calls]
    except RecursionError:
        return None
    return sorted((c for c in found if c is not None), key=lambda c: c.line)
