"""Merge ctxgate's hooks into a harness's settings file, and take them out again.

Both Claude Code (``settings.json``) and Codex (``hooks.json``) keep hooks as
``{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command", "command": C}]}]}}``.
ctxgate's entries are recognised by their command (``… -m ctxgate hook pre|post``, or the
``-S …/ctxgate/_launch.py hook pre|post`` launcher that ``hook install`` writes), so:

- installing keeps every other key and every other hook, replaces an older ctxgate entry
  (another interpreter, other flags) instead of adding a second one, and is idempotent;
- before a file is changed its previous bytes are copied to ``FILE.ctxgate-backup``;
- uninstalling removes only ctxgate's entries (and events or groups left empty by that).

A file that is not a JSON object, or whose ``hooks`` is not an object of lists, is never
overwritten: :class:`UsageError` says what is wrong and leaves it alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxgate.errors import UsageError

__all__ = ["OURS", "InstallPlan", "is_ours", "merge_hooks", "plan", "remove_hooks", "write"]

OURS = re.compile(
    r"(?:^|[\s/\\])(?:-m\s+ctxgate|ctxgate|ctxgate[/\\]_launch\.py)['\"]?\s+hook\s+(?:pre|post)\b")
"""A hook command that runs ctxgate's hooks (any interpreter, any flags)."""

BACKUP_SUFFIX = ".ctxgate-backup"


def is_ours(handler: Any) -> bool:
    """Whether one hook handler (``{"type": "command", "command": …}``) is ctxgate's."""
    return (isinstance(handler, dict) and isinstance(handler.get("command"), str)
            and OURS.search(handler["command"]) is not None)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not readable JSON ({exc}); fix or move it, then run the "
                         "install again (nothing was written)") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path} holds a JSON {type(data).__name__}, not an object; fix or "
                         "move it (nothing was written)")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise UsageError(f"{path}: 'hooks' must be an object of lists (event → groups); fix "
                         "it by hand (nothing was written)")
    return data


def remove_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` without ctxgate's hook handlers (a new dict; the input is not changed)."""
    out = dict(settings)
    hooks: dict[str, list[Any]] = {}
    for event, groups in (settings.get("hooks") or {}).items():
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            handlers = [h for h in group["hooks"] if not is_ours(h)]
            if handlers:
                kept_groups.append({**group, "hooks": handlers})
            elif not any(is_ours(h) for h in group["hooks"]):
                kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
    if hooks:
        out["hooks"] = hooks
    else:
        out.pop("hooks", None)
    return out


def merge_hooks(settings: dict[str, Any], entries: dict[str, list[dict[str, Any]]]
                ) -> dict[str, Any]:
    """``settings`` with ctxgate's ``entries`` in place of any ctxgate entries it had."""
    out = remove_hooks(settings)
    hooks = {k: list(v) for k, v in (out.get("hooks") or {}).items()}
    for event, groups in entries.items():
        hooks.setdefault(event, []).extend(groups)
    out["hooks"] = hooks
    return out


@dataclass(frozen=True)
class InstallPlan:
    """What an install or uninstall would do to one file."""

    path: Path
    before: dict[str, Any]
    after: dict[str, Any]

    @property
    def changes(self) -> bool:
        return self.before != self.after

    def text(self) -> str:
        return json.dumps(self.after, indent=2, ensure_ascii=False) + "\n"


def plan(path: Path, entries: dict[str, list[dict[str, Any]]], *,
         uninstall: bool = False) -> InstallPlan:
    """The change to ``path`` (read now; nothing is written)."""
    before = _load(path)
    after = remove_hooks(before) if uninstall else merge_hooks(before, entries)
    return InstallPlan(path=path, before=before, after=after)


def write(p: InstallPlan) -> Path | None:
    """Apply a plan: back the old file up, write the new one atomically; the backup's path
    (``None`` when the file did not exist or nothing changed)."""
    if not p.changes:
        return None
    p.path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if p.path.exists():
        backup = p.path.with_name(p.path.name + BACKUP_SUFFIX)
        shutil.copy2(p.path, backup)
    tmp = p.path.with_name(f".{p.path.name}.ctxgate-tmp-{os.getpid()}")
    tmp.write_text(p.text(), encoding="utf-8")
    if p.path.exists():
        shutil.copymode(p.path, tmp)
    os.replace(tmp, p.path)
    return backup
