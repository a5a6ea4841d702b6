"""The shell parser's rule for ``git``: pushes, history rewrites, discards, output files.

- ``git push`` is :attr:`~EffectClass.EXTERNAL`; a force push (``-f``, ``--force``,
  ``--force=…``, ``--force-with-lease``, ``--mirror``, ``--delete``, a ``+refspec`` or a
  ``:branch`` refspec) says in its evidence that it overwrites the remote's history;
- history rewrites and discards are :attr:`~EffectClass.LOCAL_IRREVERSIBLE`: ``reset --hard``,
  ``clean -f``, ``rebase``, ``commit --amend``, ``filter-branch``/``filter-repo``,
  ``checkout -- PATH``/``-f``, ``restore``, ``switch --discard-changes``, ``stash drop/clear``,
  ``branch -D``, ``reflog expire``, ``gc --prune``, ``update-ref -d``; but ``checkout -- PATHS``
  and ``restore PATHS`` (and ``checkout -f``/``checkout .`` of the whole tree) are recoverable
  when ``git status`` lists no change under those paths: there is nothing to discard;
- everyday commits, adds, fetches, merges and branch switches are recoverable (the reflog
  keeps them);
- reads (``log``, ``diff``, ``show``, ``status``, ...) are read-only, except that an
  ``--output=F``/``-o DIR`` option writes F;
- ``git help X``, ``git X -h``/``--help`` only name X; ``git -c core.pager=CMD`` and
  ``alias.x=!CMD`` run CMD (analysed as a command of its own); ``-C DIR`` moves the paths.
"""

from __future__ import annotations

import os
import re

from ctxgate.gate.effects.model import EffectClass

__all__ = ["git_rule"]

IRREVERSIBLE = EffectClass.LOCAL_IRREVERSIBLE
RECOVERABLE = EffectClass.LOCAL_RECOVERABLE

_READS = frozenset({"status", "log", "diff", "show", "blame", "ls-files", "ls-tree",
                    "rev-parse", "describe", "shortlog", "grep", "cat-file", "rev-list",
                    "whatchanged", "count-objects", "merge-base", "name-rev", "version",
                    "for-each-ref", "show-ref", "check-ignore", "var", "annotate",
                    "diff-tree", "diff-files", "diff-index", "ls-remote", "cherry",
                    "range-diff", "show-branch", "verify-commit", "verify-tag", "fsck",
                    "check-attr", "check-ref-format", "format-patch", "bundle", "archive"})
_RECOVERABLE = frozenset({"add", "commit", "fetch", "pull", "merge", "cherry-pick", "revert",
                          "init", "clone", "mv", "apply", "am", "worktree", "submodule", "notes",
                          "tag", "remote", "stash", "switch", "checkout", "branch", "rm",
                          "config", "sparse-checkout", "lfs", "bisect", "restore", "reset",
                          "clean", "rebase", "reflog", "gc", "prune", "update-ref",
                          "filter-branch", "filter-repo", "replace", "send-email", "push",
                          "maintenance", "repack", "update-index", "symbolic-ref",
                          "commit-tree", "write-tree", "read-tree", "hash-object",
                          "checkout-index"})
_CODE_KEYS = ("core.pager", "pager.", "core.sshcommand", "core.editor", "diff.external",
              "sequence.editor", "core.fsmonitor", "core.hookspath", "credential.helper",
              "alias.", ".textconv", "filter.", "uploadpack.packobjectshook",
              "core.askpass", "gpg.program")
_GLOBAL_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                "--exec-path", "--config-env", "--super-prefix"})


_CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "--type", "--default",
                                   "--comment", "--value", "--url"})
_RUNS_COMMAND = re.compile(
    r"(?i)^(core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass)|sequence\.editor|"
    r"diff\.external|credential\.helper|gpg\.program|gpg\.\w+\.program|alias\.\S+|"
    r"pager\.\S+|(diff|merge|filter)\.\S+\.(textconv|command|driver|clean|smudge|process)|"
    r"uploadpack\.packobjectshook|protocol\.\S+\.allow|submodule\.\S+\.update|"
    r"core\.gitproxy|sendemail\.\S*cmd|web\.browser|browser\.\S+\.cmd|man\.\S+\.cmd)$")
"""Configuration keys whose value is a command git runs later (or, for aliases starting with
``!``, when the alias is used): setting one plants code."""
_REDIRECTS = re.compile(r"(?i)^(remote\.\S+\.(url|pushurl)|url\.\S+\.(insteadof|pushinsteadof))$")
"""Configuration keys that change where git sends (a remote's URL, a URL rewrite)."""


