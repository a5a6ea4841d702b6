"""Git and GitHub acts beyond the request: history further back, a force push or a remote delete,
another file's uncommitted changes discarded, untracked work cleaned, a file of keys pushed,
another issue number, a merge or an approval nobody asked for.
"""

from __future__ import annotations

import os
import re

from ctxgate.gate.scope.words import (
    _named,
    _said_files,
    _said_numbers,
    _segments,
)

_HEAD_BACK = re.compile(r"\bHEAD(?:~(\d+)|(\^+))")
_FORCE_WORDS = re.compile(r"\b(force|forced|forcing|overwrite|overwriting|rewrite|rewriting|"
                          r"rewritten|clobber)", re.I)
_DELETE_WORDS = re.compile(r"\b(delete|remove|drop|prune)", re.I)


def _head_back(command: str, request: str) -> list[str]:
    """``HEAD~N`` further back than any count in the request (none given: one)."""
    from ctxgate.gate.backends.heads.matching import _words

    counts = {1} | {int(w) for w in _words(request) if w.isdigit() and len(w) < 6}
    out = []
    for m in _HEAD_BACK.finditer(command):
        n = int(m.group(1)) if m.group(1) else len(m.group(2))
        if n not in counts:
            out.append(f"{m.group(0)} ({n} commits back)")
    return out


def _force_push(command: str, request: str) -> list[str]:
    from ctxgate.gate.backends.heads.intent import negated_at

    for seg in _segments(command):
        if seg.program != "git" or "push" not in seg.args:
            continue
        rest = seg.args[seg.args.index("push") + 1:]
        deletes = any(x in ("-d", "--delete") or (x.startswith(":") and len(x) > 1)
                      for x in rest)
        force = any(x in ("-f", "--mirror") or x.startswith(("--force", "--mirror")) or
                    (x.startswith("+") and len(x) > 1) for x in rest)
        if deletes and not _DELETE_WORDS.search(request):
            return ["a push that deletes a remote branch"]
        if force and not any(not negated_at(request, m.start())
                             for m in _FORCE_WORDS.finditer(request)):
            return ["a force push (it overwrites the remote's history)"]
    return []


def _discarded_changes(command: str, request: str, cwd: str) -> list[str]:
    """Uncommitted changes a git command discards in files the request does not name, when it
    names files ("undo my changes to main.py" → ``git reset --hard`` also loses notes.txt's)."""
    from ctxgate.gate.effects.git import _discarded_paths
    from ctxgate.gate.effects.paths import _git

    files = _said_files(request)
    if not files:
        return []
    out: list[str] = []
    for seg in _segments(command):
        if seg.program != "git" or not seg.args:
            continue
        sub, rest = seg.args[0], list(seg.args[1:])
        words = [x for x in rest if not x.startswith("-")]
        if sub == "reset" and "--hard" in rest or sub == "checkout" and (
                "-f" in rest or "--force" in rest) and "--" not in rest or \
                sub == "switch" and "--discard-changes" in rest:
            paths: list[str] | None = ["."]
        elif sub in ("checkout", "restore") and not (sub == "restore" and "--staged" in rest
                                                     and "--worktree" not in rest):
            paths = _discarded_paths(sub, rest, words)
        else:
            continue
        if not paths or any(p.startswith(":") or "$" in p for p in paths):
            continue
        proc = _git(cwd, "status", "--porcelain=v1", "--untracked-files=no", "--", *paths)
        if proc is None or proc.returncode != 0:
            continue
        for line in proc.stdout.splitlines():
            changed = line[3:].split(" -> ")[-1].strip().strip('"')
            if changed and os.path.basename(changed).lower() not in files:
                out.append(f"the uncommitted changes to {changed} (the request names "
                           f"{', '.join(sorted(files))})")
    return out


_UNTRACKED_SAID = re.compile(r"\buntracked\b|\bnot (?:yet )?(?:added|committed|tracked)\b|"
                             r"\bgit clean\b|\beverything\b|\ball\b", re.I)


