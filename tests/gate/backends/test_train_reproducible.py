"""scripts/train_heads.py fits a head to byte-identical output, run after run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

FIT = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import train_heads as th
rng = np.random.default_rng(7)
n = 120
x = np.hstack([rng.normal(size=(n, 5)), np.ones((n, 1))])
y = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.5, size=n) > 0).astype(float)
rows = [{"split": ("train", "train", "train", "calib", "heldout")[i % 5]} for i in range(n)]
variants = {"all": np.ones(6, bool), "first": np.array([1, 0, 0, 0, 0, 1], bool)}
head, _ = th.train_head("tiny", rows, x, y, variants)
sys.stdout.write(json.dumps(head, indent=1))
"""


def test_head_fitting_is_byte_identical_across_processes():
    outs = [subprocess.run([sys.executable, "-c", FIT, str(ROOT / "scripts")],
                           capture_output=True, text=True, check=True, timeout=120).stdout
            for _ in range(2)]
    assert outs[0] == outs[1]
    assert '"variant": "all"' in outs[0] and '"heldout"' in outs[0]


def test_training_reads_no_agent_security_benchmark():
    """RedCode, AgentDojo, InjecAgent, ToolEmu are for measuring only."""
    for script in ("train_heads.py", "gate_data.py"):
        text = (ROOT / "scripts" / script).read_text().lower()
        for name in ("redcode-exec", "redcode_", "agentdojo", "injecagent", "toolemu"):
            assert name not in text, (script, name)
