"""The digest: metadata first, shape-fitting excerpts, omission map, hard byte budget."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgate.firewall import DigestContext, FirewallPolicy, OutputScanner, build_digest

from .helpers import build_log

CTX = DigestContext(tool="shell", archive_id="3fa9c2e1b2c4", expires_at=1_800_000_000.0,
                    command="cargo build", exit_code=101, tokens="9,000 tokens (o200k_base)",
                    reason="digest", detail="at least min_tokens (2,000) tokens")


def digest_of(data: bytes, policy: FirewallPolicy | None = None, ctx: DigestContext = CTX):
    policy = policy or FirewallPolicy()
    sc = OutputScanner(keep_bytes=max(policy.json_preview_max_bytes, 256_000),
                       long_line_bytes=policy.long_line_bytes,
                       line_max_bytes=policy.digest_line_max_bytes)
    for i in range(0, len(data), 65_536):
        sc.feed(data[i:i + 65_536])
    return build_digest(sc.close(), ctx, policy)


def test_header_first_with_every_fact() -> None:
    d = digest_of(build_log(3_000).encode())
    first, second = d.text.splitlines()[:2]
    assert first.startswith("[ctxgate digest: shell output, ")
    for fact in ("bytes", "3,000 lines", "9,000 tokens (o200k_base)", "exit 101"):
        assert fact in first
    assert "archive id 3fa9c2e1b2c4" in second and "expires 2027-01-15" in second
    assert "digest: at least min_tokens" in second
    assert d.text.splitlines()[2] == "$ cargo build"


def test_middle_error_is_shown_with_its_number_and_omission_map() -> None:
    # issue 11: a middle error is now shown as a labelled failure block (not a lone line in
    # the omission map); the head is shorter so the budget goes to the failure.
    d = digest_of(build_log(3_000, error_at=1_501).encode())
    assert "--- head: lines 1-2 ---" in d.text
    # a digest far below its target shows the block with the lines around it (a failure's
    # message often sits a few ordinary lines from the line that says "error")
    m = re.search(r"--- failure block: lines 1,501–1,501 \(compiler errors; 1 line; shown with "
                  r"lines ([\d,]+)–([\d,]+)\) ---", d.text)
    assert m, d.text
    lo, hi = (int(x.replace(",", "")) for x in m.groups())
    assert lo < 1_501 < hi
    assert "1501| src/lib.rs:12:5: error[E0308]: mismatched types" in d.text
    assert f"--- omitted: lines 3-{lo - 1:,} ({lo - 3:,} lines) ---" in d.text
    assert "--- tail: lines 2,999-3,000 ---" in d.text
    assert d.omitted_lines == ((3, lo - 1), (hi + 1, 2_998))
    assert d.hits_shown == 1  # the block's own lines, not those around it
    assert "ctxgate expand 3fa9c2e1b2c4 --lines 1481:1700" in d.text
    assert 'expand(id="3fa9c2e1b2c4", lines="1481:1700")' in d.text


def test_hits_capped_with_count_of_more() -> None:
    # issue 11: the cap now counts failure blocks (digest_error_lines caps them too)
    lines = [f"ok {i}" for i in range(1, 5_001)]
    for n in range(100, 4_000, 100):
        lines[n - 1] = f"error: failure number {n}"
    d = digest_of(("\n".join(lines) + "\n").encode(), FirewallPolicy(digest_error_lines=5))
    assert d.hits_shown == 5
    assert d.text.count("--- failure block: ") == 5
    assert "7 more failure block(s) not shown: ---" in d.text  # of the 12 windows kept
    assert "  100–200 (errors; 2 blocks): ctxgate expand 3fa9c2e1b2c4 --lines 100:200" in d.text
    assert "--grep" in d.text
    assert "3900| error: failure number 3900" in d.text  # the last one always


def test_twenty_lines_of_100kb_stay_small() -> None:
    data = b"".join(bytes([97 + i]) * 100_000 + b"\n" for i in range(20))
    d = digest_of(data)
    assert d.size_bytes <= FirewallPolicy().digest_max_bytes
    assert "…[+99,760 bytes]" in d.text  # each long line cut with its own marker
    assert "! longest line: 100,000 bytes" in d.text and "--bytes" in d.text


def test_single_giant_line_is_char_bounded() -> None:
    d = digest_of(b"x" * 1_000_000)
    assert d.form == "chars"
    assert "--- first " in d.text and "--- omitted: bytes " in d.text and "--- last " in d.text
    assert d.size_bytes <= 6_000


def test_ansi_and_controls_are_cleaned() -> None:
    data = "\n".join(f"\x1b[31mred {i}\x1b[0m\r" for i in range(3_000)).encode()
    d = digest_of(data)
    assert "\x1b" not in d.text and "\r" not in d.text
    assert "   1| red 0" in d.text


def test_binary_digest() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 400 + b"IHDR-tEXt-Comment-hello"
    d = digest_of(png)
    assert d.form == "binary"
    assert "[binary: PNG image; sha256 " in d.text
    assert "00000000  89 50 4e 47 0d 0a 1a 0a" in d.text
    assert "--bytes 0:4096" in d.text


def test_jsonl_too_large_for_a_whole_preview_is_sampled() -> None:
    data = "".join(json.dumps({"id": i, "v": "x" * 50}) + "\n" for i in range(200_000)).encode()
    d = digest_of(data, FirewallPolicy(json_preview_max_bytes=1_000_000))
    assert d.form == "jsonl"
    line = next(ln for ln in d.text.splitlines() if ln.startswith('{"preview"'))
    assert json.loads(line)["records"] == 200_000


def test_tight_budget_is_respected() -> None:
    policy = FirewallPolicy(digest_max_bytes=1_024)
    for data in (build_log(3_000, error_at=1_000).encode(), b"y" * 100_000,
                 json.dumps({"a": "b" * 10_000}).encode()):
        d = digest_of(data, policy)
        assert d.size_bytes <= 1_024
        assert d.text.startswith("[ctxgate digest:")


_LINE = st.one_of(
    st.text(max_size=80), st.text(min_size=200, max_size=3_000),
    st.just("error: boom"), st.just("Traceback (most recent call last):"),
    st.binary(max_size=50).map(lambda b: b.decode("latin-1")),
    st.just("\x1b[1;31mFAILED\x1b[0m"), st.just("é" * 700), st.just("😀" * 500),
)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_LINE, max_size=300), repeat=st.integers(1, 40),
       budget=st.integers(1_024, 8_000), newline=st.sampled_from(["\n", "\r\n"]))
def test_budget_never_exceeded_and_deterministic(lines, repeat, budget, newline) -> None:
    data = (newline.join(lines * repeat)).encode("utf-8", "surrogatepass")
    policy = FirewallPolicy(digest_max_bytes=budget)
    first = digest_of(data, policy)
    assert first.size_bytes <= budget
    assert first.text.startswith("[ctxgate digest:")
    again = digest_of(data, policy)
    assert again.text.encode() == first.text.encode()


def test_search_output_lists_matches_per_file() -> None:
    lines = [f"src/mod_{i % 7}.rs:{i}:    let field_{i} = read();" for i in range(1, 401)]
    ctx = DigestContext(tool="shell", archive_id="3fa9c2e1b2c4", command="grep -rn field src/",
                        group_by_file=True)
    d = digest_of(("\n".join(lines) + "\n").encode(), ctx=ctx)
    assert "matches per file (7 files, 400 matching lines): src/mod_1.rs (58)" in d.text
    assert "src/mod_0.rs (57)" in d.text  # every file is named, with its count


_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=2_000),
    lambda inner: st.lists(inner, max_size=20) | st.dictionaries(st.text(max_size=40), inner,
                                                                max_size=20),
    max_leaves=200,
)


@settings(max_examples=40, deadline=None)
@given(value=_JSON_VALUE, form=st.sampled_from(["doc", "lines", "noise"]),
       budget=st.integers(1_024, 6_000))
def test_json_shapes_stay_within_budget_and_valid(value, form: str, budget: int) -> None:
    if form == "doc":
        data = json.dumps(value)
    elif form == "lines":
        data = "\n".join(json.dumps(value) for _ in range(30))
    else:
        data = json.dumps(value) + "\n[exit:1]\n"
    d = digest_of(data.encode(), FirewallPolicy(digest_max_bytes=budget))
    assert d.size_bytes <= budget
    for line in d.text.splitlines():
        if line.startswith('{"preview"'):
            json.loads(line)  # a preview is always valid JSON
