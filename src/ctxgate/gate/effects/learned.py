"""The learned effect classifier for tools no rule knows: name, description, schema, arguments.

:func:`classify` answers, for any tool call, which :class:`~ctxgate.gate.effects.model.
EffectClass` it most likely has. It is the weakest effect source (configuration, MCP
annotations, the harness's own tools and the shell parser come first) and says so:
``source=learned``, ``confidence`` = the probability of the class it returns, ``evidence``
names the features and the head's probability that drove it.

How it decides:

1. **Changes state?** A logistic head (``heads/effect.json``, trained by
   ``scripts/train_heads.py`` on public OpenAPI descriptions, where the HTTP method is the
   label the API's authors wrote: GET/HEAD read-only, POST/PUT/PATCH/DELETE state-changing)
   over the local model's static embedding (distilled from all-MiniLM-L6-v2,
   :mod:`ctxgate.gate.backends.static`) of :func:`tool_text` — the tool name, its description
   and its argument *names* — plus :data:`EFFECT_FEATURES` (verbs in the name, what the
   description says, argument names and value shapes such as an e-mail address or a money
   amount). Below :data:`READ_ONLY_BELOW` it is ``read_only``.
2. **Where?** A state-changing call is ``external`` (sends, pays, publishes, invites, shares
   outside the machine — every training API is remote) unless its arguments are local paths
   and nothing points outside the machine (no URL, e-mail, recipient, amount, remote verb):
   then ``local_irreversible`` when the name deletes, overwrites or truncates, else
   ``local_recoverable`` (a write, edit or move; the harness and shell rules, which see the
   filesystem and git, decide those more precisely). This second step is a rule, not learned: no public labelled set of
   local tools was large enough to learn it from, and its evidence says which words fired.

:func:`p_destructive` gives the score the local decision model uses for non-shell calls.
Embeddings of :func:`tool_text` are cached per text (argument values are not in it), so a
tool called again costs no encoder pass. Pure Python over files shipped in the package and
verified by SHA-256; a missing or changed file raises :class:`LearnedUnavailable` (a
:class:`~ctxgate.errors.GateError`) saying how to repair the install.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxgate.errors import GateError
from ctxgate.gate.effects.model import Effect, EffectClass, EffectSource
from ctxgate.gate.effects.names import name_words

__all__ = [
    "EFFECT_FEATURES",
    "READ_ONLY_BELOW",
    "LearnedUnavailable",
    "classify",
    "effect_features",
    "name_words",
    "p_destructive",
    "tool_text",
]

READ_ONLY_BELOW = 0.5
"""P(changes state) below which a call is ``read_only``."""
_CACHE_SIZE = 4096

READ_VERBS = frozenset(
    "get list read fetch search find show describe query retrieve lookup look check view "
    "count download export inspect preview stat info status exists validate verify compute "
    "calculate estimate convert translate summarize summarise explain echo ping open "
    "browse scan watch head tail diff compare analyze analyse render format parse print "
    "test whoami me current".split())
WRITE_VERBS = frozenset(
    "create add update set put patch post insert upload write edit modify replace save "
    "rename move copy append import apply change enable disable start stop restart run "
    "trigger execute rerun assign unassign merge close reopen lock unlock archive "
    "restore mark star unstar follow unfollow subscribe register configure toggle reset "
    "rotate approve reject accept decline commit push tag label attach detach upsert "
    "generate make submit complete cancel schedule reschedule sync mute unmute".split())
DELETE_VERBS = frozenset(
    "delete remove destroy drop purge erase clear revoke wipe truncate unlink kill "
    "terminate uninstall prune unsubscribe discard deactivate ban block".split())
SEND_VERBS = frozenset(
    "send invite share publish transfer pay book order message notify email mail reply "
    "forward deploy tweet broadcast sms call dm charge refund withdraw deposit donate "
    "purchase buy sell checkout release announce".split())
LOCAL_LOSS_VERBS = DELETE_VERBS | frozenset("overwrite truncate shred format".split())
"""Verbs that lose local data for good; a plain write, edit or move is recoverable by default
(the harness and shell rules, which see the filesystem and git, decide more precisely)."""
_PATH_ARGS = frozenset("path paths file files filename filepath file_path directory dir "
                       "dirname folder source destination src dst dest target cwd "
                       "notebook_path old_path new_path".split())
_REMOTE_ARGS = frozenset("to cc bcc recipient recipients email emails url uri endpoint "
                         "webhook channel phone number amount price currency account iban "
                         "user_id userid username invitee attendees repo repository owner "
                         "org organization host server".split())
_BODY_ARGS = frozenset("body content message text data payload subject note comment "
                       "description".split())
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_AMOUNT_ARGS = frozenset("amount price cost total sum value currency quantity".split())
_DESC_READ = re.compile(r"^\s*(get|gets|list|lists|retriev\w*|return\w*|fetch\w*|search\w*|"
                        r"find\w*|show\w*|look\w*|read\w*|view\w*|check\w*|describ\w*|"
                        r"query|queries|count\w*|download\w*|obtain\w*)\b", re.I)
_DESC_WRITE = re.compile(r"\b(creat\w*|add\w*|updat\w*|delet\w*|remov\w*|send\w*|post\w*|"
                         r"modif\w*|replac\w*|upload\w*|writ\w*|set\w*|invit\w*|shar\w*|"
                         r"transfer\w*|pay\w*|book\w*|cancel\w*|publish\w*|submit\w*|"
                         r"trigger\w*|start\w*|stop\w*|edit\w*|overwrit\w*|mov\w*|renam\w*)\b",
                         re.I)

EFFECT_FEATURES = (
    "name_read_verb", "name_write_verb", "name_delete_verb", "name_send_verb",
    "first_word_read", "first_word_change", "desc_read", "desc_write", "has_description",
    "n_args", "arg_path", "arg_remote", "arg_body", "value_email", "value_url", "arg_amount",
)


class LearnedUnavailable(GateError):
    """The learned classifier's packages are missing (the message gives the install line)."""


