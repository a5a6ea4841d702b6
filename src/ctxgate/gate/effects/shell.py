"""Effects of a shell command, from the shell parser: what every simple command really does.

:func:`shell_effect` parses the command (:func:`ctxgate.shell.parse_command`) and collects a
:class:`Finding` for everything that changes state:

- every redirection to a file (``> f``, ``: > f``, ``>> f``, ``&> f``), judged by the path
  rules of :mod:`.paths` (git-tracked files in the working tree are recoverable);
- the per-program rules of :mod:`.programs` (``tee f``, ``sort -o f``, ``curl -o f``,
  ``git log --output=f``, ``sed -i``, ``perl -i``, ``rm``, ``git push --force``, ``git reset
  --hard``, ``redis-cli flushall``, SQL drops, cloud deletes, ...);
- code run indirectly: ``sh -c``/``eval`` bodies (the parser expands them), a here-string or
  here-doc fed to a shell (``sh <<<'git reset --hard'``), ``echo CMD | sh``, awk's
  ``system()``, pager and hook variables (``LESSOPEN='|rm x' less f``, ``GIT_PAGER``,
  ``MANPAGER``) and ``git -c core.pager=…``; a download fed to an interpreter
  (``curl … | sh``) is :attr:`~EffectClass.UNTRUSTED_CODE`.

A program that is only *named* is not run: ``command -v rm``, ``which rm``, ``type rm``,
``rm --help``, ``man rm``, ``git help reset``, ``echo "rm -rf /"`` and a commit message that
says "rm -rf" have no effect.

The answer: the most harmful class found, with every finding as evidence. When nothing
changes state and every program is known to only read, ``read_only``; unless the fast path
proves the same command read-only or a rule vouches for every program (a CLI's read verb,
``rm --help``, ``export X=1``), that class ``needs_model`` (the rules are a list of what
changes state, so a change they do not list would pass as a read). When a program is
unknown (``python x.py``, ``make``) and nothing destructive was found, ``None``: the parser
does not know, and the decision model judges the call as before. A command that (or a body it
runs) could not be parsed whole is never ``read_only``: the fallback scanner may read it
otherwise than bash does, so without a finding it is ``None`` too.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource, most_severe
from ctxgate.gate.effects.paths import Action, classify_path
from ctxgate.gate.effects.runners import AUTORUNNERS, MAX_BYTES, TASK_RUNNERS

__all__ = ["Analysis", "Finding", "analyse", "path_finding", "read_script",
           "recoverable_writes", "shell_effect"]

MAX_DEPTH = 6

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish"})
_INTERPRETERS = _SHELLS | frozenset({"python", "python3", "python2", "perl", "ruby", "node",
                                     "php", "source", ".", "pwsh", "deno", "bun", "at",
                                     "batch", "lua", "luajit", "tclsh", "Rscript"})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh"})
_CODE_VARIABLES = frozenset({"LESSOPEN", "LESSCLOSE", "PAGER", "MANPAGER", "GIT_PAGER",
                             "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR",
                             "EDITOR", "VISUAL", "BROWSER", "PROMPT_COMMAND", "BASH_ENV",
                             "ENV", "LD_PRELOAD", "SYSTEMD_PAGER", "PSQL_PAGER",
                             "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS"})


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One thing a command does, its class and a line a person can check."""

    effect: EffectClass
    evidence: str
    target: str | None = None
    """The path a path rule judged, as written (``~/.ssh``, ``build``); ``None`` otherwise."""
    action: str | None = None
    """What the path rule judged the command does to :attr:`target` (``delete``,
    ``overwrite``, ``edit`` …)."""
    guess: bool = False
    """The class rests on a path the gate could not expand (:attr:`.paths.PathEffect.guess`).
    In a command the agent wrote, that is the cautious reading; in a file that runs
    (a script, a recipe, a hook) the variable is usually set inside the file, so such a
    finding is not counted there (:func:`_file_findings`)."""


@dataclass
class Analysis:
    """Findings and the programs the rules do not know (mutable while a command is walked)."""

    cwd: str
    depth: int = 0
    findings: list[Finding] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    """Why the command, or a body it runs, could not be parsed whole (then it is never
    called read-only)."""
    claims: list[str] = field(default_factory=list)
    """Programs read-only only because no rule lists a change they make (``less``, ``rg``,
    ``awk``, a ``git`` read, ``X --help`` of an unknown ``X``): only a proof vouches for
    them (:func:`_read_only`)."""
    written: list[str] = field(default_factory=list)
    """Every path a file write names (a redirection, ``tee``, ``-o``), as written."""
    scripts: list[tuple[str, str]] = field(default_factory=list)
    """``(program, script)`` for each script file an interpreter runs (``python t.py``),
    scanned once the whole command is walked (:func:`_scan_scripts`)."""
    links: dict[str, str] = field(default_factory=dict)
    """Symbolic links the command itself makes before it writes through them (``ln -sf
    ~/.bashrc x && echo … > x``): the link's absolute path → its target as written."""

    def add(self, effect: EffectClass, evidence: str, *, guess: bool = False) -> None:
        self.findings.append(Finding(effect=effect, evidence=evidence, guess=guess))

    def add_all(self, effect: Effect) -> None:
        """Every finding behind ``effect`` (its ``details``, ``"class: evidence"`` each; its
        own class and evidence when it has none), not only the worst's first."""
        for line in effect.details or (f"{effect.effect.value}: {effect.evidence}",):
            kind, _, evidence = line.partition(": ")
            self.add(EffectClass(kind), evidence)

    def path(self, construct: str, path: str, action: Action) -> None:
        """Judge one path change; a change the path rules find no evidence for (a delete of
        a path that is not there) leaves the command unknown, so the model decides."""
        if action in ("overwrite", "append", "create"):
            self.written.append(path)
        through = self._through_link(path)
        if through is not None and action != "delete":  # a delete removes the link itself
            found = path_finding(f"{construct} (through the link to {through})", through,
                                 action, self.cwd)
            if found is not None:
                self.findings.append(found)
        found = path_finding(construct, path, action, self.cwd)
        if found is None:
            self.unknown.append(f"{construct}: no evidence ({path} does not exist)")
        else:
            self.findings.append(found)

    def _through_link(self, path: str) -> str | None:
        """The target of a link this command made, when ``path`` is that link or lies under
        it; else ``None``."""
        if not self.links:
            return None
        full = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))
        for link, target in self.links.items():
            if full == link:
                return target
            if full.startswith(link + os.sep):
                return os.path.join(target, full[len(link) + 1:])
        return None

    def inner(self, construct: str, command: str) -> None:
        """Analyse ``command``, which ``construct`` runs; an unknown body stays unknown."""
        if self.depth >= MAX_DEPTH:
            self.add(EffectClass.LOCAL_IRREVERSIBLE,
                     f"{construct} nests commands deeper than {MAX_DEPTH} levels")
            return
        sub = analyse(command, cwd=self.cwd, depth=self.depth + 1)
        for f in sub.findings:
            self.findings.append(Finding(effect=f.effect, evidence=f"{construct}: {f.evidence}",
                                         guess=f.guess, target=f.target, action=f.action))
        self.unknown.extend(f"{construct}: {u}" for u in sub.unknown)
        self.unparsed.extend(f"{construct}: {u}" for u in sub.unparsed)
        self.claims.extend(sub.claims)
        self.written.extend(sub.written)


