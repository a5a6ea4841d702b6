"""What a task runner runs from the working tree: package.json scripts, make recipes, hooks.

``npm test``, ``yarn build``, ``pnpm run lint`` and ``make clean`` name a task; the commands
that run are in the project's own files, which an agent (or an instruction it read) can write
in one call and run in the next. :func:`task_commands` finds them:

- **npm, yarn, pnpm**: the script of ``package.json`` the call names (``npm run X``, ``npm
  test``, ``yarn X``, ``pnpm X``) with its ``preX``/``postX``, and the install lifecycle
  scripts (``preinstall`` … ``prepare``) for a bare ``npm install``/``npm ci``/``yarn``;
  ``--prefix``/``--cwd``/``-C``/``--dir`` name the package directory;
- **make**: the recipes of the named targets (else the default target) and of every
  prerequisite that the makefile has a rule for, with make's own variables expanded (the
  makefile's simple assignments, ``VAR=value`` on the command line, ``$(RM)``, ``$@``,
  ``$<``, ``$^``); a ``$(shell …)`` anywhere in the makefile runs when make reads it. ``-C``
  and ``-f`` are followed; ``-n``/``--dry-run`` runs nothing. Conditionals are not
  evaluated: both branches are read (the cautious reading).

And the files a tool runs on its own (:func:`autorun_files`; the write side is
:mod:`.planted`): ``pytest`` (and ``python -m pytest``) imports the ``conftest.py`` files from
the rootdir down to the tests; ``cargo build``/``test``/``run``… runs ``build.rs``; ``pip
install .`` runs ``setup.py``; ``git commit``/``push``/``merge``/``pull``/``checkout``/
``rebase``… run their hooks (``--no-verify`` skips the ones it skips), and a pre-commit shim
there runs the ``.pre-commit-config.yaml`` entries.

Each command comes with a line saying where it is. The shell rules judge them; only what they
find destructive counts, and the run stays unknown (a clean scan proves nothing). Files larger
than :data:`MAX_BYTES` are not read. Pure file reads, deterministic.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping

__all__ = ["AUTORUNNERS", "MAX_BYTES", "TASK_RUNNERS", "autorun_files", "task_commands"]

MAX_BYTES = 256 * 1024
"""A file larger than this (UTF-8 bytes on disk) is not read: a package.json, a makefile, and
every script the shell rules read (:func:`ctxgate.gate.effects.shell.read_script`)."""
MAX_COMMANDS = 200
"""At most this many commands are returned per call (a makefile's recipes can be many)."""
TASK_RUNNERS = frozenset({"npm", "yarn", "pnpm", "make", "gmake", "tox", "just"})
MAX_EXPANSION = 16 * 1024
"""At most this many characters of one expanded makefile line (self-referring variables
could grow without end)."""

_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepublish", "preprepare",
                    "prepare", "postprepare")
_NPM_ALIASES = {"t": "test", "tst": "test", "test": "test", "start": "start", "stop": "stop",
                "restart": "restart"}
_NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
_NPM_INSTALL = frozenset({"install", "i", "ci", "in", "ins", "inst", "insta", "instal",
                          "isnt", "isnta", "isntal", "isntall", "add", "clean-install"})
_YARN_BUILTINS = frozenset(
    "add audit autoclean bin cache check config create dedupe dlx exec explain generate-lock-entry "
    "global help import info init install licenses link list login logout node npm outdated owner "
    "pack patch patch-commit plugin policies publish rebuild remove search set stage tag team "
    "unlink unplug up upgrade upgrade-interactive version versions why workspace workspaces".split())
_PNPM_BUILTINS = frozenset(
    "add audit bin config create dedupe deploy dlx doctor env exec fetch help import init "
    "install install-test i it link list ll ls outdated pack patch patch-commit prune publish "
    "rebuild recursive remove rm root server setup store unlink update up why".split())


