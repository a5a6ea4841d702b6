"""The offline default decision model: static sentence embeddings plus calibrated heads. Not an LLM.

It answers exactly two questions, by id — ``destructive`` and ``requested`` — and declares
so in :attr:`LocalDecisionModel.capabilities` (``question_ids``), so a gate configured with a
custom check is rejected at start-up rather than denied call by call. The question *text* is
not read: each head was trained for one fixed question.

**Zero set-up.** Everything it reads ships inside the ctxgate package
(``ctxgate/gate/backends/heads/``: ``static-embeddings.bin``, 7.8 MB, and three JSON heads)
and is verified against the SHA-256 pinned in :mod:`ctxgate.gate.backends.pins` before use;
a missing or changed file raises :class:`~ctxgate.gate.backends.modelfiles.ModelFileError`
and the gate denies (fails closed). The arithmetic is pure Python — no numpy, no BLAS
thread pool, no Rust tokenizer — so ``pip install ctxgate`` alone gives a working gate and
every machine computes the same floats.

* **Encoder** (:mod:`ctxgate.gate.backends.static`): one 128-float vector per WordPiece
  token, distilled once from all-MiniLM-L6-v2 by ``scripts/build_static_model.py``; a text's
  embedding is the normalised mean of its tokens' vectors.
* **P(destructive)**: a logistic head over the embedding of what the call *executes*
  (printed text and heredoc bodies left out) and features from a bashlex parse
  (see :mod:`ctxgate.gate.backends.heads.features`). Deterministic rules sit in front: a
  command that really runs ``rm``/``shred``, ``find -delete``, ``mkfs``/``dd of=``,
  ``git push --force``/``reset --hard``, SQL ``DROP``/``DELETE``, ``kill`` or ``sed -i`` gets
  at least :data:`~ctxgate.gate.backends.heads.features.RULE_FLOOR`.
  A call that is not a shell command (no ``command``/``cmd``/``script`` argument) gets its
  P(destructive) from the learned effect classifier instead
  (:func:`ctxgate.gate.effects.learned.p_destructive`: trained on public OpenAPI
  descriptions, where the HTTP method is the label), which also reports the effect class.
  A function call whose name starts with a side-effect verb (send, pay, invite, share,
  publish, report, book …) is floored at the same 0.9, one with a change verb (create,
  update, write, move …) at 0.6 (:func:`~ctxgate.gate.backends.heads.features.tool_verb`).
* **P(requested)**: a logistic head over the cosine and the element-wise product of the
  request's and the call's embeddings, word-stem overlap (the tool name's words on their own
  for function calls), whether a destructive or state-changing call meets a request with
  no such intent, and request↔call matching (:mod:`~ctxgate.gate.backends.heads.matching`):
  how many of the call's argument values the request names (aliases such as ``pyc`` →
  "compiled python", number words), whether both state the same action ("tear down" and
  ``kubectl delete``), and whether the request states a destructive intent on the call's
  object. It was trained on shell pairs and on function calls with arguments, requested and
  unrequested rows weighing the same within each kind of call. A call whose harmful action
  (delete, kill, undo, send, pay, push: the shell programs it runs, or the first action word
  of a tool's name) is not among the actions the request states, while the request does
  state some ("Creates a role assignment" → ``RoleAssignments_DeleteById``, "list the
  replication links" → ``ReplicationLinks_Delete``), gets at most :data:`ACTION_CAP`, inside
  the ask band: an injected or confused call is never "clearly requested"
  (``detail.action_contradiction`` says which actions). A function call whose name creates
  or edits is contradicted the same way by a request none of whose actions comes near it
  (:data:`CHANGE_KIN`: "Retrieve a support ticket" → ``updateTicket``), and so is one that
  does the request's own action to another kind of thing or undoes it
  (:mod:`~ctxgate.gate.backends.heads.objects`: "delete the feature-x branch" →
  ``delete_repository``, "start the build" → ``stop_build``).

The request's embedding is cached (the same request judges many calls). Both heads are
temperature-scaled on a calibration split; their held-out metrics are stored in the head
files and reproduced by ``scripts/train_heads.py``. Long texts are embedded through a
head-and-tail window of :data:`~ctxgate.gate.backends.heads.features.WINDOW_CHARS` code
points; the parser still reads the whole command. Nothing leaves the machine, and no
configuration is needed.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxgate.errors import DecisionModelError, GateError, RequestTooLarge
from ctxgate.gate.backends.base import Answer, Capabilities, Question
from ctxgate.gate.backends.fallback import Chainable
from ctxgate.gate.backends.heads.gloss import gloss
from ctxgate.gate.backends.heads.matching import AMBIGUOUS_VERBS, KIN, verb_action

__all__ = ["LOCAL_MODEL_ID", "LOCAL_QUESTION_IDS", "REQUIRED_PACKAGES", "LocalDecisionModel",
           "from_policy"]

LOCAL_MODEL_ID = "ctxgate-local/minilm-static-128+heads-4.2"
"""Model id reported in answers and capabilities (bump when the heads are retrained or a rule
that changes an answer is added; 4.1: the action-contradiction ceiling)."""
LOCAL_QUESTION_IDS = frozenset({"destructive", "requested"})
"""The only questions this backend answers."""
MAX_STATE_CHARS = 200_000
"""Largest serialized state, code points; larger requests are refused before any work."""
REQUEST_CACHE = 64
"""Request embeddings kept (most recent first): one request judges many calls."""


@dataclass(frozen=True, kw_only=True)
class _Head:
    weights: tuple[float, ...]  # bias last
    columns: tuple[int, ...]  # which columns of [embedding-part | features | bias] it uses
    temperature: float
    variant: str

    def p(self, x: Sequence[float]) -> float:
        z = math.fsum(x[c] * w for c, w in zip(self.columns, self.weights, strict=True))
        z = max(-50.0, min(50.0, z / self.temperature))
        return 1.0 / (1.0 + math.exp(-z))


def load_head_doc(name: str, features: Sequence[str], dim: int) -> dict[str, Any]:
    """A head file's JSON, verified (pinned SHA-256) and checked against this version.

    Raises:
        GateError: trained on other features or another embedding width.
        ModelFileError: missing or changed file.
    """
    from ctxgate.gate.backends.modelfiles import read_verified

    doc = json.loads(read_verified(f"{name}.json").decode("utf-8"))
    if doc.get("features") != list(features):
        raise GateError(f"head {name}.json was trained on other features than this version "
                        "computes; rerun scripts/train_heads.py")
    if int(doc["embedding_dim"]) != dim:
        raise GateError(f"head {name}.json was trained on {doc['embedding_dim']}-float "
                        f"embeddings, the encoder gives {dim}; rerun scripts/train_heads.py")
    return doc


def _load_head(name: str, features: Sequence[str], dim: int) -> _Head:
    doc = load_head_doc(name, features, dim)
    n_features = len(features)
    if doc["question"] == "destructive":
        emb = doc["variant"] != "features"
        mask = [emb] * dim + [True] * (n_features + 1)
    else:
        prod = doc["variant"] == "features+product"
        mask = [True] * n_features + [prod] * dim + [True]
    weights = tuple(float(w) for w in doc["weights"])
    columns = tuple(i for i, m in enumerate(mask) if m)
    if len(columns) != len(weights):
        raise GateError(f"head {name}.json has {len(weights)} weights, expected "
                        f"{len(columns)}; rerun scripts/train_heads.py")
    return _Head(weights=weights, columns=columns, temperature=float(doc["temperature"]),
                 variant=doc["variant"])


class LocalDecisionModel(Chainable):
    """Offline embedding classifier for ``destructive`` and ``requested`` (no LLM, no network).

    The encoder (7.8 MB) and the heads load, verified, on first use or on :meth:`warm`.
    Decisions run in a worker thread.
    """

    def __init__(self) -> None:
        from ctxgate.gate.backends.threads import pin_environment

        pin_environment()  # before numpy is imported by this backend: one BLAS thread
        self._lock = threading.Lock()
        self._loaded: tuple[Any, _Head, _Head] | None = None
        self._requests: OrderedDict[str, Any] = OrderedDict()

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(model_id=LOCAL_MODEL_ID, kinds=frozenset({"noul"}),
                            question_ids=LOCAL_QUESTION_IDS, batching=True, max_concurrency=1,
                            max_request_chars=MAX_STATE_CHARS, local=True)

    def __repr__(self) -> str:
        return f"LocalDecisionModel(model_id={LOCAL_MODEL_ID!r})"

    def warm(self) -> None:
        """Load and verify the encoder and the heads now instead of on the first call.

        Raises:
            ModelFileError: a shipped file is missing or differs from its pinned SHA-256.
        """
        self._parts()

    def _parts(self) -> tuple[Any, _Head, _Head]:
        if self._loaded is None:
            with self._lock:  # concurrent first calls load once
                return self._load()
        return self._loaded

    def _load(self) -> tuple[Any, _Head, _Head]:
        if self._loaded is None:
            from ctxgate.gate.backends.heads.features import (
                DESTRUCTIVE_FEATURES,
                REQUESTED_FEATURES,
            )
            from ctxgate.gate.backends.static import get_encoder

            enc = get_encoder()
            self._loaded = (enc, _load_head("destructive", DESTRUCTIVE_FEATURES, enc.dim),
                            _load_head("requested", REQUESTED_FEATURES, enc.dim))
        return self._loaded

    async def evaluate(self, state: Mapping[str, Any],
                       questions: Sequence[Question]) -> list[Answer]:
        """Answer ``destructive`` and/or ``requested`` about ``state``.

        Raises:
            DecisionModelError: a question this backend does not answer, or a state without
                ``tool_call``.
            RequestTooLarge: the serialized state exceeds :data:`MAX_STATE_CHARS`.
        """
        for q in questions:
            if q.id not in LOCAL_QUESTION_IDS or q.kind != "noul":
                raise DecisionModelError(
                    f"the local decision model answers only {sorted(LOCAL_QUESTION_IDS)} "
                    f"(noul), not {q.kind} question {q.id!r}; configure an LLM backend "
                    "([gate] backend = \"openai\") for custom checks")
        size = len(json.dumps(state, ensure_ascii=False, default=str))
        if size > MAX_STATE_CHARS:
            raise RequestTooLarge(
                f"state is {size} characters, over the local model's {MAX_STATE_CHARS}; "
                "shorten the arguments (nothing was evaluated)")
        return await asyncio.to_thread(self.decide, state, [q.id for q in questions])

    def decide(self, state: Mapping[str, Any], question_ids: Sequence[str]) -> list[Answer]:
        """The synchronous decision (what :meth:`evaluate` runs in a thread)."""
        call = state.get("tool_call")
        if not isinstance(call, Mapping) or not isinstance(call.get("tool"), str):
            raise DecisionModelError("the state has no tool_call with a tool name; "
                                     "the local model judges tool calls only")
        tool, args = call["tool"], call.get("arguments", {})
        request = state.get("user_request")
        request = request if isinstance(request, str) else json.dumps(request, default=str)
        request = gloss(request)  # "lösche das build-Verzeichnis": the model reads English
        enc, dhead, rhead = self._parts()
        rules = state.get("effect_rules")
        judged = isinstance(rules, Mapping) and rules.get("writes") == "recoverable"
        return self._decide(enc, dhead, rhead, call, tool, args, request, question_ids,
                            writes_judged=judged)

    def _request_vector(self, enc: Any, text: str) -> Any:
        with self._lock:
            hit = self._requests.get(text)
            if hit is not None:
                self._requests.move_to_end(text)
                return hit
        vec = enc.encode_one(text)
        with self._lock:
            self._requests[text] = vec
            while len(self._requests) > REQUEST_CACHE:
                self._requests.popitem(last=False)
        return vec

    def _decide(self, enc: Any, dhead: _Head, rhead: _Head, call: Mapping[str, Any], tool: str,
                args: Any, request: str, question_ids: Sequence[str],
                writes_judged: bool = False) -> list[Answer]:
        from ctxgate.gate.backends.heads import features as ft

        shell = ft.is_shell_call(args)
        e_req = self._request_vector(enc, ft.window_text(request))
        feats = ft.destructive_features(tool, args)
        effect = None
        if shell:
            exec_text = ft.window_text(ft.executed_text(tool, args))
            e_call = enc.encode_one(exec_text)
            head_d = dhead.p([*e_call, *feats, 1.0])
        else:
            from ctxgate.gate.effects import learned
            from ctxgate.gate.effects.annotations import split_mcp_name

            desc = call.get("description")
            schema = call.get("input_schema")
            # the tool's own name, as the effect rules read it: a hook's `mcp__server__tool`
            # and the proxy's `tool` are the same call (the prefix's words are not the tool's)
            split = split_mcp_name(tool)
            head_d, effect = learned.p_destructive(
                split[1] if split else tool, args if isinstance(args, Mapping) else {},
                description=desc if isinstance(desc, str) else None,
                input_schema=schema if isinstance(schema, Mapping) else None)
            e_call = enc.encode_one(ft.window_text(ft.call_text(tool, args)))
        floor, rule = ft.rule_floor(tool, feats)
        waived = None
        if writes_judged and rule in ft.WRITE_RULES:
            # the gate's path rules judged every file this command writes recoverable
            # (state["effect_rules"]): the write floor stands in for rules that did not look
            waived, floor, rule = rule, 0.0, ""
        p_d = max(head_d, floor)
        call_text = ft.call_text(tool, args)
        terms = ft.call_terms(tool, args)

        def requested(text: str, e_text: Any) -> tuple[float, float, list[float]]:
            cos = math.fsum(a * b for a, b in zip(e_call, e_text, strict=True))
            feats_r = ft.requested_features(text, call_text, cos, p_d, tool=tool, shell=shell,
                                             terms=terms)
            return (rhead.p([*feats_r, *(a * b for a, b in zip(e_text, e_call, strict=True)),
                             1.0]), cos, feats_r)

        p_r, cosine, rfeats = requested(request, e_req)
        clause_hit = None
        # A mean of static token vectors is diluted by the rest of a long request ("delete the
        # victim directory, I do not need it any more"): each clause of the user's own request
        # is scored too, and the best-matching clause counts, but only a clause that itself
        # states a destructive intent (a short clause that merely shares words with the call,
        # "run the tests in tests/" for deleting tests/, must not make it requested).
        for clause in request_clauses(request):
            p_c, cos_c, feats_c = requested(clause, self._request_vector(enc, clause))
            if feats_c[3] and p_c > p_r:
                p_r, cosine, rfeats, clause_hit = p_c, cos_c, feats_c, clause
        # a call whose harmful action the request never states, while it states others
        # ("Creates a role assignment" → RoleAssignments_DeleteById): never "clearly requested"
        contradiction = action_contradiction(request, terms, tool, shell)
        if contradiction is None and not shell:
            # the request's own action on another kind of thing ("delete the sandbox state"
            # → usersDelete), or the opposite of its action ("start collecting" → StopData…)
            from ctxgate.gate.backends.heads.objects import object_mismatch, opposite_action

            contradiction = opposite_action(request, tool) or \
                object_mismatch(request, tool, args)
        if contradiction is not None and p_r > ACTION_CAP:
            p_r = ACTION_CAP
        # the request names the call's harmful action but forbids it, asks about it or
        # describes it ("do not delete it", "what does rm -rf build do?"): no order
        stance = _stance(request, terms, tool, args, shell)
        if stance == "forbidden":
            p_r = min(p_r, FORBIDDEN_CAP)
        elif stance == "mentioned":
            p_r = min(p_r, ACTION_CAP)
        # "create a CLAUDE.md file", "update AGENTS.md": the request orders a change of the
        # very file the call writes, by its name (the head reads a long request's other words)
        named_file = None
        if not shell and stance is None and contradiction is None and p_r < NAMED_FILE_FLOOR:
            named_file = ordered_file(request, args)
            if named_file is not None:
                p_r = NAMED_FILE_FLOOR
        fired = {k: v for k, v in zip(ft.DESTRUCTIVE_FEATURES, feats, strict=True) if v}
        out = []
        for qid in question_ids:
            if qid == "destructive":
                detail = {"head_p": round(head_d, 6), "rule": rule or None, "features": fired,
                          "write_floor_waived": waived,
                          "effect": effect.to_dict() if effect is not None else None}
                out.append(Answer(question_id=qid, p=p_d, model_id=LOCAL_MODEL_ID,
                                  detail=detail))
            else:
                detail = {"cosine": round(cosine, 6),
                          "request_intent": bool(rfeats[3]), "p_destructive": round(p_d, 6),
                          "clause": clause_hit, "action_contradiction": contradiction,
                          "action_stance": stance, "ordered_file": named_file}
                out.append(Answer(question_id=qid, p=p_r, model_id=LOCAL_MODEL_ID,
                                  detail=detail))
        return out


ACTION_CAP = 0.5
"""P(requested) ceiling of a call whose harmful action contradicts the request's stated ones
(:func:`action_contradiction`): inside the default ask band, so a person is asked.