def path_finding(construct: str, path: str, action: Action, cwd: str) -> Finding | None:
    """A :class:`Finding` for one path change (the path rules of :mod:`.paths`), or ``None``
    when they find no evidence either way."""
    pe = classify_path(path, action, cwd=cwd)
    if pe.effect is None:
        return None
    return Finding(effect=pe.effect, evidence=f"{construct}: {pe.evidence}", guess=pe.guess,
                   target=path, action=action)


def shell_effect(command: str, *, cwd: str | None = None,
                 in_file: bool = False) -> Effect | None:
    """The effect class of a shell command, or ``None`` when the parser cannot tell.

    ``in_file``: the command is the text of a file that runs (a hook, a script): findings
    that rest on a path the gate could not expand are not counted (:func:`_file_findings`);
    what they would do stays unknown."""
    if not isinstance(command, str) or not command.strip():
        return None
    a = analyse(_bind_assignments(command) if in_file else command, cwd=cwd or os.getcwd())
    if in_file:
        a.findings = _file_findings(a, a.findings)
    else:
        _recent.last = (command, cwd or os.getcwd(), time.monotonic(), a)
    worst = most_severe(f.effect for f in a.findings)
    details = tuple(f"{f.effect.value}: {f.evidence}" for f in a.findings)
    if worst is not None and worst.destructive:
        first = next(f for f in a.findings if f.effect is worst)
        return Effect(effect=worst, source=EffectSource.SHELL_PARSER, evidence=first.evidence,
                      details=details)
    if a.unknown:
        return None
    if worst is None:
        if a.unparsed:
            return None
        return _read_only(command, a)
    first = next(f for f in a.findings if f.effect is worst)
    return Effect(effect=worst, source=EffectSource.SHELL_PARSER, evidence=first.evidence,
                  details=details)


_SCANNED_OR_DATA = frozenset({
    ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".sh", ".bash", ".go",  # scanned
    ".txt", ".md", ".rst", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".csv",
    ".tsv", ".xml", ".html", ".css", ".log", ".out", ".patch", ".diff", ".lock"})
"""Extensions of written files that either the scans read when the command runs them, or
that hold data: a command writing only these gets the judged-writes hint."""
_recent = threading.local()
"""This thread's last :func:`shell_effect` analysis ``(command, cwd, monotonic time,
Analysis)``: the gate asks :func:`recoverable_writes` about the same command right after, and
reading the project's files twice (a conftest walk, ``git rev-parse``) doubled the cost."""


def recent_analysis(command: str, *, cwd: str | None = None) -> Analysis:
    """The :class:`Analysis` of ``command`` (the one :func:`shell_effect` just made for the
    same command and directory, when there is one)."""
    cwd = cwd or os.getcwd()
    last = getattr(_recent, "last", None)
    if last is not None and last[:2] == (command, cwd) and time.monotonic() - last[2] < 2.0:
        return last[3]
    return analyse(command, cwd=cwd)


def recoverable_writes(command: str, *, cwd: str | None = None) -> tuple[str, ...]:
    """For a command the rules leave to the model (:func:`shell_effect` is ``None``: a run
    they do not know), the recoverable changes they did judge (``> t.py`` creating a new file
    in the working tree), one line each; empty when there are none, when anything found is
    destructive, or when the command could not be parsed whole. Every file write the shell
    shows (a redirection, ``tee``, ``-o``) is judged by the path rules, so a decision model
    need not floor such a write as if nobody had looked (:mod:`ctxgate.gate.backends.local`)."""
    if not isinstance(command, str) or not command.strip():
        return ()
    a = recent_analysis(command, cwd=cwd)
    if a.unparsed or any(f.effect.destructive for f in a.findings):
        return ()
    if any(os.path.splitext(w)[1].lower() not in _SCANNED_OR_DATA for w in a.written):
        return ()  # code the scans cannot read (main.go, x.c) may be what the unknown run runs
    return tuple(f"{f.effect.value}: {f.evidence}" for f in a.findings
                 if f.effect is EffectClass.LOCAL_RECOVERABLE)


def _read_only(command: str, a: Analysis) -> Effect:
    """The read-only class the rules found, and whether anything vouches for it.

    The rules list what changes state; a program or option they do not list looks
    read-only to them (``less '+!cmd'`` and ``rg --pre`` did, until each was added). So
    for the programs in ``a.claims`` their read-only is a claim, not a proof: unless the
    sound fast path (:func:`ctxgate.gate.fastpath.is_read_only`, which also proves ``rm
    --help``, ``man rm`` and ``git help reset``) proves the same command, the effect
    ``needs_model``: the decision model still judges whether it is destructive. Read verbs
    of the CLIs the rules know by verb (``kubectl get``, ``aws s3 ls``) are vouched for."""
    from ctxgate.gate.fastpath import is_read_only

    names = ", ".join(dict.fromkeys(a.programs)) or "nothing"
    secret = next((w for w in command.split() if w.startswith((".", "~", "/")) or "/" in w
                   if _SECRET_PATH.search(w)), None)
    if secret is not None:  # as for a harness's Read of it: the model judges
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.SHELL_PARSER,
                      evidence=f"the rules find no change ({names}), but {secret!r} looks "
                               "like a secret", needs_model=True)
    if not a.claims:
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.SHELL_PARSER,
                      evidence=f"every program only reads or is only named ({names})")
    proof = is_read_only(command, cwd=a.cwd)
    if proof.read_only:
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.SHELL_PARSER,
                      evidence=f"every program only reads or is only named ({names}); "
                               f"proved by the fast path")
    claims = ", ".join(dict.fromkeys(a.claims))
    return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.SHELL_PARSER,
                  evidence=f"the rules find no change ({names}), but the fast path cannot "
                           f"prove {claims} read-only ({proof.reason}), so the model judges",
                  needs_model=True)


_SECRET_PATH = re.compile(
    r"\.ssh/|\.gnupg|\.aws/|\.kube/|\.docker/config|\.netrc|\.pgpass|\.npmrc|\.pypirc|"
    r"(^|/)\.env\b|id_rsa|id_dsa|id_ecdsa|id_ed25519|\.pem\b|\.key\b|credential|"
    r"/etc/shadow|/etc/sudoers|_history\b|keychain|wallet", re.IGNORECASE)
"""Paths whose contents are secrets (keys, tokens, password files, shell history): a read of
one brings them into the model's context, the first step of sending them out."""
_AS_ANOTHER_USER = frozenset({"sudo", "doas"})
"""Wrappers that run the command as another user, root by default (``sudo make install``)."""
_SYSTEM_LIBS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/local/lib/")
_IFS = re.compile(r"(?:^|[;&|\s(])IFS=(['\"]?)([^'\"\s;&|]*[^\s'\";&|][^'\"\s;&|]*)\1")
"""``IFS=`` set to a value with a character that is not blank (``IFS=_``): with a command word
taken from a variable, it builds the command from pieces (``cmd=rm_-rf_~; $cmd``)."""
_FORK_BOMB = re.compile(r"(?:^|[;&|\s(])(?:function\s+)?([^\s(){};|&]+)\s*\(\s*\)\s*\{[^}]*?"
                        r"(?<![\w.:-])\1\s*\|\s*\1\s*&")