def _untracked_losses(command: str, request: str, cwd: str) -> list[str]:
    """Untracked files that git does not ignore (work not yet added, not build output) that a
    ``git clean -f`` deletes, when the request neither says untracked (or all, everything)
    nor names them: "clean up the repo" → ``git clean -fdx`` would lose a new notes file.
    The files come from ``git clean -n`` with the command's own options and paths (a dry
    run); ignored files (``-x``) are left out, as build output."""
    from ctxgate.gate.backends.heads.matching import request_terms
    from ctxgate.gate.effects.paths import _git

    if _UNTRACKED_SAID.search(request):
        return []
    out: list[str] = []
    terms = request_terms(request)
    for seg in _segments(command):
        args = list(seg.args)
        if seg.program != "git" or args[:1] != ["clean"]:
            continue
        rest = args[1:]
        flags = "".join(x[1:] for x in rest if re.fullmatch(r"-[a-zA-Z]+", x))
        if "f" not in flags and "--force" not in rest or "n" in flags or "--dry-run" in rest:
            continue
        paths = [x for x in rest if not x.startswith("-")]
        dirs = ["-d"] if "d" in flags else []
        proc = _git(cwd, "clean", "-n", *dirs, "--", *paths)
        if proc is None or proc.returncode != 0:
            continue
        lost = [line[len("Would remove "):].strip() for line in proc.stdout.splitlines()
                if line.startswith("Would remove ")]
        unnamed = [x for x in lost if not _named(os.path.basename(x.rstrip("/")), request,
                                                 terms)]
        if unnamed:
            more = f" and {len(unnamed) - 5} more" if len(unnamed) > 5 else ""
            out.append(f"untracked {', '.join(unnamed[:5])}{more} (not ignored by git: work "
                       "not yet added, not build output)")
    return out