def task_commands(program: str, args: tuple[str, ...], cwd: str,
                  written: Mapping[str, str] | None = None) -> list[tuple[str, str, str]] | None:
    """``(where, directory, command)`` for each command the task runner call would run from
    the project's files, or ``None`` when the call names no task (``npm view x``) or the files
    cannot be read. ``written``: absolute normalised path → the text the same command writes
    there first (``cat > Makefile <<'EOF' … EOF; make``), read instead of the disk."""
    try:
        if program in ("make", "gmake"):
            return _make(args, cwd, written or {})
        if program == "tox":
            return _tox(args, cwd, written or {})
        if program == "just":
            return _just(args, cwd, written or {})
        return _package_scripts(program, args, cwd, written or {})
    except (OSError, ValueError, RecursionError):
        return None


def _read(path: str, written: Mapping[str, str] | None = None) -> str | None:
    """The text the same command writes to ``path`` first, else the file on disk
    (:func:`ctxgate.gate.effects.shell.read_script`: a regular file of at most
    :data:`MAX_BYTES`)."""
    from ctxgate.gate.effects.shell import read_script

    if written and os.path.normpath(path) in written:
        return written[os.path.normpath(path)][:MAX_BYTES]
    return read_script(path, os.path.dirname(path) or ".")


# -- npm, yarn, pnpm -------------------------------------------------------------------------

_DIR_OPTIONS = {"npm": ("--prefix", "-C"), "yarn": ("--cwd",), "pnpm": ("-C", "--dir")}


def _package_scripts(program: str, args: tuple[str, ...], cwd: str,
                     written: Mapping[str, str]) -> list[tuple[str, str, str]] | None:
    directory, words = cwd, []
    skip = False
    for k, x in enumerate(args):
        if skip:
            skip = False
            continue
        if x == "--":
            break  # what follows is passed to the script
        name, eq, value = x.partition("=")
        if name in _DIR_OPTIONS.get(program, ()):
            if eq:
                directory = os.path.join(cwd, os.path.expanduser(value))
            elif k + 1 < len(args):
                directory = os.path.join(cwd, os.path.expanduser(args[k + 1]))
                skip = True
            continue
        if x.startswith("-"):
            continue
        words.append(x)
    names = _script_names(program, words)
    if not names:
        return None
    text = _read(os.path.join(directory, "package.json"), written)
    if text is None:
        return None
    package = json.loads(text)
    scripts = package.get("scripts") if isinstance(package, dict) else None
    if not isinstance(scripts, dict):
        return None
    out = []
    for name in names:
        body = scripts.get(name)
        if isinstance(body, str) and body.strip():
            out.append((f"the package.json script `{name}` that `{program}` runs", directory,
                        body))
    return out


def _script_names(program: str, words: list[str]) -> tuple[str, ...]:
    """The package.json scripts a call runs, in order (``npm test`` → pretest, test,
    posttest)."""
    def with_hooks(name: str) -> tuple[str, ...]:
        return (f"pre{name}", name, f"post{name}")

    first = words[0] if words else None
    if program == "npm":
        if first in _NPM_RUN:
            return with_hooks(words[1]) if len(words) > 1 else ()
        if first in _NPM_ALIASES:
            return _npm_lifecycle(_NPM_ALIASES[first])
        if first in _NPM_INSTALL and len(words) == 1:
            return _INSTALL_SCRIPTS
        return ()
    builtins = _YARN_BUILTINS if program == "yarn" else _PNPM_BUILTINS
    if first is None:
        return _INSTALL_SCRIPTS if program == "yarn" else ()
    if first == "run":
        return with_hooks(words[1]) if len(words) > 1 else ()
    if first in ("install", "i") and len(words) == 1:
        return _INSTALL_SCRIPTS
    if first in ("test", "t", "start", "stop", "restart"):
        return _npm_lifecycle(_NPM_ALIASES.get(first, first))
    if first in builtins:
        return ()
    return with_hooks(first)


