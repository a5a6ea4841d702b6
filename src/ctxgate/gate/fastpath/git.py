"""``git`` read-only subcommands, their option tables, and the repository's configured commands.

Global options: only ``--no-pager``, ``-P`` and ``--no-optional-locks`` (``-C``, ``-c``,
``--git-dir``, ``--work-tree``, ``--exec-path``, ``--config-env`` … change which repository or
configuration applies, or run programs). Each read-only subcommand has its own exact option
table (git accepts unique prefixes of long options; an abbreviation is not in a table, so it
is refused); ``--output``, ``--ext-diff``, ``--textconv``, ``-O``/``--open-files-in-pager``,
``--show-signature`` and ``--recurse-submodules`` are in none. ``branch`` and ``tag`` take
operands only with ``--list``.

The command line is not the whole story: a repository's configuration can name programs that
read-only commands run (``core.fsmonitor`` on ``git status``, ``diff.<driver>.textconv`` on
``git log -p``, ``filter.<driver>.clean`` on ``git diff``, ``core.pager``, ``gpg.program``…),
and ``git status`` may rewrite the index and so run a ``post-index-change`` hook.
:func:`git_config_problem` reads the effective configuration of a directory with one
``git config --list`` subprocess (2 s timeout, any failure refuses) and refuses if any such
key is set, the hooks directory holds an executable hook, or the index holds a submodule
(git runs inside it under that repository's configuration).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence

from ctxgate.gate.fastpath.lexer import Word
from ctxgate.gate.fastpath.named import man_env_problem
from ctxgate.gate.fastpath.options import Parsed, Refusal, Spec, parse_options, spec

__all__ = ["GIT_SUBCOMMANDS", "check_git", "git_config_problem"]

_GLOBAL = frozenset({"--no-pager", "-P", "--no-optional-locks"})

_DIFF_LONG = (
    "stat numstat shortstat name-only name-status patch no-patch raw patch-with-stat "
    "no-color minimal patience histogram ignore-space-change ignore-all-space "
    "ignore-blank-lines ignore-space-at-eol ignore-cr-at-eol no-ext-diff no-textconv cached "
    "staged merge-base full-index binary no-renames quiet exit-code check summary "
    "compact-summary no-prefix pickaxe-all irreversible-delete text"
)
_DIFF_ARG = ("diff-algorithm diff-filter word-diff-regex src-prefix dst-prefix "
             "line-prefix stat-width inter-hunk-context")
_DIFF_OPT = "unified color word-diff relative abbrev find-renames find-copies dirstat color-moved"
_LOG_LONG = (
    "oneline graph no-decorate all abbrev-commit no-abbrev-commit reverse first-parent merges "
    "no-merges follow regexp-ignore-case extended-regexp fixed-strings all-match invert-grep "
    "left-right cherry-pick topo-order date-order ancestry-path simplify-by-decoration "
    "full-history walk-reflogs source parents children boundary cc name-only"
)
_LOG_ARG = ("author committer grep since until after before max-count skip date format "
            "min-parents max-parents")
_LOG_OPT = "decorate branches tags remotes pretty no-walk notes"


def _log_like() -> Spec:
    return spec("puscmiEFgzwbRM", "nLSG", short_opt="U",
                long=f"{_DIFF_LONG} {_LOG_LONG}", long_arg=f"{_DIFF_ARG} {_LOG_ARG}",
                long_opt=f"{_DIFF_OPT} {_LOG_OPT}", numeric=True, long_arg_separate=False)


def _gs(*args, **kw) -> Spec:
    """A git subcommand's table: git parses ``--opt VALUE`` per option, so only ``=VALUE``."""
    return spec(*args, long_arg_separate=False, **kw)


def _only_with_list(name: str):
    def check(p: Parsed) -> str | None:
        listing = any(o in ("-l", "--list") for o, _ in p.options)
        if p.operands and not listing:
            return f"git {name} with an operand creates or changes a {name}"
        return None
    return check


