"""Effects of tools no stronger source knows, from rules over their name, description and
arguments (before the learned classifier, after configuration, annotations and the harness).

The rule looks for the tool's *operation verb*: the first verb-like word of the operation part
of its name — the last ``.``/``/`` segment (``me.messages.message.copy`` → ``copy``), the part
after ``Resource_`` in ``Resource_Operation`` names (``ExpressRoutePorts_Delete`` →
``Delete``), else the whole name (``send_email``, ``reportAbusiveIP``). When the name has none,
the first word of the description may give it. Then:

- a read verb (``get``, ``list``, ``search``, ``verify``, ...): no answer — the learned
  classifier and the model judge the call (a name is a weak proof of harmlessness);
- a verb that sends, pays, publishes, invites, shares, deploys, pushes, books, transfers
  (:data:`EXTERNAL_VERBS`): :attr:`~EffectClass.EXTERNAL`;
- a verb that deletes for good (:data:`DELETE_VERBS`): :attr:`~EffectClass.EXTERNAL` on a
  remote service, or the path rules of :mod:`.paths` when an argument holds a local path;
- any other state-changing verb (:data:`CHANGE_VERBS`): :attr:`~EffectClass.EXTERNAL` when
  the arguments hold no local path (a remote service's state changes), else the path rules
  (``write_file`` overwrites, ``edit_file`` changes in place, ``move_file`` overwrites its
  destination, ``create_directory`` creates), judged with the real filesystem and ``git``.
  A remote ``create``/``add`` counts too: what it creates is seen by others and cannot be
  taken back from here (tried: leaving creates to the learned classifier raised the quick
  non-shell false allows from 17.8 % to 24.9 %, since it calls many creates read-only);
- no verb at all: argument names alone can still say it (``amount`` with an account or card
  → pays; a recipient with a message body → sends).

The verb lists are those of the learned classifier's features (:mod:`.learned`) and issue
9's list of external effects, plus general verbs of the same kinds, plus the operation verbs
that the *training* split of ``scripts/gate_data.py`` shows changing state (first words of 4
or more operations, 95 % or more of them with a state-changing HTTP method: ``untag``,
``disassociate``, ``activate``, ``deregister``, ``confirm``, ``resume``, ``rollback`` …;
words that are not verbs, such as ``batch``, left out, and so are verbs that lead as many read
names as nouns: ``place`` in ``placeDetails``, ``claim``, ``train``); no word was added for an example of
the held-out benchmark sets. Every answer names the words that fired in its
evidence (``source=tool_name``). A rule-based
destructive class needs a clear request whatever P(destructive) says, so a destructive
external effect that is not clearly requested is denied or asked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource, combine
from ctxgate.gate.effects.paths import Action, classify_path

__all__ = [
    "CHANGE_VERBS",
    "DELETE_VERBS",
    "EXTERNAL_VERBS",
    "INPUT_VERBS",
    "PLAIN_READS",
    "READ_VERBS",
    "action_argument",
    "name_effect",
    "name_words",
    "operation_part",
    "operation_verb",
]

READ_VERBS = frozenset(
    "get gets list lists read fetch search find show describe query retrieve lookup look "
    "check view count download export inspect preview stat info status exists validate "
    "verify compute calculate estimate translate summarize summarise explain echo ping "
    "browse scan watch head tail diff compare analyze analyse render format parse print test "
    "whoami me current detect recognize recognise identify classify suggest recommend "
    "predict resolve evaluate lint review extract is has can generate convert open "
    "navigate goto visit".split()
)
EXTERNAL_VERBS = frozenset(
    "send invite share publish unpublish transfer pay book order message notify email mail "
    "reply forward deploy tweet retweet broadcast sms call dm charge refund withdraw deposit "
    "donate purchase buy sell checkout release announce submit push post upload "
    "comment like follow unfollow subscribe unsubscribe accept decline approve reject merge "
    "grant assign unassign transmit wire payout dispatch ship reserve schedule reschedule".split()
)
"""Verbs whose effect leaves the machine: someone else sees it, or money or goods move."""
DELETE_VERBS = frozenset(
    "delete remove destroy drop purge erase clear revoke wipe truncate unlink kill terminate "
    "uninstall prune discard deactivate ban block shred cancel trash del "
    "overwrite flush reset void expire evict rollback revert abort cleanup".split()
)
"""Verbs that lose something for good."""
CHANGE_VERBS = frozenset(
    "create add update set put patch insert write edit modify replace save rename move copy "
    "append import apply change enable start stop restart run trigger execute rerun close "
    "reopen lock unlock archive restore mark star unstar register configure toggle rotate "
    "commit tag label attach detach upsert make complete sync mute unmute upgrade provision "
    "invoke scale reboot migrate regenerate renew resend mkdir touch chmod link exec eval "
    "disable untag associate disassociate activate deregister unregister confirm resume "
    "pause suspend undelete sign initiate initialize enroll annotate acknowledge connect "
    "disconnect finalize promote refresh unclaim resize retry dismiss setup install launch "
    "reload reconnect rollout transition rebuild reindex redeploy reassign unarchive fork "
    "clone duplicate vote pin unpin hide unhide kick snooze rebase turn switch play arm disarm "
    "dim".split()
)
"""Other verbs that change state (recoverable or not depends on where)."""

PLAIN_READS = frozenset(
    "get gets list lists read fetch search find show describe retrieve lookup view count "
    "inspect preview exists whoami diff compare navigate goto visit".split()
)
"""Read verbs with no second sense (not ``open``, ``generate``, ``test``, ``query``, nor the
nouns ``status`` and ``info``): a name that starts with one and names no change is read-only by rule."""
INPUT_VERBS = frozenset("click tap type fill press drag hover".split())
"""Input to an application's interface (``browser_click``, ``type_text``, ``fill_form``): the
agent acts as the user, and a click or keystroke can submit, buy or send."""
_UI_WORDS = frozenset("browser page element ui mouse keyboard screen tab window desktop "
                      "computer puppeteer playwright selenium".split())
"""Words that name where an input goes (``browser_type``, ``mouse_click_xy``): a verb right
after them is still the operation's first word."""
_CODE_WORDS = frozenset("script scripts js javascript code snippet".split())
"""With ``evaluate`` (a read verb for ``evaluate_model``), these make it code that runs
(``evaluate_script``, ``browser_evaluate``)."""
_FORM_VERBS = frozenset({"select", "handle", "choose"})
_FORM_CHOICES = frozenset("option options dropdown dialog alert prompt".split())
"""A :data:`_FORM_VERBS` word with one of these, or right after a UI word, is input to a form or a
dialog (``browser_select_option``, ``handle_dialog``, ``puppeteer_select``), where it answers
"are you sure?" or picks what is bought."""

