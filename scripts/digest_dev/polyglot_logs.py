"""Own-source development corpus of real polyglot CI failure logs with labelled failure lines.

What it is for: tuning and checking the block digest on CI logs of other ecosystems than Maven
(see ``maven_logs.py``) without touching any held-out evaluation data. Every case is a small
generated project (Python, Rust, C/C++ or JavaScript) into which one failure is injected; it
is really built and tested, offline, inside one bash "CI job" whose stdout+stderr are captured
byte for byte: a banner, a preamble of real commands (tool versions, a fixed ``uname -a``
string, ``env | sort`` over the job's fixed CI-like environment, ``ls -la``, a
``find . -type f`` listing, sometimes thousands of lines of real listings such as ``pip list``,
``find /usr/include -name '*.h'`` or ``dpkg -l``), the build, sometimes a post-failure step
(cache save/cleanup with ``du``, ``find``, ``ls -laR`` and "Uploading artifacts" lines) and a
final CI line in the style of the CI flavour (GitHub Actions, GitLab, Jenkins, Travis). The
environment is fixed (never this machine's): ``env`` prints nothing private.

Failure kinds (``kind`` in meta.json; spread round-robin over the cases):

* ``pytest``: ``python3 -m pytest -p no:cacheprovider -p no:randomly`` with varied ``-v``/``-q``,
  ``--tb=short|long``, ``-x``, ``-rA``, ``-s``, live logs; 20-400 passing tests and 1-3 failing
  ones: dict/list/multi-line string comparisons, exceptions raised deep in a recursion (also
  chained ``raise ... from``), a fixture error (``ERROR at setup of``), a failing
  ``parametrize`` case. Passing tests print log noise and decoys ("ERROR ... retrying",
  tracebacks of handled exceptions via ``logging.exception``, DeprecationWarnings). ``CI`` and
  ``BUILD_NUMBER`` are left out of the job environment so pytest's output does not depend on
  them;
* ``unittest``: ``python3 -m unittest`` (``-v`` or plain, ``discover``, ``-b``): failures
  (assertEqual diffs, assertTrue messages, "not raised", a failing ``subTest``) and errors
  (exceptions deep in a recursion); passing tests log to stderr with decoys;
* ``cargo``: a ``cargo new --lib`` crate (std only) built with ``cargo build --offline`` and/or
  ``cargo test --offline`` (``--no-fail-fast``, ``-q``, ``--verbose``, ``--show-output``,
  ``--test-threads=1``, always when a test binary has two or more panicking tests, since libtest
  reports failures in completion order; ``RUST_BACKTRACE`` 0 or 1; one shared
  ``CARGO_TARGET_DIR``, wiped at the start of a run): failing ``assert_eq!``/``assert!`` with
  messages, ``unwrap`` on None/Err and ``panic!`` deep in a recursion, in unit or integration
  tests; or compile errors (mismatched types, unresolved name, wrong argument count) with
  rustc's multi-line diagnostics among decoy warnings;
* ``make``: a C (gcc) or C++ (g++) project built by ``make`` (``-k`` sometimes) with many
  ``-Wall -Wextra`` warnings in other files: compile errors (undeclared identifier,
  incompatible types, missing ``;``, for C++ also a "no match for operator<<" with its long
  candidate notes), link errors (undefined reference), or a test runner that prints many
  ``PASS:`` lines and ``FAIL: ...`` lines (exit 1) or fails an ``assert()`` (abort);
* ``node``: ``node --test`` (built-in runner, ``--test-reporter=tap`` or ``spec``): failing
  ``strictEqual``/``deepStrictEqual`` (with diff lines), ``assert.ok`` messages, missing
  expected exceptions and a TypeError thrown deep in a call stack, among passing tests that
  print ``console.log`` noise and handled error stacks.

Labels (``groundtruth``: ``DEFAULT`` then ``E a-b`` ranges, 1-based ``\\n``-counted lines,
inclusive) mark the lines a developer needs to identify and understand the injected failure.
They are found by parsing the produced log with knowledge of what was injected (names of the
failing tests, files and lines of the injected errors, missing symbols); blank lines are never
labelled. Labelled:

* a failing test's report as the tool prints it: pytest's section from the ``____ test_x ____``
  (or ``ERROR at setup of ...``) header to the next header or ``Captured ...`` subsection,
  unittest's block from ``FAIL:``/``ERROR:`` to the next rule line, cargo's ``---- t stdout
  ----`` header and the panic report from ``thread '...' panicked at`` to the section end
  (message, left/right, notes, backtrace), a TAP ``not ok`` line with its YAML block, a spec
  ``✖`` line with its error block and its repetition under "failing tests" with the ``test at
  ...`` line, the test runner's ``FAIL:`` lines (with their detail lines) and ``Assertion ...
  failed.`` line; a failing node suite's ``not ok``/``✖`` line (and TAP block) is labelled like
  a test's;
* compiler errors with their attached lines: the ``In function`` line before a gcc error, the
  source excerpt and caret lines, attached notes (with their ``In file included from``
  lines) and the rest of g++'s diagnostic tree ("required from here", "In substitution of",
  an error nested in a system header), rustc's whole error block (``-->`` location, excerpt,
  ``= note``/``help`` lines); linker ``in function``/``undefined reference`` lines and
  ``collect2: error: ld returned ...``;
* summary lines that state the failure: pytest's ``N failed, M passed ...`` and short-summary
  ``FAILED``/``ERROR`` lines (with continuation lines) and ``stopping after N failures``,
  unittest's ``FAILED (failures=..)``, cargo's ``test result: FAILED. ...`` and the failing
  names under its second ``failures:``, node's ``# fail N``/``ℹ fail N``, the test runner's
  ``N tests, P passed, F failed``;
* the tool's own failure exit lines: ``make: *** [...] Error N``/``Aborted``, ``make: Target
  '...' not remade because of errors.``, cargo's ``error: test failed, to rerun pass ...``,
  ``error: N targets failed:`` with its list, ``error: could not compile ...`` (with the
  ``Caused by:`` lines ``--verbose`` adds).

Not labelled: progress/status lines (``test_x FAILED [ 12%]``, ``test x ... FAILED``, dots),
section banners without a test name (``=== FAILURES ===``, the first cargo ``failures:``,
``✖ failing tests:``, unittest's ``====``/``----`` rules, TAP ``# Subtest:`` and spec ``▶``
lines), output printed by the tests themselves (pytest's ``Captured stdout/log`` subsections,
unittest's ``Stdout:`` blocks, the lines before the panic in a cargo report), decoys, warnings
(also those caused by an injected error), generic help (``For more information about this
error ...``), the preamble, the post-failure step and the final CI line.

Every case is checked: exit status non-zero, exactly the injected failures appear (failing
test names and summary counts, error locations, undefined symbols), every labelled line exists
and is non-blank, no ``\\r`` in the log, and no sign of an unexpected failure (missing tool or
module, timeout). A case that fails a check is reported with ``PROBLEM`` and replaced by a
case built from the next seed. The same seed gives the same project and the same labels
(timings, file dates, thread ids and object addresses in the log may differ).

Output (read by ``benchmarks/digest_recall.py``)::

    OUT/polyglot/<case>/fail.log      the full console log, bytes as produced
    OUT/polyglot/<case>/groundtruth   DEFAULT, then one "E a-b" line per labelled range
    OUT/polyglot/<case>/meta.json     kind, seed, tool versions, failing tests, line counts, ...

Run (about 1 s per case on 2 cores: 48 cases in under a minute)::

    python3 scripts/digest_dev/polyglot_logs.py [--out /work/cache/digest-dev] [-n 48] [--seed 1]
    python3 benchmarks/digest_recall.py /work/cache/digest-dev --per-case

``digest_recall.py`` reads ``DATA/<group>/<case>``: given ``/work/cache/digest-dev`` it
reports this corpus together with the Maven one; for this corpus alone point it at a
directory that holds only a ``polyglot`` link to ``OUT/polyglot``.

Tools used as installed here (no network): python3 with pytest, cargo/rustc (std only), gcc,
g++, GNU make, node's built-in test runner; their versions are recorded in meta.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

from corpus import groundtruth, log_lines, prepare_out, sh_quote, wrong

DEFAULT_OUT = Path("/work/cache/digest-dev")
GENERATOR = "scripts/digest_dev/polyglot_logs.py"
KINDS = ("pytest", "unittest", "cargo", "make", "node")

ORGS = ("acme", "example", "initech", "globex", "contoso", "umbrella", "hooli", "wayne")
DOMAINS = ("billing", "inventory", "ledger", "shipping", "catalog", "payments", "search",
           "auth", "reporting", "scheduler", "notify", "pricing", "orders", "audit", "metrics")
ROLES = ("core", "api", "store", "service", "engine", "client", "model", "batch")
TOPICS = ("totals", "labels", "series", "records", "reports", "lookup", "rounding", "retry",
          "cache", "config", "import", "export", "ratios", "accounts", "sync", "pipeline")
UNITS = ("parse", "store", "report", "series", "checksum", "config", "queue", "format", "cache",
         "index", "rounding", "audit", "ledger", "batch", "merge", "export")
VERBS = ("computes", "handles", "rejects", "accepts", "builds", "resolves", "keeps", "loads",
         "retries", "formats", "sums", "reports", "validates", "maps")
NOUNS = ("total", "batch", "empty_input", "large_batch", "label", "series", "report", "timeout",
         "defaults", "rounding", "checkpoint", "cache", "offsets", "ledger")
COMPONENTS = ("sync", "worker-1", "worker-2", "http", "db-pool", "scheduler", "cache", "importer",
              "exporter", "auth", "queue")
HOSTS = ("db-primary.internal:5432", "10.0.3.7:6379", "api.payments.internal:443",
         "kafka-2.internal:9092", "s3.eu-west-1.amazonaws.com:443")
BRANCHES = ("main", "develop", "feature/ledger-sync", "release/2.4", "fix/retry-backoff")
# Log noise printed by passing tests (level, message with {n}); the ERROR ones are decoys.
MESSAGES = (
    ("INFO", "processed batch {n} (240 records) in 35 ms"),
    ("INFO", "GET /api/v1/items?page={n} 200 12ms"),
    ("DEBUG", "cache lookup key=item:{n} hit=true"),
    ("INFO", "checkpoint {n} written"),
    ("WARN", "slow query detected: {n} ms (threshold 250 ms)"),
    ("ERROR", "connection to upstream failed: timeout after {n} ms, retrying"),
    ("INFO", "retry {n}/3 succeeded"),
    ("DEBUG", "flushed {n} entries to disk"),
    ("WARN", "deprecated config key 'pool.size' used (value {n})"),
    ("ERROR", "failed to acquire lock on shard {n}, will retry"),
    ("INFO", "scheduled job sync-{n} finished"),
    ("INFO", "worker heartbeat seq={n}"),
)

BAD_SIGNS = ("command not found", "No module named", "ModuleNotFoundError", "ImportError while",
             "error: no such command", "failed to download", "could not find `Cargo.toml`",
             "No rule to make target", "Cannot find module", "Segmentation fault",
             "ERR_MODULE_NOT_FOUND", "no tests ran", "Killed", "internal compiler error",
             "Timeout >", "cancelled 1")


# --------------------------------------------------------------------------- shared model


@dataclass
class Model:
    """Constants of one generated code base and Python twins of its functions."""

    mul: int
    offset: int
    step: int
    mod: int
    tag: str
    keys: list[str]
    table: dict[str, int]
    missing: str

    def compute(self, a: int, b: int) -> int:
        return a * self.mul + b + self.offset

    def depth_sum(self, n: int) -> int:
        return self.offset + n * self.step

    def label(self, i: int) -> str:
        return f"{self.tag}-{i:03d}"

    def series(self, n: int) -> list[int]:
        return [(i * self.step + self.offset) % self.mod for i in range(n)]

    def series_sum(self, n: int) -> int:
        return sum(self.series(n))

    def record(self, i: int) -> dict:
        return {"id": i, "label": self.label(i), "total": self.compute(i, 3),
                "tags": [self.tag, self.keys[i % len(self.keys)]]}

    def report(self, n: int) -> str:
        return "\n".join(f"{self.label(i)}: {self.compute(i, 1)}" for i in range(n))


def make_model(rng: Random, tag: str) -> Model:
    keys = rng.sample(("eu", "us", "apac", "retail", "b2b", "promo", "archive", "draft",
                       "north", "south", "east", "west"), rng.randint(3, 5))
    table = {k: rng.randint(10, 900) for k in keys}
    missing = rng.choice(("latam", "legacy", "mena", "wholesale", "staging"))
    return Model(mul=rng.randint(3, 19), offset=rng.randint(1, 40), step=rng.randint(2, 13),
                 mod=rng.randint(17, 97), tag=tag, keys=keys, table=table, missing=missing)


def wrong_str(rng: Random, s: str) -> str:
    """``s`` with one digit changed (or a suffix added when it has none)."""
    digits = [i for i, c in enumerate(s) if c.isdigit()]
    if not digits:
        return s + "-v2"
    i = rng.choice(digits)
    return s[:i] + str((int(s[i]) + rng.randint(1, 8)) % 10) + s[i + 1:]


def wrong_list(rng: Random, xs: list[int]) -> list[int]:
    out = list(xs)
    i = rng.randrange(len(out))
    out[i] = wrong(rng, out[i])
    return out


def wrong_record(rng: Random, rec: dict) -> dict:
    out = json.loads(json.dumps(rec))
    field_ = rng.choice(("total", "label", "tags"))
    if field_ == "total":
        out["total"] = wrong(rng, out["total"])
    elif field_ == "label":
        out["label"] = wrong_str(rng, out["label"])
    else:
        out["tags"] = [out["tags"][0], rng.choice(("eu", "us", "apac", "b2b", "promo")) + "x"]
    return out


def noise_seed(rng: Random) -> int:
    return rng.randint(1, 2**30)


@dataclass
class Failure:
    """One injected failure: a failing test (``test``) or a compile/link error."""

    test: str  # failing test id as the tool names it, or the file of a compile error
    how: str
    result: str = "failed"  # failed | error | compile | link
    header: str = ""  # report header text (pytest) or suite chain (node) etc.
    order: int = 0
    line: int = 0  # expected error line (compile errors)
    extra: dict = field(default_factory=dict)


@dataclass
class Case:
    name: str
    kind: str
    seed: int
    size: str
    project: str
    files: dict[str, str] = field(default_factory=dict)
    build: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    script: dict = field(default_factory=dict)
    noise: int = 0  # lines of log noise planned for the listings of the preamble
    new_crate: str = ""  # cargo: crate made with `cargo new` before the files are written


def sized(rng: Random, size: str, small: tuple[int, int], medium: tuple[int, int],
          large: tuple[int, int]) -> int:
    return rng.randint(*{"small": small, "medium": medium, "large": large}[size])


def spread(rng: Random, budget: int, slots: int) -> list[int]:
    """Split ``budget`` noise lines over ``slots`` tests with a heavy tail (most get none)."""
    out = [0] * slots
    if budget <= 0 or slots <= 0:
        return out
    chosen = rng.sample(range(slots), max(1, round(slots * rng.uniform(0.15, 0.6))))
    weights = [rng.paretovariate(1.3) for _ in chosen]
    total = sum(weights)
    for i, w in zip(chosen, weights, strict=True):
        out[i] = int(budget * w / total)
    return out


# --------------------------------------------------------------------------- Python projects


PY_CORE = '''"""{title}: totals, labels, series, records and lookups."""

import warnings

MUL = {mul}
OFFSET = {offset}
STEP = {step}
MOD = {mod}
TAG = {tag!r}
KEYS = {keys!r}
TABLE = {table!r}


class {err}(Exception):
    """Raised when an entry cannot be loaded."""


class Account:
    def __init__(self, name, balance):
        self.name = name
        self.balance = balance


ACCOUNTS = {{name: Account(name, value) for name, value in TABLE.items()}}


def compute(a, b):
    return a * MUL + b + OFFSET


def depth_sum(n):
    if n <= 0:
        return OFFSET
    return depth_sum(n - 1) + STEP


def label(i):
    return f"{{TAG}}-{{i:03d}}"


def series(n):
    return [(i * STEP + OFFSET) % MOD for i in range(n)]


def record(i):
    return {{"id": i, "label": label(i), "total": compute(i, 3),
            "tags": [TAG, KEYS[i % len(KEYS)]]}}


def report(n):
    return "\\n".join(f"{{label(i)}}: {{compute(i, 1)}}" for i in range(n))


def resolve(key, depth):
    if depth <= 0:
        return TABLE[key]
    return resolve(key, depth - 1)


def find_account(name, depth):
    if depth <= 0:
        return ACCOUNTS.get(name)
    return find_account(name, depth - 1)


def balance(name, depth):
    account = find_account(name, depth)
    return account.balance


def ratio(a, b, depth):
    if depth <= 0:
        return a // b
    return ratio(a, b, depth - 1)


def load_entry(key, depth):
    try:
        return resolve(key, depth)
    except KeyError as exc:
        raise {err}(f"entry {{key!r}} not found after {{depth}} hops") from exc


def parse_amount(text):
    value = int(text.strip())
    if value < 0:
        raise ValueError(f"negative amount: {{text}}")
    return value


def legacy_total(values):
    warnings.warn("legacy_total() is deprecated, use compute() instead",
                  DeprecationWarning, stacklevel=2)
    return sum(values)
'''

PY_TELEMETRY = '''"""Structured log output of the {title} workers (used by the tests as well)."""

import logging

log = logging.getLogger("{pkg}.telemetry")
MESSAGES = {messages!r}


def emit(component, count, seed):
    state = seed
    for k in range(count):
        state = (state * 1103515245 + 12345) % 2147483648
        level, message = MESSAGES[state % len(MESSAGES)]
        text = message.replace("{{n}}", str(state // 7 % 1000))
        stamp = f"2024-03-14T10:{{k // 60 % 60:02d}}:{{k % 60:02d}}.{{state % 1000:03d}}Z"
        print(f"{{stamp}} {{level:<5}} [{{component}}] {{text}}")


def _connect(host, attempt):
    if attempt < 2:
        return _connect(host, attempt + 1)
    raise ConnectionError(f"connection to {{host}} refused")


def handled(component, host):
    try:
        _connect(host, 0)
    except ConnectionError:
        log.exception("[%s] upstream call failed, retrying in 2s", component)
        print(f"ERROR [{{component}}] upstream {{host}} unavailable - retrying (attempt 1/3)")
'''


def py_lit(v: object) -> str:
    return repr(v)


def py_pass_check(rng: Random, m: Model, ut: bool) -> str:
    """One passing check statement (pytest ``assert`` or unittest ``self.assert*``)."""
    form = rng.choice(("compute", "label", "series", "record", "depth", "report", "raises",
                       "resolve"))
    if form == "compute":
        a, b = rng.randint(0, 60), rng.randint(0, 60)
        got, want = f"core.compute({a}, {b})", py_lit(m.compute(a, b))
    elif form == "label":
        i = rng.randint(0, 400)
        got, want = f"core.label({i})", py_lit(m.label(i))
    elif form == "series":
        n = rng.randint(1, 8)
        got, want = f"core.series({n})", py_lit(m.series(n))
    elif form == "record":
        i = rng.randint(0, 50)
        got, want = f"core.record({i})", py_lit(m.record(i))
    elif form == "depth":
        n = rng.randint(0, 40)
        got, want = f"core.depth_sum({n})", py_lit(m.depth_sum(n))
    elif form == "report":
        n = rng.randint(2, 6)
        k = rng.randrange(n)
        got, want = f"core.report({n}).splitlines()[{k}]", py_lit(m.report(n).splitlines()[k])
    elif form == "resolve":
        key = rng.choice(m.keys)
        got, want = f"core.resolve({key!r}, {rng.randint(0, 12)})", py_lit(m.table[key])
    else:
        if ut:
            return f"with self.assertRaises(KeyError):\n    core.resolve({m.missing!r}, 2)"
        return f"with pytest.raises(KeyError):\n    core.resolve({m.missing!r}, 2)"
    if ut:
        return f"self.assertEqual({got}, {want})"
    return f"assert {got} == {want}"


def py_fail_check(rng: Random, m: Model, form: str, ut: bool, err: str) -> tuple[str, str, str]:
    """A failing statement: (code, how, result) with result failed|error."""
    if form == "assert_dict":
        i = rng.randint(0, 40)
        want = wrong_record(rng, m.record(i))
        got = f"core.record({i})"
        code = f"self.assertEqual({got}, {want!r})" if ut else f"assert {got} == {want!r}"
        return code, "record dict differs", "failed"
    if form == "assert_list":
        n = rng.randint(4, 12)
        want = wrong_list(rng, m.series(n))
        got = f"core.series({n})"
        code = f"self.assertListEqual({got}, {want!r})" if ut else f"assert {got} == {want!r}"
        return code, "series list differs", "failed"
    if form == "assert_str":
        n = rng.randint(3, 7)
        lines = m.report(n).splitlines()
        k = rng.randrange(n)
        lines[k] = wrong_str(rng, lines[k])
        want = "\n".join(lines)
        if ut:
            code = f"self.assertMultiLineEqual(core.report({n}), {want!r})"
        else:
            code = f"expected = {want!r}\nassert core.report({n}) == expected"
        return code, "multi-line report string differs", "failed"
    if form == "assert_true":
        i = rng.randint(1, 30)
        limit = m.compute(i, 3) - rng.randint(1, 9)
        code = (f"total = core.compute({i}, 3)\nself.assertTrue(total <= {limit}, "
                f"f\"total {{total}} for {{core.label({i})}} exceeds the limit {limit}\")")
        return code, "assertTrue with message", "failed"
    if form == "not_raised":
        amount = rng.randint(1, 999)
        code = f"with self.assertRaises(ValueError):\n    core.parse_amount('{amount}')"
        return code, "expected ValueError not raised", "failed"
    depth = rng.randint(3, 30)
    variant = rng.choice(("key", "none", "zero", "chained"))
    if variant == "key":
        code = f"value = core.resolve({m.missing!r}, {depth})"
        how = f"KeyError at recursion depth {depth}"
    elif variant == "none":
        code = f"value = core.balance({m.missing!r}, {depth})"
        how = f"AttributeError on None at recursion depth {depth}"
    elif variant == "zero":
        code = f"value = core.ratio({rng.randint(10, 999)}, 0, {depth})"
        how = f"ZeroDivisionError at recursion depth {depth}"
    else:
        code = f"value = core.load_entry({m.missing!r}, {depth})"
        how = f"{err} chained from KeyError at recursion depth {depth}"
    tail = "\nself.assertIsNotNone(value)" if ut else "\nassert value is not None"
    return code + tail, how, "error" if ut else "failed"


def py_noise_stmts(rng: Random, lines: int, handled: bool, component: str) -> list[str]:
    out = []
    if handled:
        out.append(f"telemetry.handled({component!r}, {rng.choice(HOSTS)!r})")
    if lines:
        out.append(f"telemetry.emit({component!r}, {lines}, {noise_seed(rng)})")
    return out


def indent(text: str, pad: str) -> str:
    return "\n".join(pad + x if x else x for x in text.split("\n"))


def test_name(rng: Random, used: set[str], prefix: str = "test_") -> str:
    while True:
        name = f"{prefix}{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
        if name in used:
            name = f"{name}_{len(used)}"
        if name not in used:
            used.add(name)
            return name


def py_package(case: Case, rng: Random, m: Model, pkg: str) -> str:
    err = pkg.capitalize() + "Error"
    title = f"{pkg.capitalize()} service"
    case.files[f"{pkg}/__init__.py"] = f'"""{title}."""\n\n__version__ = "{rng.randint(1, 4)}.' \
                                       f'{rng.randint(0, 20)}.{rng.randint(0, 9)}"\n'
    case.files[f"{pkg}/core.py"] = PY_CORE.format(
        title=title, mul=m.mul, offset=m.offset, step=m.step, mod=m.mod, tag=m.tag,
        keys=tuple(m.keys), table=m.table, err=err)
    case.files[f"{pkg}/telemetry.py"] = PY_TELEMETRY.format(
        title=title, pkg=pkg, messages=MESSAGES)
    case.files["README.md"] = f"# {pkg}\n\n{title}.\n"
    return err


def plan_pytest(rng: Random, case: Case) -> None:
    pkg = case.info["pkg"]
    m = make_model(rng, pkg[:4])
    err = py_package(case, rng, m, pkg)
    n_tests = sized(rng, case.size, (20, 60), (60, 200), (150, 400))
    n_files = max(2, min(12, n_tests // rng.randint(12, 30)))
    topics = sorted(rng.sample(TOPICS, n_files))
    n_fail = rng.choice((1, 1, 2, 2, 3))
    forms = [rng.choice(("assert_dict", "assert_list", "assert_str", "deep_exception",
                         "fixture_error", "parametrize")) for _ in range(n_fail)]
    fail_files = [rng.randrange(n_files) for _ in forms]
    flags = ["-p", "no:cacheprovider", "-p", "no:randomly"]
    verbosity = rng.choice(("-v", "-q", "", "-v"))
    if verbosity:
        flags.append(verbosity)
    tb = rng.choice(("", "--tb=short", "--tb=long", "--tb=short"))
    if tb:
        flags.append(tb)
    if rng.random() < 0.2:
        flags.append("-x")
    show = rng.choices(("none", "rA", "s", "logcli"), weights=(40, 25, 20, 15))[0]
    if show == "rA":
        flags.append("-rA")
    elif show == "s":
        flags.append("-s")
    elif show == "logcli":
        flags += ["-o", "log_cli=true", "--log-cli-level=INFO"]
    visible = show != "none"
    budget = case.noise if visible else 0
    case.noise -= budget
    per_file = [n_tests // n_files] * n_files
    per_file[-1] += n_tests - sum(per_file)
    used: set[str] = set()
    order = 0
    items: list[tuple[int, str, bool]] = []  # (order, nodeid, fails)
    handled_left = rng.randint(1, 4)
    warn_left = rng.randint(1, 3)
    for fi, topic in enumerate(topics):
        path = f"tests/test_{topic}.py"
        my_forms = [f for f, i in zip(forms, fail_files, strict=True) if i == fi]
        blocks: list[str] = []
        fixtures: list[str] = []
        count = 0
        target = per_file[fi]
        klass = None
        if rng.random() < 0.5:
            klass = f"Test{topic.capitalize()}{rng.choice(('Rules', 'Edge', 'Api', 'Flow'))}"
        class_methods: list[str] = []
        noise = spread(rng, budget // n_files, max(1, target // 3))
        noise_i = 0
        # Failing tests are placed at random positions among the file's tests.
        fail_at = sorted(rng.sample(range(max(target, len(my_forms))), len(my_forms)))
        pending = list(my_forms)
        while count < target or pending:
            if pending and (count >= fail_at[len(my_forms) - len(pending)] or count >= target):
                form = pending.pop(0)
                name = test_name(rng, used)
                if form == "parametrize":
                    rows = []
                    bad = rng.randrange(rng.randint(2, 6))
                    for r in range(max(bad + 1, rng.randint(3, 7))):
                        a, b = rng.randint(0, 50), rng.randint(0, 50)
                        want = m.compute(a, b) if r != bad else wrong(rng, m.compute(a, b))
                        rows.append((a, b, want))
                    src = (f"@pytest.mark.parametrize(\"a,b,expected\", {rows!r})\n"
                           f"def {name}(a, b, expected):\n"
                           f"    assert core.compute(a, b) == expected\n")
                    for r, (a, b, want) in enumerate(rows):
                        nid = f"{path}::{name}[{a}-{b}-{want}]"
                        items.append((order, nid, r == bad))
                        if r == bad:
                            case.failures.append(Failure(
                                test=nid, how="parametrize case with a wrong expected value",
                                header=f"{name}[{a}-{b}-{want}]", order=order))
                        order += 1
                    blocks.append(src)
                    count += len(rows)
                    continue
                if form == "fixture_error":
                    fx = f"{rng.choice(('db', 'ledger', 'remote', 'broker'))}_conn_{len(used)}"
                    host = rng.choice(HOSTS)
                    if rng.random() < 0.5:
                        fixtures.append(f"@pytest.fixture\ndef {fx}():\n    raise ConnectionError("
                                        f"\"could not connect to {host}: connection refused\")\n")
                        how = "fixture raises ConnectionError"
                    else:
                        fixtures.append(f"@pytest.fixture\ndef {fx}():\n    return core.resolve("
                                        f"{m.missing!r}, {rng.randint(3, 15)})\n")
                        how = "fixture fails with KeyError deep in a recursion"
                    body = f"def {name}({fx}):\n    assert {fx} > 0\n"
                    blocks.append(body)
                    nid = f"{path}::{name}"
                    items.append((order, nid, True))
                    case.failures.append(Failure(test=nid, how=how, result="error",
                                                 header=f"ERROR at setup of {name}", order=order))
                    order += 1
                    count += 1
                    continue
                code, how, _ = py_fail_check(rng, m, form, False, err)
                in_class = klass is not None and rng.random() < 0.5
                stmts = []
                if rng.random() < 0.3:
                    stmts.append(f"print(\"checking {name} against fixtures\")")
                stmts.append(code)
                if in_class:
                    class_methods.append(f"def {name}(self):\n" + indent("\n".join(stmts), "    "))
                    nid, header = f"{path}::{klass}::{name}", f"{klass}.{name}"
                else:
                    blocks.append(f"def {name}():\n" + indent("\n".join(stmts), "    ") + "\n")
                    nid, header = f"{path}::{name}", name
                items.append((-1 if in_class else order, nid, True))
                case.failures.append(Failure(test=nid, how=how, header=header,
                                             order=-1 if in_class else order))
                if not in_class:
                    order += 1
                count += 1
                continue
            # a passing test (or a passing parametrize table)
            name = test_name(rng, used)
            if rng.random() < 0.15 and target - count >= 4:
                rows = []
                for _ in range(rng.randint(3, min(25, target - count))):
                    a, b = rng.randint(0, 60), rng.randint(0, 60)
                    rows.append((a, b, m.compute(a, b)))
                blocks.append(f"@pytest.mark.parametrize(\"a,b,expected\", {rows!r})\n"
                              f"def {name}(a, b, expected):\n"
                              f"    assert core.compute(a, b) == expected\n")
                for a, b, want in rows:
                    items.append((order, f"{path}::{name}[{a}-{b}-{want}]", False))
                    order += 1
                count += len(rows)
                continue
            stmts = []
            lines = noise[noise_i % len(noise)] if noise_i < len(noise) else 0
            noise_i += 1
            handled = handled_left > 0 and rng.random() < 0.2
            handled_left -= handled
            stmts += py_noise_stmts(rng, lines, handled, rng.choice(COMPONENTS))
            if rng.random() < 0.1:
                stmts.append(f"print(\"ERROR {rng.choice(COMPONENTS)}: upstream timeout after "
                             f"{rng.randint(100, 3000)} ms, retrying\")")
            if warn_left > 0 and rng.random() < 0.15:
                warn_left -= 1
                stmts.append("assert core.legacy_total([1, 2, 3]) == 6")
            stmts += [py_pass_check(rng, m, False) for _ in range(rng.randint(1, 3))]
            if klass is not None and rng.random() < 0.4:
                class_methods.append(f"def {name}(self):\n" + indent("\n".join(stmts), "    "))
                items.append((-1, f"{path}::{klass}::{name}", False))
            else:
                blocks.append(f"def {name}():\n" + indent("\n".join(stmts), "    ") + "\n")
                items.append((order, f"{path}::{name}", False))
                order += 1
            count += 1
        # the class goes at the end of the module: its items run after the functions
        if class_methods:
            blocks.append(f"class {klass}:\n" + "\n\n".join(indent(x, "    ")
                                                               for x in class_methods) + "\n")
            for i, (o, nid, fails) in enumerate(items):
                if o == -1 and nid.startswith(f"{path}::{klass}::"):
                    items[i] = (order, nid, fails)
                    for f in case.failures:
                        if f.test == nid:
                            f.order = order
                    order += 1
        head = (f'"""Tests for {pkg} {topic}."""\n\nimport logging\n\nimport pytest\n\n'
                f"from {pkg} import core, telemetry\n\n"
                f"log = logging.getLogger(\"{pkg}.tests.{topic}\")\n")
        if "pytest." not in "".join(blocks + fixtures):
            head = head.replace("import pytest\n\n", "")
        case.files[path] = head + "\n\n" + "\n\n".join(fixtures + blocks)
    case.files["tests/conftest.py"] = (
        '"""Shared test configuration."""\n\nimport logging\n\n'
        f"logging.getLogger(\"{pkg}\").setLevel(logging.DEBUG)\n")
    case.build = [" ".join(["python3", "-m", "pytest", *flags])]
    exitfirst = "-x" in flags
    expected = sorted(case.failures, key=lambda f: f.order)
    if exitfirst:
        first = expected[0]
        case.failures = [first]
        passed = sum(1 for o, _, f in items if o < first.order)
    else:
        passed = sum(1 for _, _, f in items if not f)
    case.info.update(tests=len(items), passed=passed, flags=flags, exitfirst=exitfirst,
                     verbosity=verbosity, tb=tb or "auto", show=show)


def plan_unittest(rng: Random, case: Case) -> None:
    pkg = case.info["pkg"]
    m = make_model(rng, pkg[:4])
    err = py_package(case, rng, m, pkg)
    n_tests = sized(rng, case.size, (15, 40), (40, 120), (100, 260))
    n_files = max(2, min(10, n_tests // rng.randint(10, 25)))
    topics = sorted(rng.sample(TOPICS, n_files))
    n_fail = rng.choice((1, 1, 2, 2, 3))
    forms = [rng.choice(("assert_dict", "assert_list", "assert_str", "assert_true",
                         "not_raised", "subtest", "deep_exception", "deep_exception"))
             for _ in range(n_fail)]
    fail_files = [rng.randrange(n_files) for _ in forms]
    invocation = rng.choice(("python3 -m unittest -v", "python3 -m unittest",
                             "python3 -m unittest discover -s tests -t . -v",
                             "python3 -m unittest discover -s tests -v",
                             "python3 -m unittest discover -v -b"))
    prefix = "" if "-s tests -v" in invocation else "tests."
    budget = case.noise
    case.noise = 0
    if "-b" in invocation:
        budget = 0  # buffered: passing tests' output is not shown
    used: set[str] = set()
    tests = 0
    skipped = 0
    handled_left = rng.randint(1, 4)
    for fi, topic in enumerate(topics):
        module = f"test_{topic}"
        my_forms = [f for f, i in zip(forms, fail_files, strict=True) if i == fi]
        n_here = n_tests // n_files
        n_classes = rng.randint(1, 3)
        classes: dict[str, list[str]] = {}
        names = [f"Test{topic.capitalize()}{s}" for s in
                 rng.sample(("Rules", "Edge", "Api", "Flow", "Defaults", "Errors"), n_classes)]
        for c in names:
            classes[c] = []
        noise = spread(rng, budget // n_files, n_here)
        for k in range(n_here):
            cls = rng.choice(names)
            name = test_name(rng, used)
            stmts = py_noise_stmts(rng, noise[k], handled_left > 0 and rng.random() < 0.2,
                                   rng.choice(COMPONENTS))
            if "handled" in "".join(stmts):
                handled_left -= 1
            deco = ""
            if rng.random() < 0.03:
                deco = f"@unittest.skip(\"flaky against {rng.choice(HOSTS)}\")\n"
                skipped += 1
            if rng.random() < 0.05:
                stmts.append("self.assertEqual(core.legacy_total([4, 5]), 9)")
            stmts += [py_pass_check(rng, m, True) for _ in range(rng.randint(1, 3))]
            classes[cls].append(deco + f"def {name}(self):\n" + indent("\n".join(stmts), "    "))
            tests += 1
        for form in my_forms:
            cls = rng.choice(names)
            name = test_name(rng, used)
            tid = f"{prefix}{module}.{cls}.{name}"
            stmts = []
            if rng.random() < 0.3:
                stmts.append(f"print(\"loading fixtures for {name}\")")
            if form == "subtest":
                n = rng.randint(3, 8)
                bad = rng.randrange(n)
                pairs = [(i, m.compute(i, 2) if i != bad else wrong(rng, m.compute(i, 2)))
                         for i in range(n)]
                stmts.append(f"for i, want in {pairs!r}:\n    with self.subTest(i=i):\n"
                             f"        self.assertEqual(core.compute(i, 2), want)")
                case.failures.append(Failure(test=tid, how="failing subTest", header=f"(i={bad})"))
            else:
                code, how, result = py_fail_check(rng, m, form, True, err)
                stmts.append(code)
                case.failures.append(Failure(test=tid, how=how, result=result))
            classes[cls].append(f"def {name}(self):\n" + indent("\n".join(stmts), "    "))
            tests += 1
        body = []
        for cls, methods in classes.items():
            if not methods:
                methods.append(f"def {test_name(rng, used)}(self):\n    "
                               + py_pass_check(rng, m, True))
                tests += 1
            setup = ""
            if rng.random() < 0.3:
                setup = ("def setUp(self):\n    self.accounts = dict(core.TABLE)\n\n")
            body.append(f"class {cls}(unittest.TestCase):\n"
                        + indent(setup + "\n\n".join(methods), "    ") + "\n")
        case.files[f"tests/{module}.py"] = (
            f'"""Tests for {pkg} {topic}."""\n\nimport unittest\n\n'
            f"from {pkg} import core, telemetry\n\n\n" + "\n\n".join(body)
            + "\n\nif __name__ == \"__main__\":\n    unittest.main()\n")
    case.files["tests/__init__.py"] = (
        '"""Test package: log records go to stderr like in production."""\n\nimport logging\n\n'
        "logging.basicConfig(level=logging.INFO,\n"
        "                    format=\"%(levelname)s %(name)s: %(message)s\")\n")
    case.build = [invocation]
    case.info.update(tests=tests, skipped=skipped, invocation=invocation, id_prefix=prefix)


# --------------------------------------------------------------------------- Rust crates


RS_LIB = '''//! {title}: totals, labels, series, records and lookups.

use std::collections::HashMap;
{extra_use}
pub const MUL: i64 = {mul};
pub const OFFSET: i64 = {offset};
pub const STEP: i64 = {step};
pub const MOD: i64 = {mod};
pub const TAG: &str = "{tag}";
const KEYS: [&str; {nkeys}] = [{keys}];
const MESSAGES: [(&str, &str); {nmsg}] = [{messages}];

#[derive(Debug, Clone, PartialEq)]
pub struct Record {{
    pub id: u32,
    pub label: String,
    pub total: i64,
    pub tags: Vec<String>,
}}

{doc}pub fn compute(a: i64, b: i64) -> i64 {{
    a * MUL + b + OFFSET
}}

pub fn depth_sum(n: u32) -> i64 {{
    if n == 0 {{
        OFFSET
    }} else {{
        depth_sum(n - 1) + STEP
    }}
}}

pub fn label(i: u32) -> String {{
    format!("{{}}-{{:03}}", TAG, i)
}}

pub fn series(n: u32) -> Vec<i64> {{
    (0..n as i64).map(|i| (i * STEP + OFFSET) % MOD).collect()
}}

pub fn record(i: u32) -> Record {{
    Record {{
        id: i,
        label: label(i),
        total: compute(i as i64, 3),
        tags: vec![TAG.to_string(), KEYS[i as usize % KEYS.len()].to_string()],
    }}
}}

fn table() -> HashMap<&'static str, i64> {{
    HashMap::from([{table}])
}}

pub fn lookup(key: &str, depth: u32) -> Option<i64> {{
    if depth == 0 {{
        table().get(key).copied()
    }} else {{
        lookup(key, depth - 1)
    }}
}}

pub fn resolve(key: &str, depth: u32) -> i64 {{
    if depth == 0 {{
        lookup(key, 0).unwrap()
    }} else {{
        resolve(key, depth - 1)
    }}
}}

pub fn parse_amount(text: &str, depth: u32) -> u32 {{
    if depth == 0 {{
        text.trim().parse::<u32>().unwrap()
    }} else {{
        parse_amount(text, depth - 1)
    }}
}}

pub fn ratio(a: i64, b: i64, depth: u32) -> i64 {{
    if depth == 0 {{
        if b == 0 {{
            panic!("ratio {{}}/{{}}: divisor must not be zero ({{}} entries pending)", a, b, a % 7);
        }}
        a / b
    }} else {{
        ratio(a, b, depth - 1)
    }}
}}

pub fn emit(component: &str, count: u32, seed: u64) {{
    let mut state = seed;
    for k in 0..count as u64 {{
        state = (state * 1103515245 + 12345) % 2147483648;
        let (level, message) = MESSAGES[(state % MESSAGES.len() as u64) as usize];
        let text = message.replace("{{n}}", &(state / 7 % 1000).to_string());
        println!(
            "2024-03-14T10:{{:02}}:{{:02}}.{{:03}}Z {{:<5}} [{{}}] {{}}",
            k / 60 % 60,
            k % 60,
            state % 1000,
            level,
            component,
            text
        );
    }}
}}

pub fn handled(component: &str, host: &str) {{
    match "12x".parse::<u32>() {{
        Ok(_) => {{}}
        Err(e) => eprintln!(
            "ERROR [{{}}] could not parse amount from {{}}: {{:?}}; retrying with defaults",
            component, host, e
        ),
    }}
}}
{extra}'''


def rs_str(s: str) -> str:
    return json.dumps(s)


def rs_record(rec: dict) -> str:
    tags = ", ".join(f"{rs_str(t)}.to_string()" for t in rec["tags"])
    return (f"Record {{ id: {rec['id']}, label: {rs_str(rec['label'])}.to_string(), "
            f"total: {rec['total']}, tags: vec![{tags}] }}")


def rs_vec(xs: list[int]) -> str:
    return "vec![" + ", ".join(str(x) for x in xs) + "]"


def rs_pass_check(rng: Random, m: Model, path: str) -> list[str]:
    form = rng.choice(("compute", "label", "series", "record", "depth", "lookup", "lookup"))
    if form == "compute":
        a, b = rng.randint(0, 60), rng.randint(0, 60)
        return [f"assert_eq!({path}compute({a}, {b}), {m.compute(a, b)});"]
    if form == "label":
        i = rng.randint(0, 400)
        return [f"assert_eq!({path}label({i}), {rs_str(m.label(i))});"]
    if form == "series":
        n = rng.randint(1, 8)
        return [f"assert_eq!({path}series({n}), {rs_vec(m.series(n))});"]
    if form == "record":
        i = rng.randint(0, 40)
        rec = rs_record(m.record(i))
        if path:
            rec = path + rec
        return [f"assert_eq!({path}record({i}), {rec});"]
    if form == "depth":
        n = rng.randint(0, 40)
        return [f"assert_eq!({path}depth_sum({n}), {m.depth_sum(n)});"]
    key = rng.choice(m.keys)
    return [f"assert_eq!({path}lookup({rs_str(key)}, {rng.randint(0, 9)}), "
            f"Some({m.table[key]}));"]


def rs_fail_check(rng: Random, m: Model, path: str) -> tuple[list[str], str]:
    form = rng.choice(("eq_vec", "eq_record", "eq_str", "assert_msg", "unwrap_none",
                       "unwrap_err", "panic_deep"))
    depth = rng.randint(3, 25)
    if form == "eq_vec":
        n = rng.randint(4, 10)
        return [f"let got = {path}series({n});",
                f"assert_eq!(got, {rs_vec(wrong_list(rng, m.series(n)))}, "
                f"\"series of {{}} batches\", {n});"], "assert_eq! on Vec with message"
    if form == "eq_record":
        i = rng.randint(0, 30)
        rec = rs_record(wrong_record(rng, m.record(i)))
        return [f"assert_eq!({path}record({i}), {path}{rec});"], "assert_eq! on a struct"
    if form == "eq_str":
        i = rng.randint(0, 400)
        return [f"assert_eq!({path}label({i}), {rs_str(wrong_str(rng, m.label(i)))}, "
                f"\"label for entry {i}\");"], "assert_eq! on String with message"
    if form == "assert_msg":
        i = rng.randint(1, 30)
        limit = m.compute(i, 3) - rng.randint(1, 9)
        return [f"let total = {path}compute({i}, 3);",
                f"assert!(total <= {limit}, \"total {{}} for {{}} exceeds the limit {limit}\", "
                f"total, {path}label({i}));"], "assert! with message"
    if form == "unwrap_none":
        return [f"let value = {path}resolve({rs_str(m.missing)}, {depth});",
                "assert!(value > 0);"], f"unwrap on None at recursion depth {depth}"
    if form == "unwrap_err":
        bad = rng.choice(("12x", "", "-4", "1 200", "0x1f"))
        return [f"let amount = {path}parse_amount({rs_str(bad)}, {depth});",
                "assert!(amount > 0);"], f"unwrap on Err at recursion depth {depth}"
    return [f"let r = {path}ratio({rng.randint(10, 999)}, 0, {depth});",
            "assert!(r >= 0);"], f"panic! at recursion depth {depth}"


RS_COMPILE = {
    # form -> (lines of a function body, index of the line the error points at)
    "mismatched_types": (["let total: i64 = {p}label(n);", "total + 1"], 0),
    "unresolved_name": (["let total = {p}depth_sum(n);", "totl + 1"], 1),
    "wrong_args": (["let base = {p}compute(n as i64);", "base * 2"], 0),
}


def rs_fn(name: str, sig: str, body: list[str], pad: str) -> list[str]:
    return [f"{pad}{sig.format(name=name)} {{"] + [f"{pad}    {x}" for x in body] + [f"{pad}}}"]


def plan_cargo(rng: Random, case: Case) -> None:
    crate = case.project
    ident = crate.replace("-", "_")
    m = make_model(rng, crate.split("-")[0][:4])
    n_unit = sized(rng, case.size, (6, 20), (15, 50), (40, 120))
    n_integ = rng.choice((0, 0, rng.randint(3, 12)))
    compile_error = rng.random() < 0.35
    where = rng.choice(("lib", "tests")) if compile_error else \
        ("integ" if n_integ and rng.random() < 0.3 else "lib")
    flags_test = ["--offline"]
    run_flags: list[str] = []
    verbose = rng.random() < 0.2
    if verbose:
        flags_test.append("--verbose")
    no_fail_fast = rng.random() < 0.3
    if no_fail_fast:
        flags_test.append("--no-fail-fast")
    quiet = not verbose and rng.random() < 0.2
    if quiet:
        flags_test.append("-q")
    show = rng.random() < 0.3
    if show:
        run_flags.append("--show-output")
    if rng.random() < 0.25:
        run_flags.append("--test-threads=1")
    backtrace = rng.choice(("0", "1", "1", ""))
    if backtrace:
        case.env["RUST_BACKTRACE"] = backtrace
    budget = case.noise if show else 0
    case.noise -= budget
    used: set[str] = set()
    warnings_ = rng.sample(("unused_var", "dead_fn", "unused_import", "unused_mut"),
                           rng.randint(0, 3))
    extra: list[str] = []
    if "dead_fn" in warnings_:
        extra += ["", "fn legacy_checksum(x: i64) -> i64 {", "    x ^ 0x5f", "}"]
    if "unused_var" in warnings_:
        extra += ["", "pub fn scaled(n: i64) -> i64 {", "    let scratch = n * 2;", "    n * MUL",
                  "}"]
    if "unused_mut" in warnings_:
        extra += ["", "pub fn padded(i: u32) -> String {", "    let mut out = label(i);",
                  "    out.clone()", "}"]
    extra_use = "use std::fmt::Write;\n" if "unused_import" in warnings_ else ""
    fail_count = rng.choice((1, 1, 2, 3)) if not compile_error else rng.choice((1, 1, 2))
    noise = spread(rng, budget, n_unit)
    # unit tests (in `mod tests`) and integration tests (tests/<name>.rs)
    def tests_for(n: int, n_fail: int, path: str, noise_lines: list[int]) -> tuple[list[str],
                                                                                 list[str]]:
        out: list[str] = []
        failing: list[str] = []
        fail_at = set(rng.sample(range(n + n_fail), n_fail))
        k = 0
        for j in range(n + n_fail):
            name = test_name(rng, used, "")
            body: list[str] = []
            attr = "#[test]"
            if j in fail_at:
                stmts, how = rs_fail_check(rng, m, path)
                if rng.random() < 0.3:
                    body.append(f"println!(\"checking {name} with {{}} fixtures\", {j + 3});")
                body += stmts
                failing.append(name)
                case.failures.append(Failure(test=name, how=how))
            elif rng.random() < 0.07:
                attr = "#[test]\n#[should_panic(expected = \"divisor must not be zero\")]"
                body.append(f"{path}ratio({rng.randint(1, 99)}, 0, {rng.randint(1, 6)});")
            else:
                lines = noise_lines[k] if k < len(noise_lines) else 0
                k += 1
                if lines:
                    body.append(f"{path}emit({rs_str(rng.choice(COMPONENTS))}, {lines}, "
                                f"{noise_seed(rng)});")
                if rng.random() < 0.08:
                    body.append(f"{path}handled({rs_str(rng.choice(COMPONENTS))}, "
                                f"{rs_str(rng.choice(HOSTS))});")
                for _ in range(rng.randint(1, 3)):
                    body += rs_pass_check(rng, m, path)
            out.append("\n".join([*attr.split("\n"), f"fn {name}() {{",
                                  *[f"    {x}" for x in body], "}"]))
        return out, failing

    n_fail_unit = fail_count if where == "lib" and not compile_error else 0
    n_fail_integ = fail_count if where == "integ" else 0
    unit_tests, unit_failing = tests_for(n_unit, n_fail_unit, "", noise)
    integ_tests, integ_failing = tests_for(n_integ, n_fail_integ, f"{ident}::", [])
    # libtest prints the failure reports in completion order and Rust prints its "run with
    # RUST_BACKTRACE=1" note only for the first panic of a process: with two or more panicking
    # tests in one test binary only one test thread keeps the log (and the labels) the same.
    panicking = [len(unit_failing) + sum("should_panic" in t for t in unit_tests),
                 len(integ_failing) + sum("should_panic" in t for t in integ_tests)]
    serial = not compile_error and max(panicking) >= 2
    if serial and "--test-threads=1" not in run_flags:
        run_flags.append("--test-threads=1")
    for f in case.failures:
        if f.test in unit_failing:
            f.test = f"tests::{f.test}"
            f.extra["target"] = "lib"
        else:
            f.extra["target"] = "integ"
    doc = ""
    if rng.random() < 0.3:
        doc = (f"/// Total of `a` units at `b` extra.\n///\n/// ```\n/// assert_eq!("
               f"{ident}::compute(2, 1), {m.compute(2, 1)});\n/// ```\n")
    lib = RS_LIB.format(
        title=f"{crate} library", extra_use=extra_use, mul=m.mul, offset=m.offset, step=m.step,
        mod=m.mod, tag=m.tag, nkeys=len(m.keys), keys=", ".join(rs_str(k) for k in m.keys),
        nmsg=len(MESSAGES), messages=", ".join(f"({rs_str(a)}, {rs_str(b)})" for a, b in MESSAGES),
        doc=doc, table=", ".join(f"({rs_str(k)}, {v})" for k, v in m.table.items()),
        extra="\n".join(extra) + ("\n" if extra else ""))
    lib_lines = lib.rstrip("\n").split("\n")
    errors: list[tuple[str, int]] = []  # (form, error line) in src/lib.rs
    if compile_error:
        forms = rng.sample(sorted(RS_COMPILE), fail_count)
        if where == "lib":
            for form in forms:
                body, at = RS_COMPILE[form]
                fn = rs_fn(f"{rng.choice(('adjusted', 'checked', 'rounded'))}_{rng.choice(NOUNS)}"
                           f"_{len(lib_lines)}", "pub fn {name}(n: u32) -> i64",
                           [x.format(p="") for x in body], "")
                lib_lines += [""] + fn
                errors.append((form, len(lib_lines) - len(fn) + 2 + at))
    test_mod = ["", "#[cfg(test)]", "mod tests {", "    use super::*;", ""]
    for t in unit_tests:
        test_mod += [("    " + x) if x else x for x in t.split("\n")] + [""]
    if compile_error and where == "tests":
        for form in forms:
            body, at = RS_COMPILE[form]
            name = test_name(rng, used, "")
            fn = rs_fn(name, "fn {name}()", [x.format(p="").replace("n)", "7)").replace(
                "n as i64", "7") for x in body[:-1]] + [f"assert!({body[-1].split()[0]} > 0);"],
                "    ")
            test_mod += ["    #[test]"] + fn + [""]
            start = len(lib_lines) + len(test_mod) - len(fn)
            errors.append((form, start + 1 + at))
    test_mod[-1] = "}"
    lib_lines += test_mod
    case.files["src/lib.rs"] = "\n".join(lib_lines) + "\n"
    if n_integ:
        stem = rng.choice(("api", "integration", "end_to_end", "smoke"))
        case.files[f"tests/{stem}.rs"] = "\n\n".join(integ_tests) + "\n"
        case.info["integ"] = stem
    for form, line in errors:
        case.failures.append(Failure(test="src/lib.rs", how=form, result="compile", line=line))
    case.new_crate = crate
    steps = []
    if compile_error or rng.random() < 0.4:
        steps.append("cargo build --offline" + (" --verbose" if verbose else ""))
    test_cmd = "cargo test " + " ".join(flags_test)
    if run_flags:
        test_cmd += " -- " + " ".join(run_flags)
    steps.append(test_cmd)
    case.build = steps
    case.info.update(unit_tests=n_unit + n_fail_unit, integ_tests=n_integ + n_fail_integ,
                     compile_error=compile_error, where=where, no_fail_fast=no_fail_fast,
                     quiet=quiet, show_output=show, backtrace=backtrace or "unset",
                     warnings=warnings_, doc_test=bool(doc), crate=ident,
                     single_thread_for_determinism=serial,
                     unit_failing=[f"tests::{x}" for x in unit_failing],
                     integ_failing=integ_failing)


# --------------------------------------------------------------------------- C / C++ projects


@dataclass
class Unit:
    name: str
    model: Model
    lines: list[str]
    decls: list[str]


def c_unit(rng: Random, proj: str, name: str, cpp: bool, warns: list[str]) -> Unit:
    m = make_model(rng, name[:5])
    up = name.upper()
    inc = ["#include <cstdio>", "#include <string>"] if cpp else ["#include <stdio.h>"]
    lines = [f"/* {name}.{'cpp' if cpp else 'c'}: {name} totals, labels and ranges. */", *inc,
             f"#include \"{proj}.{'hpp' if cpp else 'h'}\"", "",
             f"#define {up}_MUL {m.mul}", f"#define {up}_OFFSET {m.offset}",
             f"#define {up}_STEP {m.step}", f"#define {up}_MOD {m.mod}",
             f"#define {up}_TAG \"{m.tag}\"", ""]
    decls = [f"int {name}_compute(int a, int b);", f"int {name}_depth(int n);",
             f"void {name}_label(int i, char *buf, size_t len);",
             f"int {name}_series_sum(int n);", f"struct {proj}_pair {name}_range(int n);"]
    lines += [f"int {name}_compute(int a, int b)", "{",
              f"    return a * {up}_MUL + b + {up}_OFFSET;", "}", "",
              f"int {name}_depth(int n)", "{", "    if (n <= 0)", f"        return {up}_OFFSET;",
              f"    return {name}_depth(n - 1) + {up}_STEP;", "}", "",
              f"void {name}_label(int i, char *buf, size_t len)", "{",
              f"    snprintf(buf, len, \"%s-%03d\", {up}_TAG, i);", "}", "",
              f"int {name}_series_sum(int n)", "{", "    int total = 0;",
              "    for (int i = 0; i < n; i++)",
              f"        total += (i * {up}_STEP + {up}_OFFSET) % {up}_MOD;", "    return total;",
              "}", "", f"struct {proj}_pair {name}_range(int n)", "{",
              f"    struct {proj}_pair p = {{ n * {up}_STEP, n * {up}_STEP + {up}_MOD }};",
              "    return p;", "}", ""]
    if cpp:
        decls.append(f"std::string {name}_label_text(int i);")
        lines += [f"std::string {name}_label_text(int i)", "{", "    char buf[32];",
                  f"    {name}_label(i, buf, sizeof buf);", "    return std::string(buf);", "}",
                  ""]
    for w in warns:
        if w == "unused_param":
            decls.append(f"int {name}_scaled(int n, int flags);")
            lines += [f"int {name}_scaled(int n, int flags)", "{", f"    return n * {up}_MUL;",
                      "}", ""]
        elif w == "sign_compare":
            decls.append(f"int {name}_count(const int *xs, unsigned n);")
            lines += [f"int {name}_count(const int *xs, unsigned n)", "{", "    int c = 0;",
                      "    for (int i = 0; i < n; i++)", "        c += xs[i];", "    return c;",
                      "}",
                      ""]
        elif w == "unused_var":
            decls.append(f"int {name}_checked(int n);")
            lines += [f"int {name}_checked(int n)", "{", f"    int spare = n * {up}_STEP;",
                      "    return n;", "}", ""]
        elif w == "unused_static":
            lines += [f"static int {name}_helper(void)", "{", f"    return {up}_MOD;", "}", ""]
        elif w == "format":
            decls.append(f"void {name}_dump(long v);")
            lines += [f"void {name}_dump(long v)", "{", f"    printf(\"{name} value=%d\\n\", v);",
                      "}", ""]
        elif w == "fallthrough":
            decls.append(f"int {name}_weight(int kind);")
            lines += [f"int {name}_weight(int kind)", "{", "    int w = 1;", "    switch (kind) {",
                      "    case 1:", "        w += 2;", "    case 2:", "        w += 3;",
                      "        break;", "    default:", "        break;", "    }", "    return w;",
                      "}", ""]
    return Unit(name=name, model=m, lines=lines, decls=decls)


C_ERRORS = {
    # form -> (body lines, index of the line the error is reported at, languages)
    "undeclared": (["int total = {u}_depth(n);", "return totl + 1;"], 1, "c cpp"),
    "incompatible": (["int width = {u}_range(n);", "return width;"], 0, "c"),
    "cannot_convert": (["int width = {u}_label_text(n);", "return width;"], 0, "cpp"),
    "missing_semicolon": (["int scaled = n * {m}", "return scaled + 1;"], 1, "c cpp"),
    "no_match_operator": (["std::cout << {u}_range(n) << '\\n';", "return n;"], 0, "cpp"),
}

C_TEST_MAIN = '''/* Unit tests of {proj}: a tiny runner that prints PASS/FAIL per check. */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "{header}"

static int passed;
static int failed;

static void check_int(const char *name, int got, int want, const char *file, int line)
{{
    if (got == want) {{
        passed++;
        printf("PASS: %s\\n", name);
    }} else {{
        failed++;
        {int_fail}
    }}
}}

static void check_str(const char *name, const char *got, const char *want, const char *file,
                      int line)
{{
    if (strcmp(got, want) == 0) {{
        passed++;
        printf("PASS: %s\\n", name);
    }} else {{
        failed++;
        {str_fail}
    }}
}}

#define CHECK_INT(name, got, want) check_int(name, got, want, __FILE__, __LINE__)
#define CHECK_STR(name, got, want) check_str(name, got, want, __FILE__, __LINE__)

{tests}
int main(void)
{{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("Running {count} tests of {proj}\\n");
{calls}
    printf("\\n%d tests, %d passed, %d failed\\n", passed + failed, passed, failed);
    return failed ? 1 : 0;
}}
'''

C_FAIL_STYLES = {
    "one_line": ('printf("FAIL: %s: expected %d, got %d (%s:%d)\\n", name, want, got, file, '
                 'line);',
                 'printf("FAIL: %s: expected \\"%s\\", got \\"%s\\" (%s:%d)\\n", name, want, '
                 'got, file, line);'),
    "detail": ('printf("FAIL: %s (%s:%d)\\n  expected: %d\\n  actual:   %d\\n", name, file, '
               'line, want, got);',
               'printf("FAIL: %s (%s:%d)\\n  expected: \\"%s\\"\\n  actual:   \\"%s\\"\\n", name, '
               'file, line, want, got);'),
}

C_LOG = '''/* log.{ext}: structured log lines of the {proj} workers. */
#include <stdio.h>
#include "{header}"

static const char *const levels[] = {{ {levels} }};
static const char *const messages[] = {{ {messages} }};

void {proj}_log(const char *component, int count, unsigned long seed)
{{
    unsigned long state = seed;
    const int n = (int)(sizeof messages / sizeof messages[0]);
    for (int k = 0; k < count; k++) {{
        state = (state * 1103515245UL + 12345UL) % 2147483648UL;
        int idx = (int)(state % (unsigned long)n);
        char text[160];
        const char *m = messages[idx];
        const char *at = strstr(m, "{{n}}");
        snprintf(text, sizeof text, "%.*s%lu%s", (int)(at - m), m, state / 7 % 1000, at + 3);
        printf("2024-03-14T10:%02d:%02d.%03luZ %-5s [%s] %s\\n", k / 60 % 60, k % 60,
               state % 1000, levels[idx], component, text);
    }}
}}

void {proj}_handled(const char *component, const char *host)
{{
    fprintf(stderr, "ERROR [%s] connect() to %s failed: Connection refused (errno=111), "
                    "retrying in 2s\\n", component, host);
}}
'''


def c_str(s: str) -> str:
    return json.dumps(s)


def plan_make(rng: Random, case: Case) -> None:
    proj = case.info["pkg"]
    cpp = rng.random() < 0.35
    ext, hext = ("cpp", "hpp") if cpp else ("c", "h")
    header = f"{proj}.{hext}"
    n_units = sized(rng, case.size, (3, 6), (4, 9), (6, 14)) - (2 if cpp else 0)
    n_units = max(3, n_units)
    names = rng.sample([u for u in UNITS if u != proj], n_units)
    failure = rng.choices(("compile", "link", "test_fail", "test_assert"),
                          weights=(35, 20, 30, 15))[0]
    keep_going = rng.random() < 0.3
    units: list[Unit] = []
    for name in names:
        warns = rng.sample(("unused_param", "sign_compare", "unused_var", "unused_static",
                            "format", "fallthrough"), rng.choice((0, 1, 2, 2, 3, 4)))
        units.append(c_unit(rng, proj, name, cpp, warns))
    decls: list[str] = []
    errors: list[Failure] = []
    if failure == "compile":
        lang = "cpp" if cpp else "c"
        forms = [f for f, (_, _, langs) in C_ERRORS.items() if lang in langs.split()]
        weights = [3 if f == "no_match_operator" else 4 for f in forms]
        chosen = []
        for _ in range(rng.choice((1, 1, 2))):
            f = rng.choices(forms, weights=weights)[0]
            if f not in chosen:
                chosen.append(f)
        # Without -k make stops at the first failing file: all errors go into one file.
        targets = [rng.choice(units)] * len(chosen) if not keep_going else \
            [rng.choice(units) for _ in chosen]
        for form, u in zip(chosen, targets, strict=True):
            body, at, _ = C_ERRORS[form]
            fn = f"{u.name}_{rng.choice(('adjusted', 'span', 'scaled_total', 'weighted'))}" \
                 f"_{len(u.lines)}"
            u.lines += [f"int {fn}(int n)", "{"] + \
                [f"    {x.format(u=u.name, m=u.model.mul)}" for x in body] + ["}", ""]
            line = len(u.lines) - 1 - len(body) + at
            if form == "no_match_operator":
                u.lines.insert(1, "#include <iostream>")
                for e in errors:
                    if e.test == f"src/{u.name}.{ext}":
                        e.line += 1
                line += 1
            u.decls.append(f"int {fn}(int n);")
            errors.append(Failure(test=f"src/{u.name}.{ext}", how=form, result="compile",
                                  line=line, extra={"function": fn}))
    missing: list[str] = []
    if failure == "link":
        callee = rng.choice(units)
        sym = f"{callee.name}_checksum"
        decls.append(f"int {sym}(int value);")
        callers = rng.sample(units, rng.choice((1, 1, 2)))
        for u in callers:
            fn = f"{u.name}_sealed_total"
            u.decls.append(f"int {fn}(int n);")
            u.lines += [f"int {fn}(int n)", "{", f"    return {sym}({u.name}_compute(n, 1));", "}",
                        ""]
        missing.append(f"{sym}(int)" if cpp else sym)
        errors.append(Failure(test=sym, how="undefined reference", result="link",
                              extra={"callers": [f"{u.name}_sealed_total" for u in callers]}))
    guard = f"{proj.upper()}_{hext.upper()}"
    hdr = [f"/* {header}: public interface of {proj}. */", f"#ifndef {guard}", f"#define {guard}",
           "", "#include <stddef.h>"]
    if cpp:
        hdr.append("#include <string>")
    hdr += ["", f"struct {proj}_pair {{", "    int lo;", "    int hi;", "};", "",
            f"void {proj}_log(const char *component, int count, unsigned long seed);",
            f"void {proj}_handled(const char *component, const char *host);", ""]
    for u in units:
        hdr += u.decls + [""]
    hdr += decls + ["", f"#endif /* {guard} */"]
    case.files[f"include/{header}"] = "\n".join(hdr) + "\n"
    for u in units:
        case.files[f"src/{u.name}.{ext}"] = "\n".join(u.lines).rstrip("\n") + "\n"
    log_src = C_LOG.format(ext=ext, proj=proj, header=header,
                           levels=", ".join(c_str(a) for a, _ in MESSAGES),
                           messages=", ".join(c_str(b) for _, b in MESSAGES))
    log_src = log_src.replace("#include <stdio.h>\n", "#include <stdio.h>\n#include <string.h>\n")
    case.files[f"src/log.{ext}"] = log_src
    main_src = [f"/* main.{ext}: {proj} command line entry point. */", "#include <stdio.h>",
                f"#include \"{header}\"", "", "int main(int argc, char **argv)", "{",
                "    char buf[32];", f"    {units[0].name}_label(argc, buf, sizeof buf);",
                f"    printf(\"%s %d\\n\", buf, {units[0].name}_compute(argc, 1));",
                "    (void)argv;", "    return 0;", "}"]
    case.files[f"src/main.{ext}"] = "\n".join(main_src) + "\n"
    # the test runner
    n_checks = sized(rng, case.size, (15, 50), (40, 150), (120, 400))
    budget = case.noise // 2
    case.noise -= budget
    noise = spread(rng, budget, n_checks)
    fail_at = set()
    if failure == "test_fail":
        fail_at = set(rng.sample(range(n_checks), rng.choice((1, 1, 2, 3))))
    elif failure == "test_assert":
        fail_at = {rng.randrange(n_checks // 3, n_checks)}
    style = rng.choice(sorted(C_FAIL_STYLES))
    tests, calls = [], []
    used: set[str] = set()
    for j in range(n_checks):
        u = rng.choice(units)
        m = u.model
        form = rng.choice(("compute", "depth", "label", "series", "range"))
        fn = test_name(rng, used, f"test_{u.name}_")
        check = fn[5:]
        body = []
        if noise[j]:
            body.append(f"    {proj}_log({c_str(rng.choice(COMPONENTS))}, {noise[j]}, "
                        f"{noise_seed(rng)}UL);")
        if rng.random() < 0.04:
            body.append(f"    {proj}_handled({c_str(rng.choice(COMPONENTS))}, "
                        f"{c_str(rng.choice(HOSTS))});")
        bad = j in fail_at
        if form == "label":
            i = rng.randint(0, 400)
            want = m.label(i) if not bad else wrong_str(rng, m.label(i))
            body += ["    char buf[32];", f"    {u.name}_label({i}, buf, sizeof buf);"]
            if bad and failure == "test_assert":
                body.append(f"    assert(strcmp(buf, {c_str(want)}) == 0);")
            else:
                body.append(f"    CHECK_STR({c_str(check)}, buf, {c_str(want)});")
        else:
            if form == "compute":
                a, b = rng.randint(0, 60), rng.randint(0, 60)
                expr, v = f"{u.name}_compute({a}, {b})", m.compute(a, b)
            elif form == "depth":
                n = rng.randint(0, 40)
                expr, v = f"{u.name}_depth({n})", m.depth_sum(n)
            elif form == "series":
                n = rng.randint(0, 30)
                expr, v = f"{u.name}_series_sum({n})", m.series_sum(n)
            else:
                n = rng.randint(0, 30)
                expr, v = f"{u.name}_range({n}).hi", n * m.step + m.mod
            want = v if not bad else wrong(rng, v)
            if bad and failure == "test_assert":
                body.append(f"    assert({expr} == {want});")
            else:
                body.append(f"    CHECK_INT({c_str(check)}, {expr}, {want});")
        tests.append(f"static void {fn}(void)\n{{\n" + "\n".join(body) + "\n}\n")
        calls.append(f"    {fn}();")
        if bad:
            errors.append(Failure(test=check if failure == "test_fail" else fn,
                                  how="FAIL line" if failure == "test_fail" else "assert() abort",
                                  result="failed"))
    int_fail, str_fail = C_FAIL_STYLES[style]
    case.files[f"tests/test_{proj}.{ext}"] = C_TEST_MAIN.format(
        proj=proj, header=header, int_fail=int_fail, str_fail=str_fail, tests="\n".join(tests),
        count=n_checks, calls="\n".join(calls))
    cc = "g++" if cpp else "gcc"
    std = rng.choice(("-std=c++17", "-std=c++20")) if cpp else rng.choice(("-std=c11",
                                                                             "-std=gnu11"))
    opt = rng.choice(("-O0", "-O2", "-Og"))
    dbg = rng.choice((" -g", " -g", ""))
    objs = [f"build/{u.name}.o" for u in units] + ["build/log.o"]
    mk = [f"# Makefile for {proj}", f"CC = {cc}", f"CFLAGS = -Wall -Wextra {std} {opt}{dbg} "
          "-Iinclude", f"OBJ = {' '.join(objs)}", "", f"all: build/{proj}", "",
          f"build/{proj}: build/main.o $(OBJ)", "\t$(CC) $(CFLAGS) -o $@ $^", "",
          f"build/%.o: src/%.{ext} include/{header}", "\t@mkdir -p build",
          "\t$(CC) $(CFLAGS) -c $< -o $@", "",
          f"build/test_runner: tests/test_{proj}.{ext} $(OBJ)", "\t$(CC) $(CFLAGS) -o $@ $^", "",
          "test: build/test_runner", "\t./build/test_runner", "", "check: test", "", "clean:",
          "\trm -rf build", "", ".PHONY: all test check clean"]
    case.files["Makefile"] = "\n".join(mk) + "\n"
    k = "-k " if keep_going else ""
    case.build = rng.choice(([f"make {k}all", f"make {k}test"], [f"make {k}all test"],
                             [f"make {k}check"]))
    case.failures = errors
    case.info.update(language="C++" if cpp else "C", compiler=cc, failure=failure,
                     keep_going=keep_going, units=[u.name for u in units], checks=n_checks,
                     fail_style=style, missing=missing, cflags=mk[2][9:])


# --------------------------------------------------------------------------- node projects


JS_LIB = """'use strict';
// {title}: totals, labels, series, records and lookups.

