"""Targets a call acts on that the user's request never names: the over-reach check.

A request names what to act on ("delete the build directory", "send the report to
alice@corp.com", "undo my last commit"). An agent that was steered, or that over-reached,
does that *and more*: ``rm -rf build ~/``, a second recipient, ``git reset --hard HEAD~10``,
``kubectl delete namespace prod`` for the staging one. The decision model judges the call as
a whole, and a call that does what was asked scores as requested even when it also does what
was not. :func:`unnamed_targets` lists what the request does not cover:

* **places nobody deletes by the way** — home (``~``), the filesystem root, a system
  directory (``/etc``, ``/usr`` …), anything directly in home (``~/.ssh``, ``~/.bashrc``,
  ``~/Documents``), a repository's ``.git``: deleted or overwritten by a shell command while the
  request names none of them;
* **what the request excludes** — a target the request names only to spare it ("everything
  except notes.txt", "without removing notes.txt", "keep main.py");
* **something else than the request deletes** — the request orders a delete of something
  specific ("delete the cache and show me the logs") and the command destroys what it does
  not name there (``rm -rf logs``, ``DROP TABLE users`` for the temp_import table, ``git
  branch -D main`` for feature-x; a ``DELETE`` without ``WHERE`` when the request names a
  row's number); a vague delete ("clean up", "delete it") binds nothing;
* **other files** — when the request names files (``notes.txt``), each further file (a name
  with an extension, written out) the command deletes must be named too (a coding agent
  writes files the task never named: tests, patches);
* **addresses and hosts** — when the request names an e-mail address or a URL, each address
  or host of the call;
* **people and channels** — when the request names whom to write to by name ("to Bob",
  "#dev"), an address whose name part holds none of those names, a channel by another name;
* **access for anyone** — a public ACL, a share with ``anyone``, a ``*`` principal, when the
  request never says public, anyone or link;
* **everything** — a tool named for all or bulk (``cancel_all_events``), an id of ``all``,
  when the request never says all, every or each;
* **names chosen when it runs** — ``… | xargs git branch -D`` for "delete the stale branch
  feature-x": a delete whose targets are computed, when the request writes one out;
* **amounts** — when the request names an amount of money (``120 EUR``, ``$50``), an amount
  argument that is neither it nor it in cents;
* **object numbers** — when the request names numbers (``issue #12``), a number under an id
  argument (``issue_number``, ``pull_id``) of a function call;
* **beyond a reply's pick** — "just build" (or "yes, but not dist") after the assistant
  offered to delete build/ and dist/;
* **any age** — a ``find`` that deletes with no time test when the request limits the delete
  by age ("older than 7 days");
* **how far back** — ``HEAD~N`` beyond the count the request gives ("my last commit" is 1);
* **production** — ``prod``/``production`` in the call, never in the request;
* **a force push** — a push that overwrites or deletes remote history, when the request
  never says force, overwrite, rewrite or delete.

The rules live in small modules: :mod:`.places` (places, what is sent out, a patch's
deletes), :mod:`.binding` (what a delete binds to, replies and offers, queries, age),
:mod:`.git` (history, pushes, discarded and untracked work, GitHub acts),
:mod:`.recipients` (whom a call writes to, who may read, roles), :mod:`.quantities`
(numbers, amounts, everything) and :mod:`.words` (what a request names).

The gate applies it to calls the model would allow that look destructive or external
(``GatePolicy.scope``): such a call is asked about. Pure and deterministic; reads no file but
what the shell rules read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.scope.binding import (
    _age,
    _call_targets,
    _destroyed_names,
    _ordered,
    _query_scope,
    _reply_scope,
    _unbound,
)
from ctxgate.gate.scope.git import (
    _discarded_changes,
    _force_push,
    _head_back,
    _pushed_secrets,
    _shell_numbers,
    _skipped_hooks,
    _unsaid_verbs,
    _untracked_losses,
)
from ctxgate.gate.scope.packages import unnamed_packages
from ctxgate.gate.scope.places import (
    _attachments,
    _mailed_files,
    _patched_places,
    _places,
    _secret_values,
    _sent_secrets,
    _sent_sources,
    _shell_places,
)
from ctxgate.gate.scope.quantities import _amounts, _bulk, _numbers
from ctxgate.gate.scope.recipients import _addresses, _channels, _permissions, _public
from ctxgate.gate.scope.words import _values

__all__ = ["unasked_extras", "unnamed_targets"]

_PROD = re.compile(r"(?<![a-z0-9])(prod|production)(?![a-z])", re.I)


def unnamed_targets(tool: str, arguments: Any, request: str, *, cwd: str) -> list[str]:
    """What the call acts on that ``request`` never names (module docstring), each as a short
    phrase; ``[]`` when the request covers it all, or names nothing a rule could check."""
    if not isinstance(request, str) or not request.strip():
        return []
    from ctxgate.gate.backends.heads.gloss import gloss

    request = gloss(request)  # "lösche …": the action words the checks read are English
    args = arguments if isinstance(arguments, Mapping) else {}
    command = _shell_command(tool, args)
    out: list[str] = []
    if command is not None:
        out += _age(command, request)
        out += _shell_places(command, request, cwd)
        out += _unbound(_destroyed_names(command, cwd), command, _ordered(request))
        out += _reply_scope(command, request, cwd)
        out += _head_back(command, request)
        out += _force_push(command, request)
        sent = _sent_sources(command)
        out += _places(sent, set(), request, cwd)
        out += _sent_secrets(sent + _mailed_files(command), request)
        out += _shell_numbers(command, request)
        out += _discarded_changes(command, request, cwd)
        out += _extras(command, request)
        out += _untracked_losses(command, request, cwd)
        out += _pushed_secrets(command, request, cwd)
        text = command
    else:
        from ctxgate.gate.backends.heads.matching import verb_action

        paths, names, sql = _call_targets(tool, args, cwd)
        acts = verb_action(tool)
        deletes = "delete" in acts
        out += _places(paths + _attachments(args), set(paths) if deletes else set(), request,
                       cwd)
        sends = acts & {"send", "push"}
        out += _sent_secrets(_attachments(args) + (paths if sends else []), request)
        out += [] if paths else _secret_values(args, request)
        text = " ".join(_values(args))
        # what a delete binds to: only a call that deletes (a create_branch is no delete)
        out += _unbound(names if deletes else sql, text, _ordered(request))
        out += _query_scope(args, request) if deletes else []
        out += _numbers(args, request)
        out += _amounts(args, request)
        out += _channels(args, request)
        out += _bulk(tool, args, request)
    out += _patched_places(tool, args, request, cwd)
    out += _addresses(args, command, request)
    out += _public(args, command, request)
    out += _unsaid_verbs(tool, command, request)
    out += _permissions(args, command, request)
    prod = _PROD.search(text)
    if prod and not _PROD.search(request):
        out.append(f"production ({prod.group(0)!r})")
    return list(dict.fromkeys(out))


def unasked_extras(tool: str, arguments: Any, request: str) -> list[str]:
    """What a shell call does beyond the request even when nothing in it is destructive:
    packages it installs that the request does not name, or from an index it does not name
    (:mod:`.packages`: an install runs the package's code), and repository hooks it skips
    (``git commit --no-verify``). The gate asks this of every allowed shell call."""
    if not isinstance(request, str) or not request.strip():
        return []
    from ctxgate.gate.backends.heads.gloss import gloss

    command = _shell_command(tool, arguments if isinstance(arguments, Mapping) else {})
    if command is None:
        return []
    return _extras(command, gloss(request))


def _extras(command: str, request: str) -> list[str]:
    return unnamed_packages(command, request) + _skipped_hooks(command, request)


def _shell_command(tool: str, args: Mapping[str, Any]) -> str | None:
    from ctxgate.gate.effects.executed import executed_argument
    from ctxgate.gate.effects.harness import SHELL_TOOL_NAMES, shell_text

    if tool.lower() in SHELL_TOOL_NAMES:
        return shell_text(args)
    found = executed_argument(tool, args)
    return found[2] if found is not None and found[0] == "shell" else None