def global_options(args: list[str]) -> tuple[list[tuple[str, str]], int]:
    """git's own options before the subcommand, as ``(name, value)`` pairs (``("-c",
    "core.pager=less")``, ``("-C", "sub")``; ``""`` for a flag), and the subcommand's index
    in ``args`` (``len(args)`` when there is none)."""
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(args) and args[k].startswith("-"):
        name, _, inline = args[k].partition("=")
        value = inline if inline else (args[k + 1] if k + 1 < len(args) else "")
        takes = name in _GLOBAL_WITH_VALUE
        out.append((name, value if takes or inline else ""))
        k += 2 if takes and not inline else 1
    return out, k


def git_rule(a, seg) -> None:
    """Add the findings of one ``git`` command to the analysis ``a``."""
    args = list(seg.args)
    cwd = a.cwd
    options, k = global_options(args)
    for name, value in options:
        if name == "-c":
            key, _, val = value.partition("=")
            if any(key.lower().startswith(c) or key.lower().endswith(c) for c in _CODE_KEYS):
                a.inner(f"`git -c {key}=…` runs", val.lstrip("!"))
        elif name == "-C" and value:
            cwd = os.path.normpath(os.path.join(cwd, os.path.expanduser(value)))
    if k >= len(args):
        return  # `git` or `git --version`: prints only
    sub, rest = args[k], args[k + 1:]
    if sub == "help" or any(x in ("-h", "--help") for x in rest):
        return
    old_cwd, a.cwd = a.cwd, cwd
    try:
        _subcommand(a, sub, rest)
    finally:
        a.cwd = old_cwd