GIT_SUBCOMMANDS: dict[str, Spec] = {
    "status": _gs("sbvz", long="short branch long verbose ahead-behind no-ahead-behind "
                   "renames no-renames show-stash no-column",
                   long_opt="porcelain untracked-files ignored ignore-submodules column"),
    "diff": _gs("puswbRzM", short_opt="U", long=_DIFF_LONG, long_arg=_DIFF_ARG,
                long_opt=_DIFF_OPT),
    "log": _log_like(),
    "show": _log_like(),
    "whatchanged": _log_like(),
    "blame": _gs("wMsetlnpbfc", "L", long="porcelain line-porcelain root show-stats "
                  "show-name show-number show-email incremental first-parent",
                  long_arg="date since ignore-rev", long_opt="abbrev"),
    "grep": _gs("nilLwvEFGPchHIzqoW", "efmABC", long="line-number ignore-case "
                 "files-with-matches files-without-match word-regexp invert-match "
                 "extended-regexp fixed-strings basic-regexp perl-regexp count cached "
                 "untracked no-index no-exclude-standard exclude-standard full-name "
                 "only-matching null quiet heading break show-function function-context "
                 "all-match and or not column text no-textconv",
                 long_arg="max-depth max-count context after-context before-context "
                 "threads", long_opt="color", numeric=True),
    "ls-files": _gs("cdmoiskutvfz", "xX", long="cached deleted modified others ignored "
                     "stage unmerged killed directory no-empty-directory exclude-standard "
                     "full-name error-unmatch eol deduplicate sparse",
                     long_arg="exclude exclude-from exclude-per-directory format with-tree",
                     long_opt="abbrev"),
    "ls-tree": _gs("rdtlz", long="name-only name-status object-only full-name full-tree "
                    "long", long_arg="format", long_opt="abbrev"),
    "rev-parse": _gs("q", long="show-toplevel show-prefix show-cdup git-dir git-common-dir "
                      "absolute-git-dir is-inside-work-tree is-inside-git-dir "
                      "is-bare-repository is-shallow-repository verify quiet symbolic "
                      "symbolic-full-name all branches tags remotes show-object-format "
                      "local-env-vars", long_arg="git-path default since until",
                      long_opt="abbrev-ref short"),
    "rev-list": _gs("", "n", long="count all reverse first-parent no-merges merges "
                     "left-right boundary topo-order date-order", long_arg="max-count "
                     "since until author grep skip", numeric=True),
    "describe": _gs("", long="tags all always long contains exact-match first-parent",
                     long_arg="match exclude candidates", long_opt="abbrev dirty"),
    "shortlog": _gs("snec", long="summary numbered email committer", long_arg="group"),
    "cat-file": _gs("tspe"),
    "merge-base": _gs("a", long="all is-ancestor octopus independent fork-point"),
    "name-rev": _gs("", long="name-only tags all no-undefined always"),
    "show-ref": _gs("sqd", long="head tags heads verify dereference quiet",
                     long_opt="hash abbrev"),
    "for-each-ref": _gs("", long="merged no-merged", long_arg="format sort count "
                         "points-at contains no-contains"),
    "count-objects": _gs("vH", long="verbose human-readable"),
    "reflog": _gs("", "n", long="all oneline", long_arg="max-count date format",
                   numeric=True),
    "branch": _gs("arvl", long="all remotes verbose list show-current no-color "
                   "no-column", long_arg="contains no-contains points-at sort format",
                   long_opt="column abbrev", check=_only_with_list("branch")),
    "tag": _gs("l", long="list no-column", long_arg="sort contains no-contains "
                "points-at format", long_opt="column", check=_only_with_list("tag")),
    "version": _gs(),
}
"""Read-only subcommands and the options allowed with each."""

_REMOTE = frozenset({"-v", "--verbose"})
_STASH = {"list": GIT_SUBCOMMANDS["log"],
          "show": _gs("pusz", long="stat numstat shortstat name-only name-status patch "
                       "no-color include-untracked only-untracked")}


