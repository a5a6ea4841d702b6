"""Decision-model factories the hook subprocess tests load by ``module:attr`` spec.

They live beside the tests (not in src/) because they script answers: a test double for the
logic of the hook adapter, never the only test of the gate itself.
"""

from __future__ import annotations

import os
import time

from ctxgate.gate.backends.function import FunctionDecisionModel


def keyword_judge(policy):
    """Destructive when the command holds 'rm '; requested when the request says 'delete'."""

    def fn(state, questions):
        command = str(state["tool_call"]["arguments"])
        request = str(state.get("user_request", ""))
        return {"destructive": 0.95 if "rm " in command else 0.05,
                "requested": 0.9 if "delete" in request.lower() else 0.1}

    return FunctionDecisionModel(fn=fn, model_id="keyword-judge")


def eager(policy):
    """Every call destructive (d=0.95) and plainly requested (r=0.95): only the gate's own
    rules (effects, provenance) can stop one."""

    def fn(state, questions):
        return {"destructive": 0.95, "requested": 0.95}

    return FunctionDecisionModel(fn=fn, model_id="eager")


def hangs(policy):
    """Never answers in time."""

    def fn(state, questions):
        time.sleep(120)
        return {}

    return FunctionDecisionModel(fn=fn, model_id="hangs")


def broken(policy):
    """Raises on every call."""

    def fn(state, questions):
        raise RuntimeError("backend exploded")

    return FunctionDecisionModel(fn=fn, model_id="broken")


def tool_judge(policy):
    """Destructive for the filesystem server's writing tools; requested when the request
    says 'write'."""

    writing = {"write_file", "edit_file", "move_file", "create_directory"}

    def fn(state, questions):
        tool = state["tool_call"]["tool"]
        request = str(state.get("user_request", ""))
        return {"destructive": 0.9 if tool in writing else 0.05,
                "requested": 0.9 if "write" in request.lower() else 0.1}

    return FunctionDecisionModel(fn=fn, model_id="tool-judge")


def calm(policy):
    """A model that finds nothing destructive and nothing requested (d=0.05, r=0.1), like the
    heads on the calls issue 9 lists: whatever is denied, the effect rules denied it."""

    def fn(state, questions):
        return {"destructive": 0.05, "requested": 0.1}

    return FunctionDecisionModel(fn=fn, model_id="calm")


def wary(policy):
    """Destructive for everything (d=0.95); requested 0.9 when the request says 'please do',
    0.5 when it says 'maybe' (the ask band), else 0.1."""

    def fn(state, questions):
        request = str(state.get("user_request", "")).lower()
        requested = 0.9 if "please do" in request else 0.5 if "maybe" in request else 0.1
        return {"destructive": 0.95, "requested": requested}

    return FunctionDecisionModel(fn=fn, model_id="wary")


GIL_HOG_LETTERS = 28
"""Letters before the failing ``b``: each 2 more multiply the time by ~4 (28 ≈ 15 s here)."""


def gil_hog(policy):
    """Hangs inside one C call that holds the GIL: a catastrophically backtracking regex.

    ``re`` never releases the GIL and never checks for signals while it matches, so no other
    thread of this process (a watchdog timer) and no Python signal handler runs until it ends.
    """
    import re

    def fn(state, questions):
        re.match(r"(a+)+$", "a" * GIL_HOG_LETTERS + "b")
        return {"destructive": 0.01, "requested": 0.99}

    return FunctionDecisionModel(fn=fn, model_id="gil-hog")


def hangs_after_flag(policy):
    """Creates the file named by ``CTXGATE_TEST_DECIDING_FLAG`` when asked, then never answers:
    a test sees exactly when the decision is in progress."""

    def fn(state, questions):
        with open(os.environ["CTXGATE_TEST_DECIDING_FLAG"], "w", encoding="utf-8") as fh:
            fh.write(str(os.getpid()))
        time.sleep(120)
        return {}

    return FunctionDecisionModel(fn=fn, model_id="hangs-after-flag")