NOUN_VERBS = frozenset(
    "message email mail order book call post comment like sms dm "
    "tag label mark star link set reply forward ship sign type press fill tap del turn switch "
    "play arm".split()
)
"""Words that are as often nouns (``get_email``, ``user_order_list``), or short forms that
are other words inside a name (``del`` in ``estado_del_pedido``): a verb only as the first
word of the operation part (``delListeNoire``, ``del_user``)."""
_VERBS = READ_VERBS | EXTERNAL_VERBS | DELETE_VERBS | CHANGE_VERBS | INPUT_VERBS
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_PATH_ARGS = frozenset(
    "path paths file files filename filepath file_path directory dir "
    "dirname folder source destination src dst dest target notebook_path "
    "old_path new_path output output_path input_path".split()
)
_STRONG_PATH_ARGS = frozenset(
    "path file_path filepath filename directory dir dirname folder "
    "notebook_path old_path new_path".split()
)
"""Argument names whose value is a path even as a bare word (``{"path": "newdir"}``)."""
_BARE = re.compile(r"^[\w.-]+$")
_DEST_ARGS = frozenset("destination dest dst target new_path output output_path".split())
_LOCAL_PATH = re.compile(r"^(/|~/|\./|\.\./)|^[\w.-]+(/[\w.-]+)*\.[A-Za-z0-9]{1,8}$|^[\w-]+/")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_PAY_ARGS = frozenset("amount price total sum".split())
_ACCOUNT_ARGS = frozenset(
    "iban account account_number to_account card card_number "
    "recipient payee beneficiary wallet".split()
)
_RECIPIENT_ARGS = frozenset(
    "to cc bcc recipient recipients phone phone_number channel "
    "chat_id email emails invitee attendees".split()
)
_BODY_ARGS = frozenset("body message text content subject html".split())


