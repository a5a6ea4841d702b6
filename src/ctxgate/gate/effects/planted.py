"""Code written where a tool runs it on its own: what a ``conftest.py`` or an install script does.

Writing a file inside the working tree is recoverable (git restores it), so the gate does not
ask whether anyone requested it. But some files are not only data: another tool runs them
later without asking anyone, and what they do then is the real effect of the write.

- ``conftest.py``: pytest imports it whenever tests under it run;
- ``sitecustomize.py``, ``usercustomize.py``: Python imports them at start-up when they are on
  the path; a ``.pth`` file's ``import`` lines run at every start-up in a site directory;
- ``setup.py``: pip runs it when the project is built or installed; ``build.rs``: cargo runs it
  before every build and test run;
- ``package.json``: npm runs its ``preinstall``/``install``/``postinstall``/``prepare`` (and
  pack/publish) scripts on ``npm install``;
- ``.pre-commit-config.yaml``: pre-commit runs each hook's ``entry`` on ``git commit`` (a
  ``language: system`` entry is a shell command), and a ``repo:`` other than ``local`` or
  ``meta`` is code fetched from that repository and run at every commit (untrusted: written,
  it needs a request);
- a file under ``.husky/`` or ``.githooks/``: git runs it as a hook when the repository's
  ``core.hooksPath`` points there (as husky sets it).

- ``.claude/settings.json`` / ``settings.local.json``: Claude Code runs each hook's command at
  its event, without asking, in the next session of the project;
- ``.vscode/tasks.json``: VS Code runs a task with ``runOptions.runOn: "folderOpen"`` when
  the folder is opened;
- ``.devcontainer/devcontainer.json`` (or ``.devcontainer.json``): a dev container runs its
  lifecycle commands when it is created or started (``initializeCommand`` on the host itself,
  ``postCreateCommand``, ``postStartCommand`` … inside, with the workspace mounted);
- a CI pipeline (``.github/workflows/*.yml``, ``.gitlab-ci.yml``, ``.circleci/config.yml``
  …): CI runs each step's ``run:``/``script:``/``command:`` on the next push, with the
  repository's secrets (:func:`ci_steps`).

Files that run only when someone runs them (a Python or shell source file, a Makefile's
recipes, any package.json script, a notebook's cells: :func:`run_later`) are scanned for one
thing only, code fetched from elsewhere or decoded from a literal and run (``curl … | sh``,
``exec(base64.b64decode(…))``):
the next ``pytest``, ``make test`` or ``npm test`` would run it looking like ordinary work.
Their other effects are judged when they run (an application deletes and sends as a matter
of course; a run of a script is scanned when it is run: :mod:`.shell`).

Not here: ``.envrc`` (direnv runs it only after ``direnv allow``, and again only after a
change is allowed), ``.mcp.json`` (Claude Code asks before it starts a project's server),
and ``.git/hooks`` (irreversible already: the repository itself).

:func:`planted_effect` scans the written text the way a run of it would be scanned (Python
with :mod:`.code`, shell with :mod:`.shell`, npm scripts, hook commands and folder-open tasks as shell commands) and returns the
destructive effect it finds, or ``None``: a clean scan proves nothing, and the write keeps
its own class.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.effects.model import SEVERITY, Effect, EffectClass, EffectSource

__all__ = ["HOOK", "autorun", "ci_steps", "planted_effect", "planted_in_arguments", "run_later"]

_ENTRY = re.compile(r"^\s*-?\s*entry:\s*(.+?)\s*$", re.M)
_REPO = re.compile(r"^\s*-?\s*repo:\s*['\"]?([^\s'\"#]+)", re.M)
_NPM_SCRIPTS = ("preinstall", "install", "postinstall", "preprepare", "prepare",
                "postprepare", "prepublish", "prepack", "postpack", "prepublishOnly")
_NPM_SCRIPT = re.compile('"(' + "|".join(_NPM_SCRIPTS) + r')"\s*:\s*"((?:\\.|[^"\\])*)"')
_ANY_SCRIPT = re.compile(r'"([\w:.-]+)"\s*:\s*"((?:\\.|[^"\\])*)"')


def autorun(path: str) -> tuple[str, str] | None:
    """``(who runs it, language)`` for a file a tool runs on its own, else ``None``."""
    norm = os.path.normpath(path.replace("\\", "/"))
    base = os.path.basename(norm)
    parts = norm.split(os.sep)
    if base == "conftest.py":
        return "pytest imports it whenever tests under its directory run", "python"
    if base in ("sitecustomize.py", "usercustomize.py"):
        return "Python imports it at start-up", "python"
    if base.endswith(".pth"):
        return "Python runs its import lines at start-up", "pth"
    if base == "setup.py":
        return "pip runs it when the project is built or installed", "python"
    if base == "build.rs":
        return "cargo runs it before every build and test run", "rust"
    if base == "package.json" and "node_modules" not in parts:
        return "npm runs its install scripts on `npm install`", "npm"
    if base in (".pre-commit-config.yaml", ".pre-commit-config.yml"):
        return "pre-commit runs its local hooks' entries on `git commit`", "pre-commit"
    if parts[-2:-1] == [".claude"] and base in ("settings.json", "settings.local.json"):
        return "Claude Code runs its hooks' commands on its own at their events", "claude"
    if parts[-2:-1] == [".vscode"] and base == "tasks.json":
        return "VS Code runs a `runOn: folderOpen` task when the folder is opened", "vscode"
    if base == ".devcontainer.json" or (base == "devcontainer.json" and ".devcontainer" in parts):
        return ("the dev container runs its lifecycle commands when it is created or started",
                "devcontainer")
    if _is_ci_config(parts):
        return "CI runs its steps on the next push, with the repository's secrets", "ci"
    if any(p in (".husky", ".githooks") for p in parts[:-1]) and base not in ("_", "husky.sh") \
            and not base.endswith((".md", ".txt")):
        return HOOK
    return None


def run_later(path: str) -> tuple[str, str] | None:
    """``(who runs it, language)`` for a file that runs only when someone runs it: a Python or
    shell source file, a Makefile's recipes, every script of a package.json. Code planted
    there is not run by writing it, but the next ``pytest``, ``make test`` or ``npm test``
    runs it looking like ordinary work, so code fetched from elsewhere or decoded and run
    (``curl … | sh``, ``exec(base64.b64decode(…))``) is judged when it is written; other effects are left
    to the run (an application deletes and sends as a matter of course)."""
    norm = os.path.normpath(path.replace("\\", "/"))
    base = os.path.basename(norm)
    if base.endswith((".py", ".pyw")):
        return "it runs when the program or its tests run", "python"
    if base.endswith((".sh", ".bash", ".zsh")):
        return "it runs when the script is run", "shell"
    if base.endswith(".ipynb"):
        return "its cells run when the notebook is run", "notebook"
    if base in ("Makefile", "makefile", "GNUmakefile") or base.endswith(".mk"):
        return "make runs its recipes when a target is built", "make"
    if base == "package.json" and "node_modules" not in norm.split(os.sep):
        return "npm runs its scripts on `npm run` and `npm test`", "npm-all"
    return None


_MAY_FETCH = re.compile(
    r"[a-z]{3,5}://|/dev/(?:tcp|udp)/|\b(?:curl|wget|urlopen|urlretrieve|urllib|requests|httpx|"
    r"aiohttp|fetch|socket|b64decode|b32decode|b85decode|a85decode|base64|unhexlify|fromhex|"
    r"decompress|marshal|exec|eval|__import__|clone|npx|uvx|pipx|iex|"
    r"Invoke-\w+|DownloadString|powershell|pwsh|nc|ncat|socat)\b", re.I)
"""Words without which code cannot fetch or decode what it runs: a file of a run-later kind
that holds none of them is not scanned (the scan costs ~2 ms per KB of Python)."""


HOOK = ("git runs it as a hook (core.hooksPath)", "shell")
"""The :func:`autorun` answer for a git hook, for callers that know a file is one."""


def planted_effect(path: str, content: str, *, cwd: str, construct: str,
                   verb: str = "writes", kind: tuple[str, str] | None = None,
                   existing: bool = False) -> Effect | None:
    """The destructive effect of ``content`` written to ``path`` by ``construct``, when a tool
    runs that file on its own (:func:`autorun`, or ``kind`` when the caller knows); ``None``
    otherwise (a clean scan proves nothing).

    ``existing``: the file is already there and a command runs it (``pytest`` and the
    project's conftest.py): a delete of a computed path or of a path the gate cannot expand
    is the project's own cleanup more often than not (2 of 13 real conftest.py files here
    ``rmtree`` their own scratch directory), so only what the scan can name counts."""
    found = kind or autorun(path)
    if not content:
        return None
    if found is None or (found[1] == "npm" and not existing):
        later = run_later(path)  # run only when someone runs it: untrusted code only
        if later is not None and _MAY_FETCH.search(content):
            effect = _scan(content, later[1], cwd=cwd, existing=existing,
                           where=f"{construct} {verb} {path} ({later[0]}), and there the code")
            if effect is not None and effect.effect is EffectClass.UNTRUSTED_CODE:
                return Effect(effect=effect.effect, source=EffectSource.CODE_SCAN,
                              evidence=effect.evidence, details=effect.details)
        if found is None:
            return None
    who, language = found
    where = f"{construct} {verb} {path} ({who}), and there the code"
    effect = _scan(content, language, cwd=cwd, where=where, existing=existing)
    if effect is None or not effect.effect.destructive:
        return None
    return Effect(effect=effect.effect, source=EffectSource.CODE_SCAN,
                  evidence=effect.evidence, details=effect.details)


_PATH_ARGS = ("path", "file_path", "filePath", "filepath", "filename", "file", "target")
_REPLACE_BLOCK = re.compile(r"^=======[ \t]*\n(.*?)^>>>>>>>[ \t]*REPLACE", re.M | re.S)
"""The new text of a ``<<<<<<< SEARCH … ======= … >>>>>>> REPLACE`` block."""
_TEXT_ARGS = ("content", "contents", "text", "data", "newText", "new_text", "new_string",
              "new_source", "body")


def planted_in_arguments(tool: str, arguments: Any, *, cwd: str,
                         path: str | None = None) -> Effect | None:
    """:func:`planted_effect` for a tool that writes a file (an MCP ``write_file`` or
    ``edit_file``, Claude Code's ``Write``/``Edit``): the text it writes (``content``,
    ``new_string``, an edit list's ``newText``) to ``path``, by default its path argument."""
    if not isinstance(arguments, Mapping):
        return None
    if path is None:
        path = next((v for k in _PATH_ARGS if isinstance(v := arguments.get(k), str) and v),
                    None)
    if path is None or (autorun(path) is None and run_later(path) is None):
        return None
    texts = [v for k in _TEXT_ARGS if isinstance(v := arguments.get(k), str)]
    diff = arguments.get("diff")
    if isinstance(diff, str):  # Cline's and Roo's SEARCH/REPLACE blocks: the replacements
        texts += [m.group(1) for m in _REPLACE_BLOCK.finditer(diff)]
    edits = arguments.get("edits")
    if isinstance(edits, list):
        texts += [str(e.get(k)) for e in edits if isinstance(e, Mapping)
                  for k in _TEXT_ARGS if isinstance(e.get(k), str)]
    return planted_effect(path, "\n".join(texts), cwd=cwd, construct=tool)


def _scan(content: str, language: str, *, cwd: str, where: str,
          existing: bool = False) -> Effect | None:
    from functools import partial

    from ctxgate.gate.effects.code import code_effect as scan_code
    from ctxgate.gate.effects.shell import shell_effect as scan_shell

    code_effect = partial(scan_code, computed_deletes=not existing)
    shell_effect = partial(scan_shell, in_file=existing)
    if language in ("python", "rust"):  # the code scan reads Rust's std::fs deletes too
        return code_effect(content, where=where, cwd=cwd)
    if language == "pth":
        code = "\n".join(line for line in content.splitlines()
                         if line.startswith(("import ", "import\t")))
        return code_effect(code, where=where, cwd=cwd) if code else None
    if language == "pre-commit":  # `entry: rm -rf ~` of a `language: system`/`script` hook
        remote = [m.group(1) for m in _REPO.finditer(content)
                  if m.group(1) not in ("local", "meta")]
        if remote:  # its hooks are code fetched from there and run at every commit
            return Effect(effect=EffectClass.UNTRUSTED_CODE, source=EffectSource.CODE_SCAN,
                          evidence=f"{where} runs the hooks of {remote[0]}"
                                   f"{f' (and {len(remote) - 1} more)' if len(remote) > 1 else ''}"
                                   ", code fetched from there, at every commit")
        entries = "\n".join(m.group(1).strip().strip("'\"")
                            for m in _ENTRY.finditer(content))
        language = "shell"
        content = entries
        if not content:
            return None
    if language == "notebook":  # the code scan reads `!cmd` lines and `%%bash` cells too
        found = [e for e in (code_effect(source, where=where, cwd=cwd)
                             for source in _notebook_sources(content))
                 if e is not None and e.effect.destructive]
        return max(found, key=lambda e: SEVERITY.index(e.effect), default=None)
    if language == "make":  # recipe lines: a tab, then a command (@ and - prefixes dropped)
        content = "\n".join(line[1:].lstrip("@-+ ") for line in content.splitlines()
                            if line.startswith("\t"))
        language = "shell"
        if not content:
            return None
    if language == "shell" and content.startswith("#!") and \
            re.search(r"python|node", content.split("\n", 1)[0]):
        return code_effect(content, where=where, cwd=cwd)  # a hook written in Python or JS
    if language == "shell":
        e = shell_effect(content, cwd=cwd)
        return _prefixed(e, where) if e is not None and e.effect.destructive else None
    worst: Effect | None = None
    found = _hook_commands(content) if language == "claude" else \
        _folder_open_tasks(content) if language == "vscode" else \
        _lifecycle_commands(content) if language == "devcontainer" else \
        ci_steps(content) if language == "ci" else \
        _npm_scripts(content, every=language == "npm-all")
    for name, command in found:
        e = shell_effect(command, cwd=cwd)
        if e is not None and e.effect.destructive and (
                worst is None or SEVERITY.index(e.effect) > SEVERITY.index(worst.effect)):
            worst = _prefixed(e, f"{where} of its `{name}` script")
    return worst


_CI_FILES = frozenset({".gitlab-ci.yml", ".gitlab-ci.yaml", "azure-pipelines.yml",
                       "azure-pipelines.yaml", "bitbucket-pipelines.yml", ".travis.yml",
                       ".drone.yml", ".woodpecker.yml", "cloudbuild.yaml", "cloudbuild.yml",
                       "buildspec.yml", "appveyor.yml", ".appveyor.yml"})
_CI_DIRS = {".github": "workflows", ".circleci": None, ".buildkite": None, ".forgejo":
            "workflows", ".gitea": "workflows", ".woodpecker": None}


def _is_ci_config(parts: list[str]) -> bool:
    """A CI pipeline definition: ``.github/workflows/*.yml``, ``.gitlab-ci.yml``,
    ``.circleci/config.yml`` and the like (YAML only)."""
    base = parts[-1]
    if base in _CI_FILES:
        return True
    if not base.endswith((".yml", ".yaml")):
        return False
    for i, part in enumerate(parts[:-1]):
        if part in _CI_DIRS:
            sub = _CI_DIRS[part]
            return sub is None or parts[i + 1:i + 2] == [sub]
    return False


_CI_KEY = re.compile(r"^(\s*)(?:-\s+)?(run|command|commands|script|before_script|after_script|"
                     r"install|before_install|inlineScript|bash|sh|pwsh)\s*:\s*(.*?)\s*$")


def ci_steps(content: str) -> list[tuple[str, str]]:
    """``(key, command)`` for each shell step of a CI pipeline text (a whole file or an edit's
    fragment): a ``run:``/``script:``/``command:`` value given inline, as a block scalar
    (``run: |``) or as a list of lines, read by indentation (no YAML parser: a fragment of an
    edit need not be a whole document)."""
    lines = content.splitlines()
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        m = _CI_KEY.match(lines[i])
        i += 1
        if not m:
            continue
        indent, key, value = len(m.group(1)), m.group(2), m.group(3)
        if value and value[0] not in "|>" and value != "[]":
            inline = value.strip("'\"")
            if inline.startswith("[") and inline.endswith("]"):
                out += [(key, x.strip().strip("'\"")) for x in inline[1:-1].split(",")]
            else:
                out.append((key, inline))
            continue
        nxt = next((x.strip() for x in lines[i:] if x.strip()), "")
        if not value and not nxt.startswith("-"):
            continue  # a mapping below (CircleCI's `run:` then `command:`): read on
        body: list[str] = []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i].strip())
            i += 1
        if value[:1] in ("|", ">"):
            out.append((key, "\n".join(body)))
        else:  # a list of commands
            out += [(key, x[1:].strip().strip("'\"")) for x in body if x.startswith("-")]
    return [(k, c) for k, c in out if c]