"""A function that pipes itself into itself in the background (``:(){ :|:& };:``)."""


def analyse(command: str, *, cwd: str, depth: int = 0) -> Analysis:
    """Walk every simple command of ``command`` and collect its findings."""
    from ctxgate.gate.effects.programs import (
        CLIENTS,
        READ_ONLY_PROGRAMS,
        client_input,
        program_rule,
    )
    from ctxgate.gate.fastpath.named import help_form
    from ctxgate.shell import parse_command

    a = Analysis(cwd=cwd, depth=depth)
    bomb = _FORK_BOMB.search(command)
    if bomb:
        a.add(EffectClass.LOCAL_IRREVERSIBLE, f"`{bomb.group(0)[:40]}` is a fork bomb: it "
                                              "fills the process table until the machine stops")
    parsed = parse_command(command)
    if not parsed.parsed_ok or parsed.error:  # an error: a nested body (sh -c) failed
        # the fallback scanner's view is a best effort: what it finds still counts, but it
        # never vouches that a command only reads (bash may read the text otherwise)
        a.unparsed.append(parsed.error or "no detail")
    segments = parsed.segments
    own = {r for s in segments for r in s.redirections}
    moves = any(s.program in ("cd", "pushd") or ("env" in s.wrappers and _ENV_CHDIR.search(s.raw))
                for s in segments)
    for r in parsed.redirections:  # a segment's own are judged where it runs (after a cd)
        if not (moves and r in own):
            _redirection(a, r)
    downloads = any(s.program in _DOWNLOADERS for s in segments)
    _computed_code(a, segments)
    ifs = _IFS.search(command)
    split = [s.argv[0] for s in segments if s.argv and s.argv[0].startswith("$")]
    if ifs and split:
        a.add(EffectClass.UNTRUSTED_CODE, f"`{split[0]}` is a command built by splitting a "
                                          f"variable on IFS={ifs.group(2)!r}: what runs is "
                                          "hidden from reading")
    start = a.cwd
    back: str | None = None  # the walk's cwd before an `env -C DIR` segment
    for seg in segments:
        if back is not None and seg.context == "top":  # (its `sh -c` body runs there too)
            a.cwd, back = back, None
        if moves:
            _follow_cd(a, seg)
            for r in seg.redirections:
                _redirection(a, r)
        chdir = _env_chdir(seg, a.cwd) if moves else None
        if chdir is not None:  # `env -C DIR CMD`: CMD (not its redirections) runs in DIR
            back, a.cwd = a.cwd, chdir
        # `export LD_PRELOAD=…` (declare -x, typeset -x) loads it into every later command
        exported = seg.program in ("export", "declare", "typeset") and (
            seg.program == "export" or any(x.startswith("-") and "x" in x for x in seg.args))
        assignments = [*seg.env, *(x for x in seg.args if exported and "=" in x and
                                   not x.startswith("-"))]
        for assignment in assignments:
            name, _, value = assignment.partition("=")
            if exported and name not in ("LD_PRELOAD", "LD_AUDIT"):
                continue  # (other exports: the program rules' `_hidden_runs`)
            if name == "PATH":  # a program's name may now run another file
                a.unknown.append(f"PATH={value[:60]} changes which file each program name runs")
            if name in ("LD_PRELOAD", "LD_AUDIT") and any(
                    lib and not lib.startswith(_SYSTEM_LIBS) for lib in re.split(r"[:\s]+",
                                                                                 value)):
                a.add(EffectClass.UNTRUSTED_CODE, f"{name}={value[:60]!r} loads a library "
                                                  "from outside the system's into the program")
                continue
            if name in _CODE_VARIABLES and value.strip():
                body = value.lstrip("|").strip()
                if seg.program:
                    a.inner(f"{name}={value!r} runs", body)
                elif name == "PROMPT_COMMAND":  # this shell runs it before each prompt
                    a.inner(f"{name}={value[:60]!r} runs in this shell later", body)
            elif not seg.program and name in ("PS0", "PS1", "PS2", "PS4") and "$(" in value:
                a.inner(f"{name}={value[:60]!r} runs its substitutions at each prompt",
                        value)
        if not seg.program:
            continue
        if "watch" in seg.wrappers and seg.argv and re.search(r"[\s;|&$`<>]", seg.argv[0]):
            # watch joins its arguments and runs them with `sh -c`, again and again
            a.inner("`watch` runs, every few seconds", " ".join(seg.argv))
            continue
        if seg.context == "top" and _computed_program(a, seg):
            continue
        a.programs.append(seg.program)
        root = next((w for w in seg.wrappers if w in _AS_ANOTHER_USER), None)
        if root is not None and seg.program not in READ_ONLY_PROGRAMS and \
                not help_form(seg.program, seg.args):
            a.add(EffectClass.LOCAL_IRREVERSIBLE,
                  f"`{root} {seg.program}` runs as another user (root unless told otherwise): "
                  "what it changes outside the working tree has no undo")
        if "xargs" in seg.wrappers and seg.program in _XARGS_CHANGERS:
            program_rule(a, seg)  # what it finds in its own arguments still counts
            a.unknown.append(f"`xargs {seg.program}` changes files read from input the gate "
                             "cannot see")
            continue
        if _local_program(seg, a.cwd):
            # a file run by its path does what the file says, whatever its base name
            # (``./ls``) and whatever its arguments (``./wipe.sh --help`` need not print help)
            a.scripts.append((_EXEC, seg.argv[0]))
            a.unknown.append(seg.argv[0])
            from ctxgate.gate.effects.programs import whole_command_rules

            whole_command_rules(a, seg)  # bin/rails db:reset
            continue
        if seg.program in _INTERPRETERS:
            _interpreter(a, seg, segments, downloads, parsed.heredocs)
            continue
        if seg.program in ("apply_patch", "applypatch"):
            _apply_patch(a, seg, segments, parsed.heredocs)
            continue
        if "xargs" in seg.wrappers and seg.program in ("rm", "shred", "unlink", "rmdir", "mv"):
            a.add(EffectClass.LOCAL_IRREVERSIBLE,
                  f"`xargs {seg.program}` deletes files read from input the gate cannot see")
            continue
        if seg.program == "go" and seg.args[:1] == ("run",):  # go run main.go: read as Go
            a.scripts.extend(("go", x) for x in seg.args[1:] if x.endswith(".go"))
        program_rule(a, seg)
        if seg.program in CLIENTS:
            client_input(a, seg, _fed_text(a, seg, segments, parsed.heredocs))
        if seg.program in TASK_RUNNERS:
            _scan_tasks(a, seg, segments, parsed.heredocs)
        if seg.program in AUTORUNNERS:
            _scan_autoruns(a, seg, segments, seg.program, seg.args)
    if back is not None:
        a.cwd = back
    if moves and a.cwd != start:  # a bare `> f` after a cd: where bash put it is not kept
        for r in parsed.redirections:
            if r not in own:
                _redirection(a, r)
    a.cwd = start  # the passes below read the command whole, from where it starts
    _cloned_runs(a, segments)
    _scan_scripts(a, segments, parsed.heredocs)
    _planted_writes(a, segments, parsed.heredocs)
    _heredoc_substitutions(a, parsed.heredocs, parsed.literal_heredocs)
    _parameter_substitutions(a, command)
    if a.links:  # redirections were judged before `ln -s` made their target a link
        for r in parsed.redirections:
            through = a._through_link(r.target) if r.writes_file else None
            found = through and path_finding(
                f"redirection `{r.operator} {r.target}` (through the link to {through})",
                through, "append" if r.operator in (">>", "&>>") else "overwrite", a.cwd)
            if found:
                a.findings.append(found)
    return a


