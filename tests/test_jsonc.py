"""ctxgate._jsonc gives exactly what json gives (the daemon digests and compares its output)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctxgate import _jsonc

SAMPLES = [
    {
        "a": 1,
        "b": [1.5, 1e300, -0.0, float("inf"), float("-inf")],
        "d": None,
        "e": True,
        "c": 'é\u2603\ud800x\x00\n"\\',
        "z": {"y": [], "x": {}},
        "big": 12345678901234567890,
    },
    {
        "protocol": 3,
        "identity": {"path": ["/a", "/b"], "env": {"CTXGATE_HOME": "/x"}},
        "op": "pre",
        "env": {"K": "v\n\t"},
    },
    [1, 2, 3],
    "str\u00e9",
    0.1,
    None,
]


@pytest.mark.parametrize("value", SAMPLES)
def test_dumps_and_loads_equal_json(value: object) -> None:
    for sort_keys in (False, True):
        for ensure_ascii in (False, True):
            assert _jsonc.dumps(
                value, sort_keys=sort_keys, ensure_ascii=ensure_ascii
            ) == json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    text = json.dumps(value)
    assert repr(_jsonc.loads(text)) == repr(json.loads(text))
    assert repr(_jsonc.loads(f" \n{text}\t")) == repr(json.loads(text))


@pytest.mark.parametrize("bad", ["", "{", "[1,]", "{} x", "nan", "  ", '{"a": 1}{}'])
def test_malformed_input_raises_what_json_raises(bad: str) -> None:
    with pytest.raises(json.JSONDecodeError) as mine:
        _jsonc.loads(bad)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(bad)
    assert str(mine.value) == str(theirs.value)
    with pytest.raises(TypeError):
        _jsonc.dumps({"a": object()})


def test_it_imports_neither_json_nor_re() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from ctxgate import _jsonc; "
        "_jsonc.loads(_jsonc.dumps({'a': [1, 2.5, 'x']})); "
        "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules))"
    )
    src = str(__import__("pathlib").Path(_jsonc.__file__).resolve().parent.parent)
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, src],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert out.strip() == "[]"