def _npm_scripts(content: str, *, every: bool = False) -> list[tuple[str, str]]:
    """The install-time scripts of a package.json text (a whole file, or an edit's fragment);
    ``every``: all its scripts."""
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict):
        scripts = data.get("scripts")
        if isinstance(scripts, dict):
            return [(k, v) for k, v in scripts.items()
                    if (every or k in _NPM_SCRIPTS) and isinstance(v, str)]
        return []
    out = []
    for m in (_ANY_SCRIPT if every else _NPM_SCRIPT).finditer(content):
        out.append((m.group(1), _unquoted(m.group(2))))
    return out


_COMMAND_VALUE = re.compile(r'"command"\s*:\s*"((?:\\.|[^"\\])*)"')


def _commands_in_text(content: str) -> list[str]:
    """Every ``"command": "…"`` string of a JSON text or of a fragment an edit writes."""
    return [_unquoted(m.group(1)) for m in _COMMAND_VALUE.finditer(content)]


def _unquoted(body: str) -> str:
    """The text of a JSON string literal's body (escapes decoded), or the body as written
    when it does not decode (a fragment cut mid-escape)."""
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return body


def _hook_commands(content: str) -> list[tuple[str, str]]:
    """The hook commands of a Claude Code settings text (``hooks → EVENT → [{hooks: [{type:
    command, command}]}]``); of a fragment, every ``"command"`` string it writes."""
    try:
        data = json.loads(content)
    except ValueError:
        return [("hook", c) for c in _commands_in_text(content)]
    hooks = data.get("hooks") if isinstance(data, dict) else None
    out = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for h in group.get("hooks", []) if isinstance(group, dict) else ():
                if isinstance(h, dict) and isinstance(h.get("command"), str):
                    out.append((f"{event} hook", h["command"]))
    return out