def _apply_patch(a: Analysis, seg, segments, heredocs) -> None:
    """Codex's ``apply_patch`` run as a command (``apply_patch "*** Begin Patch …"`` or with
    the patch on its input, as Codex's shell tool runs it): judged as the harness judges its
    ``apply_patch`` tool, file header by file header."""
    from ctxgate.gate.effects.harness import patch_effect

    texts = [x for x in seg.args if "*** " in x]
    texts += [t for _w, t in _fed_text(a, seg, segments, heredocs) if t and "*** " in t]
    if not texts:
        a.unknown.append(f"{seg.program} without a patch the gate can read")
        return
    for text in texts:
        found = patch_effect({"input": text}, a.cwd)
        if found is None:
            a.unknown.append(seg.program)
            continue
        a.add_all(found)


def _fed_text(a: Analysis, seg, segments, heredocs) -> list[tuple[str, str | None]]:
    """What a program reads on its input: a here-string, a here-doc, a file redirected in
    (read from disk), the words of an ``echo``/``printf`` piped to it, each with where it came
    from (``None``: a file that cannot be read here)."""
    out: list[tuple[str, str | None]] = []
    for r in seg.redirections:
        if r.operator == "<<<":
            out.append(("a here-string", r.target))
        elif r.operator in ("<<", "<<-"):
            out.extend(("a here-doc", body) for body in heredocs)
        elif r.operator == "<":
            out.append((f"the file {r.target}", read_script(r.target, a.cwd)))
    if not out:
        for s in segments:
            if s is not seg and s.program in ("echo", "printf") and s.args:
                out.append((f"`{s.program}`", printed(s)))
    return out


_XARGS_CHANGERS = frozenset({"sed", "gsed", "perl", "ruby", "chmod", "chown", "chgrp", "mkdir",
                             "truncate", "tee", "cp", "ln", "dd", "install", "touch"})
"""Programs that change the files ``xargs`` feeds them: which files is not known here."""
_SCHEDULERS = frozenset({"at", "batch"})
"""They run the commands they read from their input later (``at now <<< 'rm …'``)."""


def _decodes(seg) -> bool:
    """Whether a segment decodes or unpacks its input (``base64 -d``, ``xxd -r``, ``rev`` …)."""
    p, args = seg.program, seg.args
    if p in ("base64", "base32", "basenc"):
        return seg.has_option("-d", "--decode", "-D")
    if p == "xxd":
        return seg.has_option("-r", "-revert")
    if p == "openssl":
        return "-d" in args
    if p in ("gzip", "bzip2", "xz", "zstd", "lz4"):
        return seg.has_option("--decompress") or any(
            re.fullmatch(r"-[a-zA-Z]*d[a-zA-Z]*", x) for x in args)  # -d, -dc, -cd
    return p in ("uudecode", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "bunzip2", "rev",
                 "unzstd")


def _computed_code(a: Analysis, segments) -> None:
    """Code computed at run time: decoded output run by a shell, an interpreter or ``eval``
    (``echo … | base64 -d | sh``, ``eval "$(… | base64 -d)"``) cannot be read before it runs;
    ``eval``/``sh -c`` of a substitution that only prints (``bash -c "$(printf 'rm …')"``)
    runs what it prints."""
    runners = [s for s in segments
               if s.program == "eval" or (s.program in _INTERPRETERS and s.program not in
                                          (".", "source") and any(_reads_stdin(s)))]
    if not runners:
        return
    decoders = [s for s in segments if _decodes(s)]
    if decoders:
        a.add(EffectClass.UNTRUSTED_CODE,
              f"`{decoders[0].program}` decodes code that `{runners[0].program}` runs: what "
              "runs cannot be read before it does")
        return
    printers = [s for s in segments if s.context == "substitution"
                and s.program in ("echo", "printf") and s.args]
    if printers and any(r.program == "eval" or _reads_stdin(r)[0] for r in runners):
        for s in printers:
            a.inner(f"`{runners[0].program}` runs what `{s.program}` prints", printed(s))


_WHOLE_SUBSTITUTION = re.compile(r"^(?:\$\((?P<a>.+)\)|`(?P<b>[^`]+)`)$", re.S)
_LOCATORS = {"which": (), "command": ("-v", "-V"), "type": ("-p", "-P")}
"""Programs that print where a program is (``$(which rm)``, ``$(command -v rm)``): the
substitution runs that program."""


def _computed_program(a: Analysis, seg) -> bool:
    """A program word that is one whole command substitution (``$(printf '\\x72\\x6d')
    -rf ~``): what it prints is the program. A printer's words (``echo``, ``printf``) and a
    locator's operand (``which``, ``command -v``) are read and the command is judged with the
    program they give; a decoder (``base64 -d``, ``rev``) makes it code nobody can read
    before it runs; anything else leaves the program unknown. True when handled."""
    from ctxgate.shell import parse_command

    m = _WHOLE_SUBSTITUTION.match(seg.argv[0].strip('"'))
    if not m:
        return False
    inner = parse_command(m.group("a") or m.group("b"))
    parts = [s for s in inner.segments if s.program]
    name = None
    if len(parts) == 1 and parts[0].program in ("echo", "printf") and parts[0].args:
        name = _printf_words(parts[0]) if parts[0].program == "printf" else printed(parts[0])
    elif len(parts) == 1 and parts[0].program in _LOCATORS:
        operands = [x for x in parts[0].args if not x.startswith("-")]
        if len(operands) == 1 and (parts[0].program == "which" or any(
                o in parts[0].args for o in _LOCATORS[parts[0].program])):
            name = operands[0]
    if name is not None and name.strip():
        import shlex

        a.inner(f"`{seg.argv[0][:60]}` runs the program it prints",
                " ".join([name.strip(), *(shlex.quote(x) for x in seg.args)]))
    elif any(_decodes(s) or s.program == "tr" for s in parts):
        a.add(EffectClass.UNTRUSTED_CODE, f"`{seg.argv[0][:60]}` decodes the name of the "
                                          "program it runs: what runs cannot be read before "
                                          "it does")
    else:
        a.unknown.append(f"{seg.argv[0][:60]} (a program named at run time)")
    return True


def _printf_words(seg) -> str:
    """What ``printf FORMAT ARGS…`` prints for the plain ``%s``/``%b`` formats a program
    name is built with; the format alone (escapes decoded) otherwise."""
    from ctxgate.shell.scanner import ansi_c

    fmt, *rest = seg.args
    if rest and re.fullmatch(r"(?:[^%]|%[sb])*", fmt) and fmt.count("%") == len(rest):
        for x in rest:
            fmt = fmt.replace("%s" if "%s" in fmt else "%b", x.replace("%", "%%"), 1)
        fmt = fmt.replace("%%", "%")
    return ansi_c(fmt)


