"""The shared Redis archive: several processes (hosts) see one archive; failures are clear."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from ctxgate.archive import Archive, ArchivePolicy, EntryMeta
from ctxgate.archive.stores.redis import RedisStore
from ctxgate.errors import StoreUnavailable

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture
def prefix() -> str:
    p = f"ctxgate-test-{uuid.uuid4().hex}:"
    yield p
    store = RedisStore.from_url(REDIS_URL, prefix=p)
    for key in store.client.scan_iter(match=f"{p}*"):
        store.client.delete(key)
    store.close()


def _env(tmp_path: Path, prefix: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXGATE_")}
    env.update(CTXGATE_HOME=str(tmp_path / "home-of-another-host"),
               CTXGATE_CONFIG=str(tmp_path / "none.toml"),
               CTXGATE_ARCHIVE__BACKEND="redis", CTXGATE_ARCHIVE__REDIS_URL=REDIS_URL,
               CTXGATE_ARCHIVE__REDIS_PREFIX=prefix)
    return env


def test_an_output_stored_by_one_process_expands_in_another(tmp_path: Path, prefix: str) -> None:
    env = _env(tmp_path, prefix)
    run = subprocess.run([sys.executable, "-m", "ctxgate", "run", "--", "seq", "1", "20000"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    entry = run.stdout.split("archive id ")[1].split(",")[0].strip()
    env["CTXGATE_HOME"] = str(tmp_path / "yet-another-host")  # no local state is needed
    view = subprocess.run([sys.executable, "-m", "ctxgate", "expand", entry, "--lines",
                           "12345:12345"], capture_output=True, text=True, env=env, timeout=60)
    assert view.returncode == 0, view.stderr
    assert "12345" in view.stdout
    policy = ArchivePolicy(backend="redis", redis_url=REDIS_URL, redis_prefix=prefix,
                           tokenizer="estimate")
    with Archive.open(tmp_path, policy) as archive:
        assert archive.read(entry) == "".join(f"{i}\n" for i in range(1, 20001)).encode()


def test_many_processes_write_one_redis_archive(tmp_path: Path, prefix: str) -> None:
    code = (
        "import sys\n"
        "from ctxgate.archive import Archive, ArchivePolicy, EntryMeta\n"
        f"p = ArchivePolicy(backend='redis', redis_url={REDIS_URL!r}, redis_prefix={prefix!r},"
        " tokenizer='estimate', chunk_bytes=4096)\n"
        "w = int(sys.argv[1])\n"
        "with Archive.open('.', p) as a:\n"
        "    for i in range(20):\n"
        "        data = (f'writer {w} entry {i} ' * (50 + i * 40)).encode()\n"
        "        e = a.put(data, EntryMeta(tool='t'))\n"
        "        assert a.read(e.id) == data\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w)]) for w in range(6)]
    assert [p.wait(timeout=180) for p in procs] == [0] * 6
    policy = ArchivePolicy(backend="redis", redis_url=REDIS_URL, redis_prefix=prefix,
                           tokenizer="estimate")
    with Archive.open(tmp_path, policy) as archive:
        entries = archive.list(limit=None)
        assert len(entries) == 120
        for w in range(6):
            for i in range(20):
                data = (f"writer {w} entry {i} " * (50 + i * 40)).encode()
                assert archive.read(archive.put(data, EntryMeta(tool="t")).id) == data
        assert archive.stats().entries == 120


def test_unreachable_redis_is_a_clear_store_error() -> None:
    with pytest.raises(StoreUnavailable, match="redis-cli ping"):
        RedisStore.from_url("redis://127.0.0.1:1/0")
    with pytest.raises(StoreUnavailable):
        Archive.open(Path("."), ArchivePolicy(backend="redis", redis_url="redis://127.0.0.1:1/0"))


def test_password_never_shown(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable) as info:
        RedisStore.from_url("redis://user:s3cret@127.0.0.1:1/0")
    assert "s3cret" not in str(info.value)