def check_git(args: Sequence[Word]) -> str:
    """Raise :class:`Refusal` unless ``git ARGS`` is read-only; return the subcommand."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text in ("--version", "--help") and len(args) == 1:
            why = man_env_problem() if args[i].text == "--help" else None
            if why:
                raise Refusal(why)
            return args[i].text[2:]
        if args[i].text not in _GLOBAL:
            raise Refusal(f"git {args[i].text}: global option not allowed (it may change the "
                          "repository, the configuration, or run a program)")
        i += 1
    if i >= len(args):
        raise Refusal("git without a subcommand")
    sub, rest = args[i], list(args[i + 1:])
    if sub.glob:
        raise Refusal(f"git with a glob subcommand {sub.raw!r}")
    name = sub.text
    if name == "help" or [w.text for w in rest] == ["--help"]:
        # `git help reset`, `git reset --help`: git shows the manual (an alias's definition,
        # an external command's page) and runs nothing; help.*/man.*/web.browser are
        # refused with the other program-naming keys (git_config_problem)
        if name == "help" and any(w.glob or w.text.startswith("-") and w.text not in ("-a", "-g")
                                  for w in rest):
            raise Refusal("git help with an option other than -a/-g (-w/-i open a browser)")
        if sub.text.startswith("-") or any(w.glob for w in rest):
            raise Refusal("git help of a glob")
        why = man_env_problem()
        if why:
            raise Refusal(why)
        return "help"
    if name == "remote":
        if any(w.text not in _REMOTE for w in rest):
            raise Refusal("git remote other than 'git remote -v' may change remotes or "
                          "contact them")
        return name
    if name == "stash":
        if not rest or rest[0].text not in _STASH:
            raise Refusal("git stash other than 'list' or 'show' changes the stash")
        parse_options("git stash " + rest[0].text, _STASH[rest[0].text], rest[1:])
        return name
    if name == "reflog":
        # git may take the first operand after options as the subcommand
        if any(w.text in ("expire", "delete", "exists", "write") for w in rest):
            raise Refusal("git reflog expire/delete/write is not read-only")
        if rest and rest[0].text == "show":
            rest = rest[1:]
    sp = GIT_SUBCOMMANDS.get(name)
    if sp is None:
        raise Refusal(f"git {name} is not a read-only subcommand the fast path models")
    parse_options(f"git {name}", sp, rest)
    return name


_HOOK_KEY = re.compile(
    r"^(core\.(fsmonitor|pager|hookspath|sshcommand|alternaterefscommand|gitproxy|askpass"
    r")$|pager\.|diff\.external$|diff\..+\.(textconv|command)$"
    r"|filter\.|gpg\.|log\.showsignature$|submodule\.|extensions\.partialclone$"
    r"|remote\..+\.promisor$|uploadpack\.|core\.splitindex$|diff\.submodule$"
    r"|status\.submodulesummary$|help\.(format|browser|htmlpath)$|man\.|web\.browser$"
    r"|browser\.)",
    re.IGNORECASE)


def git_config_problem(directory: str, *, timeout: float = 2.0) -> str | None:
    """Why git run in ``directory`` may run a configured program, or ``None``.

    Reads the effective configuration (system, global, repository, worktree, command-line
    environment) with ``git config --list --show-origin -z``; any error refuses.
    """
    for var in ("GIT_EXTERNAL_DIFF", "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        if os.environ.get(var):
            return f"{var} is set"
    try:
        proc = subprocess.run(
            ["git", "config", "--list", "--show-origin", "-z"], cwd=directory,
            capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError) as exc:
        return f"could not read the git configuration in {directory!r}: {exc}"
    if proc.returncode != 0:
        return f"could not read the git configuration in {directory!r}"
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    local_config = None
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        key = entry.split("\n", 1)[0]
        if _HOOK_KEY.search(key):
            return f"git configuration sets {key} (it names a program or another file)"
        if key.lower() == "core.repositoryformatversion" and origin.startswith("file:"):
            local_config = origin[5:]
    if local_config is not None:
        hooks = _hooks_dir(directory, local_config)
        if hooks is None:
            return f"could not find the repository configuration {local_config!r}"
        try:
            names = os.listdir(hooks)
        except FileNotFoundError:
            names = []
        except OSError as exc:
            return f"could not list the git hooks in {hooks!r}: {exc}"
        for h in names:
            if not h.endswith(".sample") and os.access(os.path.join(hooks, h), os.X_OK):
                return f"the repository has a git hook {h!r}"
    return _index_problem(directory)


_GITLINK_MODE = (0o160000).to_bytes(4, "big")


def _index_problem(directory: str) -> str | None:
    """Why the repository's index may make git run commands in a submodule, or ``None``.

    ``git status`` and ``git diff`` run git inside every populated submodule (a gitlink entry,
    mode 160000, even without ``.gitmodules``), under that repository's own configuration.
    The mode's four bytes anywhere in the index refuse (a chance match in a hash or a stat
    field only costs a model call).
    """
    gitdir = _git_dir(directory)
    if gitdir is None:
        return None
    try:
        if any(n.startswith("sharedindex.") for n in os.listdir(gitdir)):
            return "the repository uses a split index"
        with open(os.path.join(gitdir, "index"), "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"could not read the git index: {exc}"
    if _GITLINK_MODE in data:
        return "the git index may contain a submodule, whose own configuration git would use"
    return None


def _git_dir(directory: str) -> str | None:
    """The git directory git finds from ``directory`` (``.git``, or where a ``.git`` file points)."""
    here = os.path.abspath(directory)
    while True:
        dotgit = os.path.join(here, ".git")
        if os.path.isdir(dotgit):
            return dotgit
        if os.path.isfile(dotgit):
            try:
                with open(dotgit, encoding="utf-8") as f:
                    line = f.readline().strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                return os.path.join(here, line[7:].strip())
            return None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _hooks_dir(directory: str, config: str) -> str | None:
    """The hooks directory next to the repository configuration file ``config``.

    git names a repository's own file relative to the top of the work tree, which may be
    any parent of ``directory``.
    """
    if os.path.isabs(config):
        return os.path.join(os.path.dirname(config), "hooks")
    here = os.path.abspath(directory)
    while True:
        if os.path.isfile(os.path.join(here, config)):
            return os.path.join(here, os.path.dirname(config), "hooks")
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