const MUL = {mul};
const OFFSET = {offset};
const STEP = {step};
const MOD = {mod};
const TAG = {tag};
const KEYS = {keys};
const TABLE = {table};

function compute(a, b) {{
  return a * MUL + b + OFFSET;
}}

function depthSum(n) {{
  return n <= 0 ? OFFSET : depthSum(n - 1) + STEP;
}}

function label(i) {{
  return `${{TAG}}-${{String(i).padStart(3, '0')}}`;
}}

function series(n) {{
  const out = [];
  for (let i = 0; i < n; i++) out.push((i * STEP + OFFSET) % MOD);
  return out;
}}

function record(i) {{
  return {{ id: i, label: label(i), total: compute(i, 3), tags: [TAG, KEYS[i % KEYS.length]] }};
}}

function report(n) {{
  const lines = [];
  for (let i = 0; i < n; i++) lines.push(`${{label(i)}}: ${{compute(i, 1)}}`);
  return lines.join('\\n');
}}

function resolve(key, depth) {{
  if (depth <= 0) return TABLE[key].amount;
  return resolve(key, depth - 1);
}}

function parseAmount(text) {{
  const value = Number.parseInt(text, 10);
  if (Number.isNaN(value)) throw new RangeError(`invalid amount: ${{text}}`);
  return value;
}}

