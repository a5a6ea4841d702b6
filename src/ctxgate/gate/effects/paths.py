"""Reversibility of a file change, decided with the real filesystem and ``git``.

A path a call writes, edits or deletes is resolved against the call's working directory and
judged by these rules (first match wins):

0. a file that sets what a coding agent is told or may do (:func:`agent_control`: its
   settings and hooks, MCP servers, instruction files such as ``CLAUDE.md``, ctxgate's own
   configuration and data), or where packages come from (:func:`package_source`:
   ``.npmrc``, ``pip.conf``, ``.cargo/config.toml`` …): :attr:`~EffectClass.LOCAL_IRREVERSIBLE`
   wherever it is — the change acts in later sessions and installs, before anyone would
   restore it;
1. a dotfile or dot-directory directly in ``$HOME`` (``~/.bashrc``, ``~/.ssh/*``,
   ``~/.config/...``), or a system directory (``/etc``, ``/usr``, ``/boot``, ...):
   :attr:`~EffectClass.LOCAL_IRREVERSIBLE` — it changes how the machine or the shell behaves;
2. a path whose name depends on a variable the gate cannot expand (``$OUT``): irreversible;
3. outside every git working tree, or inside a ``.git`` directory: irreversible, except a
   new file (nothing there yet, not a delete) in the system's temporary directory
   (``tempfile.gettempdir()``, ``/tmp``): recoverable — nothing is replaced, and
   an agent's scratch script there is not a place the shell or another program reads by
   itself (elsewhere outside a tree a new file can be one: ``~/bin/sudo``, an autostart entry);
4. inside a working tree:

   - a new file (nothing there yet): recoverable — nothing is replaced;
   - delete of a path that does not exist (a literal name, or a glob that matched nothing):
     **no evidence** (``effect`` is ``None``): the rule cannot tell what the call would delete
     when it runs (the file may appear before, or in an earlier part of the same command), so
     it proves nothing and the decision model judges the call;
   - edit / in-place change of a file git tracks: recoverable (``git checkout`` brings the
     committed text back; uncommitted edits to a tracked file are the agent's own work in
     progress, and we accept that risk so that coding work is not denied);
   - whole-file overwrite of a tracked file: recoverable when it has no uncommitted changes;
     with uncommitted changes irreversible (``> f``, ``sort -o f``, ``cp x f`` lose them),
     unless the caller keeps its own history of the file (``keeps_history``: the harness's
     ``Write``, which Claude Code checkpoints);
   - an edit by a harness tool (``Edit``) of an untracked file: recoverable — the replaced
     text is in the call's own arguments;
   - overwrite or in-place change of an existing untracked or ignored file: irreversible;
   - append (``>>``): recoverable;
   - delete: recoverable only when ``git status`` lists nothing under the path, that is every
     file there is tracked and unmodified, or ignored build output; untracked files or
     uncommitted changes would be lost, so that is irreversible. This also decides ``rm`` of
     an agent's own untracked scratch file: irreversible by itself (git cannot bring it back),
     so it runs when the request covers it (the requested head), not by rule.

Each answer carries one evidence line naming the path and the rule.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ctxgate.gate.effects.model import EffectClass

__all__ = ["Action", "PathEffect", "agent_control", "classify_path", "package_source", "git_toplevel", "outside_working_tree",
           "resolve_path", "temp_dir"]

Action = Literal["overwrite", "edit", "modify", "append", "delete", "create"]
"""``overwrite``: replace the whole file (``Write``, ``>``); ``edit``: a change that can be
undone from the call itself (``Edit`` keeps the old text, ``chmod``); ``modify``: an in-place
change (``sed -i``); ``append``: ``>>``; ``delete``: ``rm`` and friends; ``create``: ``mkdir``
and ``touch``, which replace nothing (recoverable anywhere but dotfiles and system paths)."""

_SYSTEM_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/var", "/opt",
                "/sys", "/proc", "/dev", "/root", "/srv")
_VARIABLE = re.compile(r"\$(\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{?[0-9@*#?!$-])")
"""A parameter expansion: a named variable, or a positional/special one (``$0``, ``$@``)."""
_PLACEHOLDER = re.compile(r"\{\}|%s")
"""Where ``find -exec`` or ``xargs -I`` put each input name: the real path is unknown."""
_GIT_TIMEOUT = 10.0


@dataclass(frozen=True, kw_only=True)
class PathEffect:
    """The class of one path change and the one-line reason."""

    effect: EffectClass | None
    """``None``: no evidence either way (a delete of a path that is not there)."""
    evidence: str
    guess: bool = False
    """The class rests on a path the gate could not expand (``$OUT/x``): the cautious
    reading, not a fact about the filesystem."""


_GIT_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")
"""Judging a call must never run the repository's own programs: ``git status`` would start
a configured ``core.fsmonitor`` hook (a command the repository names)."""


def _git(cwd: str, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *_GIT_SAFE, "-C", cwd, *args], capture_output=True,
                              text=True, timeout=_GIT_TIMEOUT, check=False,
                              stdin=subprocess.DEVNULL,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        return None


def git_toplevel(directory: str) -> str | None:
    """The root of the git working tree holding ``directory`` (an existing directory)."""
    proc = _git(directory, "rev-parse", "--show-toplevel")
    if proc is None or proc.returncode != 0:
        return None
    top = proc.stdout.strip()
    return top or None


def _home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def resolve_path(path: str, cwd: str) -> str | None:
    """``path`` made absolute against ``cwd`` (``~`` and ``$HOME`` expanded, symlinks of the
    existing part resolved); ``None`` when another variable leaves it unknown."""
    text = path.strip()
    home = os.path.expanduser("~")
    text = re.sub(r"\$\{HOME\}|\$HOME\b", lambda _m: home, text)
    if _VARIABLE.search(text) or "`" in text or "$(" in text or _PLACEHOLDER.search(text):
        return None
    text = os.path.expanduser(text)
    full = os.path.normpath(os.path.join(cwd, text))
    # resolve symlinks of the existing part (a link into ~/.ssh is judged where it points)
    head, tail = full, ""
    while head and not os.path.lexists(head) and head != os.path.dirname(head):
        head, part = os.path.split(head)
        tail = os.path.join(part, tail) if tail else part
    real = os.path.realpath(head) if head else head
    return os.path.normpath(os.path.join(real, tail)) if tail else real


def _home_dotfile(full: str) -> str | None:
    home = _home()
    if full == home or not full.startswith(home.rstrip("/") + "/"):
        return None
    first = full[len(home.rstrip("/")) + 1:].split("/", 1)[0]
    return first if first.startswith(".") else None


def _system_dir(full: str) -> str | None:
    home = _home()
    if full.startswith(home.rstrip("/") + "/"):
        return None  # a home under /root or /var is judged by the home rules
    for d in _SYSTEM_DIRS:
        if full == d or full.startswith(d + "/"):
            return d
    return None


def temp_dir(full: str) -> str | None:
    """The temporary directory holding ``full`` (a resolved path), if any."""
    import tempfile

    home = _home().rstrip("/") + "/"
    if full.startswith(home):
        return None  # a home inside the temporary directory: the home's rules judge it
    for d in dict.fromkeys((os.path.realpath(tempfile.gettempdir()), "/tmp")):
        if full.startswith(d.rstrip("/") + "/"):
            return d
    return None


def _existing_dir(full: str) -> str:
    d = full if os.path.isdir(full) else os.path.dirname(full)
    while d and not os.path.isdir(d):
        d = os.path.dirname(d)
    return d or "/"


def classify_path(path: str, action: Action, *, cwd: str,
                  keeps_history: bool = False) -> PathEffect:
    """Classify one change of ``path`` (see the module docstring for the rules).

    ``keeps_history``: the caller restores what it overwrites (a harness tool with
    checkpoints), so uncommitted changes of a tracked file are not lost for good.
    """
    irreversible, recoverable = EffectClass.LOCAL_IRREVERSIBLE, EffectClass.LOCAL_RECOVERABLE
    verb = {"overwrite": "overwrites", "edit": "edits", "modify": "changes in place",
            "append": "appends to", "delete": "deletes", "create": "creates"}[action]
    full = resolve_path(path, cwd)
    if full is None:
        return PathEffect(effect=irreversible,
                          evidence=f"{verb} {path}: the path depends on a variable or an "
                                   "input placeholder the gate cannot expand", guess=True)
    control = agent_control(full) or package_source(full)
    if control is not None:
        return PathEffect(effect=irreversible, evidence=f"{verb} {path}: {control}")
    dot = _home_dotfile(full)
    if dot is not None:
        return PathEffect(effect=irreversible,
                          evidence=f"{verb} {path}: ~/{dot} is a dotfile in $HOME (shell, "
                                   "keys or tool configuration)")
    system = _system_dir(full)
    if system is not None:
        return PathEffect(effect=irreversible,
                          evidence=f"{verb} {path}: inside the system directory {system}")
    if action == "create":
        return PathEffect(effect=recoverable,
                          evidence=f"{verb} {path}: a new directory or file (or a new time "
                                   "stamp), nothing is replaced")
    if ".git" in full.split(os.sep):
        return PathEffect(effect=irreversible,
                          evidence=f"{verb} {path}: the repository itself (inside a .git "
                                   "directory)")
    top = git_toplevel(_existing_dir(full))
    if top is None:
        temp = temp_dir(full)
        if temp is not None and action != "delete" and not os.path.lexists(full):
            return PathEffect(effect=recoverable,
                              evidence=f"{verb} {path}: creates a new file in the temporary "
                                       f"directory {temp}, nothing is replaced")
        return PathEffect(effect=irreversible,
                          evidence=f"{verb} {path}: outside any git working tree, nothing can "
                                   "restore it")
    top = os.path.realpath(top)
    rel = os.path.relpath(full, top)
    if rel == "." or rel.split(os.sep)[0] == ".git" or "/.git/" in f"/{rel}/":
        return PathEffect(effect=irreversible,
                          evidence=f"{verb} {path}: the repository itself (its root or .git)")
    exists = os.path.lexists(full)
    if not exists:
        if action == "delete":
            return PathEffect(effect=None,
                              evidence=f"{verb} {path}: nothing there now inside the working "
                                       f"tree {top}, so no evidence of what it would delete")
        return PathEffect(effect=recoverable,
                          evidence=f"{verb} {path}: creates a new file inside the working "
                                   f"tree {top}")
    if action == "delete":
        return _delete_effect(path, top, rel)
    tracked = _tracked(top, rel)
    if tracked and action == "overwrite" and not keeps_history and _modified(top, rel):
        return PathEffect(effect=irreversible,
                          evidence=f"{verb} {path}: tracked by git in {top} but with "
                                   "uncommitted changes, which the overwrite loses")
    if tracked:
        return PathEffect(effect=recoverable,
                          evidence=f"{verb} {path}: tracked by git in {top}, git can restore "
                                   "the committed version")
    if action in ("edit", "append"):
        return PathEffect(effect=recoverable,
                          evidence=f"{verb} {path}: an untracked file, changed by a partial "
                                   "edit that can be undone")
    ignored = _ignored(top, rel)
    kind = "an ignored" if ignored else "an untracked"
    return PathEffect(effect=irreversible,
                      evidence=f"{verb} {path}: {kind} existing file git cannot restore")


_AGENT_DIRS = {
    ".claude": "Claude Code's settings, hooks, agents and commands",
    ".codex": "Codex's configuration",
    ".gemini": "Gemini CLI's settings",
    ".cursor": "Cursor's rules and MCP servers",
    ".windsurf": "Windsurf's rules",
    ".clinerules": "Cline's rules",
}
"""Directories whose files set what a coding agent may do, which hooks (this gate's among
them) run, and which servers it starts."""
_AGENT_FILES = {
    ".mcp.json": "the MCP servers Claude Code starts for this project",
    "CLAUDE.md": "instructions Claude Code reads at every session",
    "CLAUDE.local.md": "instructions Claude Code reads at every session",
    "AGENTS.md": "instructions coding agents read at every session",
    "AGENT.md": "instructions coding agents read at every session",
    "GEMINI.md": "instructions Gemini CLI reads at every session",
    ".cursorrules": "instructions Cursor reads at every session",
    ".windsurfrules": "instructions Windsurf reads at every session",
    "copilot-instructions.md": "instructions GitHub Copilot reads at every session",
}
"""Files an agent reads as instructions or configuration at the start of every session."""


def agent_control(full: str) -> str | None:
    """Why a change of ``full`` (a resolved path) changes what a coding agent is told or may
    do, or ``None``: its permissions and hooks (this gate's own hook among them: a call that
    removes it turns the gate off), the MCP servers it starts, the instructions it reads at
    every session (text planted there is obeyed in later sessions), and ctxgate's own
    configuration and data (approvals, audit). Recoverable by git or not, such a change is
    not judged as ordinary file work: it needs a request."""
    parts = full.split(os.sep)
    base = parts[-1]
    for i, part in enumerate(parts[:-1]):
        if part in _AGENT_DIRS:
            return f"{part}/ holds {_AGENT_DIRS[part]}: a change there changes what the " \
                   "agent may do, not only files"
        if part == "ctxgate" and i > 0 and parts[i - 1].startswith("."):
            return "ctxgate's own configuration or data (its gate, approvals and audit log)"
    if base in _AGENT_FILES and (base != "copilot-instructions.md" or parts[-2:-1] == [".github"]):
        return f"{base} holds {_AGENT_FILES[base]}: a change there steers later sessions"
    if base in _AGENT_DIRS:
        return f"{base} holds {_AGENT_DIRS[base]}"
    return None


_PACKAGE_SOURCES = frozenset({".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini",
                              "uv.toml", "poetry.toml", "bunfig.toml", ".condarc", ".pypirc",
                              ".bazelrc", "gradle.properties", "settings.xml"})
"""Files that say where packages come from and with which credentials (npm, Yarn, pip, uv,
Poetry, Bun, conda, PyPI uploads, Bazel, Gradle, Maven)."""


def package_source(full: str) -> str | None:
    """Why a change of ``full`` (a resolved path) changes where later installs and builds
    fetch code from, or ``None``: a package manager's registry, index or credentials file,
    Cargo's ``.cargo/config.toml`` (registries, a ``runner`` every ``cargo run`` uses).
    ``settings.xml`` counts only under ``.m2/`` or ``.mvn/``."""
    parts = full.split(os.sep)
    base = parts[-1]
    if base == "settings.xml" and not {".m2", ".mvn"} & set(parts[:-1]):
        return None
    if base in _PACKAGE_SOURCES or (parts[-2:-1] == [".cargo"] and
                                    base in ("config", "config.toml")):
        return f"{base} sets where packages and builds fetch code from: a change there " \
               "serves every later install"
    return None


def outside_working_tree(path: str, cwd: str) -> str | None:
    """Why ``path`` is not plainly inside a git working tree (a variable, a dotfile, a system
    directory, no working tree), or ``None`` when it is inside one."""
    full = resolve_path(path, cwd)
    if full is None:
        return f"{path} depends on a variable the gate cannot expand"
    dot = _home_dotfile(full)
    if dot is not None:
        return f"~/{dot} is a dotfile in $HOME"
    system = _system_dir(full)
    if system is not None:
        return f"{path} is inside the system directory {system}"
    if git_toplevel(_existing_dir(full)) is None:
        return f"{path} is outside any git working tree"
    return None


def _tracked(top: str, rel: str) -> bool:
    proc = _git(top, "ls-files", "--error-unmatch", "--", rel)
    return proc is not None and proc.returncode == 0


def _modified(top: str, rel: str) -> bool:
    """Whether the tracked file ``rel`` has uncommitted changes (or git cannot tell)."""
    proc = _git(top, "status", "--porcelain=v1", "--", rel)
    return proc is None or proc.returncode != 0 or bool(proc.stdout.strip())


def _ignored(top: str, rel: str) -> bool:
    proc = _git(top, "check-ignore", "-q", "--", rel)
    return proc is not None and proc.returncode == 0


def _delete_effect(path: str, top: str, rel: str) -> PathEffect:
    proc = _git(top, "status", "--porcelain=v1", "--untracked-files=all", "--", rel)
    if proc is None or proc.returncode != 0:
        return PathEffect(effect=EffectClass.LOCAL_IRREVERSIBLE,
                          evidence=f"deletes {path}: git status failed, so the gate cannot tell "
                                   "whether it can be restored")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if lines:
        first = lines[0][3:]
        what = "untracked" if lines[0].startswith("??") else "uncommitted changes in"
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        return PathEffect(effect=EffectClass.LOCAL_IRREVERSIBLE,
                          evidence=f"deletes {path}: {what} {first}{more} would be lost, git "
                                   "cannot restore it")
    if Path(top, rel).is_dir():
        kind = "a directory holding only tracked, unmodified files or ignored output"
    else:
        kind = "tracked and unmodified" if _tracked(top, rel) else "ignored build output"
    return PathEffect(effect=EffectClass.LOCAL_RECOVERABLE,
                      evidence=f"deletes {path}: {kind} in {top}, git or a rebuild restores it")