def printed(seg) -> str:
    """What an ``echo``/``printf`` segment prints: its words (``echo``'s ``-e``/``-n``/``-E``
    dropped) with backslash escapes decoded (:func:`ctxgate.shell.scanner.ansi_c`), as
    ``printf``, ``echo -e`` and dash's ``echo`` (``/bin/sh`` here) decode them: the cautious
    reading of what a shell or a client fed the text runs."""
    from ctxgate.shell.scanner import ansi_c

    return ansi_c(" ".join(x for x in seg.args
                           if not (seg.program == "echo" and x in ("-e", "-n", "-E"))))


def _reads_stdin(seg) -> tuple[bool, bool]:
    """``(has_c, reads_stdin)`` of an interpreter segment."""
    args = seg.args
    if seg.program in _SCHEDULERS:
        return False, not seg.has_option("-f")
    s_flag = False
    for k, arg in enumerate(args):
        if arg == "--":
            return False, s_flag or k + 1 >= len(args)
        if arg in ("-", "/dev/stdin"):
            return False, True
        if arg.startswith("-") and not arg.startswith("--"):
            if seg.program in _SHELLS and "c" in arg[1:]:
                return True, False
            if seg.program in _SHELLS and "s" in arg[1:]:
                s_flag = True
            if seg.program not in _SHELLS and arg[1:2] in ("c", "e", "E", "r"):
                return True, False
            continue
        if arg.startswith("--"):
            continue
        return False, s_flag  # a script file operand (with -s: arguments, stdin runs)
    return False, True


_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "-p", "--eval", "--print", "--command"})


def _inline_code(args: tuple[str, ...]) -> str | None:
    """The code of ``python -c CODE``, ``node -e CODE``, ``perl -e CODE``, ``php -r CODE``."""
    for k, arg in enumerate(args):
        if arg in _CODE_FLAGS:
            return args[k + 1] if k + 1 < len(args) else None
        if arg.startswith("--eval=") or arg.startswith("--print="):
            return arg.split("=", 1)[1]
        if len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and arg[1] in "ceEr":
            return arg[2:]  # -cCODE
    return None


def _code(a: Analysis, construct: str, code: str, language: str = "") -> None:
    """Code a non-shell interpreter runs: its visible deletes, network writes, spawned
    commands and destructive SQL are findings (:mod:`.code`); the rest stays unknown, so the
    model judges what the scan does not see."""
    from ctxgate.gate.effects.code import code_effect

    found = code_effect(code, where=construct, cwd=a.cwd, language=language)
    if found is not None:
        a.add_all(found)
    if found is None or not found.effect.destructive:
        a.unknown.append(construct)


def _interpreter(a: Analysis, seg, segments, downloads: bool, heredocs) -> None:
    from ctxgate.gate.effects.programs import (
        PERL_INPLACE,
        program_rule,
        remote_source,
        whole_command_rules,
    )

    remote_source(a, seg)  # deno run https://…
    whole_command_rules(a, seg)  # python manage.py migrate app zero, python -m ctxgate …
    raw = seg.raw
    if seg.program in ("perl", "ruby") and any(PERL_INPLACE.fullmatch(x) for x in seg.args):
        program_rule(a, seg)  # perl -pi -e …: an in-place edit of the named files
        return
    fetched = any(d in raw for d in _DOWNLOADERS if d in ("curl", "wget")) and \
        any(mark in raw for mark in ("$(", "<(", "`"))
    if fetched:
        a.add(EffectClass.UNTRUSTED_CODE,
              f"`{seg.program}` runs code downloaded by a substitution ({raw[:120]})")
        return
    has_c, stdin = _reads_stdin(seg)
    if seg.program in (".", "source"):
        stdin = any(x in ("/dev/stdin", "-") or x.startswith("<(") for x in seg.args)
        if not stdin:
            if seg.args:
                a.scripts.append((seg.program, seg.args[0]))
            a.unknown.append(f"{seg.program} {' '.join(seg.args)}".strip())
            return
    if has_c:
        if seg.program in _SHELLS:
            return  # the parser expanded the -c body into segments of their own
        code = _inline_code(seg.args)
        if code is None:
            a.unknown.append(seg.program)
        else:
            _code(a, f"`{seg.program}` code", code, seg.program)
        return
    if not stdin:
        # runs a script file: still unknown (a scan that finds nothing proves nothing), but
        # what the script visibly destroys counts (_scan_scripts)
        module = _module_operand(seg)
        if module is not None:
            _module(a, seg, segments, module)
            return
        script = _script_operand(seg)
        if script is not None:
            a.scripts.append((seg.program, script))
        a.unknown.append(seg.program)
        return
    fed = False
    def run(construct: str, body: str) -> None:
        """A body fed to a shell (or ``at``, ``source``) is commands; to another interpreter,
        code."""
        if seg.program in _SHELLS | _SCHEDULERS or seg.program in (".", "source"):
            a.inner(construct, body)
        else:
            _code(a, construct, body, seg.program)

    for r in seg.redirections:
        if r.operator == "<<<":
            run(f"here-string fed to `{seg.program}`", r.target)
            fed = True
        elif r.operator in ("<<", "<<-"):
            for body in heredocs or ("",):
                run(f"here-doc fed to `{seg.program}`", body)
            fed = True
        elif r.operator == "<":
            a.unknown.append(f"{seg.program} < {r.target}")
            a.scripts.append((seg.program, r.target))  # scanned as `sh FILE` would be
            fed = True
    if fed:
        return
    if downloads:
        a.add(EffectClass.UNTRUSTED_CODE,
              f"`{seg.program}` runs code piped from a download (curl/wget … | "
              f"{seg.program})")
        return
    catted = [x for s in segments if s.program == "cat" and not s.redirections
              for x in s.args if not x.startswith("-")]
    if catted:  # `cat FILE | sh`: each file is scanned as `sh FILE` would be
        a.scripts.extend((seg.program, x) for x in catted)
        a.unknown.append(f"{seg.program} reading {', '.join(catted)[:80]} from its input")
        return
    echoed = [s for s in segments if s.program in ("echo", "printf") and s.args]
    if echoed:
        for s in echoed:
            a.inner(f"`{s.program} … | {seg.program}` runs", printed(s))
        return
    a.unknown.append(f"{seg.program} reading commands from its input")


_EXEC = "<exec>"
"""The ``a.scripts`` program of a file run by its path (``./build.sh``): what runs it is read
from the file's ``#!`` line when it is scanned (:func:`script_runner`)."""
_SYSTEM_BIN = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})
_CODE_RUNNERS = frozenset({"python", "perl", "ruby", "node", "php", "deno", "bun", "lua",
                           "luajit", "tclsh", "Rscript"})


