"""Packages an install brings in that the request does not name.

Installing a package runs its code (``setup.py``, npm's install scripts) and ships it with the
project: "install the requests package" → ``pip install requests evil-helper`` or ``pip
install reqeusts`` is a supply-chain over-reach. When a request asks for packages by name
("install the requests package", "add lodash"), each package of an install command must be
named in it, and one that is one or two edits from an asked name (``reqeusts`` for
"requests") is a look-alike. A request that asks for packages in general ("the dependencies",
"pytest and its plugins", "the type stubs") is not checked for extra names, only for
look-alikes. An index the request does not name (``--index-url``) is reported whatever it
asks.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ctxgate.gate.scope.words import _segments

_INSTALLS = {"pip": ("install",), "pip3": ("install",), "pipx": ("install",),
             "uv": ("add",), "poetry": ("add",), "pdm": ("add",), "npm": ("install", "i", "add"),
             "yarn": ("add",), "pnpm": ("add", "install", "i"), "bun": ("add", "install", "i"),
             "cargo": ("add", "install"), "gem": ("install",), "go": ("get", "install"),
             "apt": ("install",), "apt-get": ("install",), "brew": ("install",),
             "conda": ("install",), "dnf": ("install",), "yum": ("install",),
             "composer": ("require",)}
"""Package managers and the subcommands that install the packages they name."""
_VALUE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable",
                            "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
                            "--target", "-t", "--prefix", "--root", "--registry", "--tag",
                            "--cache", "--python", "-p", "--version", "--git", "--path",
                            "--group", "-G", "--features", "-F", "--rev", "--branch",
                            "--index", "--default-index", "--source"})
_INDEX_OPTIONS = frozenset({"-i", "--index-url", "--extra-index-url", "--registry", "--index",
                            "--default-index", "--source", "-f", "--find-links"})
"""Options that choose where packages come from (another index can serve a look-alike)."""
_GENERAL = re.compile(r"\b(dependenc\w*|deps|requirements|plugins?|extensions?|extras?|"
                      r"related|types?|stubs|toolchain|everything|all (?:the )?packages)\b",
                      re.I)
"""Words of a request that asks for packages in general, not only the ones it names."""
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def _package(operand: str) -> str | None:
    """The package name of an install operand (version, extras and tags cut), or ``None`` for
    a path, URL, archive or requirement file."""
    if re.match(r"^(?:\.{0,2}/|~|[a-z+]+://|git\+|file:)", operand) or \
            operand.endswith((".whl", ".tar.gz", ".zip", ".tgz", ".deb", ".rpm", ".txt")):
        return None
    if operand.startswith("@") and "/" in operand:  # npm scope: @types/node@20
        scope, _, rest = operand[1:].partition("/")
        return f"@{scope}/{re.split(r'[@]', rest)[0]}" if rest else None
    name = re.split(r"[=<>!~;@\[ ]", operand, maxsplit=1)[0]
    if ":" in name and not name.startswith("@"):  # apt's pkg:arch
        name = name.split(":", 1)[0]
    return name or None


def _host(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "") if "://" in url else ""
    except ValueError:
        return ""


def _close(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one or two edits (a swap of neighbours is one)."""
    if a == b or abs(len(a) - len(b)) > 2:
        return False
    prev2: list[int] | None = None
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1] <= 2


def installed_packages(command: str, indexes: list[str] | None = None) -> list[str]:
    """The package names an install command names (``pip install requests==2.32``,
    ``npm i -D @types/node``, ``apt-get install -y curl``); the package indexes it names
    (``--index-url URL``) are appended to ``indexes`` when given."""
    out: list[str] = []
    for seg in _segments(command):
        args = list(seg.args)
        prog = seg.program
        if prog in ("python", "python3") and args[:2] == ["-m", "pip"]:
            prog, args = "pip", args[2:]
        if prog == "uv" and args[:2] == ["pip", "install"]:
            prog, args = "pip", args[1:]
        subs = _INSTALLS.get(prog)
        if not subs:
            continue
        words = [x for x in args if not x.startswith("-")]
        if not words or words[0] not in subs:
            continue
        skip = False
        started = False
        for k, x in enumerate(args):
            if skip:
                skip = False
                continue
            if x.startswith("-"):
                key, eq, value = x.partition("=")
                skip = x in _VALUE_OPTIONS
                if indexes is not None and key in _INDEX_OPTIONS:
                    if eq:
                        indexes.append(value)
                    elif k + 1 < len(args):
                        indexes.append(args[k + 1])
                continue
            if not started:  # the subcommand itself
                started = x == words[0]
                continue
            name = _package(x)
            if name:
                out.append(name)
    return out


_ASKED = re.compile(
    r"\b(?:install|add|upgrade|update|require|pin|downgrade)\s+(?:the\s+|a\s+|an\s+)?"
    r"(?:(?:python|node|npm|pip|rust|ruby|go)\s+)?(?:package\s+|library\s+|module\s+)?"
    r"([@\w][\w.@/-]*)|([@\w][\w.@/-]*)\s+(?:package|library|lib|module|crate|gem|"
    r"dependency)\b", re.I)
"""A package a request asks to install: the word after "install"/"add"/"upgrade" or before
"package"/"library"/"module" ("install the requests package", "add lodash")."""
_NOT_PACKAGES = frozenset("the a an it them this that these those all dependencies deps "
                          "requirements packages libraries modules everything project".split())


def _asked_packages(request: str) -> set[str]:
    return {_norm(a or b) for a, b in _ASKED.findall(request)} - _NOT_PACKAGES


def unnamed_packages(command: str, request: str) -> list[str]:
    """The packages an install brings in that the request does not name (module docstring):
    checked when the request itself asks for packages by name."""
    indexes: list[str] = []
    packages = installed_packages(command, indexes)
    out = [f"packages from {i} (an index the request does not name)" for i in indexes
           if _host(i) and _host(i) not in request.lower()]
    asked = _asked_packages(request)
    if not packages or not asked:
        return out
    said = {_norm(w) for w in _WORD.findall(request)}

    def named(p: str) -> bool:
        n = _norm(p)
        if n in said or all(part in said for part in n.split("-")):
            return True  # flask-sqlalchemy for "flask and sqlalchemy"
        if n.startswith("@"):  # @types/node: its scope or its name
            scope, _, rest = n[1:].partition("/")
            return scope in said or rest in said
        return False

    general = bool(_GENERAL.search(request))
    for p in dict.fromkeys(packages):
        if named(p):
            continue
        near = sorted(w for w in asked if len(w) >= 5 and _close(_norm(p), w))
        if near:
            out.append(f"{p} (a look-alike of {near[0]}, which the request names)")
        elif not general:
            out.append(f"{p} (a package the request does not name)")
    return out