module.exports = {{ compute, depthSum, label, series, record, report, resolve, parseAmount }};
"""

JS_TELEMETRY = """'use strict';
// Structured log output of the workers (used by the tests as well).

const MESSAGES = {messages};

function emit(component, count, seed) {{
  let state = seed;
  for (let k = 0; k < count; k++) {{
    state = (state * 1103515245 + 12345) % 2147483648;
    const [level, message] = MESSAGES[state % MESSAGES.length];
    const text = message.replace('{{n}}', String(Math.floor(state / 7) % 1000));
    const mm = String(Math.floor(k / 60) % 60).padStart(2, '0');
    const ss = String(k % 60).padStart(2, '0');
    const ms = String(state % 1000).padStart(3, '0');
    const stamp = `2024-03-14T10:${{mm}}:${{ss}}.${{ms}}Z`;
    console.log(`${{stamp}} ${{level.padEnd(5)}} [${{component}}] ${{text}}`);
  }}
}}

function connect(host, attempt) {{
  if (attempt < 2) return connect(host, attempt + 1);
  throw new Error(`connect ECONNREFUSED ${{host}}`);
}}

function handled(component, host) {{
  try {{
    connect(host, 0);
  }} catch (err) {{
    console.error(`ERROR [${{component}}] upstream call failed, retrying in 2s`);
    console.error(err.stack);
  }}
}}