def _local_program(seg, cwd: str) -> bool:
    """Whether ``seg`` runs a text file by its path (``./wipe.sh``, ``scripts/x.py``,
    ``~/bin/tool``) rather than a system program. Such a file does what it says, not what a
    program of the same base name does (``./ls``), and may ignore ``--help``. A binary
    (``.venv/bin/python`` resolves to one) and a path into a system bin directory keep the
    base name's rules; so does an interpreter's name under a path that cannot be read here
    (``$VENV/bin/python t.py``)."""
    from ctxgate.gate.effects.paths import resolve_path

    word = seg.argv[0] if seg.argv else ""
    if "/" not in word or os.path.dirname(os.path.normpath(word)) in _SYSTEM_BIN:
        return False
    full = resolve_path(word, cwd)
    try:
        if full is None or not os.path.exists(full):
            raise OSError(word)
        if not os.path.isfile(full):
            return True  # a FIFO or a device is never opened here (reading one can block)
        with open(full, "rb") as fh:
            head = fh.read(4096)
    except OSError:  # not there (the command may write it first) or not readable here
        return script_runner("", seg.program) not in _INTERPRETERS
    return b"\0" not in head and not head.startswith(b"\x7fELF")


def script_runner(body: str, name: str = "") -> str:
    """What runs a script file started by its path: the program of its ``#!`` line
    (``/usr/bin/env`` skipped to its operand, a version suffix dropped: ``python3.11`` →
    ``python``), else ``sh`` (bash runs a text file without one as a shell script). With an
    empty body, ``name`` is judged the same way (the file's own base name)."""
    first = body.split("\n", 1)[0] if body else ""
    if body and not first.startswith("#!"):
        return "sh"
    words = first[2:].split() if first else [name]
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    prog = os.path.basename(words[0]) if words else ""
    return re.sub(r"[\d.]+$", "", prog) or prog or "sh"


_SCRIPT_MAX_BYTES = MAX_BYTES
"""A script file larger than this (UTF-8 bytes on disk) is not read: the run stays unknown."""
_VALUE_OPTIONS = frozenset({"-W", "-X", "-Q", "-r", "--require", "--import", "--loader",
                            "-I", "-M", "-x"})


def _script_operand(seg) -> str | None:
    """The script file an interpreter segment runs (``python -u t.py`` → ``t.py``), or
    ``None`` (a module, a subcommand, standard input, a scheduler)."""
    if seg.program in _SCHEDULERS or seg.program in ("deno", "bun", "pwsh", ".", "source"):
        return None
    skip = False
    for arg in seg.args:
        if skip:
            skip = False
        elif arg in ("-m", "-", "--"):
            return None
        elif arg in _VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _module_operand(seg) -> tuple[str, tuple[str, ...]] | None:
    """``(module, its arguments)`` of ``python -m MODULE …``, or ``None``."""
    if not seg.program.startswith("python"):
        return None
    args = seg.args
    for k, arg in enumerate(args):
        if arg == "-m" and k + 1 < len(args):
            return args[k + 1], args[k + 2:]
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:], args[k + 1:]
        if not arg.startswith("-") or arg in ("-c", "--"):
            return None
    return None


def _module(a: Analysis, seg, segments, module: tuple[str, tuple[str, ...]]) -> None:
    """``python -m pytest``/``-m pip`` run what pytest and pip run; ``python -m pkg.tool``
    runs the project's own ``pkg/tool.py`` (or ``pkg/tool/__main__.py``), scanned as a
    script. The run stays unknown."""
    name, args = module
    a.unknown.append(f"{seg.program} -m {name}")
    if name in ("pytest", "pip", "nox"):
        _scan_autoruns(a, seg, segments, name, args)
        return
    if name == "tox":
        _scan_tasks(a, seg, segments, program="tox", args=args)
        return
    if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", name):
        return
    base = os.path.join(*name.split("."))
    for candidate in (f"{base}.py", os.path.join(base, "__main__.py")):
        if os.path.isfile(os.path.join(a.cwd, candidate)):
            a.scripts.append((seg.program, candidate))
            return


def _made_here(segments, key: str) -> tuple[str, str] | None:
    """How this command itself writes the file ``key`` (a normalised path word) before it
    runs it: ``("fetched", how)`` when the text comes from a download or a decoder
    (``curl -o i.sh URL``, ``wget -qO- URL > i.sh``, ``… | base64 -d > x.sh``), ``("body",
    text)`` when ``echo``/``printf`` print it (``printf '#!/bin/sh\\nrm …' > x.sh``), else
    ``None`` (a here-doc is read by :func:`_heredoc_writes`)."""
    from ctxgate.gate.effects.programs import saved_files

    for seg in segments:
        targets = [r.target for r in seg.redirections if r.writes_file]
        if seg.program in ("curl", "wget"):
            targets += [p for p, _how in saved_files(seg)]
        elif seg.program == "tee":
            targets += [x for x in seg.args if not x.startswith("-")]
        if key not in (os.path.normpath(t) for t in targets):
            continue
        if seg.program in _DOWNLOADERS:
            return "fetched", f"downloads it with `{seg.program}`"
        if _decodes(seg):
            return "fetched", f"decodes it with `{seg.program}`"
        if seg.program == "tee" and any(s.program in _DOWNLOADERS or _decodes(s)
                                        for s in segments):
            return "fetched", "writes it from a download or a decoder"
        if seg.program in ("echo", "printf") and seg.args:
            return "body", printed(seg)
    return None


def _heredoc_writes(segments, heredocs: tuple[str, ...]) -> dict[str, str | None] | None:
    """Files the command writes from a here-doc (``cat > t.py << 'EOF'``, ``tee t.py``):
    normalised path word → body (``None`` for an append, whose result is not the body alone).
    ``None`` when the here-docs cannot be matched to their commands one for one."""
    fed = [r for seg in segments for r in seg.redirections if r.operator in ("<<", "<<-")]
    if len(fed) != len(heredocs):
        return None
    out: dict[str, str | None] = {}
    k = 0
    for seg in segments:
        bodies = []
        for r in seg.redirections:
            if r.operator in ("<<", "<<-"):
                bodies.append(heredocs[k])
                k += 1
        if not bodies:
            continue
        body = bodies[-1]  # the last here-doc is the one the command reads
        targets: list[tuple[str, bool]] = []
        if seg.program == "cat":
            targets = [(r.target, r.operator == ">>") for r in seg.redirections
                       if r.writes_file]
        elif seg.program == "tee":
            append = seg.has_option("-a", "--append")
            targets = [(x, append) for x in seg.args if not x.startswith("-")]
        for target, append in targets:
            out[os.path.normpath(target)] = None if append else body
    return out


def read_script(word: str, cwd: str) -> str | None:
    """The text of an existing regular script file of at most :data:`_SCRIPT_MAX_BYTES`."""
    from ctxgate.gate.effects.paths import resolve_path

    full = resolve_path(word, cwd)
    if full is not None and full.startswith(("/dev/", "/proc/")):
        return None  # /dev/stdin is the gate's own input, not the command's
    try:
        if full is None or not os.path.isfile(full) or \
                os.path.getsize(full) > _SCRIPT_MAX_BYTES:
            return None
        with open(full, "rb") as fh:
            return fh.read(_SCRIPT_MAX_BYTES + 1).decode("utf-8", errors="replace")
    except OSError:
        return None


