"""Lazy package exports: a package's ``__init__`` names what it offers without importing it.

``ctxgate`` starts once per tool call, so a package's table of contents must cost nothing
until a name is used. Each ``__init__`` keeps a ``{name: module}`` table and installs the two
module hooks this returns.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~10 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module ``__getattr__`` and ``__dir__`` resolving ``table`` names on first use."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        __import__(module)  # not importlib: importing it costs a hook ~2 ms
        value = getattr(sys.modules[module], name)
        setattr(sys.modules[package], name, value)  # resolve once
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