def name_words(text: str) -> list[str]:
    """Lower-case words of a tool or argument name (camelCase, snake_case, kebab, paths)."""
    out: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", text):
        out.extend(w.lower() for w in _CAMEL.findall(part))
    return out


def operation_part(tool: str) -> str:
    """The part of a tool name that says its operation: the last segment of a dotted or
    slashed name, and of an Azure/OpenAPI ``Resource_Operation`` id (both halves
    capitalised) the operation (``SyncGroups_Delete`` → ``Delete``)."""
    part = re.split(r"[./:]", tool.strip("./:"))[-1] or tool
    if "_" in part:
        head, _, tail = part.rpartition("_")
        # Resource_Operation (Azure, OpenAPI operation ids): both parts capitalised
        if head[:1].isupper() and tail[:1].isupper():
            return tail
    return part


_CHANGING = (EXTERNAL_VERBS | DELETE_VERBS | CHANGE_VERBS | INPUT_VERBS) - NOUN_VERBS
"""Verbs that change state wherever they stand in a name (nouns that are also verbs aside)."""
_RUNS_CODE_WITH = _CODE_WORDS | _UI_WORDS
"""Words that make ``evaluate`` code that runs."""


def _names_a_change(tool: str) -> bool:
    """Whether any word of the name is a verb that changes state (``get_or_create``,
    ``fetch_and_delete``), nouns that are also verbs (``get_order``) aside."""
    return any(w in _CHANGING for w in name_words(tool))


def operation_verb(tool: str, description: str | None = None) -> tuple[str, str] | None:
    """``(verb, where)`` — the first verb-like word of the tool name's operation part, or of
    the description when the name has none (``where`` is ``"name"`` or ``"description"``)."""
    words = name_words(operation_part(tool))
    k = 0
    ui = False
    for i, word in enumerate(words):
        if word in _UI_WORDS and word not in _VERBS:
            ui = True
            continue  # where the input goes: the next word is still the first
        following = words[i + 1] if i + 1 < len(words) else ""
        if word in _FORM_VERBS and k == 0 and (ui or following in _FORM_CHOICES):
            return word, "name"
        if word in _VERBS and (k == 0 or word not in NOUN_VERBS):
            if word == "evaluate" and not _RUNS_CODE_WITH.isdisjoint(words):
                return "eval", "name"  # runs code (in a page, a REPL), not a judgement
            if word in READ_VERBS and word not in PLAIN_READS and i < len(words) - 1 and \
                    words[-1] in _CHANGING:
                # a read verb that is as often a noun or a service, and a change verb last
                # (Azure's `compute_vm_create`, `loadtesting_test_create`): the change
                return words[-1], "name"
            return word, "name"
        if ui and word in ("down", "up", "wheel") and i and words[i - 1] in ("mouse", "key"):
            return "press", "name"  # browser_mouse_down, key_up: half of a click or a key press
        k += 1
    if description:
        first = name_words(description.strip())[:1]
        stem = first[0] if first else ""
        for cand in (
            stem,
            stem[:-1] if stem.endswith("s") else "",
            stem[:-2] if stem.endswith("es") else "",
        ):
            if cand and cand in _VERBS:
                return cand, "description"
    return None


_ORDER_KEYS = frozenset({"operation", "op", "command", "cmd", "method"})
"""Argument names that give an order even to a tool whose name reads."""
_WEAK_ACTION_KEYS = frozenset({"type", "mode", "intent", "task"})
"""Argument names whose value is as often a kind of thing (``{"type": "post"}``)."""
_ACTION_KEYS = _ORDER_KEYS | _WEAK_ACTION_KEYS | {"action", "verb"}
"""Argument names whose value can say what a multi-purpose tool does (``stripe {"action":
"refund"}``, ``mongo {"operation": "deleteMany"}``)."""