def _scan_scripts(a: Analysis, segments, heredocs: tuple[str, ...]) -> None:
    """Scan each script an interpreter runs: the body this same command writes from a
    here-doc, else the file on disk when nothing in the command may change it first (no other
    segment names it, no ``cd`` elsewhere). A shell script is analysed as commands, other code
    by :mod:`.code`; what the scan finds is added, and the run itself stays unknown."""
    if not a.scripts:
        return
    from ctxgate.gate.effects.code import code_effect

    written = _heredoc_writes(segments, heredocs)
    moved = _moved(a, segments)
    for program, word in a.scripts:
        key = os.path.normpath(word)
        made = _made_here(segments, key)
        if made is not None and made[0] == "fetched":
            runs = f"{word} runs by its path" if program == _EXEC else f"`{program}` runs {word}"
            a.add(EffectClass.UNTRUSTED_CODE,
                  f"{runs}, and this command {made[1]} first: what runs cannot be read "
                  "before it runs")
            continue
        if made is not None:
            body: str | None = made[1]
            where = f"the script {word} this command prints and `{program}` runs"
        elif written is not None and key in written:
            body = written[key]
            where = f"the script {word} this command writes and `{program}` runs"
        else:
            named = sum(1 for s in segments if s.program != "chmod" and s.program not in _SHELLS
                        for x in (*s.args, *(r.target for r in s.redirections))
                        if os.path.normpath(x) == key)
            if written is None or moved or named > (0 if program == _EXEC else 1):
                continue  # the command may write or move the file before it runs
            body = read_script(word, a.cwd)
            where = f"the script {word} that `{program}` runs"
        if body is None:
            continue
        if program == _EXEC:
            program = script_runner(body)
            where = where.replace(f" that `{_EXEC}` runs", f", run by its path (`{program}`)"
                                  ).replace(f"`{_EXEC}` runs", f"runs by its path (`{program}`)")
            if program not in _SHELLS and program not in _CODE_RUNNERS:
                continue  # an interpreter the scans do not read (awk -f, make -f)
        if program in _SHELLS or program in (".", "source"):
            if a.depth >= MAX_DEPTH:
                continue
            sub = analyse(_bind_assignments(body), cwd=a.cwd, depth=a.depth + 1)
            for f in _file_findings(a, sub.findings):
                if f.effect.destructive:
                    a.add(f.effect, f"{where}: {f.evidence}")
            continue
        found = code_effect(body, where=where, cwd=a.cwd, language=program)
        if found is not None and found.effect.destructive:
            a.add(found.effect, found.evidence)


_HOME_REF = r"\$HOME\b|\$\{HOME\}"
_ASSIGNED = re.compile(r"^[ \t]*(?:export[ \t]+|readonly[ \t]+|local[ \t]+)?"
                      r"([A-Za-z_][A-Za-z0-9_]*)=(\"(?:[^\"$`\\]|" + _HOME_REF + r")*\"|'[^']*'|"
                      r"(?:[^\s;&|$`'\"\\]|" + _HOME_REF + r")*)[ \t]*$", re.M)
"""``NAME=value`` alone on a line, the value plain text (``$HOME`` allowed)."""


def _bind_assignments(body: str) -> str:
    """A script's text with the variables it sets once to a plain value (``D=~/Documents``
    on a line of its own) replaced by that value where they are used, so ``rm -rf "$D"``
    is judged as ``rm -rf ~/Documents``. A variable set twice, or from a command or another
    variable (``tmp=$(mktemp -d)``), stays a variable."""
    found: dict[str, list[str]] = {}
    for m in _ASSIGNED.finditer(body):
        found.setdefault(m.group(1), []).append(m.group(2).strip("'\""))
    values = {k: v[0] for k, v in found.items() if len(v) == 1 and k != "PATH"}
    if not values:
        return body
    pattern = re.compile(r"\$(?:\{(" + "|".join(map(re.escape, values)) + r")\}|("
                         + "|".join(map(re.escape, values)) + r")\b)")
    return pattern.sub(lambda m: values[m.group(1) or m.group(2)], body)


def _file_findings(a: Analysis, findings: list[Finding]) -> list[Finding]:
    """The findings of a file that runs (a script, a recipe, a hook) that count: not those
    resting on a path the gate could not expand, whose variable the file usually sets itself
    (``tmpdir=$(mktemp -d)``; a make variable from an included file). Each one left out
    leaves the run unknown, so the model still judges it."""
    kept = []
    for f in findings:
        if f.guess:
            a.unknown.append(f"in a file that runs: {f.evidence[:80]}")
        else:
            kept.append(f)
    return kept


_CLONE_VALUES = frozenset({"-b", "--branch", "-o", "--origin", "-c", "--config", "--depth",
                           "--reference", "--separate-git-dir", "-j", "--jobs", "--filter",
                           "-u", "--upload-pack", "--template", "--shallow-since"})
_BUILDS = frozenset({"make", "gmake", "npm", "yarn", "pnpm", "pip", "pip3", "cargo", "go",
                     "cmake", "ninja", "tox", "nox", "just", "pytest", "bundle", "rake",
                     "composer", "gradle", "mvn", "poetry", "uv", "setup.py"})


def _cloned_runs(a: Analysis, segments) -> None:
    """``git clone URL [DIR]`` and, later in the same command, code from DIR run: a script by
    its path, an interpreter on a file there, or a build or install after ``cd DIR``. Nothing
    of it could be read before the command runs, and it comes from outside: untrusted code
    (a clean scan would prove nothing, and there is nothing to scan)."""
    for i, seg in enumerate(segments):
        if seg.program != "git" or "clone" not in seg.args:
            continue
        rest = list(seg.args[seg.args.index("clone") + 1:])
        ops = [x for k, x in enumerate(rest) if not x.startswith("-") and not (
            k and rest[k - 1] in _CLONE_VALUES)]
        if not ops:
            continue
        url = ops[0]
        directory = os.path.normpath(ops[1] if len(ops) > 1 else
                                     url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
                                     .removesuffix(".git"))
        inside = False
        for later in segments[i + 1:]:
            words = [later.argv[0], *later.args] if later.argv else []
            if later.program in ("cd", "pushd") and later.args:
                inside = os.path.normpath(later.args[0]).startswith(directory)
                continue
            under = [w for w in words if os.path.normpath(w).startswith(directory + os.sep)
                     or (inside and w.startswith("./"))]
            runs = (under and (later.program in _INTERPRETERS or "/" in (later.argv or [""])[0])
                    ) or (inside and later.program in _BUILDS)
            if runs:
                a.add(EffectClass.UNTRUSTED_CODE,
                      f"`{later.raw[:60]}` runs code from {url[:80]}, cloned by the same "
                      "command: nothing of it could be read before it runs")
                return


def _redirection(a: Analysis, r) -> None:
    if r.writes_file:
        action: Action = "append" if r.operator in (">>", "&>>") else \
            "modify" if r.operator == "<>" else "overwrite"
        a.path(f"redirection `{r.operator} {r.target}`", r.target, action)


_ENV_CHDIR = re.compile(r"(?:^|\s)env\s(?:[^|;&]*?\s)?(?:-C\s*|--chdir[=\s])(\S+)")