def _npm_lifecycle(name: str) -> tuple[str, ...]:
    """``test``, ``start``, ``stop`` with their pre/post scripts; ``restart`` runs its own
    script or, without one, stop then start (both read: the cautious reading)."""
    names = [name] + (["stop", "start"] if name == "restart" else [])
    return tuple(x for n in names for x in (f"pre{n}", n, f"post{n}"))


# -- make ------------------------------------------------------------------------------------

_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_MAKE_VALUE_OPTIONS = frozenset({"--directory", "--file",
                                 "--makefile", "--include-dir", "--old-file", "--new-file",
                                 "--what-if", "--assume-old", "--assume-new"})
_MAKE_LONG = {"--directory": "C", "--file": "f", "--makefile": "f"}
"""Long options that are ``-C``/``-f`` under another name."""
_MAKE_DRY = frozenset({"--dry-run", "--just-print", "--recon", "--question",
                       "--print-data-base", "--version", "--help"})
_BUILTIN_VARIABLES = {"RM": "rm -f", "MAKE": "make", "CC": "cc", "CXX": "g++", "CPP": "cc -E",
                      "AR": "ar", "AS": "as", "LD": "ld", "SHELL": "/bin/sh", "MKDIR": "mkdir",
                      "INSTALL": "install", "CP": "cp", "MV": "mv", "LN": "ln"}
_ASSIGNMENT = re.compile(r"^(?:(?:export|override)\s+)?([A-Za-z_][\w.-]*)\s*([:+?!]*=)\s*(.*)$")
_REFERENCE = re.compile(r"\$(?:\(([^()$]*)\)|\{([^{}$]*)\}|([@<^+*?%|]))")
_SHELL_CALL = re.compile(r"\$[({]shell\s+")


def _make(args: tuple[str, ...], cwd: str,
          written: Mapping[str, str]) -> list[tuple[str, str, str]] | None:
    directory, makefile = cwd, None
    overrides: dict[str, str] = {}
    targets: list[str] = []
    k = 0
    while k < len(args):
        x = args[k]
        k += 1
        option, value, given = None, "", False
        if x.startswith("--"):
            name, eq, value = x.partition("=")
            given = bool(eq)
            if name in _MAKE_DRY:
                return []  # prints or asks: runs no recipe
            if name not in _MAKE_VALUE_OPTIONS:
                continue
            option = _MAKE_LONG.get(name, name)
        elif x.startswith("-") and len(x) > 1:
            for i, c in enumerate(x[1:], start=1):
                if c in "nqpvh":
                    return []
                if c in "jl":
                    break  # an optional number follows
                if c in "CfIoW":
                    option, value = c, x[i + 1:]
                    given = bool(value)
                    break
            if option is None:
                continue
        else:
            name, eq, value = x.partition("=")
            if eq and re.fullmatch(r"[A-Za-z_][\w.-]*[:+?]?", name):
                overrides[name.rstrip(":+?")] = value
            else:
                targets.append(x)
            continue
        if not given:  # the option's value is the next word
            if k >= len(args):
                return None
            value, k = args[k], k + 1
        if option == "C":
            directory = os.path.join(directory, os.path.expanduser(value))
        elif option == "f":
            makefile = value
    if makefile is None:
        found = next((m for m in _MAKEFILES if os.path.isfile(os.path.join(directory, m))
                      or os.path.normpath(os.path.join(directory, m)) in written), None)
        if found is None:
            return None
        makefile = found
    path = os.path.join(directory, os.path.expanduser(makefile))
    text = _read(path, written)
    if text is None:
        return None
    return _MakefileReader(text, overrides, os.path.basename(path)).commands(targets, directory)


