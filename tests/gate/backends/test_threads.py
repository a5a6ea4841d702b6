"""One thread for numpy work: the local backend needs no BLAS; the pinning helpers still hold."""

from __future__ import annotations

import os
import subprocess
import sys

from ctxgate.gate.backends import threads


def test_a_decision_loads_no_blas_at_all():
    """The local model is pure Python: no numpy, so no BLAS/OpenMP pool to pin."""
    code = ("import sys; from ctxgate.gate.backends.local import LocalDecisionModel; "
            "m = LocalDecisionModel(); m.decide({'user_request': 'delete the build directory', "
            "'tool_call': {'tool': 'bash', 'arguments': {'command': 'rm -rf b'}}}, "
            "['destructive', 'requested']); m.decide({'user_request': 'email Dana', "
            "'tool_call': {'tool': 'send_email', 'arguments': {'to': 'd@example.com'}}}, "
            "['destructive', 'requested']); "
            "print(sorted(k for k in ('numpy', 'threadpoolctl', 'tokenizers', 'safetensors') "
            "if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


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