def action_argument(arguments: Mapping[str, Any], *,
                    filters: bool = False) -> tuple[str, str] | None:
    """``(verb, where)`` from an action-like argument whose short value starts with a verb that
    changes state (``"refund"``, ``"deleteMany"``, ``"send"``): it says more than the tool's
    name (``mongo_query`` with ``deleteMany`` deletes). A read verb there gives ``None``, and
    the name decides as before. ``filters``: the tool's name reads (``list_events``,
    ``search_audit_log``), so ``action``/``type``/``mode`` are more likely filters of what it
    lists ("events whose action is create") than orders; only ``operation``/``op``/
    ``command``/``method`` count then."""
    for key, value in arguments.items():
        k = str(key).lower()
        if k not in _ACTION_KEYS or not isinstance(value, str):
            continue
        if filters and k not in _ORDER_KEYS:
            continue
        words = name_words(value)
        if not words or len(words) > 4 or len(value) > 60:
            continue
        verb = words[0]
        if k in _WEAK_ACTION_KEYS and verb in NOUN_VERBS:
            continue  # {"type": "post"} is a kind of thing, not an order
        if verb in _VERBS and verb not in READ_VERBS:
            return verb, f"argument {key!r}"
    return None


_WEB_URL = re.compile(r"^(?:https?|wss?|ftp)://", re.I)


def _remote_url(arguments: Mapping[str, Any]) -> str | None:
    """A URL to another machine among the arguments that carries data out
    (``fetch {"url": "https://x.example/?d=<secret>"}``: :func:`.urls.data_in_url`): a read
    there still sends it, so the model judges it. A URL that carries nothing is read as a
    harness's ``WebFetch`` is (``navigate {"url": "https://docs.python.org/3/"}``)."""
    from ctxgate.gate.effects.programs import LOCAL_HOST
    from ctxgate.gate.effects.urls import data_in_url

    for value in arguments.values():
        if isinstance(value, str) and _WEB_URL.match(value.strip()) and \
                not LOCAL_HOST.match(value.strip()) and data_in_url(value.strip()):
            return value.strip()
    return None


_REMOTE_PLACE_ARGS = frozenset({"owner", "repo", "repository", "bucket", "bucket_name",
                                "branch", "drive_id", "site_id", "container_name", "share"})
"""Arguments that place a call's ``path`` on a remote service (GitHub's
``create_or_update_file {"owner", "repo", "path"}``, a bucket's object key), not here."""