class _MakefileReader:
    """The rules and simple variables of one makefile (no includes, no evaluation of
    conditionals: every branch is read)."""

    def __init__(self, text: str, overrides: dict[str, str], name: str) -> None:
        self.name = name
        self.variables: dict[str, str] = dict(_BUILTIN_VARIABLES)
        self.rules: dict[str, tuple[list[str], list[str]]] = {}
        self.default: str | None = None
        self.shell_calls: list[str] = []
        self._cache: dict[tuple[str, str, tuple[str, ...]], str] = {}
        lines = text.replace("\\\n", " ").split("\n")
        current: list[str] = []
        in_define = False
        for line in lines:
            if in_define:
                in_define = not line.strip().startswith("endef")
                continue
            if line.startswith("\t"):
                for target in current:
                    self.rules[target][1].append(line[1:])
                continue
            stripped = line.split("#", 1)[0].rstrip()
            if not stripped.strip():
                continue
            for m in _SHELL_CALL.finditer(stripped):
                self.shell_calls.append(_balanced(stripped, m.end()))
            word = stripped.split(None, 1)[0]
            if word in ("define",):
                in_define = True
                current = []
                continue
            if word in ("ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "include",
                        "-include", "sinclude", "vpath", "export", "unexport", "undefine"):
                if not _ASSIGNMENT.match(stripped):
                    continue
            assignment = _ASSIGNMENT.match(stripped.strip())
            if assignment and ":" not in stripped.split("=", 1)[0].rstrip(":+?!"):
                var, op, value = assignment.groups()
                if op == "+=":
                    self.variables[var] = f"{self.variables.get(var, '')} {value}".strip()
                elif op != "?=" or var not in self.variables:
                    self.variables[var] = value
                continue
            head, sep, rest = stripped.partition(":")
            if not sep or "=" in head:
                current = []
                continue
            rest = rest.lstrip(":")
            prereqs, _, inline = rest.partition(";")
            names = [t for t in self._expand(head).split() if t]
            deps = [d for d in self._expand(prereqs).replace("|", " ").split() if d]
            current = []
            for target in names:
                if "%" in target:
                    continue  # pattern rules are not followed
                rule = self.rules.setdefault(target, ([], []))
                rule[0].extend(deps)
                if inline.strip():
                    rule[1].append(inline.strip())
                current.append(target)
                if self.default is None and not target.startswith("."):
                    self.default = target
        self.variables.update(overrides)

    def commands(self, targets: list[str], directory: str) -> list[tuple[str, str, str]]:
        out = [(f"`$(shell …)` in {self.name}, run when make reads it", directory,
                self._expand(call)) for call in self.shell_calls]
        seen: set[str] = set()

        def visit(target: str, depth: int) -> None:
            """Prerequisites first, then the target's own recipe (make's order)."""
            if target in seen or target not in self.rules or depth > 50 or \
                    len(out) >= MAX_COMMANDS:
                return
            seen.add(target)
            deps, recipe = self.rules[target]
            for dep in deps:
                visit(dep, depth + 1)
            for line in recipe:
                command = self._expand(line, target, deps).lstrip("@-+ \t")
                if command.strip():
                    out.append((f"the recipe of `{target}` in {self.name}", directory, command))

        for target in targets or ([self.default] if self.default else []):
            visit(target, 0)
        return out[:MAX_COMMANDS]

    def _expand(self, text: str, target: str = "", deps: list[str] | tuple[str, ...] = (),
                active: frozenset[str] = frozenset()) -> str:
        """``text`` with make's references replaced: a variable by its value (expanded in
        turn; one that refers to itself stays a shell-style ``${NAME}``), an automatic
        variable by the rule's target and prerequisites, a function call by a marker no path
        rule resolves. At most :data:`MAX_EXPANSION` characters come out."""
        if "$" not in text:
            return text
        text = text.replace("$$", "\0")

        def one(m: re.Match[str]) -> str:
            name = m.group(1) if m.group(1) is not None else m.group(2) \
                if m.group(2) is not None else m.group(3)
            automatic = {"@": target, "<": deps[0] if deps else "", "^": " ".join(deps),
                         "+": " ".join(deps), "?": " ".join(deps), "*": "", "%": "", "|": ""}
            if name in automatic:
                return automatic[name]
            if " " in name or "," in name:  # a function (shell, wildcard, patsubst, …)
                return "$UNKNOWN_MAKE_VALUE"
            if name in self.variables and name not in active and len(active) < 10:
                key = (name, target, tuple(deps))
                if key not in self._cache:  # each variable once per rule: no blow-up
                    self._cache[key] = self._expand(self.variables[name], target, deps,
                                                    active | {name})
                return self._cache[key]
            return "${" + re.sub(r"\W", "_", name) + "}"  # unknown here: a shell variable

        for _ in range(4):  # nested references (``$($(V)_FLAGS)``) resolve from inside out
            new = _REFERENCE.sub(one, text)
            if new == text or len(new) > MAX_EXPANSION:
                break
            text = new
        return text[:MAX_EXPANSION].replace("\0", "$")