module.exports = {{ emit, handled }};
"""


def js(v: object) -> str:
    return json.dumps(v)


def js_pass_check(rng: Random, m: Model, lib: str) -> str:
    form = rng.choice(("compute", "label", "series", "record", "depth", "throws"))
    if form == "compute":
        a, b = rng.randint(0, 60), rng.randint(0, 60)
        return f"assert.strictEqual({lib}.compute({a}, {b}), {m.compute(a, b)});"
    if form == "label":
        i = rng.randint(0, 400)
        return f"assert.strictEqual({lib}.label({i}), {js(m.label(i))});"
    if form == "series":
        n = rng.randint(1, 8)
        return f"assert.deepStrictEqual({lib}.series({n}), {js(m.series(n))});"
    if form == "record":
        i = rng.randint(0, 40)
        return f"assert.deepStrictEqual({lib}.record({i}), {js(m.record(i))});"
    if form == "depth":
        n = rng.randint(0, 40)
        return f"assert.strictEqual({lib}.depthSum({n}), {m.depth_sum(n)});"
    return f"assert.throws(() => {lib}.parseAmount('n/a'), RangeError);"


def js_fail_check(rng: Random, m: Model, lib: str) -> tuple[list[str], str]:
    form = rng.choice(("strict_num", "strict_str", "deep_record", "deep_series", "type_error",
                       "ok_msg", "throws_missing"))
    if form == "strict_num":
        a, b = rng.randint(0, 60), rng.randint(0, 60)
        return [f"assert.strictEqual({lib}.compute({a}, {b}), "
                f"{wrong(rng, m.compute(a, b))});"], "strictEqual on numbers"
    if form == "strict_str":
        n = rng.randint(3, 6)
        lines = m.report(n).split("\n")
        k = rng.randrange(n)
        lines[k] = wrong_str(rng, lines[k])
        return [f"assert.strictEqual({lib}.report({n}), {js(chr(10).join(lines))});"], \
            "strictEqual on multi-line strings"
    if form == "deep_record":
        i = rng.randint(0, 30)
        return [f"assert.deepStrictEqual({lib}.record({i}), "
                f"{js(wrong_record(rng, m.record(i)))});"], "deepStrictEqual on an object"
    if form == "deep_series":
        n = rng.randint(4, 10)
        want = js(wrong_list(rng, m.series(n)))
        return [f"assert.deepStrictEqual({lib}.series({n}), {want});"], \
            "deepStrictEqual on an array"
    if form == "type_error":
        depth = rng.randint(3, 30)
        return [f"const amount = {lib}.resolve({js(m.missing)}, {depth});",
                "assert.ok(amount > 0);"], f"TypeError at call depth {depth}"
    if form == "ok_msg":
        i = rng.randint(1, 30)
        limit = m.compute(i, 3) - rng.randint(1, 9)
        return [f"const total = {lib}.compute({i}, 3);",
                f"assert.ok(total <= {limit}, `total ${{total}} for ${{{lib}.label({i})}} "
                f"exceeds the limit {limit}`);"], "assert.ok with message"
    return [f"assert.throws(() => {lib}.parseAmount('{rng.randint(1, 999)}'), RangeError);"], \
        "expected exception missing"


def plan_node(rng: Random, case: Case) -> None:
    pkg = case.info["pkg"]
    m = make_model(rng, pkg[:4])
    n_tests = sized(rng, case.size, (12, 40), (40, 120), (100, 300))
    n_files = max(2, min(8, n_tests // rng.randint(8, 20)))
    topics = sorted(rng.sample(TOPICS, n_files))
    n_fail = rng.choice((1, 1, 2, 2, 3))
    fail_files = [rng.randrange(n_files) for _ in range(n_fail)]
    reporter = rng.choice(("tap", "spec"))
    # Node reads a test file's stdout in chunks of up to 64 KiB and the reporters print each
    # chunk as it comes: more output per file could be cut mid-line at varying places.
    budget = min(case.noise, 450 * n_files)
    case.noise -= budget
    case.files["package.json"] = json.dumps({
        "name": f"@{case.info['org']}/{pkg}", "version": f"{rng.randint(1, 3)}.{rng.randint(0, 12)}"
        f".{rng.randint(0, 9)}", "private": True, "main": f"src/{pkg}.js",
        "scripts": {"test": f"node --test --test-reporter={reporter}"},
        "engines": {"node": ">=20"}}, indent=2) + "\n"
    case.files[f"src/{pkg}.js"] = JS_LIB.format(
        title=f"{pkg} library", mul=m.mul, offset=m.offset, step=m.step, mod=m.mod,
        tag=js(m.tag), keys=js(m.keys), table=js({k: {"amount": v} for k, v in m.table.items()}))
    case.files["src/telemetry.js"] = JS_TELEMETRY.format(
        messages=js([list(x) for x in MESSAGES]))
    used: set[str] = set()
    suites_used: set[str] = set()
    handled_left = rng.randint(1, 3)
    for fi, topic in enumerate(topics):
        n_here = n_tests // n_files
        n_bad = fail_files.count(fi)
        noise = spread(rng, budget // n_files, n_here)
        lib = pkg
        strict = rng.random() < 0.5
        lines = ["'use strict';",
                 "const { describe, it, test } = require('node:test');",
                 f"const assert = require('node:assert{'/strict' if strict else ''}');",
                 f"const {lib} = require('../src/{pkg}');",
                 "const telemetry = require('../src/telemetry');", ""]
        groups: list[tuple[str | None, list[str]]] = []
        n_groups = rng.randint(1, 3)
        for _ in range(n_groups):
            if rng.random() < 0.75:
                s = f"{topic} {rng.choice(('rules', 'edge cases', 'api', 'defaults', 'flow'))}"
                if s in suites_used:
                    s = f"{s} {len(suites_used)}"
                suites_used.add(s)
                groups.append((s, []))
            else:
                groups.append((None, []))
        bad_at = set(rng.sample(range(n_here + n_bad), n_bad))
        for j in range(n_here + n_bad):
            gi = rng.randrange(len(groups))
            suite, body = groups[gi]
            while True:
                name = f"{rng.choice(VERBS)} {rng.choice(NOUNS).replace('_', ' ')} {len(used) + 1}"
                if name not in used:
                    used.add(name)
                    break
            stmts: list[str] = []
            if j in bad_at:
                code, how = js_fail_check(rng, m, lib)
                if rng.random() < 0.3:
                    stmts.append(f"console.log('checking {name}');")
                stmts += code
                case.failures.append(Failure(test=name, how=how, header=suite or ""))
            else:
                k = j if j < len(noise) else 0
                if noise[k]:
                    stmts.append(f"telemetry.emit({js(rng.choice(COMPONENTS))}, {noise[k]}, "
                                 f"{noise_seed(rng)});")
                if handled_left > 0 and rng.random() < 0.1:
                    handled_left -= 1
                    stmts.append(f"telemetry.handled({js(rng.choice(COMPONENTS))}, "
                                 f"{js(rng.choice(HOSTS))});")
                stmts += [js_pass_check(rng, m, lib) for _ in range(rng.randint(1, 3))]
            fn = "it" if suite else "test"
            body.append(f"{fn}({js(name)}, () => {{\n" + "\n".join(f"  {x}" for x in stmts)
                        + "\n});")
        for suite, body in groups:
            if not body:
                continue
            if suite:
                lines.append(f"describe({js(suite)}, () => {{")
                lines += [indent(b, "  ") for b in body]
                lines.append("});")
            else:
                lines += body
            lines.append("")
        case.files[f"test/{topic}.test.js"] = "\n".join(lines)
    case.build = [f"node --test --test-reporter={reporter}"]
    case.info.update(reporter=reporter, suites=sorted(suites_used),
                     tests=n_tests - n_tests % n_files + n_fail,
                     test_files=n_files)


# --------------------------------------------------------------------------- the CI job


FLAVOURS = ("github", "gitlab", "jenkins", "travis")
UNAME = "Linux {host} 5.15.0-1057-azure #65-Ubuntu SMP Fri Feb 9 18:39:24 UTC 2024 x86_64 " \
        "x86_64 x86_64 GNU/Linux"


def python_bin() -> str:
    return str(Path(sys.executable).parent)


def job_env(case: Case, ws: Path, build_root: Path) -> dict[str, str]:
    s = case.script
    sha = hashlib.sha1(f"{case.kind}/{case.seed}".encode()).hexdigest()
    org = case.info["org"]
    repo = f"{org}/{case.project}"
    branch = BRANCHES[case.seed % len(BRANCHES)]
    home = str(Path.home())
    env = {
        "HOME": home, "LANG": "C.UTF-8", "TZ": "UTC", "USER": "runner", "LOGNAME": "runner",
        "SHELL": "/bin/bash",
        "PATH": f"{python_bin()}:{home}/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:"
                "/usr/bin:/sbin:/bin",
        "CI": "true",
    }
    run = 1000 + case.seed
    if s["flavour"] == "github":
        env.update(GITHUB_ACTIONS="true", GITHUB_WORKFLOW="CI", GITHUB_RUN_ID=str(8000000 + run),
                   GITHUB_RUN_NUMBER=str(run), GITHUB_SHA=sha, GITHUB_REF=f"refs/heads/{branch}",
                   GITHUB_REPOSITORY=repo, GITHUB_WORKSPACE=str(ws), RUNNER_OS="Linux",
                   RUNNER_ARCH="X64", RUNNER_NAME=f"GitHub Actions {case.seed % 20 + 1}")
    elif s["flavour"] == "gitlab":
        env.update(GITLAB_CI="true", CI_JOB_ID=str(500000 + run), CI_PIPELINE_ID=str(90000 + run),
                   CI_COMMIT_SHA=sha, CI_COMMIT_SHORT_SHA=sha[:8], CI_COMMIT_REF_NAME=branch,
                   CI_PROJECT_PATH=repo, CI_PROJECT_DIR=str(ws), CI_JOB_NAME="test",
                   CI_RUNNER_DESCRIPTION=f"docker-runner-{case.seed % 5 + 1}")
    elif s["flavour"] == "jenkins":
        env.update(BUILD_NUMBER=str(run), BUILD_ID=str(run), JOB_NAME=case.project,
                   BUILD_URL=f"https://ci.example.invalid/job/{case.project}/{run}/",
                   JENKINS_URL="https://ci.example.invalid/", WORKSPACE=str(ws),
                   GIT_COMMIT=sha, GIT_BRANCH=f"origin/{branch}",
                   NODE_NAME=f"linux-agent-{case.seed % 7 + 1}",
                   EXECUTOR_NUMBER=str(case.seed % 4))
    else:
        env.update(TRAVIS="true", TRAVIS_BUILD_NUMBER=str(run), TRAVIS_JOB_ID=str(700000 + run),
                   TRAVIS_COMMIT=sha, TRAVIS_BRANCH=branch, TRAVIS_REPO_SLUG=repo,
                   TRAVIS_BUILD_DIR=str(ws), TRAVIS_OS_NAME="linux")
    if case.kind in ("pytest", "unittest"):
        env.update(PYTHONUNBUFFERED="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   PIP_NO_INPUT="1")
    if case.kind == "pytest":
        # pytest changes its output (assertion truncation) when CI or BUILD_NUMBER is set
        env.pop("CI", None)
        env.pop("BUILD_NUMBER", None)
    if case.kind == "cargo":
        env.update(CARGO_TARGET_DIR=str(build_root / "cargo-target"), CARGO_INCREMENTAL="0")
    if case.kind == "node":
        env["NODE_ENV"] = "test"
    env.update(case.env)
    return env


def job_script(case: Case) -> str:
    s = case.script
    trace = s["trace"]
    lines = ["#!/bin/bash"]
    lines += [f"echo {sh_quote(x)}" for x in s["banner"]]
    if trace:
        lines.append("set -x")

    def cmd(text: str) -> None:
        if not trace:
            lines.append(f"echo {sh_quote('$ ' + text)}")
        if text == "uname -a":
            lines.append(f"echo {sh_quote(s['uname'])}")
        else:
            lines.append(text)

    for c in s["preamble"]:
        cmd(c)
    lines += ["(", "set -e"]
    for c in case.build:
        cmd(c)
    lines += [")", "rc=$?"]
    if trace:
        lines.append("{ set +x; } 2>/dev/null")
    if s["post"]:
        lines += [f"echo {sh_quote(x)}" for x in s["post_header"]]
        if trace:
            lines.append("set -x")
        for c in s["post"]:
            cmd(c)
        if trace:
            lines.append("{ set +x; } 2>/dev/null")
        lines += [f"echo {sh_quote(x)}" for x in s["post_footer"]]
    for x in s["final"]:
        lines.append(f'echo "{x}"')
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"


def listing_commands(rng: Random, kind: str, budget: int) -> list[str]:
    """Real commands that print about ``budget`` lines (machine listings)."""
    options = [("dpkg -l | head -n {k}", 700), ("ls -la /usr/bin | head -n {k}", 1100),
               ("find /usr/include -name '*.h' | sort | head -n {k}", 6000)]
    if kind in ("pytest", "unittest"):
        options += [("pip list 2>/dev/null | head -n {k}", 170),
                    ("pip freeze 2>/dev/null | head -n {k}", 160)]
    if kind == "node":
        options += [("find /usr/lib/node_modules/npm -name '*.js' | sort | head -n {k}", 1100),
                    ("find /usr/lib/node_modules/npm -name package.json | sort | head -n {k}",
                     300)]
    if kind == "cargo":
        options += [("find ~/.rustup/toolchains -maxdepth 6 | sort | head -n {k}", 450),
                    ("find ~/.rustup/toolchains -type f | sort | head -n {k}", 5000)]
    if kind == "make":
        options += [("find /usr/lib/gcc -type f | sort | head -n {k}", 200)]
    out = []
    rng.shuffle(options)
    for text, cap in options:
        if budget < 20 or len(out) >= 3:
            break
        k = min(cap, budget, rng.randint(max(20, budget // 3), max(21, budget)))
        if k < 20:
            continue
        out.append(text.format(k=k))
        budget -= k
    return out


def plan_script(rng: Random, case: Case) -> dict:
    flavour = rng.choice(FLAVOURS)
    small = case.size == "small"
    host = {"github": f"fv-az{rng.randint(100, 999)}-{rng.randint(100, 999)}",
            "gitlab": f"runner-{rng.randint(1000, 9999)}-project-{rng.randint(10, 99)}",
            "jenkins": f"linux-agent-{case.seed % 7 + 1}",
            "travis": f"travis-job-{rng.randint(10000, 99999)}"}[flavour]
    tool = {"pytest": ["python3 --version", "python3 -m pytest --version"],
            "unittest": ["python3 --version"],
            "cargo": ["cargo --version", "rustc --version --verbose"],
            "make": ["gcc --version" if case.info.get("compiler") != "g++" else "g++ --version",
                     "make --version"],
            "node": ["node --version", "node -p process.versions"]}[case.kind]
    pre: list[str] = []
    if rng.random() < 0.6:
        pre.append("uname -a")
    pre += [t for t in tool if rng.random() < 0.85]
    if case.kind in ("pytest", "unittest") and rng.random() < 0.5:
        pre.append("pip list 2>/dev/null | head -40")
    if rng.random() < (0.3 if small else 0.7):
        pre.append("env | sort")
    if rng.random() < 0.6:
        pre.append("ls -la")
    if rng.random() < 0.5:
        pre.append("find . -type f | sort | head -50")
    listings = listing_commands(rng, case.kind, case.noise)
    pre += listings
    head = pre[:1] if pre and pre[0] == "uname -a" else []
    rest = pre[len(head):]
    rng.shuffle(rest)
    pre = head + rest
    post: list[str] = []
    post_header: list[str] = []
    post_footer: list[str] = []
    if rng.random() < 0.5:
        k = (lambda: rng.randint(5, 30)) if small else (lambda: rng.randint(20, 200))
        opts = ["du -sh .", f"ls -laR . | head -n {k()}", "df -h . | tail -n 1",
                {"pytest": f"find . -name '*.pyc' | sort | head -n {k()}",
                 "unittest": f"find . -name '*.pyc' | sort | head -n {k()}",
                 "cargo": "find . -name '*.rs' | sort",
                 "make": f"find . -name '*.o' | sort | head -n {k()}",
                 "node": "find . -name '*.js' | sort"}[case.kind]]
        post = rng.sample(opts, rng.randint(1, 3))
        post_header = {
            "github": ["Post job cleanup.", "Run actions/upload-artifact@v4"],
            "gitlab": ["Saving cache for failed job", "Uploading artifacts for failed job"],
            "jenkins": ["[Pipeline] // stage", "[Pipeline] stage", "[Pipeline] { (Archive)"],
            "travis": ["store build cache", "change detected (content changed, file is created,"
                       " or file is deleted):"]}[flavour]
        post_footer = {
            "github": ["With the provided path, there will be 0 files uploaded",
                       "Warning: No files were found with the provided path: reports/. "
                       "No artifacts will be uploaded."],
            "gitlab": ["Uploading artifacts...", "reports/: found 0 matching artifact files and "
                       "directories", "Uploading artifacts as \"archive\" to coordinator... 201 "
                       "Created  id=" + str(500000 + case.seed) + " responseStatus=201 Created"],
            "jenkins": ["Archiving artifacts", "[Pipeline] }"],
            "travis": ["uploading archive", "done."]}[flavour]
    final = {"github": ["##[error]Process completed with exit code $rc."],
             "gitlab": ["Cleaning up project directory and file based variables",
                        "ERROR: Job failed: exit code $rc"],
             "jenkins": ["Build step 'Execute shell' marked build as failure",
                         "Finished: FAILURE"],
             "travis": [f"The command \\\"{' && '.join(case.build)}\\\" exited with $rc.", "",
                        "Done. Your build exited with 1."]}[flavour]
    if flavour == "gitlab" and rng.random() < 0.5:
        final = final[1:]
    banner: list[str] = []
    if rng.random() < 0.6:
        sha = hashlib.sha1(f"{case.kind}/{case.seed}".encode()).hexdigest()
        banner = {
            "github": ["Current runner version: '2.317.0'", "Operating System",
                       "  Ubuntu", "  22.04.4", "  LTS", f"Runner name: '{host}'",
                       f"Run {' && '.join(case.build)}"],
            "gitlab": ["Running with gitlab-runner 16.11.0 (91a27b2a)",
                       f"  on {host} x{sha[:7]}", "Preparing the \"docker\" executor",
                       "Getting source from Git repository",
                       f"Checking out {sha[:8]} as detached HEAD (ref is "
                       f"{BRANCHES[case.seed % len(BRANCHES)]})...",
                       "Executing \"step_script\" stage of the job script"],
            "jenkins": [f"Started by {rng.choice(('an SCM change', 'timer', 'user admin'))}",
                        "Running as SYSTEM", "Building in workspace $WORKSPACE",
                        f" > git checkout -f {sha} # timeout=10"],
            "travis": ["Worker information", f"hostname: {host}", "version: v6.2.22",
                       f"$ git checkout -qf {sha}"]}[flavour]
    return {"flavour": flavour, "trace": rng.random() < 0.3, "banner": banner,
            "uname": UNAME.format(host=host), "preamble": pre, "post": post,
            "post_header": post_header, "post_footer": post_footer, "final": final}


PLANNERS = {"pytest": plan_pytest, "unittest": plan_unittest, "cargo": plan_cargo,
            "make": plan_make, "node": plan_node}


def plan_case(kind: str, seed: int) -> Case:
    rng = Random(f"polyglot-logs/{kind}/{seed}")
    org, domain = rng.choice(ORGS), rng.choice(DOMAINS)
    size = rng.choices(("small", "medium", "large"), weights=(35, 40, 25))[0]
    role = rng.choice(ROLES)
    project = f"{domain}-{role}" if kind == "cargo" else domain
    case = Case(name=f"pg{seed:04d}_{kind}", kind=kind, seed=seed, size=size, project=project)
    case.info = {"org": org, "pkg": domain}
    target = sized(rng, size, (60, 400), (400, 2500), (2500, 12000))
    case.noise = max(0, target - 150)
    PLANNERS[kind](rng, case)
    case.script = plan_script(rng, case)
    return case


# --------------------------------------------------------------------------- labelling


def blank(s: str) -> bool:
    return not s.strip()


def add(labels: set[int], lines: list[str], i: int) -> None:
    """Label 0-based line ``i`` (stored 1-based) unless it is blank."""
    if 0 <= i < len(lines) and not blank(lines[i]):
        labels.add(i + 1)


PY_BANNER = re.compile(r"^=+ (.+?) =+$")
PY_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
PY_CAPTURED = re.compile(r"^-+ (Captured|live log) .*-+$")
PY_SUMMARY = re.compile(r"^=*\s*(\d+ [a-z]+(?:, \d+ [a-z]+)*) in [\d.]+s\b.*$")
PY_STOP = re.compile(r"^!+ stopping after \d+ failures? !+$")


def label_pytest(lines: list[str], case: Case) -> tuple[set[int], list[str]]:
    labels: set[int] = set()
    problems: list[str] = []
    headers = {f.header for f in case.failures}
    nodeids = {f.test for f in case.failures}
    section = ""
    seen_headers: list[str] = []
    seen_ids: list[str] = []
    in_report = False
    in_entry = False
    summary = None
    for i, line in enumerate(lines):
        if m := PY_SUMMARY.match(line):
            summary = (i, m.group(1))
            in_report = in_entry = False
            continue
        if m := PY_BANNER.match(line):
            section = m.group(1)
            in_report = in_entry = False
            continue
        if PY_STOP.match(line):
            add(labels, lines, i)
            continue
        if section in ("FAILURES", "ERRORS"):
            if m := PY_HEADER.match(line):
                seen_headers.append(m.group(1))
                in_report = m.group(1) in headers
                if in_report:
                    add(labels, lines, i)
            elif PY_CAPTURED.match(line):
                in_report = False
            elif in_report:
                add(labels, lines, i)
        elif section == "short test summary info":
            m = re.match(r"^(FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS) (\S+)", line)
            if m:
                in_entry = m.group(1) in ("FAILED", "ERROR") and m.group(2) in nodeids
                if m.group(1) in ("FAILED", "ERROR"):
                    seen_ids.append(m.group(2))
            if in_entry:
                add(labels, lines, i)
    if sorted(seen_headers) != sorted(headers):
        problems.append(f"failure reports {sorted(seen_headers)} != injected {sorted(headers)}")
    if sorted(seen_ids) != sorted(nodeids):
        problems.append(f"short summary {sorted(seen_ids)} != injected {sorted(nodeids)}")
    if summary is None:
        problems.append("no final summary line")
    else:
        add(labels, lines, summary[0])
        counts = {k: int(v) for v, k in re.findall(r"(\d+) ([a-z]+)", summary[1])}
        want = {"failed": sum(f.result == "failed" for f in case.failures),
                "errors": sum(f.result == "error" for f in case.failures),
                "passed": case.info["passed"]}
        got = {"failed": counts.get("failed", 0),
               "errors": counts.get("errors", counts.get("error", 0)),
               "passed": counts.get("passed", 0)}
        if got != want:
            problems.append(f"summary counts {got} != expected {want}")
    if case.info["exitfirst"] and not any(PY_STOP.match(x) for x in lines):
        problems.append("no 'stopping after' line with -x")
    return labels, problems


UT_HEAD = re.compile(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)(?: (\(.*\)))?\s*$")
UT_RULE = re.compile(r"^(={40,}|-{40,})$")


def label_unittest(lines: list[str], case: Case) -> tuple[set[int], list[str]]:
    labels: set[int] = set()
    problems: list[str] = []
    want = sorted((("FAIL" if f.result == "failed" else "ERROR"), f.test, f.header or "")
                  for f in case.failures)
    seen = []
    n = len(lines)
    final = None
    ran = None
    for i, line in enumerate(lines):
        if m := UT_HEAD.match(line):
            key = (m.group(1), m.group(3), m.group(4) or "")
            seen.append(key)
            mine = key in want
            if mine:
                add(labels, lines, i)
            j = i + 1
            if j < n and UT_RULE.match(lines[j]):
                j += 1
            own = True
            while j < n and not UT_RULE.match(lines[j]):
                if lines[j] in ("Stdout:", "Stderr:"):
                    own = False
                if mine and own:
                    add(labels, lines, j)
                j += 1
        elif m := re.match(r"^FAILED \((.*)\)\s*$", line):
            final = (i, m.group(1))
        elif m := re.match(r"^Ran (\d+) tests? in ", line):
            ran = int(m.group(1))
    if sorted(seen) != want:
        problems.append(f"failure reports {sorted(seen)} != injected {want}")
    if final is None:
        problems.append("no FAILED (...) line")
    else:
        add(labels, lines, final[0])
        counts = dict(re.findall(r"(\w+)=(\d+)", final[1]))
        got = (int(counts.get("failures", 0)), int(counts.get("errors", 0)),
               int(counts.get("skipped", 0)))
        exp = (sum(k == "FAIL" for k, _, _ in want), sum(k == "ERROR" for k, _, _ in want),
               case.info["skipped"])
        if got != exp:
            problems.append(f"FAILED counts {got} != expected {exp}")
    if ran != case.info["tests"]:
        problems.append(f"ran {ran} tests, expected {case.info['tests']}")
    return labels, problems


RS_SECTION = re.compile(r"^---- (\S+) stdout ----$")
RS_PANIC = re.compile(r"^thread '([^']+)'(?: \(\d+\))? panicked at ")
RS_RESULT = re.compile(r"^test result: (FAILED|ok)\. (\d+) passed; (\d+) failed;")
RS_ERROR = re.compile(r"^error(?:\[E\d{4}\])?: (.*)$")
RS_LOCATION = re.compile(r"^\s*--> ([^:\s]+):(\d+):(\d+)")
RS_TOOL = re.compile(r"^error: (could not compile|test failed, to rerun pass|\d+ targets? "
                     r"failed:)")


def label_cargo(lines: list[str], case: Case) -> tuple[set[int], list[str]]:
    labels: set[int] = set()
    problems: list[str] = []
    tests = {f.test for f in case.failures if f.result == "failed"}
    errors_want = sorted((f.test, f.line) for f in case.failures if f.result == "compile")
    n = len(lines)
    seen_sections: list[str] = []
    failed_total = 0
    errors_seen: list[tuple[str, int]] = []
    listed: list[str] = []
    could_not = 0
    for i, line in enumerate(lines):
        if m := RS_SECTION.match(line):
            name = m.group(1)
            if name not in tests:
                continue
            seen_sections.append(name)
            add(labels, lines, i)
            j = i + 1
            panic = None
            while j < n and not RS_SECTION.match(lines[j]) and lines[j] != "failures:" \
                    and lines[j] != "successes:":
                if panic is None and (p := RS_PANIC.match(lines[j])) and p.group(1) == name:
                    panic = j
                if panic is not None:
                    add(labels, lines, j)
                j += 1
            if panic is None:
                problems.append(f"no panic line in the report of {name}")
        elif line == "failures:" and i + 1 < n and lines[i + 1].startswith("    "):
            j = i + 1
            while j < n and lines[j].startswith("    "):
                listed.append(lines[j].strip())
                if lines[j].strip() in tests:
                    add(labels, lines, j)
                j += 1
        elif m := RS_RESULT.match(line):
            if m.group(1) == "FAILED":
                add(labels, lines, i)
                failed_total += int(m.group(3))
        elif m := RS_TOOL.match(line):
            add(labels, lines, i)
            if m.group(1) == "could not compile":
                could_not += 1
            j = i + 1
            while j < n and lines[j].startswith("    `"):  # the list of failed targets
                add(labels, lines, j)
                j += 1
            # --verbose: "Caused by:" and the failed process, after one blank line
            if j + 1 < n and blank(lines[j]) and lines[j + 1] == "Caused by:":
                j += 1
                while j < n and (lines[j] == "Caused by:" or lines[j].startswith("  ")):
                    add(labels, lines, j)
                    j += 1
        elif RS_ERROR.match(line):
            j = i
            loc = None
            while j < n and not blank(lines[j]):
                if loc is None and (mm := RS_LOCATION.match(lines[j])):
                    loc = (mm.group(1), int(mm.group(2)))
                add(labels, lines, j)
                j += 1
            errors_seen.append(loc or ("?", 0))
    if sorted(seen_sections) != sorted(tests):
        problems.append(f"failure reports {sorted(seen_sections)} != injected {sorted(tests)}")
    if sorted(listed) != sorted(tests):
        problems.append(f"failures list {sorted(listed)} != injected {sorted(tests)}")
    if failed_total != len(tests):
        problems.append(f"'test result: FAILED' counts {failed_total} != {len(tests)}")
    # rustc may report an error once per compiled target (lib and lib test): compare sets
    if sorted(set(errors_seen)) != errors_want:
        problems.append(f"compile errors at {sorted(set(errors_seen))} != injected {errors_want}")
    if errors_want and not could_not:
        problems.append("no 'could not compile' line")
    if tests and not any(x.startswith("error: test failed") or re.match(r"error: \d+ targets",
                                                                       x) for x in lines):
        problems.append("no 'error: test failed' line")
    return labels, problems


GCC_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)? (?P<rest>.*)$")
GCC_CTX = re.compile(r"^[^\s:][^:]*: (In (?:static |member )?function|In constructor|"
                     r"In destructor|In lambda|At global scope|In instantiation)")
GCC_EXCERPT = re.compile(r"^\s+(?:\d+ )?\|")
GCC_INCLUDED = re.compile(r"^(?:In file included from |\s+from )")
GCC_NESTED = re.compile(r"^[^\s:][^:]*: In (?:substitution|instantiation) of ")


def gcc_attached(x: str) -> bool:
    """Is ``x`` part of the diagnostic tree of the gcc error above it (excerpt, caret, note,
    "required from", template substitution context, an error nested in a system header)?"""
    if GCC_EXCERPT.match(x) or GCC_NESTED.match(x):
        return True
    d = GCC_DIAG.match(x)
    if not d or "undefined reference" in x:
        return False
    rest = d.group("rest")
    if rest.startswith("warning: "):
        return False
    if rest.startswith(("error: ", "fatal error: ")):
        return d.group("file").startswith("/usr/")
    return True


MAKE_ERR = re.compile(r"^make(?:\[\d+\])?: (?:\*\*\* \[.*\] .+|Target '.*' not remade because "
                      r"of errors\.)$")
UNDEF = re.compile(r"undefined reference to [`'](.+)'$")


def label_make(lines: list[str], case: Case) -> tuple[set[int], list[str]]:
    labels: set[int] = set()
    problems: list[str] = []
    failure = case.info["failure"]
    n = len(lines)
    errors_seen: list[tuple[str, int]] = []
    undefined: list[str] = []
    fails_seen: list[str] = []
    summary_failed = None
    asserts: list[str] = []
    make_errors = 0
    i = 0
    while i < n:
        line = lines[i]
        d = GCC_DIAG.match(line)
        if d and d.group("rest").startswith(("error: ", "fatal error: ")):
            errors_seen.append((d.group("file"), int(d.group("line"))))
            if i and GCC_CTX.match(lines[i - 1]):
                add(labels, lines, i - 1)
            add(labels, lines, i)
            j = i + 1
            while j < n:
                if gcc_attached(lines[j]):
                    add(labels, lines, j)
                    j += 1
                elif GCC_INCLUDED.match(lines[j]):
                    k = j
                    while k < n and GCC_INCLUDED.match(lines[k]):
                        k += 1
                    if k < n and gcc_attached(lines[k]):
                        for t in range(j, k):
                            add(labels, lines, t)
                        j = k
                    else:
                        break
                else:
                    break
            i = j
            continue
        if m := UNDEF.search(line):
            undefined.append(m.group(1))
            add(labels, lines, i)
            if i and re.search(r": in function [`'].*':$", lines[i - 1]):
                add(labels, lines, i - 1)
        elif re.match(r"^collect2: error: ld returned \d+ exit status$", line):
            add(labels, lines, i)
        elif MAKE_ERR.match(line):
            make_errors += 1
            add(labels, lines, i)
        elif m := re.match(r"^FAIL: (\S+?)(?::| \(|$)", line):
            fails_seen.append(m.group(1))
            add(labels, lines, i)
            j = i + 1
            while j < n and re.match(r"^  (expected|actual): ", lines[j]):
                add(labels, lines, j)
                j += 1
        elif re.match(r"^\S+: \S+:\d+: .*: Assertion `.*' failed\.$", line):
            asserts.append(line)
            add(labels, lines, i)
        elif m := re.match(r"^(\d+) tests, (\d+) passed, (\d+) failed$", line):
            summary_failed = int(m.group(3))
            if summary_failed:
                add(labels, lines, i)
        i += 1
    if not make_errors:
        problems.append("no make error line")
    want_errors = sorted((f.test, f.line) for f in case.failures if f.result == "compile")
    if sorted(set(errors_seen)) != want_errors:
        problems.append(f"compile errors {sorted(set(errors_seen))} != injected {want_errors}")
    want_undef = sorted(case.info["missing"])
    if sorted(set(undefined)) != want_undef:
        problems.append(f"undefined references {sorted(set(undefined))} != injected "
                        f"{want_undef}")
    if failure == "test_fail":
        want = sorted(f.test for f in case.failures)
        if sorted(fails_seen) != want:
            problems.append(f"FAIL lines {sorted(fails_seen)} != injected {want}")
        if summary_failed != len(want):
            problems.append(f"runner summary failed={summary_failed}, expected {len(want)}")
    elif fails_seen:
        problems.append(f"unexpected FAIL lines {fails_seen}")
    if failure == "test_assert":
        fn = case.failures[0].test
        if len(asserts) != 1 or fn not in asserts[0]:
            problems.append(f"assertion lines {asserts} do not name {fn}")
    elif asserts:
        problems.append(f"unexpected assertion failure {asserts}")
    return labels, problems


TAP_LINE = re.compile(r"^(\s*)(not ok|ok) \d+ - (.*?)(?: # (?:SKIP|TODO).*)?$")
SPEC_FAIL = re.compile(r"^(\s*)✖ (.*?) \([\d.]+m?s\)\s*$")


def spec_block(lines: list[str], i: int, labels: set[int] | None) -> int:
    """Label the error block under the spec line ``i``; return the index after it."""
    base = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines) and lines[j] != "" and (
            blank(lines[j]) or len(lines[j]) - len(lines[j].lstrip()) > base):
        if labels is not None:
            add(labels, lines, j)
        j += 1
    return j


def label_node(lines: list[str], case: Case) -> tuple[set[int], list[str]]:
    labels: set[int] = set()
    problems: list[str] = []
    tests = {f.test for f in case.failures}
    suites = {f.header for f in case.failures if f.header}
    n = len(lines)
    leaves: list[str] = []
    failed_suites: list[str] = []
    fail_count = None
    if case.info["reporter"] == "tap":
        for i, line in enumerate(lines):
            if m := TAP_LINE.match(line):
                if m.group(2) != "not ok":
                    continue
                name, pad = m.group(3), m.group(1)
                mine = name in tests or name in suites
                j = i + 1
                is_suite = False
                if j < n and lines[j] == pad + "  ---":
                    while j < n and lines[j] != pad + "  ...":
                        is_suite = is_suite or lines[j].strip() == "type: 'suite'"
                        j += 1
                (failed_suites if is_suite else leaves).append(name)
                if mine:
                    for t in range(i, min(j + 1, n)):
                        add(labels, lines, t)
            elif m := re.match(r"^# fail (\d+)$", line):
                fail_count = int(m.group(1))
                add(labels, lines, i)
            elif m := re.match(r"^# cancelled (\d+)$", line):
                if int(m.group(1)):
                    problems.append(f"{m.group(1)} tests cancelled")
    else:
        banner = next((i for i, x in enumerate(lines) if x.strip() == "✖ failing tests:"), n)
        i = 0
        while i < banner:
            line = lines[i]
            if m := SPEC_FAIL.match(line):
                name = m.group(2)
                mine = name in tests or name in suites
                (failed_suites if name in case.info["suites"] else leaves).append(name)
                if mine:
                    add(labels, lines, i)
                i = spec_block(lines, i, labels if mine else None)
                continue
            if m := re.match(r"^ℹ fail (\d+)$", line):
                fail_count = int(m.group(1))
                add(labels, lines, i)
            elif (m := re.match(r"^ℹ cancelled (\d+)$", line)) and int(m.group(1)):
                problems.append(f"{m.group(1)} tests cancelled")
            i += 1
        i = banner + 1
        repeated = []
        while i < n:
            if lines[i].startswith("test at ") and i + 1 < n and \
                    (m := SPEC_FAIL.match(lines[i + 1])) and m.group(2) in tests:
                repeated.append(m.group(2))
                add(labels, lines, i)
                add(labels, lines, i + 1)
                i = spec_block(lines, i + 1, labels)
                continue
            i += 1
        if sorted(repeated) != sorted(tests):
            problems.append(f"'failing tests' section {sorted(repeated)} != {sorted(tests)}")
    if sorted(leaves) != sorted(tests):
        problems.append(f"failing tests {sorted(leaves)} != injected {sorted(tests)}")
    if sorted(set(failed_suites)) != sorted(suites):
        problems.append(f"failing suites {sorted(set(failed_suites))} != expected "
                        f"{sorted(suites)}")
    if fail_count != len(tests):
        problems.append(f"fail count {fail_count} != {len(tests)}")
    return labels, problems


LABELLERS = {"pytest": label_pytest, "unittest": label_unittest, "cargo": label_cargo,
             "make": label_make, "node": label_node}


# --------------------------------------------------------------------------- driver


def tool_versions(env: dict[str, str]) -> dict[str, str]:
    cmds = {"python": "python3 --version", "pytest": "python3 -m pytest --version",
            "cargo": "cargo --version", "rustc": "rustc --version", "gcc": "gcc --version",
            "g++": "g++ --version", "make": "make --version", "node": "node --version"}
    out = {}
    for name, c in cmds.items():
        try:
            p = subprocess.run(["bash", "-c", c], env=env, capture_output=True, text=True,
                               timeout=60, check=False)
        except subprocess.TimeoutExpired:
            p = None
        text = (p.stdout + p.stderr).strip().split("\n")[0] if p else ""
        out[name] = text if p and p.returncode == 0 else ""
    return out


def write_files(case: Case, ws: Path, env: dict[str, str]) -> None:
    if case.new_crate:
        ws.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cargo", "new", "--lib", "--vcs", "none", "--offline", case.new_crate],
                       cwd=ws.parent, env=env, capture_output=True, check=True, timeout=120)
    ws.mkdir(parents=True, exist_ok=True)
    for rel, text in case.files.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def run_case(case: Case, build_root: Path, out_dir: Path, timeout: int,
             versions: dict[str, str]) -> tuple[dict | None, list[str]]:
    workspace = build_root / "workspace"
    if workspace.exists():
        shutil.rmtree(workspace)
    ws = workspace / case.project
    env = job_env(case, ws, build_root)
    try:
        write_files(case, ws, env)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return None, [f"could not create the project: {exc}"]
    script = build_root / "job.sh"
    script.write_text(job_script(case))
    started = time.perf_counter()
    try:
        proc = subprocess.run(["bash", str(script)], cwd=ws, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, [f"job timed out after {timeout} s"]
    seconds = time.perf_counter() - started
    log = proc.stdout
    problems: list[str] = []
    if proc.returncode == 0:
        problems.append("job exited with status 0")
    if b"\r" in log:
        problems.append("log contains \\r (line numbering would be ambiguous)")
    lines = log_lines(log)
    for sign in BAD_SIGNS:
        hit = next((x for x in lines if sign in x), None)
        if hit:
            problems.append(f"unexpected failure: {hit[:200]}")
            break
    labels, label_problems = LABELLERS[case.kind](lines, case)
    problems += label_problems
    if not labels:
        problems.append("no labelled lines")
    n_lines = log.count(b"\n") + (0 if log.endswith(b"\n") or not log else 1)
    if labels and max(labels) > n_lines:
        problems.append("labelled line beyond the end of the log")
    if any(blank(lines[x - 1]) for x in labels if x <= len(lines)):
        problems.append("blank labelled line")
    if problems:
        dump = build_root / f"problem-{case.name}.log"
        dump.write_bytes(log)
        return None, [*problems, f"log kept in {dump}"]
    dest = out_dir / case.name
    dest.mkdir(parents=True)
    (dest / "fail.log").write_bytes(log)
    gt = groundtruth(labels)
    (dest / "groundtruth").write_text("\n".join(gt) + "\n")
    used = {"pytest": ("python", "pytest"), "unittest": ("python",), "cargo": ("cargo", "rustc"),
            "make": ("make", case.info.get("compiler", "gcc")), "node": ("node",)}[case.kind]
    info = {k: v for k, v in case.info.items() if k not in ("org", "pkg")}
    meta = {
        "generator": GENERATOR, "name": case.name, "kind": case.kind, "seed": case.seed,
        "size": case.size, "project": case.project, "ci": case.script["flavour"],
        "commands": case.build, "versions": {k: versions[k] for k in used},
        "details": info,
        "failures": [{"test": f.test, "how": f.how, "result": f.result,
                      **({"line": f.line} if f.line else {}), **f.extra}
                     for f in case.failures],
        "preamble": case.script["preamble"], "post_failure": case.script["post"],
        "trace": case.script["trace"], "exit_code": proc.returncode, "lines": n_lines,
        "labelled_lines": len(labels), "labelled_ranges": len(gt) - 1,
        "seconds": round(seconds, 1),
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta, []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="output root; cases go to OUT/polyglot/<case> (default %(default)s)")
    ap.add_argument("-n", "--cases", type=int, default=48, help="number of cases (default 48)")
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="comma-separated kinds, assigned round-robin (default: all)")
    ap.add_argument("--build-root", type=Path,
                    default=Path(tempfile.gettempdir()) / "ctxgate-polyglot-dev-build",
                    help="scratch directory reused for every build (default %(default)s)")
    ap.add_argument("--timeout", type=int, default=180, help="per-case job timeout, seconds")
    ap.add_argument("--max-problems", type=int, default=20,
                    help="give up after this many rejected cases")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if bad := [k for k in kinds if k not in KINDS]:
        ap.error(f"unknown kinds {bad}; choose from {', '.join(KINDS)}")
    args.build_root.mkdir(parents=True, exist_ok=True)
    probe = Case(name="probe", kind="make", seed=0, size="small", project="probe",
                 info={"org": "example"}, script={"flavour": "jenkins"})
    versions = tool_versions(job_env(probe, args.build_root, args.build_root))
    need = {"pytest": ("python", "pytest"), "unittest": ("python",), "cargo": ("cargo", "rustc"),
            "make": ("gcc", "g++", "make"), "node": ("node",)}
    if missing := sorted({t for k in kinds for t in need[k] if not versions[t]}):
        sys.exit(f"tools not available: {', '.join(missing)}")
    out_dir = prepare_out(args.out, "polyglot", GENERATOR)
    shutil.rmtree(args.build_root / "cargo-target", ignore_errors=True)
    for old in args.build_root.glob("problem-*.log"):
        old.unlink()
    seed = args.seed
    metas: list[dict] = []
    problems = 0
    started = time.perf_counter()
    for i in range(args.cases):
        kind = kinds[i % len(kinds)]
        while True:
            case = plan_case(kind, seed)
            seed += 1
            meta, errs = run_case(case, args.build_root, out_dir, args.timeout, versions)
            if meta:
                break
            problems += 1
            print(f"PROBLEM {case.name}: " + "; ".join(errs), flush=True)
            if problems >= args.max_problems:
                sys.exit(f"giving up after {problems} rejected cases")
        metas.append(meta)
        print(f"{meta['name']:20} {kind:9} {meta['size']:6} lines {meta['lines']:6} labelled "
              f"{meta['labelled_lines']:4} ({meta['labelled_ranges']:2} ranges) "
              f"{meta['seconds']:5.1f} s", flush=True)
    shutil.rmtree(args.build_root / "workspace", ignore_errors=True)
    per_kind = {k: sum(m["kind"] == k for m in metas) for k in kinds}
    lines = [m["lines"] for m in metas]
    gts = [m["labelled_lines"] for m in metas]
    print(f"\n{len(metas)} cases in {out_dir} ({time.perf_counter() - started:.0f} s, "
          f"{problems} rejected): " + ", ".join(f"{k} {v}" for k, v in per_kind.items()))
    print(f"log lines: total {sum(lines):,}, median {statistics.median(lines):,.0f}, "
          f"max {max(lines):,}; labelled lines: total {sum(gts):,}, "
          f"median {statistics.median(gts):,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
