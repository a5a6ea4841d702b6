"""ctxgate.firewall.fileread: explicit reads are the file's lines, paged under a token ceiling."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from ctxgate.errors import UsageError
from ctxgate.firewall.fileread import read_file
from ctxgate.tokens import count_tokens


def _body(view) -> list[str]:
    lines = view.text.splitlines()[1:]
    return lines[:-1] if lines and lines[-1].startswith("next: ") else lines


def test_whole_small_file_and_line_ranges(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 101)))
    whole = read_file(str(f))
    assert _body(whole) == [f"line {i}" for i in range(1, 101)]
    assert whole.next_lines is None and whole.total_lines == 100
    assert "lines 1-100 of 100" in whole.text.splitlines()[0]
    assert _body(read_file(str(f), lines="10:12")) == ["line 10", "line 11", "line 12"]
    assert _body(read_file(str(f), lines="-2:")) == ["line 99", "line 100"]
    assert _body(read_file(str(f), lines="100")) == ["line 100"]
    assert _body(read_file(str(f), lines="200:")) == []
    with pytest.raises(UsageError, match="1-based"):
        read_file(str(f), lines="0:3")
    with pytest.raises(UsageError, match="start comes after the end"):
        read_file(str(f), lines="9:3")


def test_pages_stop_at_the_token_ceiling_on_a_line_and_chain(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    rows = [f"row {i} " + "lorem ipsum dolor " * 12 for i in range(3_000)]
    f.write_text("\n".join(rows) + "\n")
    seen: list[str] = []
    lines = None
    for _ in range(100):
        view = read_file(str(f), lines=lines, max_tokens=5_000)
        body = _body(view)
        assert view.tokens <= 5_000
        assert count_tokens("\n".join(body) + "\n").count <= 5_000 + len(body)
        seen += body
        if view.next_lines is None:
            break
        assert f'lines="{view.next_lines}"' in view.text
        lines = view.next_lines
    assert seen == rows  # every line exactly once, none cut


def test_a_single_line_over_the_ceiling_is_still_shown(tmp_path: Path) -> None:
    f = tmp_path / "one.txt"
    f.write_text("word " * 20_000 + "\nnext\n")
    view = read_file(str(f), max_tokens=1_000)
    assert _body(view)[0].startswith("word word") and view.next_lines == "2:"


def test_long_lines_are_cut_in_bounded_memory(tmp_path: Path) -> None:
    f = tmp_path / "long.txt"
    f.write_bytes(b"a" * 5_000_000 + b"\nshort\n")
    view = read_file(str(f), max_tokens=100_000)
    body = _body(view)
    assert len(body[0]) == 64 * 1024 and body[1] == "short"
    assert "1 line(s) longer than 65,536 bytes cut" in view.text


def test_errors_say_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="no such file"):
        read_file(str(tmp_path / "nope.txt"))
    with pytest.raises(UsageError, match="is a directory"):
        read_file(str(tmp_path))
    blob = tmp_path / "x.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(UsageError, match="binary file"):
        read_file(str(blob))
    with pytest.raises(UsageError, match="max_tokens"):
        read_file(str(blob), max_tokens=0)
    locked = tmp_path / "locked.txt"
    locked.write_text("secret\n")
    real_open = builtins.open

    def deny(path, *a, **kw):  # root reads anything: the error path is exercised directly
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", deny)
    with pytest.raises(UsageError, match="permission denied"):
        read_file(str(locked))


def test_latin1_text_is_shown_decoded_with_a_note(tmp_path: Path) -> None:
    f = tmp_path / "latin.log"
    f.write_bytes("Übersetzung fehlgeschlagen: café résumé\n".encode("latin-1") * 400)
    view = read_file(str(f), lines="1:1")
    assert _body(view) == ["Übersetzung fehlgeschlagen: café résumé"]
    assert "cp1252" in view.text.splitlines()[0]


def test_cli_hint_names_the_cli_command(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_text("x y z\n" * 5_000)
    view = read_file(str(f), max_tokens=100, cli=True)
    assert f"next: ctxgate read {f} --lines {view.next_lines}" in view.text
