"""The local backend runs numpy on one thread: BLAS/OpenMP pools pinned to 1 while it decides."""

from __future__ import annotations

import os
import subprocess
import sys

from ctxgate.gate.backends import threads
from ctxgate.gate.backends.local import LocalDecisionModel


def test_pools_are_one_thread_during_a_decision_and_restored_after():
    pytest_threadpoolctl = __import__("threadpoolctl")
    model = LocalDecisionModel()
    enc = model._parts()[0]
    seen = []
    real = enc._encode

    def spy(texts):
        seen.append(threads.state())
        return real(texts)

    enc._encode = spy
    try:
        with pytest_threadpoolctl.threadpool_limits(limits=2):
            model.decide({"user_request": "delete the build directory",
                          "tool_call": {"tool": "bash", "arguments": {"command": "rm -rf b"}}},
                         ["destructive", "requested"])
            after = threads.state()
    finally:
        del enc._encode
    assert seen and all(s["threadpoolctl"] for s in seen)
    assert all(p["num_threads"] == 1 for s in seen for p in s["pools"])
    assert any(s["pools"] for s in seen)
    assert [p["num_threads"] for p in after["pools"]] == [2] * len(after["pools"])


def test_environment_is_pinned_before_numpy_loads_unless_the_user_chose():
    code = ("import os, sys; from ctxgate.gate.backends.local import LocalDecisionModel; "
            "assert 'numpy' not in sys.modules; LocalDecisionModel(); "
            "print(os.environ['OMP_NUM_THREADS'], os.environ['OPENBLAS_NUM_THREADS'], "
            "os.environ['MKL_NUM_THREADS'], os.environ['TOKENIZERS_PARALLELISM'])")
    env = {k: v for k, v in os.environ.items() if k not in threads.PINNED_ENV}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.split() == ["1", "1", "1", "false"]
    env["OMP_NUM_THREADS"] = "3"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.split()[0] == "3"


def test_nested_and_concurrent_limits_share_one_restore():
    import threadpoolctl

    with threadpoolctl.threadpool_limits(limits=2):
        with threads.single_thread():
            with threads.single_thread():
                inner = threads.state()
            still = threads.state()
        after = threads.state()
    assert all(p["num_threads"] == 1 for p in inner["pools"] + still["pools"])
    assert all(p["num_threads"] == 2 for p in after["pools"])