def _folder_open_tasks(content: str) -> list[tuple[str, str]]:
    """The commands of the ``runOn: folderOpen`` tasks of a VS Code tasks.json text; of a
    fragment (or a file with comments, which VS Code allows) that says ``folderOpen``, every
    ``"command"`` string it writes."""
    try:
        data = json.loads(content)
    except ValueError:
        return [("folderOpen task", c) for c in _commands_in_text(content)] \
            if "folderOpen" in content else []
    tasks = data.get("tasks") if isinstance(data, dict) else None
    out = []
    for t in tasks if isinstance(tasks, list) else ():
        run = t.get("runOptions") if isinstance(t, dict) else None
        if isinstance(run, dict) and run.get("runOn") == "folderOpen" and \
                isinstance(t.get("command"), str):
            args = [a for a in t.get("args", []) if isinstance(a, str)]
            out.append((f"folderOpen task {t.get('label', '')}".strip(),
                        " ".join([t["command"], *args])))
    return out


_LIFECYCLE = ("initializeCommand", "onCreateCommand", "updateContentCommand",
              "postCreateCommand", "postStartCommand", "postAttachCommand")
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_KEY_AFTER = re.compile(r"\s*:")


def _lifecycle_commands(content: str) -> list[tuple[str, str]]:
    """The lifecycle commands of a devcontainer.json text: a string is a shell command, an
    array one program with its arguments, an object named commands of either form (run in
    parallel). Of a fragment or a file with comments (which the format allows), every
    ``"…Command": "…"`` string it writes."""
    try:
        data = json.loads(content)
    except ValueError:
        if not any(f'"{key}"' in content for key in _LIFECYCLE):
            return []
        # every string value of the fragment (an array's or an object's too), not its keys
        return [("lifecycle command", _unquoted(m.group(0)[1:-1]))
                for m in _STRING.finditer(content) if not _KEY_AFTER.match(content, m.end())]
    if not isinstance(data, dict):
        return []
    out = []
    for key in _LIFECYCLE:
        value = data.get(key)
        named = value.items() if isinstance(value, dict) else [(key, value)]
        for name, command in named:
            if isinstance(command, list):
                command = shlex.join(str(x) for x in command)
            if isinstance(command, str) and command.strip():
                out.append((str(name), command))
    return out


def _notebook_sources(content: str) -> list[str]:
    """The source of every code cell of an ``.ipynb`` JSON text, or the text itself as one
    cell (an edit's new source)."""
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if not (isinstance(data, dict) and isinstance(data.get("cells"), list)):
        return [content]
    out = []
    for cell in data["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type", "code") == "code":
            src = cell.get("source", "")
            out.append("".join(src) if isinstance(src, list) else str(src))
    return out


def _prefixed(e: Effect, where: str) -> Effect:
    return Effect(effect=e.effect, source=e.source, evidence=f"{where}: {e.evidence}",
                  details=e.details)