def _balanced(text: str, start: int) -> str:
    """The text from ``start`` to the parenthesis that closes a ``$(shell`` call."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] in "({":
            depth += 1
        elif text[i] in ")}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return text[start:]


def iter_commands(commands: list[tuple[str, str, str]]) -> Iterator[tuple[str, str, str]]:
    """The commands in order, each at most once."""
    seen: set[tuple[str, str]] = set()
    for where, directory, command in commands:
        if (directory, command) not in seen:
            seen.add((directory, command))
            yield where, directory, command


# -- tox, nox --------------------------------------------------------------------------------

_TOX_SUBSTITUTION = re.compile(r"(?<!\$)\{(posargs|env:[^:{}]+)(?::([^{}]*))?\}|(?<!\$)\{(\w+)\}")
_TOX_PLAIN = {"envpython": "python", "envbindir": "bin", "envname": "env",
              "envdir": ".tox/env", "envtmpdir": ".tox/env/tmp"}


def _tox(args: tuple[str, ...], cwd: str,
         written: Mapping[str, str]) -> list[tuple[str, str, str]] | None:
    """The ``commands_pre``/``commands``/``commands_post`` of the tox.ini environments the call
    runs (``-e a,b``; without ``-e``, every environment's: the envlist's factor expressions
    are not expanded). Factor conditions (``cov: coverage report``) are dropped, so every
    conditional line is read; ``{posargs:default}`` becomes its default, ``{env:NAME}`` the
    variable (``{env:NAME:default}`` its default), ``{toxinidir}`` the directory,
    ``{envpython}`` python, other substitutions a variable no rule resolves."""
    import configparser

    envs: list[str] | None = None
    directory, config = cwd, "tox.ini"
    for k, x in enumerate(args):
        value = args[k + 1] if k + 1 < len(args) else ""
        if x in ("-e", "--env") or x.startswith("-e") and len(x) > 2:
            envs = (x[2:] if len(x) > 2 and not x.startswith("--") else value).split(",")
        elif x in ("-c", "--conf"):
            config = value
        elif x in ("-l", "--listenvs", "-a", "--listenvs-all", "--showconfig", "--version",
                   "-h", "--help", "--notest"):
            return []
    path = os.path.join(directory, config)
    text = _read(path, written)
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text)
    sections = [s for s in parser.sections() if s == "testenv" or s.startswith("testenv:")]
    if envs is not None:
        chosen = {f"testenv:{e.strip()}" for e in envs if e.strip()}
        sections = [s for s in sections if s in chosen] or \
            [s for s in sections if s == "testenv"]  # an env without its own section
    out = []
    root = os.path.dirname(path) or cwd
    for section in sections:
        for key in ("commands_pre", "commands", "commands_post"):
            for line in parser.get(section, key, fallback="").splitlines():
                command = _tox_line(line, root)
                if command:
                    out.append((f"the tox.ini `{key}` of [{section}]", root, command))
    return out[:MAX_COMMANDS]


def _tox_line(line: str, root: str) -> str:
    line = line.strip()
    if ":" in line.split(" ", 1)[0] and not line.startswith("{"):
        line = line.split(":", 1)[1].strip()  # a factor condition: `cov: coverage report`
    line = line.lstrip("-!").strip()  # `- cmd` ignores its exit status

    def sub(m: re.Match[str]) -> str:
        if m.group(1) == "posargs":
            return m.group(2) or ""
        if m.group(1) is not None:  # {env:NAME}, {env:NAME:default}
            if m.group(2) is not None:
                return m.group(2)
            return "${" + re.sub(r"\W", "_", m.group(1)[4:]) + "}"
        name = m.group(3)
        if name == "toxinidir":
            return root
        return _TOX_PLAIN.get(name, "${TOX_" + name.upper() + "}")

    for _ in range(3):  # nested: {posargs:{env:X:}}
        line = _TOX_SUBSTITUTION.sub(sub, line)
    return line.strip()


# -- just -------------------------------------------------------------------------------------

_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][\w-]*)((?:\s+[+*$]?[A-Za-z_][\w-]*(?:=\S+)?)*)\s*:(?!=)"
                          r"([^#\n]*)")
_JUST_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(['\"])(.*)\2\s*$")
_JUST_VALUE_OPTIONS = frozenset({"-f", "--justfile", "-d", "--working-directory", "--set",
                                 "--shell", "--shell-arg", "--dotenv-filename",
                                 "--dotenv-path", "--color", "--command-color"})


def _just(args: tuple[str, ...], cwd: str,
          written: Mapping[str, str]) -> list[tuple[str, str, str]] | None:
    """The recipes a ``just`` call runs (the named ones, else the first) with their
    dependencies first: each body line a shell command, ``{{name}}`` replaced by the
    justfile's string variable (a recipe parameter stays a variable). A recipe with a ``#!``
    line runs as a script of that language and is not read here."""
    justfile, directory, words = None, cwd, []
    k = 0
    while k < len(args):
        x = args[k]
        k += 1
        if x in ("-n", "--dry-run", "-l", "--list", "--summary", "--show", "-s", "--evaluate",
                 "--dump", "--choose", "--help", "-h", "--version", "-V", "--fmt", "--init"):
            return []
        if x in _JUST_VALUE_OPTIONS:
            value = args[k] if k < len(args) else ""
            k += 2 if x == "--set" else 1
            if x in ("-f", "--justfile"):
                justfile = os.path.join(cwd, value)
            elif x in ("-d", "--working-directory"):
                directory = os.path.join(cwd, value)
            continue
        if not x.startswith("-"):
            words.append(x)
    if justfile is None:
        justfile = next((os.path.join(cwd, n) for n in ("justfile", "Justfile", ".justfile")
                         if os.path.isfile(os.path.join(cwd, n))
                         or os.path.normpath(os.path.join(cwd, n)) in written), None)
    text = _read(justfile, written) if justfile else None
    if text is None:
        return None
    variables: dict[str, str] = {}
    recipes: dict[str, tuple[list[str], list[str], list[str]]] = {}  # deps, params, body
    order: list[str] = []
    current: str | None = None
    for line in text.split("\n"):
        if line[:1] in (" ", "\t") and current is not None:
            if line.strip():
                recipes[current][2].append(line.strip())
            continue
        current = None
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "[", "set ", "import ", "mod ", "alias ")):
            continue
        m = _JUST_ASSIGN.match(stripped)
        if m:
            variables[m.group(1)] = m.group(3)
            continue
        m = _JUST_RECIPE.match(stripped)
        if m:
            current = m.group(1)
            params = [p.lstrip("+*$").split("=")[0] for p in m.group(2).split()]
            deps = re.findall(r"\(?([A-Za-z_][\w-]*)", m.group(3))
            recipes[current] = (deps, params, [])
            order.append(current)
    chosen = [w for w in words if w in recipes][:1] or order[:1]
    if words and words[0] in recipes:  # `just a b`: b is a parameter of a, or a recipe
        chosen = [words[0]] + ([w for w in words[1:] if w in recipes]
                               if not recipes[words[0]][1] else [])
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()

    def visit(name: str, depth: int) -> None:
        if name in seen or name not in recipes or depth > 50 or len(out) >= MAX_COMMANDS:
            return
        seen.add(name)
        deps, _params, body = recipes[name]
        for dep in deps:
            visit(dep, depth + 1)
        if body and body[0].startswith("#!"):
            return  # a script recipe in its own language
        for line in body:
            command = re.sub(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}",
                             lambda m: variables.get(m.group(1), "${" + re.sub(
                                 r"\W", "_", m.group(1)) + "}"), line)
            command = re.sub(r"\{\{[^}]*\}\}", "$UNKNOWN_JUST_VALUE", command).lstrip("@-")
            if command.strip() and not command.lstrip().startswith("#"):
                out.append((f"the recipe `{name}` in {os.path.basename(justfile)}", directory,
                            command.strip()))

    for name in chosen:
        visit(name, 0)
    return out


# -- files a tool runs on its own -------------------------------------------------------------

AUTORUNNERS = frozenset({"pytest", "py.test", "cargo", "pip", "pip3", "git", "nox"})
"""Programs that run project files nobody names on their command line."""
MAX_FILES = 50
"""At most this many files are read per call (a deep tree of conftest.py files)."""
MAX_WALK = 2_000
"""At most this many directories are walked looking for conftest.py files (``pytest`` run
in a home directory would walk it all)."""
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox",
                        ".nox", "build", "dist", "target", ".mypy_cache", ".pytest_cache"})
_CARGO_BUILDS = frozenset({"build", "b", "test", "t", "run", "r", "check", "c", "bench",
                           "clippy", "doc", "d", "install", "rustc", "fix"})
_GIT_HOOKS = {
    "commit": ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"),
    "push": ("pre-push", "reference-transaction"),
    "merge": ("pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge"),
    "pull": ("pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge"),
    "checkout": ("post-checkout",), "switch": ("post-checkout",),
    "rebase": ("pre-rebase", "post-rewrite", "post-checkout"),
    "am": ("applypatch-msg", "pre-applypatch", "post-applypatch"),
    "cherry-pick": ("prepare-commit-msg", "post-commit"),
    "revert": ("prepare-commit-msg", "post-commit"),
}
_NO_VERIFY_SKIPS = frozenset({"pre-commit", "commit-msg", "pre-merge-commit", "pre-push",
                              "applypatch-msg", "pre-applypatch"})


def autorun_files(program: str, args: tuple[str, ...], cwd: str) -> list[tuple[str, str]]:
    """``(path, language)`` of each project file the call makes a tool run on its own
    (language as :func:`ctxgate.gate.effects.planted.autorun` gives it), at most
    :data:`MAX_FILES`; empty when the call runs none or they cannot be found."""
    try:
        if program in ("pytest", "py.test"):
            return _conftests(args, cwd)
        words = [x for x in args if not x.startswith("-")]
        if program == "cargo" and words[:1] and words[0] in _CARGO_BUILDS:
            return _existing([os.path.join(_manifest_dir(args, cwd), "build.rs")], "rust")
        if program in ("pip", "pip3") and words[:1] and words[0] in ("install", "wheel"):
            dirs = [os.path.join(cwd, w) for w in words[1:]
                    if w.startswith((".", "/")) or os.path.isdir(os.path.join(cwd, w))]
            dirs += [os.path.join(cwd, args[k + 1]) for k, x in enumerate(args[:-1])
                     if x in ("-e", "--editable")]
            return _existing([os.path.join(d, "setup.py") for d in dirs], "python")
        if program == "git":
            return _git_hooks(args, cwd)
        if program == "nox":  # noxfile.py is Python: its sessions' session.run(…) calls
            if any(x in ("-l", "--list", "--version", "-h", "--help") for x in args):
                return []
            named = [args[k + 1] for k, x in enumerate(args[:-1]) if x in ("-f", "--noxfile")]
            return _existing([os.path.join(cwd, named[0] if named else "noxfile.py")],
                             "python")
    except (OSError, ValueError):
        return []
    return []


def _existing(paths: list[str], language: str) -> list[tuple[str, str]]:
    out = []
    for p in dict.fromkeys(os.path.normpath(x) for x in paths):
        if os.path.isfile(p):
            out.append((p, language))
    return out[:MAX_FILES]


def _conftests(args: tuple[str, ...], cwd: str) -> list[tuple[str, str]]:
    """conftest.py files pytest would import: in the starting directories' parents up to the
    repository (or filesystem) root, and anywhere below the test paths (or cwd)."""
    roots = [os.path.join(cwd, x.split("::", 1)[0]) for x in args
             if not x.startswith("-") and os.path.exists(os.path.join(cwd, x.split("::", 1)[0]))]
    roots = roots or [cwd]
    found: list[str] = []
    for root in roots:
        start = root if os.path.isdir(root) else os.path.dirname(root)
        here = os.path.realpath(start)
        while True:  # parents: pytest imports conftest.py from the rootdir down
            found.append(os.path.join(here, "conftest.py"))
            if os.path.isdir(os.path.join(here, ".git")) or here == os.path.dirname(here):
                break
            here = os.path.dirname(here)
        if os.path.isdir(root):
            for visited, (dirpath, dirnames, filenames) in enumerate(os.walk(root)):
                dirnames[:] = sorted(d for d in dirnames
                                     if d not in _SKIP_DIRS and not d.startswith("."))
                if "conftest.py" in filenames:
                    found.append(os.path.join(dirpath, "conftest.py"))
                if len(found) > 4 * MAX_FILES or visited >= MAX_WALK:
                    break  # what is not read stays unknown
    return _existing(found, "python")


def _manifest_dir(args: tuple[str, ...], cwd: str) -> str:
    for k, x in enumerate(args):
        if x == "--manifest-path" and k + 1 < len(args):
            return os.path.dirname(os.path.join(cwd, args[k + 1]))
        if x.startswith("--manifest-path="):
            return os.path.dirname(os.path.join(cwd, x.split("=", 1)[1]))
    return cwd


def _git_hooks(args: tuple[str, ...], cwd: str) -> list[tuple[str, str]]:
    import subprocess

    directory, k = cwd, 0
    while k < len(args) and args[k].startswith("-"):  # git's own options: -C DIR, -c k=v
        if args[k] in ("-C", "-c", "--git-dir", "--work-tree") and k + 1 < len(args):
            if args[k] == "-C":
                directory = os.path.join(directory, args[k + 1])
            k += 2
        else:
            k += 1
    if k >= len(args) or args[k] not in _GIT_HOOKS:
        return []
    sub, rest = args[k], args[k + 1:]
    hooks = _GIT_HOOKS[sub]
    if "--no-verify" in rest or (sub == "commit" and any(
            x.startswith("-") and not x.startswith("--") and "n" in x[1:] for x in rest)):
        hooks = tuple(h for h in hooks if h not in _NO_VERIFY_SKIPS)
    from ctxgate.gate.effects.paths import _GIT_SAFE

    out = subprocess.run(["git", *_GIT_SAFE, "-C", directory, "rev-parse", "--git-path", "hooks"],
                         capture_output=True, text=True, timeout=5, check=False)
    if out.returncode != 0 or not out.stdout.strip():
        return []
    hooks_dir = os.path.join(directory, out.stdout.strip())
    found = [(p, lang) for p, lang in _existing([os.path.join(hooks_dir, h) for h in hooks],
                                                 "shell") if os.access(p, os.X_OK)]
    # git runs only executable hooks
    config = os.path.join(directory, ".pre-commit-config.yaml")
    if any(os.path.basename(p) == "pre-commit" and "pre-commit" in (_read(p) or "")[:4096]
           .split("\n", 1)[-1] for p, _ in found) and os.path.isfile(config):
        found.append((config, "pre-commit"))  # the shim runs the configured hooks
    return found