def local_paths(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(argument name, value)`` of arguments that name a path and hold a local path."""
    out: list[tuple[str, str]] = []
    if _REMOTE_PLACE_ARGS & {str(k).lower() for k in arguments}:
        return out  # a path in a remote repository or bucket (`owner`, `repo`, `bucket` …)
    for key, value in arguments.items():
        names = set(name_words(str(key))) | {str(key).lower()}
        values = value if isinstance(value, list) else [value]
        if not names & _PATH_ARGS:
            continue
        for v in values:
            if (
                isinstance(v, str)
                and v
                and not _URL.match(v)
                and "<" not in v
                and (
                    _LOCAL_PATH.search(v.strip())
                    or (str(key).lower() in _STRONG_PATH_ARGS and _BARE.match(v.strip()))
                )
            ):
                out.append((str(key), v.strip()))
    return out


def _action(verb: str, key: str) -> Action:
    if verb in DELETE_VERBS:
        return "delete"
    if verb in ("create", "mkdir", "touch", "make") or (verb == "add" and key != "file"):
        return "create"
    if verb in ("append",):
        return "append"
    if verb in ("move", "rename", "copy"):
        return "overwrite" if set(name_words(key)) & _DEST_ARGS or key in _DEST_ARGS else "edit"
    if verb in ("write", "save", "put", "overwrite", "upload", "import", "replace"):
        return "overwrite"
    return "modify"


def _argument_rule(
    arguments: Mapping[str, Any], input_schema: Mapping[str, Any] | None = None
) -> Effect | None:
    names = {str(k).lower() for k in arguments}
    props = input_schema.get("properties") if isinstance(input_schema, Mapping) else None
    if isinstance(props, Mapping):
        names |= {str(k).lower() for k in props}  # the schema's argument names count too
    words = set().union(*(set(name_words(k)) | {k} for k in names)) if names else set()
    if words & _PAY_ARGS and words & _ACCOUNT_ARGS:
        hit = sorted(words & (_PAY_ARGS | _ACCOUNT_ARGS))
        return Effect(
            effect=EffectClass.EXTERNAL,
            source=EffectSource.TOOL_NAME,
            evidence=f"no verb in the name, but its arguments ({', '.join(hit)}) move money",
        )
    if words & _RECIPIENT_ARGS and words & _BODY_ARGS:
        hit = sorted(words & (_RECIPIENT_ARGS | _BODY_ARGS))
        return Effect(
            effect=EffectClass.EXTERNAL,
            source=EffectSource.TOOL_NAME,
            evidence=f"no verb in the name, but its arguments ({', '.join(hit)}) "
            "send a message to someone",
        )
    return None


_ARITHMETIC = frozenset({"add"})
"""Change verbs that are arithmetic when the name says nothing else and every argument is a
number (``add {"a": 2, "b": 3}``, the MCP example servers' first tool). Other arithmetic
words are no change verbs here, so no rule calls them changes."""


_ARITHMETIC_NAMES = _ARITHMETIC | frozenset(
    "numbers number two values ints integers floats nums".split())
"""Words of a name that is arithmetic and nothing else (``add``, ``add_two_numbers``; not
``add_item``, ``increment_counter``)."""


def _only_numbers(args: Mapping[str, Any]) -> bool:
    """One to three arguments, every one a number (a list of numbers counts), none an id."""
    if any(k.lower() in ("id", "ids") or k.lower().endswith(("_id", "id")) for k in map(
            str, args)):
        return False
    values = list(args.values())
    if not 1 <= len(values) <= 3:
        return False
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    return bool(flat) and all(isinstance(x, int | float) and not isinstance(x, bool)
                              for x in flat)


def name_effect(
    tool: str,
    arguments: Any,
    *,
    cwd: str,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
) -> Effect | None:
    """The effect of an unknown tool's call by its name, description, schema and arguments,
    or ``None`` when they do not say (a read verb, no verb, a delete of a path not there)."""
    args = arguments if isinstance(arguments, Mapping) else {}
    named = operation_verb(tool, description)
    reads = named is not None and named[0] in READ_VERBS
    found = action_argument(args, filters=reads) or named
    if found is None:
        return _argument_rule(args, input_schema)
    verb, where = found
    said = f"the tool's {where} says {verb!r}"
    if verb in _ARITHMETIC and _only_numbers(args) and \
            set(name_words(operation_part(tool))) <= _ARITHMETIC_NAMES:
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.TOOL_NAME,
                      evidence=f"{said} with numbers only: arithmetic, nothing is changed")
    if verb in READ_VERBS:
        if where == "name" and verb in PLAIN_READS and found is named \
                and not _names_a_change(tool):
            from ctxgate.gate.effects.harness import secret_argument

            url = _remote_url(args)
            secret = secret_argument(args)
            but = (f", but its URL leaves the machine ({url[:80]})" if url else
                   f", but {secret!r} looks like a secret" if secret else "")
            return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.TOOL_NAME,
                          evidence=f"{said} and names nothing it changes{but}",
                          needs_model=bool(but))
        return None
    if verb in INPUT_VERBS or verb in _FORM_VERBS:
        return Effect(
            effect=EffectClass.EXTERNAL,
            source=EffectSource.TOOL_NAME,
            evidence=f"{said}: it acts in an application as the user would (a click or a "
                     "keystroke can submit, buy or send)",
        )
    if verb == "eval" and where == "name" and not local_paths(args):
        return Effect(
            effect=EffectClass.EXTERNAL,
            source=EffectSource.TOOL_NAME,
            evidence=f"{said}: it runs code (in a page or an interpreter) that can do what "
                     "the application can",
        )
    if verb in EXTERNAL_VERBS:
        return Effect(
            effect=EffectClass.EXTERNAL,
            source=EffectSource.TOOL_NAME,
            evidence=f"{said}: it sends, pays, publishes or shares outside this machine",
        )
    paths = local_paths(args)
    if paths:
        findings = []
        for key, value in paths:
            pe = classify_path(value, _action(verb, key), cwd=cwd)
            if pe.effect is not None:
                findings.append((pe.effect, f"{said}; {key}: {pe.evidence}"))
        if not findings:
            return None  # deletes a path that is not there: no evidence, the model decides
        return combine(findings, EffectSource.TOOL_NAME)
    what = "deletes something for good" if verb in DELETE_VERBS else "changes state"
    return Effect(
        effect=EffectClass.EXTERNAL,
        source=EffectSource.TOOL_NAME,
        evidence=f"{said}: it {what} on a remote service (no local path argument)",
    )