def _arg_names(arguments: Mapping[str, Any], input_schema: Mapping[str, Any] | None) -> list[str]:
    names = [str(k) for k in arguments] if isinstance(arguments, Mapping) else []
    props = input_schema.get("properties") if isinstance(input_schema, Mapping) else None
    if isinstance(props, Mapping):
        names += [str(k) for k in props if str(k) not in names]
    return names[:16]


def tool_text(tool: str, arguments: Mapping[str, Any], *, description: str | None = None,
              input_schema: Mapping[str, Any] | None = None) -> str:
    """The text the encoder sees: name words, description, argument names (no values)."""
    desc = re.sub(r"\s+", " ", description or "").strip()[:300]
    names = ", ".join(_arg_names(arguments, input_schema))
    head = f"{tool} ({' '.join(name_words(tool))})"
    return f"{head}: {desc}. arguments: {names}" if desc else f"{head}. arguments: {names}"


def effect_features(tool: str, arguments: Mapping[str, Any], *, description: str | None = None,
                    input_schema: Mapping[str, Any] | None = None) -> list[float]:
    """The :data:`EFFECT_FEATURES` of one call, in that order."""
    words = name_words(tool)
    ws = set(words)
    # the verb is usually first, or first after a namespace ("repos/create-issue")
    verb = next((w for w in words if w in READ_VERBS | WRITE_VERBS | DELETE_VERBS
                 | SEND_VERBS), "")
    args = arguments if isinstance(arguments, Mapping) else {}
    names = _arg_names(args, input_schema)
    name_sets = [set(name_words(n)) | {n.lower()} for n in names]
    values = [v for v in args.values() if isinstance(v, str)]
    desc = description or ""
    return [
        float(bool(ws & READ_VERBS)),
        float(bool(ws & WRITE_VERBS)),
        float(bool(ws & DELETE_VERBS)),
        float(bool(ws & SEND_VERBS)),
        float(verb in READ_VERBS),
        float(verb in WRITE_VERBS | DELETE_VERBS | SEND_VERBS),
        float(bool(_DESC_READ.search(desc))),
        float(bool(_DESC_WRITE.search(desc))),
        float(bool(desc.strip())),
        min(len(names), 10) / 10.0,
        float(any(s & _PATH_ARGS for s in name_sets)),
        float(any(s & _REMOTE_ARGS for s in name_sets)),
        float(any(s & _BODY_ARGS for s in name_sets)),
        float(any(_EMAIL.match(v.strip()) for v in values)),
        float(any(_URL.match(v.strip()) for v in values)),
        float(any(s & _AMOUNT_ARGS for s in name_sets)),
    ]


@dataclass(frozen=True, kw_only=True)
class _Model:
    encoder: Any
    weights: Any
    use_embedding: bool
    temperature: float


_lock = threading.Lock()
_model: _Model | None = None
_cache: OrderedDict[str, Any] = OrderedDict()