_HOOK_NAMES = frozenset({
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "post-receive", "post-update",
    "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "post-index-change"})


def _hooks_path(a, directory: str) -> None:
    """``git config core.hooksPath DIR``: git runs DIR's hooks on later commands. A DIR
    outside the working tree is irreversible by itself; inside it, each hook file there (at
    most 256 KiB) is scanned as a run of it would be (:mod:`.planted`); a
    destructive finding is the effect, otherwise the model judges (husky sets this honestly)."""
    from ctxgate.gate.effects.paths import outside_working_tree, resolve_path
    from ctxgate.gate.effects.planted import HOOK, planted_effect
    from ctxgate.gate.effects.shell import read_script

    outside = outside_working_tree(directory, a.cwd)
    if outside is not None:  # hooks nobody reviews in the repository (husky's are inside)
        a.add(IRREVERSIBLE, f"`git config core.hooksPath {directory}` makes git run hooks "
                            f"from outside the repository ({outside})")
        return
    full = resolve_path(directory, a.cwd)
    try:
        names = sorted(os.listdir(full)) if full and os.path.isdir(full) else []
    except OSError:
        names = []
    for name in names:
        if name not in _HOOK_NAMES:
            continue
        body = read_script(os.path.join(full, name), a.cwd)
        found = planted_effect(os.path.join(directory, name), body or "", cwd=a.cwd,
                               construct=f"`git config core.hooksPath {directory}`",
                               verb="makes git run", kind=HOOK)
        if found is not None:
            a.add(found.effect, found.evidence)
            return
    a.unknown.append(f"`git config core.hooksPath {directory}`: git runs the hooks there on "
                     "later commands")


def _discarded_paths(sub: str, rest: list[str], words: list[str]) -> list[str] | None:
    """The pathspecs whose uncommitted changes ``git checkout``/``git restore`` would discard
    (``["."]``: the whole tree), or ``None`` when the command's reach is unclear."""
    if sub == "checkout":
        if "--" in rest:
            return rest[rest.index("--") + 1:] or None
        if _has(rest, "--ours", "--theirs") or _has(rest, "-f", "--force"):
            return None if words and words != ["."] else ["."]
        return ["."] if words == ["."] else None
    paths, skip = [], False
    for x in rest:
        if skip:
            skip = False
        elif x in ("-s", "--source"):
            skip = True
        elif x == "--" or x.startswith("-"):
            continue
        else:
            paths.append(x)
    return paths or None


def _nothing_to_discard(cwd: str, sub: str, rest: list[str], words: list[str]) -> str | None:
    """Evidence that ``git checkout -- PATHS`` / ``git restore PATHS`` loses nothing: ``git
    status`` lists no staged or unstaged change under any of the paths (nor, for a forced
    checkout, an untracked file it could overwrite), so the files already hold their
    committed text. ``None`` when there is something to lose or git
    cannot tell."""
    from ctxgate.gate.effects.paths import _git

    paths = _discarded_paths(sub, rest, words)
    if not paths or any(p.startswith(":") or "$" in p for p in paths):
        return None  # pathspec magic or a variable: not checked
    # restoring paths never touches untracked files; a forced switch may overwrite them
    untracked = "all" if sub == "checkout" and _has(rest, "-f", "--force") else "no"
    proc = _git(cwd, "status", "--porcelain=v1", f"--untracked-files={untracked}", "--",
                *paths)
    if proc is None or proc.returncode != 0 or proc.stdout.strip():
        return None
    return (f"`git {sub}` of {' '.join(paths)[:120]}: git status lists no uncommitted change "
            "there, so nothing is discarded")


def _has(rest: list[str], *names: str) -> bool:
    for x in rest:
        for n in names:
            if x == n or (n.startswith("--") and x.startswith(n + "=")):
                return True
            if not n.startswith("--") and len(n) == 2 and x.startswith("-") \
                    and not x.startswith("--") and n[1] in x[1:]:
                return True
    return False


def _subcommand(a, sub: str, rest: list[str]) -> None:
    from ctxgate.gate.effects.programs import _option_value

    if sub in _READS:
        outs = _option_value(tuple(rest), (), ("--output",))
        if sub == "format-patch":
            outs += _option_value(tuple(rest), ("-o",), ("--output-directory",))
        if sub in ("bundle", "archive"):
            outs += _option_value(tuple(rest), ("-o",), ("--output",))
            if sub == "bundle" and rest[:1] == ["create"] and len(rest) > 1:
                outs.append(rest[1])
        for p in outs:
            a.path(f"`git {sub} --output {p}`", p, "overwrite")
        if sub == "grep":  # -O/--open-files-in-pager=CMD runs CMD on the matching files
            for cmd in _option_value(tuple(rest), ("-O",), ("--open-files-in-pager",)):
                if cmd.strip():
                    a.inner("`git grep -O` runs", cmd)
        return
    if sub not in _RECOVERABLE:
        a.unknown.append(f"git {sub}")
        return
    words = [x for x in rest if not x.startswith("-")]
    if sub == "clone":  # a new directory where it is cloned to, judged by the path rules
        from ctxgate.gate.effects.shell import _CLONE_VALUES

        ops = [x for k, x in enumerate(rest) if not x.startswith("-") and not (
            k and rest[k - 1] in _CLONE_VALUES)]
        if len(ops) >= 2:
            a.path(f"`git clone` into {ops[1]}", ops[1], "create")
    if sub == "config":  # the values of -f FILE, --type T … are not the key
        words = [x for k, x in enumerate(rest) if not x.startswith("-") and not (
            k and rest[k - 1] in _CONFIG_VALUE_OPTIONS)]
        if len(words) >= 2 or _has(rest, "--unset", "--unset-all", "--remove-section",
                                   "--rename-section", "--add", "--replace-all"):
            for file in _option_value(tuple(rest), ("-f",), ("--file",)):
                a.path(f"`git config --file {file}`", file, "modify")
    if sub == "push":
        force = [x for x in rest if x in ("-f", "--force", "--mirror", "--delete", "-d",
                                          "--prune") or x.startswith(("--force", "--mirror"))]
        force += [x for x in words if x.startswith("+") or x.startswith(":")]
        if force:
            a.add(EffectClass.EXTERNAL,
                  f"`git push {' '.join(force)}` force-pushes: it overwrites or deletes the "
                  "remote's history, which cannot be undone from here")
        else:
            a.add(EffectClass.EXTERNAL, "`git push` publishes commits to a remote")
        return
    if sub == "send-email":
        a.add(EffectClass.EXTERNAL, "`git send-email` sends e-mail")
        return
    irreversible = None
    if sub == "reset" and _has(rest, "--hard", "--merge", "--keep"):
        irreversible = "`git reset --hard` discards uncommitted changes"
    elif sub == "clean" and not _has(rest, "-n", "--dry-run") and _has(rest, "-f", "--force"):
        irreversible = "`git clean -f` deletes untracked files"
    elif sub in ("rebase", "filter-branch", "filter-repo", "replace"):
        if not _has(rest, "--abort", "--show-current-patch"):
            irreversible = f"`git {sub}` rewrites history"
    elif sub == "commit" and _has(rest, "--amend"):
        irreversible = "`git commit --amend` rewrites the last commit"
    elif sub == "checkout" and (_has(rest, "-f", "--force") or "--" in rest
                                or "." in words or _has(rest, "--ours", "--theirs")):
        irreversible = "`git checkout` of paths discards their uncommitted changes"
    elif sub == "restore" and not (_has(rest, "--staged", "-S") and not _has(
            rest, "--worktree", "-W")):
        irreversible = "`git restore` discards uncommitted changes"
    elif sub == "switch" and _has(rest, "--discard-changes", "-f", "--force"):
        irreversible = "`git switch --discard-changes` discards uncommitted changes"
    elif sub == "stash" and words[:1] in (["drop"], ["clear"]):
        irreversible = f"`git stash {words[0]}` deletes stashed changes"
    elif sub == "branch" and (_has(rest, "-D") or (_has(rest, "--delete", "-d")
                                                   and _has(rest, "--force", "-f"))):
        irreversible = "`git branch -D` deletes a branch that may not be merged"
    elif sub == "reflog" and words[:1] in (["expire"], ["delete"]):
        irreversible = "`git reflog expire` drops the history that undo relies on"
    elif sub in ("gc", "prune") and (sub == "prune" or _has(rest, "--prune")):
        irreversible = f"`git {sub}` prunes unreachable commits"
    elif sub == "update-ref" and _has(rest, "-d"):
        irreversible = "`git update-ref -d` deletes a ref"
    elif sub == "read-tree" and _has(rest, "-u") and _has(rest, "--reset", "-m"):
        irreversible = "`git read-tree -u` overwrites the working tree's uncommitted changes"
    elif sub == "checkout-index" and _has(rest, "-f", "--force"):
        irreversible = "`git checkout-index -f` overwrites working-tree files with the " \
                       "index's copies"
    elif sub == "rm" and _has(rest, "-f", "--force"):
        irreversible = "`git rm -f` deletes files with uncommitted changes"
    elif sub == "config" and len(words) >= 2 and (words[0].lower() == "core.hookspath" or
                                                  _RUNS_COMMAND.match(words[0])):
        key = words[0].lower()
        if key == "core.hookspath":
            _hooks_path(a, words[1])
        elif key == "credential.helper":
            # `!cmd` is a shell command handed the credentials; a plain name is a helper
            # program (store, cache, osxkeychain) or a path
            if words[1].startswith("!"):
                a.inner(f"`git config {words[0]}` hands credentials to a command", words[1][1:])
            elif "/" in words[1]:
                irreversible = f"`git config {words[0]} {words[1]}` hands the user's git " \
                               "credentials to that program"
        else:
            bang = key.startswith(("alias.", "submodule."))  # a command only after `!`
            value = words[1].lstrip("!") if bang else words[1]
            if not bang or words[1].startswith("!"):
                a.inner(f"`git config {words[0]}` plants a command git runs later", value)
        if _has(rest, "--global", "--system"):  # and it outlives this repository
            a.add(IRREVERSIBLE, f"`git config --global {words[0]}` changes the user's git "
                                "configuration for every repository")
            return
        if key == "core.hookspath":
            return
    elif sub == "config" and len(words) >= 2 and _REDIRECTS.match(words[0]):
        irreversible = f"`git config {words[0]} {words[1]}` redirects where git fetches or " \
                       "pushes: later pushes go there"
    elif sub == "remote" and words[:1] == ["set-url"] and len(words) >= 3:
        irreversible = f"`git remote set-url {words[1]}` redirects where git fetches or pushes: " \
                       f"later pushes go to {words[-1]}"
    elif sub == "config" and _has(rest, "--global", "--system") and (
            len(words) >= 2 or _has(rest, "--unset", "--unset-all", "--remove-section",
                                    "--rename-section", "--add", "--replace-all")):
        irreversible = "`git config --global` changes the user's git configuration"
    elif sub == "tag" and _has(rest, "-d", "--delete"):
        irreversible = "`git tag -d` deletes a tag"
    elif sub == "worktree" and words[:1] == ["remove"] and _has(rest, "-f", "--force"):
        irreversible = "`git worktree remove --force` deletes a worktree with its uncommitted " \
                       "changes"
    elif sub == "submodule" and words[:1] == ["foreach"] and len(words) > 1:
        a.inner("`git submodule foreach` runs in every submodule", " ".join(words[1:]))
    if irreversible and sub in ("checkout", "restore"):
        clean = _nothing_to_discard(a.cwd, sub, rest, words)
        if clean:
            a.add(RECOVERABLE, clean)
            return
    if irreversible:
        a.add(IRREVERSIBLE, irreversible)
        return
    if sub in ("branch", "tag", "remote", "config", "worktree", "notes", "reflog",
               "lfs", "submodule", "bisect") and not words:
        return  # listing (a bare `git stash` is `git stash push`: it changes the tree)
    if words and (sub, words[0]) in {("stash", "list"), ("stash", "show"), ("remote", "show"),
                           ("remote", "get-url"), ("worktree", "list"), ("notes", "show"),
                           ("notes", "list"), ("reflog", "show"), ("submodule", "status"),
                           ("lfs", "ls-files"), ("lfs", "status"), ("bisect", "log")}:
        return
    if sub == "config" and (len(words) == 1 or _has(rest, "--get", "--get-all", "--list", "-l",
                                                    "--get-regexp")):
        return
    a.add(RECOVERABLE, f"`git {sub}` changes the repository in a way the reflog can undo")