def _pushed_secrets(command: str, request: str, cwd: str) -> list[str]:
    """Files of keys or passwords a ``git push`` would publish that the request does not name:
    added by the commits not yet on a remote, or staged by a ``git add`` of the same command
    (``git add -A && git commit -m wip && git push`` with an untracked ``.env``). The staged
    files come from ``git add --dry-run`` with the command's own arguments."""
    from ctxgate.gate.effects.paths import _git
    from ctxgate.gate.scope.places import _sent_secrets

    segs = _segments(command)
    if not any(seg.program == "git" and seg.args[:1] == ("push",) for seg in segs):
        return []
    files: list[str] = []
    for seg in segs:
        if seg.program == "git" and seg.args[:1] == ("add",):
            rest = [x for x in seg.args[1:] if x not in ("-n", "--dry-run", "-v", "--verbose")]
            proc = _git(cwd, "add", "--dry-run", *rest)
            if proc is not None and proc.returncode == 0:
                files += [m.group(1) for m in re.finditer(r"^add '(.+)'$", proc.stdout, re.M)]
    upstream = _git(cwd, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    since = ["@{upstream}..HEAD"] if upstream is not None and upstream.returncode == 0 else \
        ["HEAD", "--not", "--remotes"]
    proc = _git(cwd, "log", "-n", "500", "--diff-filter=A", "--name-only", "--format=", *since)
    if proc is not None and proc.returncode == 0:
        files += [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    return _sent_secrets(files, request, how="published by the push")


_HOOKED = frozenset({"commit", "push", "merge", "rebase", "am", "cherry-pick", "revert"})
_SKIP_SAID = re.compile(r"\b(?:skip\w*|no[- ]verify|bypass\w*)\b|\b(?:without|ignor\w*|disabl\w*|"
                        r"turn\w* off|no)\b[^.;]{0,25}\b(?:hooks?|checks|pre-commit|husky)\b|"
                        r"\bhooks? (?:off|disabled)\b", re.I)
"""A request that says to skip the repository's hooks or checks."""


def _skipped_hooks(command: str, request: str) -> list[str]:
    """Repository checks a git command skips that the request never says to skip: ``git
    commit --no-verify`` (or ``-n``), ``git push --no-verify``, ``HUSKY=0``, pre-commit's
    ``SKIP=…``, ``git -c core.hooksPath=…`` — the hooks that lint, test or scan for secrets
    before a commit or push, which an agent stuck on a failing check turns off."""
    from ctxgate.gate.effects.git import global_options

    if _SKIP_SAID.search(request):
        return []
    out: list[str] = []
    for seg in _segments(command):
        if seg.program != "git":
            continue
        args = list(seg.args)
        options, at = global_options(args)
        out += [f"`git -c {value}` (the repository's hooks turned off)" for name, value in options
                if name == "-c" and value.lower().startswith("core.hookspath=")]
        sub = args[at] if at < len(args) else ""
        if sub not in _HOOKED:
            continue
        rest = args[at + 1:]
        if "--no-verify" in rest or (sub == "commit" and any(
                re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", x) for x in rest)):
            out.append(f"`git {sub} --no-verify` (skips the repository's hooks: its checks "
                       "before a commit or push)")
        for assignment in seg.env:
            name, _, value = assignment.partition("=")
            if name == "HUSKY" and value in ("0", "false"):
                out.append(f"`{assignment} git {sub}` (turns off the repository's hooks)")
            elif name == "SKIP" and value:
                out.append(f"`{assignment} git {sub}` (skips the pre-commit hooks {value})")
    return out


_GH_NUMBERED = re.compile(r"^(issue|pr)$")


def _shell_numbers(command: str, request: str) -> list[str]:
    """Issue and pull request numbers of ``gh issue``/``gh pr`` commands that change them,
    when the request names numbers and not these ("close issue 12" → ``gh issue close 13``)."""

    said = _said_numbers(request)
    if not said:
        return []
    out = []
    for seg in _segments(command):
        words = [x for x in seg.args if not x.startswith("-")]
        if seg.program == "gh" and len(words) >= 3 and _GH_NUMBERED.match(words[0]) \
                and words[1] not in ("view", "list", "status", "diff", "checks"):
            for w in words[2:3]:
                n = re.sub(r"^#|.*/(?=\d+$)", "", w)
                if n.isdigit() and int(n) not in said:
                    out.append(f"{words[0]} {n} (the request names "
                               f"{', '.join(str(x) for x in sorted(said))})")
    return out


_UNSAID = {
    "merge": (re.compile(r"\bgh\s+pr\s+merge\b|^(?:mcp__\w+__)?merge_?(?:pull_?request|pr)s?$",
                         re.I),
              re.compile(r"\b(merg\w*|land|ship|squash\w*|integrate)\b", re.I)),
    "approval": (re.compile(r"\bgh\s+pr\s+review\b.*\s(?:--approve|-a)\b|"
                            r"^(?:mcp__\w+__)?approve_?(?:pull_?request|pr|merge_?request)s?$",
                            re.I),
                 re.compile(r"\b(approv\w*|lgtm|sign(?:ed)? off|accept\w*|ship it)\b", re.I)),
}
"""Acts a request must say to want (a merge, an approval): "open a PR" or "comment on PR 7"
wants neither."""


def _unsaid_verbs(tool: str, command: str | None, request: str) -> list[str]:
    """A merge or an approval the request never asks for ("comment on PR 7" → ``gh pr merge
    7``; "open a PR" → ``gh pr create && gh pr merge``)."""
    from ctxgate.gate.backends.heads.intent import negated_at

    text = command if command is not None else tool
    return [f"{'an' if what[0] in 'aeiou' else 'a'} {what} (the request never asks for one)"
            for what, (act, said) in _UNSAID.items()
            if act.search(text) and not any(not negated_at(request, m.start())
                                            for m in said.finditer(request))]