def _load() -> _Model:
    global _model
    if _model is not None:
        return _model
    with _lock:
        if _model is None:
            from ctxgate.gate.backends.local import INSTALL_HINT, load_head_doc
            from ctxgate.gate.backends.static import get_encoder

            try:
                encoder = get_encoder()
                doc = load_head_doc("effect", EFFECT_FEATURES, encoder.dim)
            except GateError as exc:
                raise LearnedUnavailable(
                    f"the learned tool-effect classifier cannot load the local model ({exc})"
                    + ("" if INSTALL_HINT in str(exc) else f"; {INSTALL_HINT}")) from exc
            _model = _Model(encoder=encoder,
                            weights=tuple(float(w) for w in doc["weights"]),
                            use_embedding=doc["variant"] == "embedding+features",
                            temperature=float(doc["temperature"]))
    return _model


def _embedding(model: _Model, text: str) -> Any:
    with _lock:
        hit = _cache.get(text)
        if hit is not None:
            _cache.move_to_end(text)
            return hit
    vec = model.encoder.encode_one(text)
    with _lock:
        _cache[text] = vec
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return vec


def p_changes_state(tool: str, arguments: Mapping[str, Any], *,
                    description: str | None = None,
                    input_schema: Mapping[str, Any] | None = None) -> tuple[float, list[float]]:
    """The head's P(the call changes state) and the features it saw."""
    model = _load()
    feats = effect_features(tool, arguments, description=description, input_schema=input_schema)
    x = [*feats, 1.0]
    if model.use_embedding:
        text = tool_text(tool, arguments, description=description, input_schema=input_schema)
        x = [*_embedding(model, text), *x]
    z = math.fsum(a * w for a, w in zip(x, model.weights, strict=True)) / model.temperature
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z)))), feats


def _where(tool: str, arguments: Mapping[str, Any], feats: list[float]) -> tuple[EffectClass,
                                                                                   str]:
    named = dict(zip(EFFECT_FEATURES, feats, strict=True))
    remote = (named["arg_remote"] or named["value_email"] or named["value_url"]
              or named["arg_amount"] or named["name_send_verb"])
    if named["arg_path"] and not remote:
        verbs = sorted(set(name_words(tool)) & LOCAL_LOSS_VERBS)
        if verbs:
            return EffectClass.LOCAL_IRREVERSIBLE, f"local path argument, name says {verbs[0]!r}"
        return EffectClass.LOCAL_RECOVERABLE, "local path argument, no deleting verb"
        # (write/edit/move of a local path: recoverable unless a rule with the filesystem
        # and git says otherwise)
    fired = [k for k in ("name_send_verb", "value_email", "value_url", "arg_amount",
                         "arg_remote") if named[k]]
    return EffectClass.EXTERNAL, ("remote: " + ", ".join(fired) if fired
                                  else "no local path argument: assumed remote")


def classify(tool: str, arguments: Mapping[str, Any], *, description: str | None = None,
             input_schema: Mapping[str, Any] | None = None) -> Effect:
    """The most likely effect class of one call (module docstring), deterministic.

    Raises:
        LearnedUnavailable: the shipped model files are missing or changed.
    """
    p, feats = p_changes_state(tool, arguments, description=description,
                               input_schema=input_schema)
    fired = [k for k, v in zip(EFFECT_FEATURES, feats, strict=True)
             if v and k not in ("has_description", "n_args")]
    shown = ", ".join(fired) or "none"
    if p < READ_ONLY_BELOW:
        return Effect(effect=EffectClass.READ_ONLY, source=EffectSource.LEARNED,
                      confidence=round(1.0 - p, 6),
                      evidence=f"learned head: P(changes state)={p:.3f}; features: {shown}")
    cls, why = _where(tool, arguments, feats)
    return Effect(effect=cls, source=EffectSource.LEARNED, confidence=round(p, 6),
                  evidence=f"learned head: P(changes state)={p:.3f}; {why}; features: {shown}")


def p_destructive(tool: str, arguments: Mapping[str, Any], *, description: str | None = None,
                  input_schema: Mapping[str, Any] | None = None) -> tuple[float, Effect]:
    """P(an unrequested call of this tool would do harm) and the effect behind it.

    P(changes state), scaled down by 0.3 when the change is local and recoverable.
    """
    eff = classify(tool, arguments, description=description, input_schema=input_schema)
    p = 1.0 - eff.confidence if eff.effect is EffectClass.READ_ONLY else eff.confidence
    if eff.effect is EffectClass.LOCAL_RECOVERABLE:
        p *= 0.3
    return p, eff