def _env_chdir(seg, cwd: str) -> str | None:
    """The directory ``env -C DIR``/``--chdir=DIR`` runs its command in, when the segment is
    wrapped so and DIR expands; else ``None``."""
    if "env" not in seg.wrappers:
        return None
    m = _ENV_CHDIR.search(seg.raw)
    if m is None:
        return None
    from ctxgate.gate.effects.paths import resolve_path

    return resolve_path(m.group(1).strip("'\""), cwd)


def _follow_cd(a: Analysis, seg) -> None:
    """``cd DIR``/``pushd DIR`` with a literal DIR (``~`` and ``$HOME`` expanded; bare ``cd``
    is home): the paths of the segments after it are judged from there (``cd /etc && echo x >
    hosts`` writes /etc/hosts, not ./hosts). A DIR the gate cannot expand (``cd "$d"``,
    ``cd -``) leaves the walk where it was, as before."""
    if seg.program not in ("cd", "pushd"):
        return
    operands = [x for x in seg.args if not (x.startswith("-") and len(x) > 1)]
    if seg.program == "pushd" and operands and operands[0].startswith("+"):
        return  # a rotation of the directory stack
    from ctxgate.gate.effects.paths import resolve_path

    target = resolve_path(operands[0], a.cwd) if operands else os.path.expanduser("~")
    if target is not None:
        a.cwd = target


def _moved(a: Analysis, segments) -> bool:
    """Whether a ``cd``/``pushd``/``popd`` in the command may leave the analysis's cwd."""
    from ctxgate.gate.effects.paths import resolve_path

    here = os.path.realpath(a.cwd)
    return any(s.program in ("cd", "pushd", "popd") and (
        not s.args or resolve_path(s.args[0], a.cwd) != here) for s in segments)


def _scan_tasks(a: Analysis, seg, segments, heredocs: tuple[str, ...] = (), *,
                program: str | None = None, args: tuple[str, ...] | None = None) -> None:
    """The package.json scripts and make recipes a task runner call runs (:mod:`.runners`):
    what the shell rules find destructive in them counts; the run stays unknown. A package.json
    or makefile the same command writes from a here-doc is read from the command. Not read
    when a ``cd`` in the command may run the task elsewhere."""
    from ctxgate.gate.effects.runners import iter_commands, task_commands

    if a.depth >= MAX_DEPTH or _moved(a, segments):
        return
    written = {os.path.normpath(os.path.join(a.cwd, k)): v for k, v in
               (_heredoc_writes(segments, heredocs) or {}).items() if v is not None}
    fed = "\n".join(t for _w, t in _fed_text(a, seg, segments, heredocs) if t)
    if fed:  # `make -f - <<< …`, `make -f /dev/stdin <<'EOF'`: the makefile is the input
        written["/dev/stdin"] = written[os.path.join(a.cwd, "-")] = fed
    for where, directory, command in iter_commands(
            task_commands(program or seg.program, seg.args if args is None else args, a.cwd,
                          written) or []):
        sub = analyse(command, cwd=directory, depth=a.depth + 1)
        for f in _file_findings(a, sub.findings):
            if f.effect.destructive:
                a.add(f.effect, f"{where}: {f.evidence}")


def _scan_autoruns(a: Analysis, seg, segments, program: str, args: tuple[str, ...]) -> None:
    """Project files the call makes a tool run on its own (:func:`.runners.autorun_files`:
    ``pytest``'s conftest.py files, ``cargo``'s build.rs, ``git commit``'s hooks), scanned as
    :mod:`.planted` scans them when written: a destructive finding counts, a clean scan
    leaves the run as it was."""
    from ctxgate.gate.effects.planted import autorun, planted_effect
    from ctxgate.gate.effects.runners import autorun_files

    if a.depth >= MAX_DEPTH or _moved(a, segments):
        return
    for path, language in autorun_files(program, args, a.cwd):
        body = read_script(path, a.cwd)
        shown = os.path.relpath(path, a.cwd) if path.startswith(a.cwd) else path
        kind = ("git runs it as a hook", "shell") if language == "shell" else \
            autorun(path) or (f"`{program}` runs it", language)
        found = planted_effect(shown, body or "", cwd=a.cwd, construct=f"`{seg.raw[:60]}`",
                               verb="runs", kind=kind, existing=True)
        if found is not None:
            a.add(found.effect, found.evidence)


def _planted_writes(a: Analysis, segments, heredocs: tuple[str, ...]) -> None:
    """Code this command writes where a tool runs it on its own (``cat > conftest.py <<EOF``,
    ``echo '…' > sitecustomize.py``; :mod:`.planted`): what the scan of that text finds
    destructive is the command's effect too."""
    from ctxgate.gate.effects.planted import autorun, planted_effect

    written: dict[str, str] = {}
    for seg in segments:
        if seg.program in ("echo", "printf"):
            for r in seg.redirections:
                if r.writes_file and autorun(r.target):
                    written[r.target] = " ".join(seg.args)
    for target, body in (_heredoc_writes(segments, heredocs) or {}).items():
        if body is not None:
            written[target] = body
    for target, body in written.items():
        found = planted_effect(target, body, cwd=a.cwd, construct="the command")
        if found is not None:
            a.add(found.effect, found.evidence)


def _heredoc_substitutions(a: Analysis, heredocs: tuple[str, ...],
                           literal: tuple[bool, ...]) -> None:
    """Command substitutions in the body of a here-document whose delimiter is not quoted:
    bash runs them before the command reads the body (``cat <<EOF`` over ``$(rm -rf ~)``
    deletes), so each is analysed as a command. When the parser could not say which bodies
    are literal, every body is read as expanded (the cautious reading)."""
    if len(literal) != len(heredocs):
        literal = (False,) * len(heredocs)
    for body, plain in zip(heredocs, literal, strict=True):
        if plain or ("$(" not in body and "`" not in body):
            continue
        for inner in _substitutions(body):
            a.inner("a command substitution in an unquoted here-doc", inner)


def _substitutions(text: str) -> list[str]:
    """The commands of the ``$(…)`` and backtick substitutions of ``text`` (outermost ones,
    ended as the shell scanner ends them; ``\\$`` and ``\\``` are literal; an unclosed one
    runs to the end of the text)."""
    from ctxgate.shell.scanner import backtick_end, construct_end

    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "$" and text.startswith("$(", i) and not text.startswith("$((", i):
            end = construct_end(text, i + 2, ")")
            out.append(text[i + 2:end - 1] if end is not None else text[i + 2:])
            i = end if end is not None else n
        elif c == "`":
            end = backtick_end(text, i + 1)
            out.append(text[i + 1:end - 1] if end is not None else text[i + 1:])
            i = end if end is not None else n
        else:
            i += 1
    return [x for x in out if x.strip()]


def _parameter_substitutions(a: Analysis, command: str) -> None:
    """Command substitutions inside a parameter expansion (``${x:=$(rm -rf ~)}``, ``${x:-`cmd`}``),
    which the parser does not descend into: each is analysed as a command (read cautiously:
    one inside single quotes, which bash leaves literal, counts too)."""
    from ctxgate.shell.scanner import construct_end

    start = command.find("${")
    while start != -1:
        end = construct_end(command, start + 2, "}")
        j = end if end is not None else len(command) + 1
        for inner in _substitutions(command[start + 2:j - 1]):
            a.inner("a command substitution in a parameter expansion", inner)
        start = command.find("${", j)
