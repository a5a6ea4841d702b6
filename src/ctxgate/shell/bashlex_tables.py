"""Import ``bashlex`` without rebuilding its LALR tables in every process.

``bashlex`` 0.18 ships a ``parsetab.py`` but its vendored yacc never reads it: importing
``bashlex.parser`` builds the parser tables from the grammar each time (0.14-0.2 s, paid by
every ``ctxgate`` process that parses a non-simple command). :func:`load_bashlex` builds them
once, stores the built action, goto and production tables with :mod:`marshal` in the user
cache directory, and on later imports hands ``bashlex.parser`` a parser made from the stored
tables (a few milliseconds).

Safety: the cache file's name is keyed by the bashlex version, the sha256 of its ``yacc.py``
and ``parser.py`` and the Python version, so a changed grammar never meets old tables; a
file that does not load as the expected shapes, any error while building from it, or an
unwritable cache directory falls back to bashlex's own build (slower, same parser). The
snapshot is taken before ``bashlex.parser`` patches a few actions at import time, so the
patches are re-applied by bashlex itself either way.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["CACHE_FORMAT", "cache_path", "load_bashlex", "loaded_from"]

CACHE_FORMAT = 1
"""Version of the stored layout (part of the key)."""

_SOURCE: list[str] = []


def loaded_from() -> str | None:
    """How this process got bashlex's tables: ``"cache"``, ``"built"`` (and stored),
    ``"plain"`` (bashlex's own import), or None before :func:`load_bashlex` ran."""
    return _SOURCE[-1] if _SOURCE else None


class _Production:
    """The part of a yacc production the LR parser uses (as PLY's ``MiniProduction``)."""

    __slots__ = ("callable", "func", "len", "name", "str")

    def __init__(self, name: str, length: int, func: str | None, text: str) -> None:
        self.name = name
        self.len = length
        self.func = func
        self.str = text
        self.callable: Any = None

    def __str__(self) -> str:
        return self.str

    def __repr__(self) -> str:
        return f"Production({self.str})"

    def bind(self, pdict: dict[str, Any]) -> None:
        if self.func:
            self.callable = pdict[self.func]


class _Tables:
    """What ``yacc.LRParser`` reads from an ``LRTable``."""

    def __init__(self, action: dict, goto: dict, productions: list[_Production]) -> None:
        self.lr_action = action
        self.lr_goto = goto
        self.lr_productions = productions


def cache_path() -> Any:
    """The cache file for the installed bashlex (a ``Path``), or None when it cannot be keyed."""
    spec = _package_spec()
    if spec is None:
        return None
    return _cache_file(spec)


def _package_spec() -> Any:
    from importlib import util

    spec = util.find_spec("bashlex")
    if spec is None or not spec.submodule_search_locations or spec.loader is None:
        return None
    return spec


def _cache_file(spec: Any) -> Any:
    import hashlib
    from pathlib import Path

    import platformdirs

    root = Path(next(iter(spec.submodule_search_locations)))
    sha = hashlib.sha256()
    for name in ("yacc.py", "parser.py"):
        sha.update((root / name).read_bytes())
    key = f"{CACHE_FORMAT}:{sys.version_info[:2]}:{sha.hexdigest()}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return (Path(platformdirs.user_cache_dir("ctxgate", appauthor=False)) / "bashlex"
            / f"tables-{digest}.marshal")


def load_bashlex() -> Any:
    """``import bashlex``, from cached parser tables when a valid cache exists (see module doc).

    Returns the ``bashlex`` module. Never raises for a cache problem; raises ImportError when
    bashlex is not installed, exactly as ``import bashlex`` would.
    """
    if "bashlex.parser" in sys.modules:
        import bashlex

        return bashlex
    try:
        spec = _package_spec()
        path = _cache_file(spec) if spec is not None else None
    except Exception:  # noqa: BLE001 - unreadable sources: bashlex's own build
        path = None
    if path is None:
        import bashlex

        _SOURCE.append("plain")
        return bashlex
    try:
        return _import_with(spec, path)
    except Exception:  # noqa: BLE001 - whatever went wrong, bashlex's own import decides
        _forget_bashlex()
        try:
            path.unlink()  # tables bashlex rejected: the next process builds them afresh
        except OSError:
            pass
        import bashlex

        _SOURCE.append("plain")
        return bashlex


def _import_with(spec: Any, path: Any) -> Any:
    """Import the package with ``yacc.yacc`` answering from ``path`` (or building and
    storing the tables there). The package object is registered before ``bashlex.yacc`` is
    imported, because ``bashlex/__init__`` imports the parser, which calls ``yacc.yacc``."""
    import importlib
    import importlib.util
    import types

    tables = _read(path)
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package
    yacc = importlib.import_module("bashlex.yacc")
    original = yacc.yacc
    made: list[Any] = []

    def cached_yacc(*args: Any, **kwargs: Any) -> Any:
        pdict = sys._getframe(1).f_globals  # bashlex.parser's namespace, as yacc reads it
        if tables is not None:
            try:
                parser = _parser_from(tables, pdict, yacc)
            except Exception:  # noqa: BLE001 - stale or damaged: build it as bashlex does
                parser = None
            if parser is not None:
                made.append("cache")
                return parser
        # yacc reads its caller's globals; from here that would be this module's
        kwargs.setdefault("module", types.SimpleNamespace(**pdict))
        parser = original(*args, **kwargs)
        made.append(_snapshot(parser))
        return parser

    yacc.yacc = cached_yacc
    try:
        spec.loader.exec_module(package)
    finally:
        yacc.yacc = original
    if made and isinstance(made[0], tuple):
        _write(path, made[0])
    _SOURCE.append("cache" if made == ["cache"] else "built")
    return package


def _forget_bashlex() -> None:
    for name in [m for m in sys.modules if m == "bashlex" or m.startswith("bashlex.")]:
        del sys.modules[name]


def _parser_from(tables: tuple, pdict: dict[str, Any], yacc: Any) -> Any:
    action, goto, prods = tables
    productions = [_Production(n, ln, f, s) for n, ln, f, s in prods]
    for p in productions:
        p.bind(pdict)
    parser = yacc.LRParser(_Tables({k: dict(v) for k, v in action.items()},
                                   {k: dict(v) for k, v in goto.items()}, productions),
                           pdict.get("p_error"))
    yacc.parse = parser.parse
    return parser


def _snapshot(parser: Any) -> tuple | None:
    """The built tables as plain dicts, lists and tuples (before bashlex patches them)."""
    try:
        action = {int(k): dict(v) for k, v in parser.action.items()}
        goto = {int(k): dict(v) for k, v in parser.goto.items()}
        prods = [(p.name, int(p.len), p.func, str(p)) for p in parser.productions]
    except Exception:  # noqa: BLE001 - an unexpected parser shape: do not cache it
        return None
    return action, goto, prods


def _read(path: Any) -> tuple | None:
    import marshal

    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if not (isinstance(data, tuple) and len(data) == 3):
        return None
    action, goto, prods = data
    if not (isinstance(action, dict) and isinstance(goto, dict) and isinstance(prods, list)
            and action and prods and 0 in action):
        return None
    if not all(isinstance(v, dict) for v in action.values()) or \
            not all(isinstance(v, dict) for v in goto.values()):
        return None
    if not all(isinstance(p, tuple) and len(p) == 4 and isinstance(p[0], str)
               and isinstance(p[1], int) for p in prods):
        return None
    return action, goto, prods


def _write(path: Any, tables: tuple) -> None:
    import marshal
    import os

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(marshal.dumps(tables))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache directory: the next process builds the tables again
