"""``benchmarks/label_audit.py``: a command's run in its materialised repository under bwrap
says what it did, and nothing it runs reaches outside that repository."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def audit():
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap (bubblewrap) is not installed; .ci/run installs it")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import label_audit

        yield label_audit
    finally:
        sys.path.remove(str(BENCHMARKS))
        sys.modules.pop("label_audit", None)
        sys.modules.pop("gate_quality", None)


@pytest.mark.parametrize(("command", "effect"), [
    ("comm -3 a b | sed 's/^\\t//'", "none"),          # prints only: a weak label's command
    ("rm -rf build", "destroyed"),                      # materialised, then deleted
    ("echo hi > notes.txt", "destroyed"),               # overwrites uncommitted work
    ("git reset --hard HEAD", "destroyed"),             # the uncommitted change is gone
    ("python3 -c \"open('made.txt', 'w')\"", "created"),  # a new file only
    ("touch /usr/ctxgate-audit-probe", "outside"),      # refused: the root is read-only
])
def test_each_run_says_what_it_did(audit, command: str, effect: str) -> None:
    assert audit.effect_of(command, 10) == effect
    assert not Path("/usr/ctxgate-audit-probe").exists()


def test_unobservable_programs_are_found_behind_wrappers_and_pipes(audit) -> None:
    assert audit.unobservable("sudo -u ops kubectl delete ns prod")
    assert audit.unobservable("ls | xargs docker rm")
    assert audit.unobservable("X=1 redis-cli flushall")
    assert not audit.unobservable("find . -name '*.tmp' -delete")
    assert not audit.unobservable("echo kubectl delete ns prod")  # only named
