"""An archive that fails while originals are stored never fails the bound (documented choice).

The result is a bound record without archive ids: each cut's ``archive_id`` is ``None``, its
``archive_error`` names the failure, and its marker says the full original was not stored.
Failures are real: writes to ``/dev/full`` (ENOSPC, a bare ``OSError``), and the real SQLite
archive under a file-size limit in a subprocess; ``ctxgate bound`` warns on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgate.bound import bound_record, parse_marker

from .helpers import turn


class DevFullArchive:
    """Stores each original as a file, in a place where every write fails with ENOSPC."""

    def put(self, data: bytes, meta: object):
        with open("/dev/full", "wb") as fh:
            fh.write(data)
            fh.flush()
        raise AssertionError("unreachable: /dev/full accepted a write")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_oserror_from_the_archive_gives_a_cut_without_id_and_the_reason() -> None:
    result = bound_record(turn("a" * 300_000, "b" * 300_000), max_bytes=100_000,
                          archive=DevFullArchive())
    assert len(result.cuts) == 2 and result.serialized_bytes <= 100_000
    for cut in result.cuts:
        assert cut.archive_id is None
        assert cut.archive_error == "OSError: [Errno 28] No space left on device"
        text = result.record["toolInvocations"][int(cut.path.split("/")[2])]["result"]
        marker = parse_marker(text)
        assert marker is not None and marker.archive_id is None
        assert text.endswith("; the full original was not stored]")
        assert result.marker(cut.path) == marker


SQLITE_UNDER_FSIZE = r"""
import json, resource, signal, sys
from pathlib import Path
from ctxgate.archive import Archive
from ctxgate.bound import bound_record
home = Path(sys.argv[1])
archive = Archive.open(home)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = (home / "archive.db").stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
result = bound_record({"toolInvocations": [{"result": "x" * 3_000_000}]}, max_bytes=100_000,
                      archive=archive)
print(json.dumps(result.to_dict()))
"""


def test_real_sqlite_archive_that_cannot_grow_gives_a_bound_without_ids(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", SQLITE_UNDER_FSIZE, str(tmp_path / "home")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["changed"] and report["serialized_bytes"] <= 100_000
    (cut,) = report["cuts"]
    assert cut["archive_id"] is None
    assert cut["archive_error"].startswith("StoreUnavailable: archive database ")
    assert "free disk space" in cut["archive_error"]  # says what to check


def test_cli_warns_and_still_prints_the_bounded_record(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "archive.db").write_bytes(b"this is not a database" * 100)  # garbled archive
    env = {**os.environ, "CTXGATE_HOME": str(home)}
    record = {"toolInvocations": [{"result": "y" * 300_000}]}
    proc = subprocess.run(["ctxgate", "bound", "--max-bytes", "50000"],
                          input=json.dumps(record).encode(), capture_output=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    text = out["toolInvocations"][0]["result"]
    assert parse_marker(text) is not None and parse_marker(text).archive_id is None
    assert b"ctxgate bound: warning:" in proc.stderr
    assert b"the full original was not stored" in proc.stderr
