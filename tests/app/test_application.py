"""The application object: built from settings, lazy, and the same answers as the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxgate import App
from ctxgate.archive import Archive, EntryMeta
from ctxgate.errors import EntryNotFound, StoreUnavailable


def test_building_one_opens_nothing_and_imports_nothing_heavy() -> None:
    code = (
        "import sys; from ctxgate.app import App; c = App(); "
        "print(sorted(m for m in ('ctxgate.settings', 'ctxgate.gate.gate', "
        "'ctxgate.archive.archive', 'typer', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_settings_override_the_configuration(clean_environ: Path) -> None:
    cg = App.from_settings(firewall={"min_tokens": 1234}, gate={"backend": None})
    assert cg.config.firewall.min_tokens == 1234
    assert cg.config.home == clean_environ


def test_expand_list_search_read(clean_environ: Path, tmp_path: Path) -> None:
    with Archive.open(clean_environ) as archive:
        entry = archive.put(
            b"".join(b"row %d\n" % i for i in range(1, 51)), EntryMeta(tool="shell", command="seq")
        )
    with App() as cg:
        assert cg.expand(entry.short_id, lines="2:3").text.splitlines()[1:] == [
            "2| row 2",
            "3| row 3",
        ]
        assert [e.id for e in cg.list()] == [entry.id]
        assert [h.line for h in cg.search("row 42").hits] == [42]
        with pytest.raises(EntryNotFound):
            cg.expand("0000aaaa")
    page = tmp_path / "notes.txt"
    page.write_text("one\ntwo\nthree\n", encoding="utf-8")
    assert "two" in App().read(str(page), lines="2:2").text


def test_the_gate_is_built_once_and_only_when_asked(clean_environ: Path) -> None:
    cg = App(settings={"gate": {"backend": "tests.integrations.scripted_backends:calm"}})
    assert cg._gate is None
    gate = cg.gate
    assert gate is cg.gate  # one assembly per object
    assert App(gated=False).gate is None


def test_check_answers_a_read_only_call_without_a_model(clean_environ: Path) -> None:
    # `ls` is decided by the read-only fast path: no decision model is loaded
    verdict = App().check("bash", {"command": "ls -la"})
    assert verdict.outcome == "allow" and verdict.fast_path


def test_run_and_firewall_go_on_without_a_usable_archive(clean_environ: Path) -> None:
    clean_environ.mkdir(parents=True, exist_ok=True)
    (clean_environ / "archive.db").mkdir()  # not a database: the archive cannot open
    import io

    out = io.BytesIO()
    result = App().run(["sh", "-c", "echo hi"], stdout=out, stderr=out)
    assert result.exit_code == 0 and b"hi" in out.getvalue()
    with pytest.raises(StoreUnavailable):  # the strict archive does raise
        App().list()
    assert App().firewall("bash", "small output").text in (None, "small output")
