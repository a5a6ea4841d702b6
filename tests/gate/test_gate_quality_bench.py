"""The whole-gate mode of ``benchmarks/gate_quality.py`` on a few held-out examples: the
table keeps its columns and its counts add up, so the benchmark cannot rot silently."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "gate_quality.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gate_quality_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def rate(cell: str) -> tuple[int, int] | None:
    """``" 12.5 % (1/8)"`` -> (1, 8); ``"—"`` -> None."""
    if cell.strip() == "—":
        return None
    m = re.fullmatch(r"\s*\d+\.\d % \((\d+)/(\d+)\)", cell)
    assert m, f"not a rate: {cell!r}"
    return int(m.group(1)), int(m.group(2))


def named_counts(cell: str) -> dict[str, int]:
    """``"fast path 2 · shell_parser 3"`` -> {"fast path": 2, "shell_parser": 3}."""
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in cell.split(" · "))):
        name, _, count = part.rpartition(" ")
        out[name] = int(count)
    return out


def test_whole_gate_table_columns_and_counts(bench) -> None:
    all_splits = dict(bench.whole_gate_splits(redcode=False))
    shell_pairs = all_splits["shell: held-out pairs (dcg packs + NL2Bash)"]
    picked = [
        # both labels of the shell held-out set, so every rate has a denominator
        ("shell: held-out pairs (dcg packs + NL2Bash)",
         [ex for ex in shell_pairs if ex.requested][:3]
         + [ex for ex in shell_pairs if ex.destructive and not ex.requested][:3]
         + [ex for ex in shell_pairs if not ex.destructive and not ex.requested][:2]),
        ("shell: traps / hidden writes, neutral request",
         all_splits["shell: traps / hidden writes, neutral request"][:4]),
        ("non-shell: ToolAlpaca pairs", all_splits["non-shell: ToolAlpaca pairs"][:5]),
        ("non-shell: MCP annotations (6 servers), neutral request",
         all_splits["non-shell: MCP annotations (6 servers), neutral request"][:4]),
        ("paraphrases + injected (hand-written)",
         all_splits["paraphrases + injected (hand-written)"][-2:]),
    ]
    assert sum(len(exs) for _, exs in picked) == 23
    gate = bench.WholeGate(bench.Judge())
    try:
        rows = bench.whole_gate_table(gate, picked)
    finally:
        gate.close()

    names = [row["set"] for row in rows]
    assert names[:len(picked)] == [name for name, _ in picked]
    assert "shell: all" in names and "non-shell: all" in names
    for row in rows:
        assert tuple(row) == bench.WHOLE_GATE_COLUMNS
        n = int(row["n"])
        allow, ask, deny = (int(x) for x in row["allow / ask / deny"].split(" / "))
        assert allow + ask + deny == n, row
        deciders = named_counts(row["decided by"])
        assert set(deciders) <= set(bench.DECIDERS), row
        assert sum(deciders.values()) == n, row
        fa_deny, fa_allow = rate(row["false allows (ask = deny)"]), \
            rate(row["false allows (ask = allow)"])
        fd_deny, fd_allow = rate(row["false denials (ask = deny)"]), \
            rate(row["false denials (ask = allow)"])
        if fa_deny is not None:
            assert fa_allow is not None and fa_deny[1] == fa_allow[1] <= n
            # counting ask as an allow can only add false allows
            assert fa_deny[0] <= fa_allow[0] <= fa_allow[1]
            assert sum(named_counts(row["false allows (ask = deny) decided by"]).values()) \
                == fa_deny[0]
        if fd_deny is not None:
            assert fd_allow is not None and fd_deny[1] == fd_allow[1] <= n
            assert fd_allow[0] <= fd_deny[0] <= fd_deny[1]
        model_fa, model_fd = (rate(x) for x in
                              row["model alone: false allows / false denials"].split(" / "))
        assert (model_fa and model_fa[1]) == (fa_deny and fa_deny[1])
        assert (model_fd and model_fd[1]) == (fd_deny and fd_deny[1])

    by_name = {row["set"]: row for row in rows}
    shell = by_name["shell: held-out pairs (dcg packs + NL2Bash)"]
    assert rate(shell["false allows (ask = deny)"])[1] == 3  # type: ignore[index]
    assert rate(shell["false denials (ask = deny)"])[1] == 3  # type: ignore[index]
    assert rate(shell["over-blocks"])[1] == 2  # type: ignore[index]
    # the totals are the sums of their splits
    shell_n = sum(len(exs) for name, exs in picked if name.startswith("shell:"))
    assert int(by_name["shell: all"]["n"]) == shell_n == 12
    assert int(by_name["non-shell: all"]["n"]) == 9
    # non-shell examples never reach the fast path or the shell parser
    assert not {"fast path", "shell_parser"} & set(named_counts(
        by_name["non-shell: all"]["decided by"]))


def test_materialised_paths_hold_work_of_value(bench, tmp_path: Path) -> None:
    """The whole-gate mode creates what a shell example names, committed and then changed, so
    a delete or overwrite there loses uncommitted work (and an edit stays recoverable)."""
    from ctxgate.gate.effects.model import EffectClass
    from ctxgate.gate.effects.shell import shell_effect

    assert bench.named_paths("rm -f *.bak notes.txt") == {"old.bak": False, "notes.txt": False}
    assert bench.named_paths("find build -name '*.o' -delete") == {"build": True,
                                                                   "build/old.o": False}
    assert bench.named_paths("> out.log") == {"out.log": False}
    assert bench.named_paths("git log --output=README.md") == {"README.md": False}
    assert bench.named_paths("cat ~/.bashrc /etc/hosts") == {}  # never outside the tree
    assert bench.named_paths("echo 'rm -rf x'") == {}
    paths = bench.named_paths("rm -f *.bak && sed -i 's/a/b/' src/x.py")
    bench.materialise(tmp_path, paths)
    assert (tmp_path / "old.bak").read_text() == "committed work\nuncommitted work\n"
    deleted = shell_effect("rm -f *.bak", cwd=str(tmp_path))
    assert deleted is not None and deleted.effect is EffectClass.LOCAL_IRREVERSIBLE
    edited = shell_effect("sed -i 's/a/b/' src/x.py", cwd=str(tmp_path))
    assert edited is not None and edited.effect is EffectClass.LOCAL_RECOVERABLE


def test_every_rule_based_effect_source_has_a_decider_column(bench) -> None:
    """A verdict settled by a source the table does not list would vanish from "decided by"
    (code_scan did, the round it was added)."""
    from ctxgate.gate.effects.model import EffectSource

    rule_sources = {s.value for s in EffectSource} - {"learned", "fast_path"}
    assert rule_sources == set(bench.RULE_DECIDERS)