Measured with the model alone on the training sources' calibration split (APIs.guru
providers and NL2Bash commands never fitted on): function-call false allows 11.8 % → 11.4 %,
false denials unchanged (12.9 %); on the train split 17.8 % → 17.5 % and 11.0 % → 11.1 %;
shell unchanged on both (a contradicted shell call already scored low)."""


NAMED_FILE_FLOOR = 0.75
"""P(requested) floor of a function call that writes a file the request orders changed by its
name (:func:`ordered_file`): above the default requested threshold (0.7)."""

_FILE_ORDER = (r"\b(?:create|creates|write|add|update|edit|change|modify|generate|make|put|"
               r"append|insert|rewrite|fix|amend|extend|expand|refresh)\b[^.;\n]{0,60}?"
               r"(?<![\w./-])")
_ONLY_CITED = re.compile(r"\b(?:described|mentioned|listed|explained|documented|according|"
                         r"per|following|based on|from|using|see|as in|says?|said)\b", re.I)
"""Words between the verb and the name that make the file a source, not the thing changed
("fix the bug described in CLAUDE.md")."""
_CITES = re.compile(r"\s+(?:says?|said|describes?|explains?|lists?|mentions?|suggests?|wants?|"
                    r"asks?|tells?|requires?|recommends?)\b", re.I)
_NEGATED = re.compile(r"\b(?:not|never|no|without|don'?t|do not|doesn'?t|won'?t)\b|n't\b",
                      re.I)


_INSTRUCTIONS = re.compile(
    r"\b(?:remember|memori[sz]e|note down)\b|" + _FILE_ORDER.replace("(?<![\\w./-])", "") +
    r"\b(?:(?:agent'?s?|project|your) (?:instructions|rules|memory|guidelines)|"
    r"instructions? file|memory file)\b", re.I)
_MCP_SETUP = re.compile(r"\b(?:add|configure|set ?up|install|enable|register|remove|disable)\b"
                        r"[^.;\n]{0,40}\bmcp\b", re.I)
_SAID_AS: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENT.md", "GEMINI.md",
                     ".cursorrules", ".windsurfrules"), _INSTRUCTIONS),
    ".mcp.json": _MCP_SETUP,
}
"""Files a request names by what they are rather than by name: the agent's instruction file
("remember that we use ruff", "update the agent instructions"), the project's MCP servers
("configure the github MCP server")."""


def ordered_file(request: str, arguments: Any) -> str | None:
    """The base name of a file a call writes (its path arguments) that the request orders
    changed by that name: a change verb, then the name within the same sentence ("create a
    CLAUDE.md file", "add the rule to AGENTS.md"), with no negation between or just before,
    or by what it is (:data:`_SAID_AS`); ``None`` otherwise. "read CLAUDE.md and fix the test"
    orders no change of CLAUDE.md."""
    import os

    from ctxgate.gate.effects.names import local_paths
    from ctxgate.gate.effects.paths import _home_dotfile, _system_dir

    if not isinstance(arguments, Mapping):
        return None
    for _key, path in local_paths(arguments):
        full = os.path.normpath(os.path.expanduser(path))
        if os.path.isabs(full) and (_home_dotfile(full) or _system_dir(full)):
            continue  # a dotfile or system file of the same name is not the one meant
        base = os.path.basename(path.rstrip("/"))
        if len(base) < 3 or not re.search(r"[._-]|[A-Z]", base):
            continue  # a bare word ("notes") is too easily said for another reason
        said = _SAID_AS.get(base)
        if said is not None:  # the file by what it is: "remember that …", "the MCP server"
            m = said.search(request)
            if m and not _NEGATED.search(request[max(0, m.start() - 24):m.end()]) and \
                    not _ONLY_CITED.search(m.group(0)):
                return base
        for m in re.finditer(_FILE_ORDER + re.escape(base) + r"(?![\w-])", request, re.I):
            before = request[max(0, m.start() - 24):m.start()]
            after = request[m.end():m.end() + 24]
            if not _NEGATED.search(before + m.group(0)) and not _ONLY_CITED.search(
                    m.group(0)) and not _CITES.match(after):
                return base
    return None


FORBIDDEN_CAP = 0.05
"""P(requested) ceiling of a call whose harmful action the request names only to forbid it
("look at the build directory but do not delete it"): below the ask band, so it is denied."""


def _stance(request: str, terms: Any, tool: str, args: Any, shell: bool) -> str | None:
    """:func:`~.heads.intent.action_stance` for the call's harmful actions."""
    from ctxgate.gate.backends.heads import features as ft
    from ctxgate.gate.backends.heads.intent import action_stance
    from ctxgate.gate.backends.heads.matching import (
        ACTIONS,
        ENDING,
        HARMFUL_ACTIONS,
        _actions_of,
        _words,
        name_action,
        request_actions,
    )

    extra: frozenset[str] = frozenset()
    if shell:
        text = ft.executed_text(tool, args)
        # what the table cannot see, said plainly: gh pr merge publishes to the remote, the
        # SQL a client runs deletes (psql -c 'DROP TABLE users')
        plain = frozenset({"push"} if _GH_MERGE.search(text) else ()) | frozenset(
            {"delete"} if _SQL_DELETES.search(text) else ())
        actions = (terms.actions | _actions_of(_words(text)) | plain) & HARMFUL_ACTIONS
        extra = plain - terms.actions
    else:
        actions = verb_action(tool) or frozenset(
            {name_action(tool, skip=AMBIGUOUS_VERBS)}) & HARMFUL_ACTIONS
    if not actions:
        return None
    stance = action_stance(request, actions)
    if "push" in actions and _LOCAL_ONLY.search(request) and \
            not ACTIONS["push"][0].search(request):
        return "forbidden"  # "merge feature-x into main locally" -> … && git push
    if stance is None and extra:  # what the table does not see (gh pr merge, SQL's DROP)
        asked = request_actions(_STATE_WORDS.sub(" ", request))
        if asked and not any((KIN.get(a) or {a}) & asked for a in extra):
            return "mentioned"  # "create a PR" -> gh pr create && gh pr merge
    if stance is None and _READS_ONLY.search(request) and \
            not request_actions(_READS_ONLY.sub(" ", request)) - {"read"} and \
            not ENDING.search(request):
        return "mentioned"  # "review PR 12" -> gh pr merge 12: it only asks to read
    return stance


_GH_MERGE = re.compile(r"\bgh\s+pr\s+merge\b")
_SQL_DELETES = re.compile(r"\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA)|TRUNCATE|DELETE\s+FROM)\b",
                          re.I)
_LOCAL_ONLY = re.compile(r"\blocal(?:ly)?\b|\bon my machine\b|\bwithout pushing\b|"
                         r"\bdon'?t push\b|\bdo not push\b", re.I)
"""A request that keeps the work on this machine: a push is no part of it."""
_READS_ONLY = re.compile(r"\b(review|inspect|look (?:at|up|into)|analy[sz]e|audit|examine|"
                         r"preview|read|show|list|check|summari[sz]e|describe|explain|"
                         r"what|which|how many)\b", re.I)
"""What a request says when it asks to read: with no other action stated, a call's harmful
action is no order."""

CHANGE_KIN: dict[str, frozenset[str]] = {
    "create": frozenset({"create", "edit", "copy", "send", "push"}),
    "edit": frozenset({"edit", "create", "delete", "kill", "undo", "move", "perms",
                       "archive", "copy"}),
}
"""Function calls only: a tool whose name creates or edits, under a request that states
actions none of which comes near it ("Retrieve a booking" → ``updateBooking``, "Delete a
security entry" → ``Table_CreateSecurityEntry``), is contradicted like a harmful action. An
edit is near almost any change (a PATCH is how many APIs cancel or remove), so it is
contradicted only by a request that only reads, sends or pays; a create by one that reads,
ends or moves. Shell commands keep the harmful actions alone (a local write is judged by the
path rules)."""

_STATE_WORDS = re.compile(
    r"\b(?:(?:is|are|be|been|being|was|were|remain|stay|already|not|an?)\s+(?:empty|clean|clear)\b"
    r"|empty\s+(?:files?|dir\w*|folders?|lines?|strings?|values?|fields?|ones?)\b)", re.I)
""""empty", "clean" and "clear" as states, not actions ("files which are empty", "is
already clean", "empty directories"; "clean directories" stays an order): for the
contradiction check they state no delete."""

def action_contradiction(request: str, terms: Any, tool: str, shell: bool) -> str | None:
    """The harmful action a call performs that the request, which states other actions, never
    asks for (``"delete; request states create, edit"``); ``None`` when there is no such
    contradiction."""
    from ctxgate.gate.backends.heads.matching import (
        ENDING,
        HARMFUL_ACTIONS,
        name_action,
        request_actions,
    )

    if shell:
        harmful = terms.actions & HARMFUL_ACTIONS
    else:
        first = name_action(tool, skip=AMBIGUOUS_VERBS)
        # the operation verb first (cancel_order cancels: a delete, not an order placed)
        harmful = verb_action(tool) or frozenset({first} & (HARMFUL_ACTIONS | CHANGE_KIN.keys()))
    if not harmful:
        return None
    asked = request_actions(_STATE_WORDS.sub(" ", request))
    if ENDING.search(request):
        asked |= {"delete", "kill"}
    if not asked or any((KIN.get(a) or CHANGE_KIN.get(a) or {a}) & asked for a in harmful):
        return None
    return f"{', '.join(sorted(harmful))}; request states {', '.join(sorted(asked))}"


_CLAUSE_SPLIT = re.compile(r"(?:[.!?;]+\s+|,\s+|\s*\n+\s*)")
MAX_CLAUSES = 8
"""Clauses of a request scored on their own (the first ones; a request is cut to a window)."""


def request_clauses(request: str) -> list[str]:
    """The clauses of a multi-clause request (split at sentence ends, semicolons, commas and
    newlines) that have at least two words, in order and without repeats; ``[]`` for a request
    of one clause (the whole request is scored anyway)."""
    parts = [p.strip(" \t\"'") for p in _CLAUSE_SPLIT.split(request[:4000])]
    out: list[str] = []
    for part in parts:
        if len(part.split()) >= 2 and part not in out and part != request.strip():
            out.append(part)
        if len(out) >= MAX_CLAUSES:
            break
    return out if len(out) > 1 or (out and out[0] != request.strip()) else []


INSTALL_HINT = "reinstall ctxgate (pip install --force-reinstall --no-deps ctxgate)"
"""What to do when the local model's files are missing or damaged; said by every such error."""


REQUIRED_PACKAGES: tuple[str, ...] = ()
"""Packages this backend needs beyond ctxgate's own dependencies: none (pure Python)."""


def require_installed() -> None:
    """Raise :class:`GateError` when a shipped model file is missing, before any call.

    Only looks the files up (hashes are checked when the model loads), so building the
    backend stays cheap.
    """
    from importlib import resources

    from ctxgate.gate.backends.modelfiles import MODEL_PACKAGE, ModelFileError
    from ctxgate.gate.backends.pins import PINNED_SHA256

    root = resources.files(MODEL_PACKAGE)
    missing = [name for name in sorted(PINNED_SHA256) if not root.joinpath(name).is_file()]
    if missing:
        raise ModelFileError(f"the local decision model's files {', '.join(missing)} are "
                             f"missing from {root}; {INSTALL_HINT}")


def from_policy(policy: Any = None) -> LocalDecisionModel:
    """The zero-configuration default (``[gate] backend = "local"``); the policy is unused.

    Raises:
        GateError: a shipped model file is missing (the message says how to repair it).
    """
    require_installed()
    return LocalDecisionModel()
