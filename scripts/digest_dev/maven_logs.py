"""Own-source development corpus of real Maven CI failure logs with labelled failure lines.

What it is for: tuning and checking the block digest on Java CI logs without touching any
held-out evaluation data. Every case is a small generated Maven project (1-5 modules, main
classes whose methods call each other and recurse, 3-60 passing JUnit tests per module that
print realistic application-log noise and decoys such as "failed to connect, retrying",
ERROR-level log lines and printed stack traces of handled exceptions) into which one failure
is injected. The project is really built with ``mvn -o -B test|verify`` (offline, plugins from
``~/.m2/repository``; sometimes with ``-e``, ``-X``, ``-ntp``) inside one shell "CI job" whose
stdout+stderr are captured byte for byte:
a preamble of real commands (``java -version``, ``mvn -v``, ``env | sort | head``, ``ls -la``,
a ``find ~/.m2/repository -name '*.pom' | head`` listing), the Maven build, sometimes a
post-failure cleanup/cache step (``du``, ``find``, ``ls -laR``) and a final CI line such as
``Build step 'mvn' exited with code 1``. The job runs with a fixed CI-like environment (never
this machine's), so ``env`` prints nothing private.

Failure kinds (``kind`` in meta.json; spread round-robin over the cases):

* ``assert_junit5``: 1-4 tests fail with Jupiter assertions (assertEquals, assertTrue,
  assertIterableEquals, assertAll, assertThrows; some with multi-line messages);
* ``assert_junit4``: 1-4 tests fail with JUnit 4 assertions (``org.junit.Assert``, hamcrest
  ``assertThat``: ``expected:<..> but was:<..>``, ``ComparisonFailure``). No JUnit 4 runner is
  available offline here (no surefire-junit4 provider, no junit-vintage engine in ~/.m2), so
  these test methods are annotated with Jupiter's ``@Test`` and run on the JUnit Platform;
  only the assertion API and its messages are JUnit 4's;
* ``exception``: 1-3 tests call code that throws at recursion depth 3-35: a helpful
  NullPointerException, an IllegalStateException with a message, or a custom exception with a
  three-level ``Caused by:`` chain;
* ``compile_error``: 1-3 javac errors injected into main or test sources (cannot find symbol,
  incompatible types, no suitable method, unreported exception, ``';' expected``);
* ``multi_module``: a reactor of 2-5 modules where one module fails in one of the ways above and
  the others pass or are skipped (sometimes with ``--fail-at-end``).

Labels (``groundtruth``: ``DEFAULT`` then ``E a-b`` ranges, 1-based ``\\n``-counted lines,
inclusive) are found by parsing the produced log with knowledge of what was injected:

* test failures: per failing test the surefire report (``[ERROR] <test> -- Time elapsed ...
  <<< FAILURE!``/``<<< ERROR!``, the exception or assertion lines, every stack line,
  ``Caused by:``, ``... N more``, ``Suppressed:``); the per-class ``[ERROR] Tests run: ...
  <<< FAILURE! -- in <Class>`` line; the ``[ERROR] Failures:``/``[ERROR] Errors:`` results block
  with its continuation lines; the ``[ERROR] Tests run: N, Failures: F, ...`` summary; the
  ``[ERROR] Failed to execute goal ...surefire...`` line;
* compile errors: ``[ERROR] COMPILATION ERROR :``, every ``[ERROR] /path/File.java:[l,c] msg``
  line with its continuation lines (``symbol:``, ``location:``, ...), the ``N errors`` count line
  (Maven 3.8 prints it as ``[INFO] N errors``), and the ``[ERROR] Failed to execute goal
  ...compiler...`` line with the error lines Maven repeats under it (up to ``-> [Help 1]``);
* multi-module: the above for the failing module plus its reactor summary ``FAILURE`` line.

Not labelled: the BUILD FAILURE banner, ``[ERROR] -> [Help 1]`` and help text, ``[INFO]``
lines, Maven's own ``-e`` stack trace, decoy output of passing tests, the post-failure step.

Every case is checked: exit status non-zero, the failing tests / compile errors seen in the log
are exactly the injected ones, every labelled line exists, no ``\\r`` in the log, and no sign
of an unexpected failure (unresolvable plugin, forked VM crash). A case that fails a check is
reported with ``PROBLEM`` and replaced by a case built from the next seed.

Output (read by ``benchmarks/digest_recall.py``)::

    OUT/maven/<case>/fail.log      the full console log, bytes as produced
    OUT/maven/<case>/groundtruth   DEFAULT, then one "E a-b" line per labelled range
    OUT/maven/<case>/meta.json     kind, seed, modules, tests, failing tests, line counts, ...

Run (about 7 s per case on 2 cores, 40 cases in about 5 minutes)::

    python3 scripts/digest_dev/maven_logs.py [--out /work/cache/digest-dev] [-n 40] [--seed 1]
    python3 benchmarks/digest_recall.py /work/cache/digest-dev --per-case

Plugin versions are pinned to ones present in ``~/.m2/repository`` that resolve offline
(``PROFILES``); surefire is 3.2.5 throughout (3.5.x/3.6.0 need artifacts that are absent).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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
GENERATOR = "scripts/digest_dev/maven_logs.py"
KINDS = ("assert_junit5", "assert_junit4", "exception", "compile_error", "multi_module")

# Plugin/JUnit version sets that resolve offline from ~/.m2/repository (checked by hand).
PROFILES = (
    {"compiler": "3.13.0", "surefire": "3.2.5", "resources": "3.3.1", "jar": "3.4.1",
     "jupiter": "5.10.2"},
    {"compiler": "3.14.0", "surefire": "3.2.5", "resources": "3.3.1", "jar": "3.4.1",
     "jupiter": "5.11.4"},
    {"compiler": "3.14.1", "surefire": "3.2.5", "resources": "3.4.0", "jar": "3.4.2",
     "jupiter": "5.14.4"},
    {"compiler": "3.15.0", "surefire": "3.2.5", "resources": "3.5.0", "jar": "3.5.0",
     "jupiter": "5.13.4"},
)
JUNIT4 = "4.13.2"  # brings hamcrest-core 1.3

ORGS = ("acme", "example", "initech", "globex", "contoso", "umbrella", "hooli", "wayne")
DOMAINS = ("billing", "inventory", "ledger", "shipping", "catalog", "payments", "search",
           "auth", "reporting", "scheduler", "notify", "pricing", "orders", "audit", "metrics")
MODULE_ROLES = ("core", "api", "storage", "service", "web", "client", "model", "batch")
TOPICS = ("Service", "Pipeline", "Label", "Series", "Report", "Validation", "ErrorHandling",
          "Retry", "Cache", "Integration", "Rounding", "Config", "Failover", "Import")
VERBS = ("computes", "handles", "rejects", "accepts", "builds", "resolves", "keeps", "loads",
         "retries", "formats", "sums", "reports", "validates", "maps")
NOUNS = ("Total", "Batch", "EmptyInput", "LargeBatch", "Label", "Series", "Report", "Timeout",
         "ConnectionFailure", "ErrorPath", "Defaults", "Rounding", "Checkpoint", "Cache")
BRANCHES = ("main", "develop", "feature/ledger-sync", "release/2.4", "fix/retry-backoff")

LEVEL = re.compile(r"^\[(INFO|ERROR|WARNING|DEBUG)\]( |$)")
REPORT_HEAD = re.compile(
    r"^\[ERROR\] (?P<test>\S+?)(?:\((?P<cls>[\w.$]+)\))?\s+(?:--?\s+)?Time elapsed.*"
    r"<<< (?:FAILURE|ERROR)!\s*$")
CLASS_LINE = re.compile(r"^\[ERROR\] Tests run: .*<<< FAILURE! -*\s*in (?P<cls>[\w.$]+)\s*$")
SUMMARY = re.compile(r"^\[ERROR\] Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+\s*$")
COMPILE_ERR = re.compile(r"^\[ERROR\] (?P<path>/\S+\.java):\[\d+,\d+\] ")
BAD_SIGNS = ("has not been downloaded", "could not be resolved", "Could not resolve",
             "The forked VM terminated", "There was a timeout", "Crashed tests",
             "No tests to run", "ExecutionException The forked", "Could not find artifact")


# --------------------------------------------------------------------------- Java models


@dataclass
class Model:
    """Constants of one module's main code and Python twins of its methods."""

    prefix: str
    package: str
    mul: int
    offset: int
    tag: str
    step: int
    mod: int
    store: dict[str, str]
    owner: str
    bad_key: str

    def compute(self, a: int, b: int) -> int:
        return a * self.mul + b + self.offset

    def depth_sum(self, n: int) -> int:
        return n * (n + 1) // 2

    def label(self, i: int) -> str:
        return f"{self.tag}-{i}"

    def series(self, n: int) -> list[int]:
        return [i * self.step for i in range(n)]

    def report(self, n: int) -> str:
        return f"total={self.compute(n, n)}\nitems={n}\nstatus=OK"

    def valid(self, v: int) -> bool:
        return v % self.mod != 0

    def run(self, key: str) -> int:
        raw = self.store[key]
        return int(raw) + len(raw) + 1


def jstr(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def main_sources(m: Model, deprecated: bool) -> dict[str, str]:
    p = m.prefix
    store = "\n".join(f"        store.put({jstr(k)}, {jstr(v)});" for k, v in m.store.items())
    legacy = ""
    if deprecated:
        legacy = (
            "\n    /** Kept for old callers. */\n"
            "    @Deprecated\n"
            "    public Integer legacyTotal(int a) {\n"
            "        return new Integer(compute(a, a));\n"
            "    }\n")
    return {
        f"{p}Helper.java": f"""package {m.package};

/** Arithmetic used by {p}Service. */
public class {p}Helper {{
    public int combine(int a, int b) {{
        return a * {m.mul} + b;
    }}

    public int finish(int acc) {{
        return acc;
    }}
}}
""",
        f"{p}Service.java": f"""package {m.package};

import java.util.ArrayList;
import java.util.List;

/** The {p.lower()} service under test. */
public class {p}Service {{
    private final {p}Helper helper = new {p}Helper();
    private final {p}Pipeline pipeline = new {p}Pipeline();

    public int compute(int a, int b) {{
        return helper.combine(a, b) + {m.offset};
    }}

    public int depthSum(int n) {{
        if (n <= 0) {{
            return helper.finish(0);
        }}
        return n + depthSum(n - 1);
    }}

    public String label(int id) {{
        return "{m.tag}-" + id;
    }}

    public List<Integer> series(int n) {{
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {{
            out.add(i * {m.step});
        }}
        return out;
    }}

    public int[] seriesArray(int n) {{
        return series(n).stream().mapToInt(Integer::intValue).toArray();
    }}

    public String report(int n) {{
        return "total=" + compute(n, n) + "\\nitems=" + n + "\\nstatus=OK";
    }}

    public boolean isValid(int v) {{
        return v % {m.mod} != 0;
    }}

    public String find(String key) {{
        return pipeline.peek(key);
    }}
{legacy}}}
""",
        f"{p}Pipeline.java": f"""package {m.package};

import java.util.HashMap;
import java.util.Map;

/** Multi-stage processing of stored segments. */
public class {p}Pipeline {{
    private final Map<String, String> store = new HashMap<>();

    public {p}Pipeline() {{
{store}
    }}

    public String peek(String key) {{
        return store.get(key);
    }}

    public int run(String key, int depth) {{
        try {{
            return stageOne(key, depth);
        }} catch ({p}DataException e) {{
            throw new {p}ProcessingException("run of '" + key + "' aborted at depth " + depth, e);
        }}
    }}

    private int stageOne(String key, int depth) {{
        return stageTwo(key, depth) + 1;
    }}

    private int stageTwo(String key, int depth) {{
        return descend(key, depth, 0);
    }}

    private int descend(String key, int depth, int level) {{
        if (level < depth) {{
            return descend(key, depth, level + 1);
        }}
        return resolve(key);
    }}

    private int resolve(String key) {{
        if (key.startsWith("closed")) {{
            throw new IllegalStateException(
                "segment " + key + " is closed (state=CLOSED, owner={m.owner})");
        }}
        String raw = store.get(key);
        int len = raw.length();
        try {{
            return Integer.parseInt(raw) + len;
        }} catch (NumberFormatException e) {{
            throw new {p}DataException("cannot parse value of segment '" + key + "'", e);
        }}
    }}
}}
""",
        f"{p}DataException.java": f"""package {m.package};

/** A stored value is malformed. */
public class {p}DataException extends RuntimeException {{
    public {p}DataException(String message, Throwable cause) {{
        super(message, cause);
    }}
}}
""",
        f"{p}ProcessingException.java": f"""package {m.package};

/** A pipeline run failed. */
public class {p}ProcessingException extends RuntimeException {{
    public {p}ProcessingException(String message, Throwable cause) {{
        super(message, cause);
    }}
}}
""",
    }


LOG_STYLES = ("logback", "simple", "spring")


def testlog_source(m: Model, seed: int, style: str) -> str:
    p = m.prefix
    pkg_short = ".".join(x[0] for x in m.package.split(".")[:-1]) + "." + m.package.split(".")[-1]
    loggers = ", ".join(jstr(f"{pkg_short}.{p}{s}") for s in
                        ("Service", "Pipeline", "Repository", "HttpClient", "Scheduler",
                         "CacheManager", "RetryPolicy"))
    fmt = {
        "logback": 'ts + " [" + thread + "] " + String.format("%-5s", level) + " " + logger'
                   ' + " - " + msg',
        "simple": '"[" + thread + "] " + level + " " + logger + " - " + msg',
        "spring": 'ts.replace(\' \', \'T\') + "Z " + String.format("%5s", level) + " 4711 --- ["'
                  ' + thread + "] " + logger + " : " + msg',
    }[style]
    base = 1_700_000_000_000 + seed * 7_919_000
    return f"""package {m.package};

import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Random;

/** Application-like log noise printed by the tests. */
final class {p}TestLog {{
    private static final Random RND = new Random({seed}L);
    private static final DateTimeFormatter TS =
        DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
    private static final String[] THREADS = {{"main", "pool-1-thread-1", "pool-1-thread-2",
        "worker-3", "scheduler-1", "ForkJoinPool.commonPool-worker-1"}};
    private static final String[] LOGGERS = {{{loggers}}};
    private static final String[] HOSTS = {{"ledger-db", "cache-1", "cache-2", "auth.internal",
        "queue-0", "search-proxy"}};
    private static long clock = {base}L;

    private {p}TestLog() {{
    }}

    static void emit(String topic, int lines) {{
        for (int i = 0; i < lines; i++) {{
            int roll = RND.nextInt(100);
            if (roll < 52) {{
                System.out.println(line("INFO", info(topic)));
            }} else if (roll < 78) {{
                System.out.println(line("DEBUG", debug(topic)));
            }} else if (roll < 92) {{
                System.out.println(line("WARN", warn(topic)));
            }} else if (roll < 97) {{
                System.err.println(line("ERROR", decoy(topic)));
            }} else {{
                System.out.println(plain(topic));
            }}
        }}
    }}

    static void handled(String topic, boolean nested) {{
        try {{
            connect(topic, nested);
        }} catch (IllegalStateException | UncheckedIOException e) {{
            System.err.println(line("WARN", "Exception handled while talking to " + host()
                + ", continuing with cached data"));
            e.printStackTrace();
        }}
    }}

    private static void connect(String topic, boolean nested) {{
        ConnectException cause = new ConnectException("Connection refused (" + host() + ":"
            + port() + ")");
        if (nested) {{
            throw new IllegalStateException("retry budget exhausted for " + topic,
                new UncheckedIOException("failed to connect", cause));
        }}
        throw new UncheckedIOException("failed to connect", cause);
    }}

    private static String host() {{
        return HOSTS[RND.nextInt(HOSTS.length)];
    }}

    private static int port() {{
        return 5000 + RND.nextInt(4000);
    }}

    private static String line(String level, String msg) {{
        clock += 1 + RND.nextInt(40);
        String ts = TS.format(Instant.ofEpochMilli(clock));
        String thread = THREADS[RND.nextInt(THREADS.length)];
        String logger = LOGGERS[RND.nextInt(LOGGERS.length)];
        return {fmt};
    }}

    private static String info(String topic) {{
        return switch (RND.nextInt(8)) {{
            case 0 -> String.format("processed batch %d in %d ms", RND.nextInt(9000),
                1 + RND.nextInt(900));
            case 1 -> String.format("loaded %d %s records from %s", RND.nextInt(5000), topic,
                host());
            case 2 -> String.format("cache warmed with %d entries", RND.nextInt(20000));
            case 3 -> String.format("request %08x completed status=200 duration=%dms",
                RND.nextInt(), RND.nextInt(400));
            case 4 -> String.format("checkpoint %d committed (lag=%d)", RND.nextInt(100000),
                RND.nextInt(50));
            case 5 -> String.format("connected to %s:%d", host(), port());
            case 6 -> String.format("scheduled job %s-sync finished in %d ms", topic,
                RND.nextInt(3000));
            default -> String.format("%s state transition READY -> RUNNING (%d pending)", topic,
                RND.nextInt(40));
        }};
    }}

    private static String debug(String topic) {{
        return switch (RND.nextInt(5)) {{
            case 0 -> String.format("cache hit ratio %.2f", RND.nextDouble());
            case 1 -> String.format("resolved %s -> 10.0.%d.%d", host(), RND.nextInt(255),
                RND.nextInt(255));
            case 2 -> String.format("pool stats active=%d idle=%d waiting=%d", RND.nextInt(16),
                RND.nextInt(16), RND.nextInt(3));
            case 3 -> String.format("%s payload size=%d bytes checksum=%08x", topic,
                RND.nextInt(65536), RND.nextInt());
            default -> String.format("acquired lock %s-%d after %d us", topic, RND.nextInt(64),
                RND.nextInt(2000));
        }};
    }}

    private static String warn(String topic) {{
        return switch (RND.nextInt(5)) {{
            case 0 -> String.format("failed to connect to %s:%d, retrying (attempt %d/5)",
                host(), port(), 1 + RND.nextInt(4));
            case 1 -> String.format("slow query on %s took %d ms", topic, 500 + RND.nextInt(4000));
            case 2 -> String.format("deprecated config key '%s.timeout' used, please migrate",
                topic);
            case 3 -> String.format("retrying request %08x after timeout", RND.nextInt());
            default -> String.format("queue depth %d above soft limit", 1000 + RND.nextInt(900));
        }};
    }}

    private static String decoy(String topic) {{
        return switch (RND.nextInt(6)) {{
            case 0 -> String.format("error while refreshing token for user-%d; falling back to "
                + "cached credentials", RND.nextInt(900));
            case 1 -> String.format("upstream returned HTTP 503 (error), retry %d/3 scheduled",
                1 + RND.nextInt(3));
            case 2 -> String.format("Exception handled: java.net.SocketTimeoutException: Read "
                + "timed out (recovered after %d ms)", RND.nextInt(3000));
            case 3 -> String.format("job %s-import FAILED on attempt %d, will be retried", topic,
                1 + RND.nextInt(3));
            case 4 -> String.format("failed to connect to %s, retrying", host());
            default -> String.format("expected %d rows but found %d before compaction (ok)",
                RND.nextInt(100), RND.nextInt(100));
        }};
    }}

    private static String plain(String topic) {{
        return switch (RND.nextInt(4)) {{
            case 0 -> "fixture " + topic + "-" + RND.nextInt(99) + " loaded; 0 errors";
            case 1 -> "validation failed for sample " + RND.nextInt(500) + " (expected by test)";
            case 2 -> "Exception handled: simulated outage of " + host();
            default -> "--- " + topic + " scenario " + RND.nextInt(30) + " ---";
        }};
    }}
}}
"""


# --------------------------------------------------------------------------- test planning


@dataclass
class TestMethod:
    name: str
    body: list[str]
    fails: str | None = None  # "FAILURE" / "ERROR"
    how: str = ""  # assertion or exception type, for meta
    disabled: bool = False


@dataclass
class TestClass:
    name: str
    style: str  # "junit5" | "junit4"
    methods: list[TestMethod] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # injected (broken) members


@dataclass
class Module:
    artifact: str
    title: str
    model: Model
    tests: list[TestClass]
    depends_on: str | None = None
    deprecated: bool = False
    failure: str | None = None  # kind of failure injected in this module
    main_errors: list[dict] = field(default_factory=list)
    test_errors: list[dict] = field(default_factory=list)


@dataclass
class Case:
    name: str
    kind: str
    seed: int
    group: str
    modules: list[Module]
    profile: dict
    goal: str
    flags: list[str]
    script: dict
    size: str
    log_style: str
    fail_module: str
    sub_kind: str


def pass_stmt(rng: Random, m: Model, style: str) -> str:
    t = rng.choice(("compute", "depth", "label", "series", "valid", "pipeline", "report",
                    "find"))
    if t == "compute":
        a, b = rng.randint(-50, 400), rng.randint(-50, 400)
        return f"assertEquals({m.compute(a, b)}, svc.compute({a}, {b}));"
    if t == "depth":
        n = rng.randint(0, 40)
        return f"assertEquals({m.depth_sum(n)}, svc.depthSum({n}));"
    if t == "label":
        i = rng.randint(0, 999)
        return f"assertEquals({jstr(m.label(i))}, svc.label({i}));"
    if t == "series":
        n = rng.randint(1, 6)
        vals = ", ".join(map(str, m.series(n)))
        if style == "junit5":
            return f"assertIterableEquals(List.of({vals}), svc.series({n}));"
        return f"assertArrayEquals(new int[] {{{vals}}}, svc.seriesArray({n}));"
    if t == "valid":
        v = rng.randint(1, 500)
        fn = "assertTrue" if m.valid(v) else "assertFalse"
        if style == "junit5":
            return f'{fn}(svc.isValid({v}), "value {v}");'
        return f'{fn}("value {v}", svc.isValid({v}));'
    if t == "pipeline":
        key = rng.choice(("alpha", "beta"))
        return f"assertEquals({m.run(key)}, pipeline.run({jstr(key)}, {rng.randint(0, 30)}));"
    if t == "report":
        n = rng.randint(1, 60)
        return f"assertEquals({jstr(m.report(n))}, svc.report({n}));"
    if style == "junit5":
        return 'assertNotNull(svc.find("alpha"));'
    return f'assertThat(svc.find("alpha"), is({jstr(m.store["alpha"])}));'


def fail_stmts(rng: Random, m: Model, style: str) -> tuple[list[str], str]:
    """Statements of a test that fails by assertion, and the assertion's type."""
    a, b, n = rng.randint(1, 300), rng.randint(1, 300), rng.randint(2, 40)
    bad_v = m.mod * rng.randint(1, 40)
    if style == "junit5":
        t = rng.choice(("eq_int", "eq_str", "eq_multiline", "true", "iterable", "assert_all",
                        "throws", "eq_deep"))
        if t == "eq_int":
            return [f"int total = svc.compute({a}, {b});",
                    f'assertEquals({wrong(rng, m.compute(a, b))}, total, "total for batch {a}");'
                    ], t
        if t == "eq_str":
            return [f"assertEquals({jstr(m.label(wrong(rng, a)))}, svc.label({a}));"], t
        if t == "eq_multiline":
            exp = m.report(n).replace("status=OK", rng.choice(("status=FAILED", "status=PARTIAL")))
            return [f"assertEquals({jstr(exp)}, svc.report({n}));"], t
        if t == "true":
            return [f'assertTrue(svc.isValid({bad_v}), "value {bad_v} should be accepted");'], t
        if t == "iterable":
            vals = m.series(n % 7 + 3)
            vals[-1] += m.step
            return [f"assertIterableEquals(List.of({', '.join(map(str, vals))}), "
                    f"svc.series({n % 7 + 3}));"], t
        if t == "assert_all":
            return [f'assertAll("batch {n}",',
                    f'    () -> assertEquals({wrong(rng, m.compute(a, b))}, svc.compute({a}, {b}),'
                    f' "compute"),',
                    f"    () -> assertEquals({jstr(m.label(n))}, svc.label({n})),",
                    f'    () -> assertTrue(svc.isValid({bad_v}), "valid {bad_v}"));'], t
        if t == "throws":
            return [f"assertThrows(IllegalArgumentException.class, () -> svc.compute(-{a}, {b}));"
                    ], t
        return [f"assertEquals({wrong(rng, m.depth_sum(n))}, svc.depthSum({n}), "
                f'"depth sum of {n}");'], "eq_deep"
    t = rng.choice(("eq_int", "comparison", "comparison_multiline", "true", "hamcrest", "array",
                    "not_null"))
    if t == "eq_int":
        return [f"int total = svc.compute({a}, {b});",
                f'assertEquals("total for batch {a}", {wrong(rng, m.compute(a, b))}, total);'], t
    if t == "comparison":
        return [f"assertEquals({jstr(m.label(wrong(rng, a)))}, svc.label({a}));"], t
    if t == "comparison_multiline":
        exp = m.report(n).replace("status=OK", "status=FAILED")
        return [f'assertEquals("report", {jstr(exp)}, svc.report({n}));'], t
    if t == "true":
        return [f'assertTrue("value {bad_v} should be accepted", svc.isValid({bad_v}));'], t
    if t == "hamcrest":
        return [f"assertThat(svc.compute({a}, {b}), is({wrong(rng, m.compute(a, b))}));"], t
    if t == "array":
        vals = m.series(n % 7 + 3)
        vals[1] += 1
        return [f'assertArrayEquals("series", new int[] {{{", ".join(map(str, vals))}}}, '
                f"svc.seriesArray({n % 7 + 3}));"], t
    return [f'assertNotNull("segment lookup for delta-{n}", svc.find("delta-{n}"));'], t


def error_stmts(rng: Random, m: Model) -> tuple[list[str], str]:
    """Statements of a test whose code under test throws, and the exception type."""
    depth = rng.randint(3, 35)
    t = rng.choice(("npe", "state", "chain"))
    key = {"npe": f"delta-{rng.randint(1, 99)}", "state": f"closed-{rng.randint(1, 99)}",
           "chain": m.bad_key}[t]
    stmts = [f"int value = pipeline.run({jstr(key)}, {depth});", "assertTrue(value > 0);"]
    return stmts, f"{t}@depth{depth}"


COMPILE_FORMS = {
    "symbol_method": ["    public int broken{k}(int a) {", "        return Math.sqr(a);",
                      "    }"],
    "symbol_var": ["    public int broken{k}(int a) {", "        return totl + a;", "    }"],
    "symbol_class": ["    public int broken{k}() {", "        Ledgr ledger = null;",
                     "        return 0;", "    }"],
    "incompatible": ["    public int broken{k}() {", '        int count = "items-" + {k};',
                     "        return count;", "    }"],
    "no_suitable": ["    public int broken{k}(int a) {", "        return Integer.parseInt(a);",
                    "    }"],
    "unreported": ["    public void broken{k}() {", "        Thread.sleep({k});", "    }"],
    "semicolon": ["    public int broken{k}(int a) {", "        int b = a * {k}",
                  "        return b;", "    }"],
}


def make_module(rng: Random, artifact: str, title: str, package: str, prefix: str,
                n_tests: int, style: str) -> Module:
    bad_key = f"{rng.choice(('gamma', 'legacy', 'import', 'archive'))}-{rng.randint(1, 99)}"
    model = Model(prefix=prefix, package=package, mul=rng.randint(2, 9),
                  offset=rng.randint(0, 50), tag=prefix[:3].upper(), step=rng.randint(2, 7),
                  mod=rng.randint(3, 9),
                  store={"alpha": str(rng.randint(10, 999)), "beta": str(rng.randint(10, 999)),
                         bad_key: rng.choice(("x", "0x", "n/a-", "1.")) + str(rng.randint(1, 99)),
                         "closed-1": "3"},
                  bad_key=bad_key,
                  owner=f"{rng.choice(('svc', 'batch', 'sync'))}-{rng.randint(1, 9)}")
    n_classes = max(1, min(len(TOPICS), round(n_tests / rng.uniform(3, 9))))
    topics = rng.sample(TOPICS, n_classes)
    classes = [TestClass(name=f"{prefix}{t}Test", style=style) for t in topics]
    used: set[str] = set()
    for i in range(n_tests):
        cls = classes[i % n_classes] if i < n_classes else rng.choice(classes)
        while True:
            name = rng.choice(VERBS) + rng.choice(NOUNS)
            if name in used:
                name += str(rng.randint(2, 99))
            if name not in used:
                used.add(name)
                break
        stmts = [pass_stmt(rng, model, style) for _ in range(rng.randint(1, 3))]
        cls.methods.append(TestMethod(name=name, body=stmts,
                                      disabled=rng.random() < 0.03))
    return Module(artifact=artifact, title=title, model=model, tests=classes,
                  deprecated=rng.random() < 0.35)


def all_methods(mod: Module) -> list[tuple[TestClass, TestMethod]]:
    return [(c, t) for c in mod.tests for t in c.methods]


def inject(rng: Random, mod: Module, failure: str) -> None:
    """Make module ``mod`` fail in the way ``failure`` names."""
    mod.failure = failure
    if failure in ("assert_junit5", "assert_junit4", "exception"):
        count = rng.randint(1, 4) if failure != "exception" else rng.randint(1, 3)
        candidates = [(c, t) for c, t in all_methods(mod) if not t.disabled]
        for cls, meth in rng.sample(candidates, min(count, len(candidates))):
            if failure == "exception":
                meth.body, meth.how = error_stmts(rng, mod.model)
                meth.fails = "ERROR"
            else:
                meth.body, meth.how = fail_stmts(rng, mod.model, cls.style)
                meth.fails = "FAILURE"
        return
    # compile_error
    count = rng.randint(1, 3)
    if rng.random() < 0.15:
        forms = ["semicolon"] * min(count, 2)
    elif rng.random() < 0.1:
        forms = ["unreported"]
    else:
        forms = [rng.choice(["symbol_method", "symbol_var", "symbol_class", "incompatible",
                             "no_suitable"]) for _ in range(count)]
    in_tests = rng.random() < 0.4
    p = mod.model.prefix
    for k, form in enumerate(forms, start=1):
        lines = [x.replace("{k}", str(k + rng.randint(1, 9) * 10)) for x in COMPILE_FORMS[form]]
        if in_tests:
            cls = rng.choice(mod.tests)
            cls.extra.append("\n".join(lines))
            mod.test_errors.append({"file": f"src/test/java/{cls.name}.java", "form": form,
                                    "cls": cls.name})
        else:
            target = rng.choice((f"{p}Service", f"{p}Helper"))
            mod.main_errors.append({"file": f"src/main/java/{target}.java", "form": form,
                                    "cls": target, "code": "\n".join(lines)})


def noise_plan(rng: Random, case: Case, budget: int) -> None:
    """Spread ``budget`` lines of log noise (and a few decoy stack traces) over the tests."""
    methods = [t for mod in case.modules for _, t in all_methods(mod)
               if not t.disabled and not (mod.main_errors or mod.test_errors)]
    if not methods:
        return
    handled = 0
    if case.size != "small" or rng.random() < 0.3:
        handled = rng.randint(0, 3 if case.size == "small" else 6)
    for _ in range(handled):
        t = rng.choice(methods)
        t.body.insert(0, f"{{P}}TestLog.handled({jstr(rng.choice(DOMAINS))}, "
                         f"{str(rng.random() < 0.5).lower()});")
        budget -= 70
    budget = max(0, budget)
    noisy = rng.sample(methods, max(1, round(len(methods) * rng.uniform(0.3, 0.9))))
    weights = [rng.paretovariate(1.2) for _ in noisy]
    total = sum(weights)
    for t, w in zip(noisy, weights, strict=True):
        lines = int(budget * w / total)
        if lines:
            t.body.insert(0, f"{{P}}TestLog.emit({jstr(rng.choice(DOMAINS))}, {lines});")


# --------------------------------------------------------------------------- project files


POM_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 \
https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
"""


def plugins_xml(prof: dict, warnings: bool, indent: str) -> str:
    comp_cfg = ""
    if warnings:
        comp_cfg = ("\n        <configuration>\n          <showWarnings>true</showWarnings>\n"
                    "          <compilerArgs>\n            <arg>-Xlint:deprecation</arg>\n"
                    "          </compilerArgs>\n        </configuration>")
    body = f"""<plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>{prof['resources']}</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>{prof['compiler']}</version>{comp_cfg}
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>{prof['surefire']}</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-jar-plugin</artifactId>
        <version>{prof['jar']}</version>
      </plugin>
    </plugins>"""
    return "\n".join(indent + x if x else x for x in body.splitlines())


def deps_xml(mod: Module, group: str, prof: dict, managed: bool) -> str:
    out = []
    if mod.depends_on:
        out.append(f"""    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{mod.depends_on}</artifactId>
      <version>${{project.version}}</version>
    </dependency>""")
    v5 = "" if managed else f"\n      <version>{prof['jupiter']}</version>"
    out.append(f"""    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>{v5}
      <scope>test</scope>
    </dependency>""")
    if any(c.style == "junit4" for c in mod.tests):
        v4 = "" if managed else f"\n      <version>{JUNIT4}</version>"
        out.append(f"""    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>{v4}
      <scope>test</scope>
    </dependency>""")
    return "  <dependencies>\n" + "\n".join(out) + "\n  </dependencies>\n"


PROPS = """  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
"""


def test_source(mod: Module, cls: TestClass) -> str:
    m = mod.model
    p = m.prefix
    if cls.style == "junit5":
        imports = ["import static org.junit.jupiter.api.Assertions.*;", "",
                   "import java.util.List;", "import org.junit.jupiter.api.Disabled;",
                   "import org.junit.jupiter.api.Test;"]
        vis = ""
    else:
        imports = ["import static org.hamcrest.CoreMatchers.is;",
                   "import static org.junit.Assert.*;", "",
                   "import org.junit.jupiter.api.Disabled;", "import org.junit.jupiter.api.Test;"]
        vis = "public "
    out = [f"package {m.package};", "", *imports, "", f"public class {cls.name} {{",
           f"    private final {p}Service svc = new {p}Service();",
           f"    private final {p}Pipeline pipeline = new {p}Pipeline();"]
    for t in cls.methods:
        out.append("")
        if t.disabled:
            out.append('    @Disabled("flaky on CI, see OPS-1432")')
        out.append("    @Test")
        out.append(f"    {vis}void {t.name}() {{")
        for s in t.body:
            out.extend("        " + x for x in s.replace("{P}", p).splitlines())
        out.append("    }")
    for extra in cls.extra:
        out.extend(["", extra])
    out.append("}")
    return "\n".join(out) + "\n"


def write_project(case: Case, ws: Path) -> None:
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    prof = case.profile
    multi = len(case.modules) > 1
    if multi:
        mods = "\n".join(f"    <module>{m.artifact}</module>" for m in case.modules)
        warn = any(m.deprecated for m in case.modules)
        (ws / "pom.xml").write_text(
            POM_HEAD + f"""  <groupId>{case.group}</groupId>
  <artifactId>{case.modules[0].artifact.rsplit('-', 1)[0]}-parent</artifactId>
  <version>2.{case.seed % 9}.0-SNAPSHOT</version>
  <packaging>pom</packaging>
  <name>{case.modules[0].title.rsplit(' ', 1)[0]} :: parent</name>

  <modules>
{mods}
  </modules>

{PROPS}
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.junit.jupiter</groupId>
        <artifactId>junit-jupiter</artifactId>
        <version>{prof['jupiter']}</version>
      </dependency>
      <dependency>
        <groupId>junit</groupId>
        <artifactId>junit</artifactId>
        <version>{JUNIT4}</version>
      </dependency>
    </dependencies>
  </dependencyManagement>

  <build>
    <pluginManagement>
{plugins_xml(prof, warn, "    ")}
    </pluginManagement>
  </build>
</project>
""")
    for mod in case.modules:
        root = ws / mod.artifact if multi else ws
        if multi:
            pom = POM_HEAD + f"""  <parent>
    <groupId>{case.group}</groupId>
    <artifactId>{case.modules[0].artifact.rsplit('-', 1)[0]}-parent</artifactId>
    <version>2.{case.seed % 9}.0-SNAPSHOT</version>
  </parent>
  <artifactId>{mod.artifact}</artifactId>
  <name>{mod.title}</name>

{deps_xml(mod, case.group, prof, True)}</project>
"""
        else:
            pom = POM_HEAD + f"""  <groupId>{case.group}</groupId>
  <artifactId>{mod.artifact}</artifactId>
  <version>1.{case.seed % 13}.0-SNAPSHOT</version>
  <name>{mod.title}</name>

{PROPS}
{deps_xml(mod, case.group, prof, False)}
  <build>
{plugins_xml(prof, mod.deprecated, "  ")}
  </build>
</project>
"""
        root.mkdir(parents=True, exist_ok=True)
        (root / "pom.xml").write_text(pom)
        pkg_dir = mod.model.package.replace(".", "/")
        main = root / "src/main/java" / pkg_dir
        test = root / "src/test/java" / pkg_dir
        main.mkdir(parents=True)
        test.mkdir(parents=True)
        for fname, text in main_sources(mod.model, mod.deprecated).items():
            for err in mod.main_errors:
                if fname == f"{err['cls']}.java":
                    text = text.rstrip()[:-1].rstrip() + "\n\n" + err["code"] + "\n}\n"
            (main / fname).write_text(text)
        (test / f"{mod.model.prefix}TestLog.java").write_text(
            testlog_source(mod.model, case.seed * 31 + len(mod.artifact), case.log_style))
        for cls in mod.tests:
            (test / f"{cls.name}.java").write_text(test_source(mod, cls))


# --------------------------------------------------------------------------- the CI job


def job_env(case: Case, ws: Path) -> dict[str, str]:
    sha = hashlib.sha1(f"{case.seed}".encode()).hexdigest()
    job = case.modules[0].artifact.rsplit("-", 1)[0] if len(case.modules) > 1 else \
        case.modules[0].artifact
    env = {
        "HOME": str(Path.home()), "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
        "/sbin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "USER": "jenkins", "LOGNAME": "jenkins",
        "SHELL": "/bin/bash", "CI": "true", "BUILD_NUMBER": str(100 + case.seed),
        "BUILD_ID": str(100 + case.seed), "JOB_NAME": job,
        "BUILD_URL": f"https://ci.example.invalid/job/{job}/{100 + case.seed}/",
        "JENKINS_URL": "https://ci.example.invalid/", "WORKSPACE": str(ws),
        "GIT_COMMIT": sha, "GIT_BRANCH": f"origin/{BRANCHES[case.seed % len(BRANCHES)]}",
        "NODE_NAME": f"linux-agent-{case.seed % 7 + 1}", "EXECUTOR_NUMBER": str(case.seed % 4),
        "MAVEN_OPTS": "-Xmx768m -Djava.awt.headless=true",
    }
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        env["JAVA_HOME"] = java_home
    return env


def job_script(case: Case) -> str:
    s = case.script
    trace = s["trace"]
    lines = ["#!/bin/bash"]
    if s["banner"]:
        lines += [f'echo "{x}"' for x in s["banner"]]
    if trace:
        lines.append("set -x")

    def cmd(text: str) -> None:
        if not trace:
            lines.append(f"echo {sh_quote('$ ' + text)}")
        lines.append(text)

    for c in s["preamble"]:
        cmd(c)
    cmd(s["mvn"])
    lines.append("rc=$?")
    if s["post"]:
        if trace:
            lines.append("{ set +x; } 2>/dev/null")
        lines.append(f"echo {sh_quote(s['post_header'])}")
        if trace:
            lines.append("set -x")
        for c in s["post"]:
            cmd(c)
    if trace:
        lines.append("{ set +x; } 2>/dev/null")
    if s["final"]:
        lines.append(f'echo "{s["final"]}"')
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"


def plan_script(rng: Random, case: Case, multi: bool) -> dict:
    big = case.size == "large"
    small = case.size == "small"
    pre: list[str] = []
    if rng.random() < 0.85:
        pre.append("java -version")
    if rng.random() < 0.8:
        pre.append("mvn -v")
    if rng.random() < (0.3 if small else 0.7):
        pre.append(f"env | sort | head -n {rng.randint(8, 30)}")
    if rng.random() < 0.6:
        pre.append("ls -la")
    if not small and rng.random() < 0.75:
        k = rng.randint(150, 400) if big else rng.randint(20, 200)
        pre.append(f"find ~/.m2/repository -name '*.pom' | head -n {k}")
    elif small and rng.random() < 0.25:
        pre.append(f"find ~/.m2/repository -name '*.pom' | head -n {rng.randint(20, 40)}")
    rng.shuffle(pre)
    flags = list(case.flags)
    mvn = " ".join(["mvn", "-o", "-B", *flags, case.goal])
    post: list[str] = []
    if rng.random() < 0.55:
        kk = (lambda: rng.randint(5, 30)) if small else (lambda: rng.randint(20, 200))
        opts = ["du -sh ~/.m2/repository",
                f"find . -path '*target*' -name '*.class' | sort | head -n {kk()}",
                f"ls -laR {'.' if multi else 'target'} | head -n {kk()}",
                "find . -name 'TEST-*.xml' | sort | head -n 20",
                "df -h . | tail -n 1"]
        post = rng.sample(opts, rng.randint(1, 3))
    finals = ("Build step 'mvn' exited with code $rc", "Finished: FAILURE",
              "Error: Process completed with exit code $rc.",
              "Build step 'Invoke top-level Maven targets' marked build as failure")
    banner: list[str] = []
    if rng.random() < 0.5:
        banner = [f"Started by {rng.choice(('an SCM change', 'timer', 'user admin'))}",
                  "Running as SYSTEM", "Building in workspace $WORKSPACE"]
    return {
        "trace": rng.random() < 0.4, "banner": banner, "preamble": pre, "mvn": mvn,
        "post": post,
        "post_header": rng.choice(("Post-build: caching ~/.m2 and collecting reports",
                                   "[cleanup] collecting build outputs",
                                   "Archiving artifacts")),
        "final": rng.choice(finals) if post or rng.random() < 0.5 else "",
    }


def plan_case(kind: str, seed: int) -> Case:
    rng = Random(f"maven-logs/{seed}")
    org, domain = rng.choice(ORGS), rng.choice(DOMAINS)
    group = f"com.{org}.{domain}"
    size = rng.choices(("small", "medium", "large"), weights=(35, 40, 25))[0]
    profile = rng.choice(PROFILES)
    style = "junit4" if kind == "assert_junit4" else "junit5"
    n_mod = rng.randint(2, 5) if kind == "multi_module" else 1
    if kind == "multi_module":
        roles = rng.sample(MODULE_ROLES, n_mod)
    else:
        roles = [rng.choice(("service", "core", "app"))]
    test_range = {"small": (3, 8), "medium": (6, 30), "large": (20, 60)}[size]
    modules = []
    for i, role in enumerate(roles):
        artifact = f"{domain}-{role}"
        prefix = domain.capitalize() + (role.capitalize() if n_mod > 1 else "")
        mstyle = style if n_mod == 1 else rng.choice(("junit5", "junit5", "junit4"))
        n_tests = rng.randint(*test_range)
        if n_mod > 1:
            n_tests = max(3, n_tests // 2)
        mod = make_module(rng, artifact, f"{domain.capitalize()} {role.capitalize()}",
                          f"{group}.{role}", prefix, n_tests, mstyle)
        if i and rng.random() < 0.6:
            mod.depends_on = modules[i - 1].artifact
        modules.append(mod)
    sub = kind
    if kind == "multi_module":
        fail_idx = rng.randint(1, n_mod - 1) if rng.random() < 0.85 else 0
        sub = rng.choice(("assert_junit5", "assert_junit4", "exception", "compile_error"))
        fmod = modules[fail_idx]
        if sub == "assert_junit4":
            for c in fmod.tests:
                c.style = "junit4"
                for t in c.methods:  # re-plan bodies in the JUnit 4 style
                    t.body = [pass_stmt(rng, fmod.model, "junit4") for _ in t.body]
        elif sub == "assert_junit5":
            for c in fmod.tests:
                if c.style == "junit4":
                    c.style = "junit5"
                    for t in c.methods:
                        t.body = [pass_stmt(rng, fmod.model, "junit5") for _ in t.body]
    else:
        fmod = modules[0]
    inject(rng, fmod, sub)
    flags = []
    if rng.random() < 0.3:
        flags.append("-e")
    if size != "small" and rng.random() < (0.5 if kind == "compile_error" else 0.1):
        flags.append("-X")  # Maven debug output: a real source of large, noisy logs
    if kind == "multi_module" and rng.random() < 0.35:
        flags.append("--fail-at-end")
    if rng.random() < 0.3:
        flags.append("-ntp")
    case = Case(name=f"mvn{seed:04d}_{kind}", kind=kind, seed=seed, group=group,
                modules=modules, profile=profile, goal=rng.choice(("test", "verify")),
                flags=flags, script={}, size=size, log_style=rng.choice(LOG_STYLES),
                fail_module=fmod.artifact, sub_kind=sub)
    case.script = plan_script(rng, case, n_mod > 1)
    target = {"small": (100, 500), "medium": (800, 4000), "large": (6000, 20000)}[size]
    total = rng.randint(*target)
    est = 60 + 30 * n_mod + sum(3 * len(m.tests) for m in modules)
    for c in case.script["preamble"]:
        est += {"java -version": 3, "mvn -v": 6, "ls -la": 10}.get(c, 0)
        if c.startswith(("env", "find")):
            est += int(c.rsplit(" ", 1)[1])
    noise_plan(rng, case, total - est if kind != "compile_error" else 0)
    return case


# --------------------------------------------------------------------------- labelling


def expected_failures(case: Case) -> dict[tuple[str, str], str]:
    out = {}
    for mod in case.modules:
        for cls, t in all_methods(mod):
            if t.fails:
                out[(f"{mod.model.package}.{cls.name}", t.name)] = t.fails
    return out


def label(lines: list[str], case: Case, ws: Path) -> tuple[set[int], list[str]]:
    """Labelled line numbers (1-based) and the problems found while labelling."""
    labels: set[int] = set()
    problems: list[str] = []
    fmod = next(m for m in case.modules if m.artifact == case.fail_module)
    multi = len(case.modules) > 1
    n = len(lines)
    if case.sub_kind != "compile_error":
        want = expected_failures(case)
        seen: dict[tuple[str, str], str] = {}
        classes: set[str] = set()
        for i, line in enumerate(lines):
            if m := REPORT_HEAD.match(line):
                test, cls = m.group("test"), m.group("cls")
                key = (cls, test) if cls else tuple(test.rsplit(".", 1))
                seen[key] = "ERROR" if "<<< ERROR!" in line else "FAILURE"
                # The report runs up to the next Maven line ([INFO]/[ERROR]/...); a message
                # may hold blank lines (hamcrest), the blank line(s) closing it are not labelled.
                j = i + 1
                while j < n and not LEVEL.match(lines[j]):
                    j += 1
                while j > i + 1 and not lines[j - 1].strip():
                    j -= 1
                if j == i + 1:
                    problems.append(f"empty surefire report for {test}")
                labels.update(range(i + 1, j + 1))
            elif m := CLASS_LINE.match(line):
                classes.add(m.group("cls"))
                labels.add(i + 1)
            elif line.rstrip() in ("[ERROR] Failures:", "[ERROR] Errors:"):
                j = i
                while j < n and not lines[j].startswith(("[INFO]", "[WARNING]")) \
                        and not SUMMARY.match(lines[j]):
                    j += 1
                labels.update(range(i + 1, j + 1))
            elif SUMMARY.match(line):
                labels.add(i + 1)
            elif line.startswith("[ERROR] Failed to execute goal") and "surefire" in line:
                labels.add(i + 1)
        if seen != want:
            problems.append(f"failing tests in log {sorted(seen.items())} != injected "
                            f"{sorted(want.items())}")
        if classes != {c for c, _ in want}:
            problems.append(f"failing classes {sorted(classes)} != injected")
        for needle in ("[ERROR] Failures:", "[ERROR] Errors:"):
            if any(v == ("FAILURE" if "Fail" in needle else "ERROR") for v in want.values()) \
                    and not any(x.rstrip() == needle for x in lines):
                problems.append(f"no {needle!r} block")
        if not any(x.startswith("[ERROR] Failed to execute goal") and "surefire" in x
                   for x in lines):
            problems.append("no surefire 'Failed to execute goal' line")
    else:
        root = ws / fmod.artifact if multi else ws
        pkg = fmod.model.package.replace(".", "/")
        files = {str(root / e["file"].replace("java/", f"java/{pkg}/"))
                 for e in fmod.main_errors + fmod.test_errors}
        in_block = False
        after_goal = False
        found: set[str] = set()
        for i, line in enumerate(lines):
            if line.startswith("[ERROR] COMPILATION ERROR"):
                in_block, after_goal = True, False
                labels.add(i + 1)
                continue
            if line.startswith("[ERROR] Failed to execute goal") and "maven-compiler" in line:
                in_block, after_goal = False, True
                labels.add(i + 1)
                continue
            if in_block:
                if re.match(r"^\[(INFO|ERROR)\] \d+ errors?\s*$", line):
                    labels.add(i + 1)
                    in_block = False
                elif m := COMPILE_ERR.match(line):
                    found.add(m.group("path"))
                    labels.add(i + 1)
                    j = i + 1
                    while j < n and not LEVEL.match(lines[j]):
                        labels.add(j + 1)
                        j += 1
            elif after_goal:
                if line.startswith("[ERROR] -> [Help") or not line.startswith("[ERROR]") \
                        or line.rstrip() == "[ERROR]":
                    after_goal = False
                else:
                    labels.add(i + 1)
                    if m := COMPILE_ERR.match(line):
                        found.add(m.group("path"))
        if not found:
            problems.append("no compile error lines found")
        elif not found <= files:
            problems.append(f"compile errors outside the injected files: {sorted(found - files)}")
        if not any(x.startswith("[ERROR] Failed to execute goal") and "maven-compiler" in x
                   for x in lines):
            problems.append("no compiler 'Failed to execute goal' line")
    if multi:
        fails = [i for i, x in enumerate(lines)
                 if re.match(r"^\[INFO\] .+ \.+ FAILURE \[", x)]
        mine = [i for i in fails if lines[i].startswith(f"[INFO] {fmod.title} ")]
        if len(fails) != 1 or len(mine) != 1:
            problems.append(f"reactor summary FAILURE lines: {[lines[i] for i in fails]}")
        labels.update(i + 1 for i in mine)
    return labels, problems


# --------------------------------------------------------------------------- driver


def run_case(case: Case, build_root: Path, out_dir: Path, timeout: int) -> tuple[dict | None,
                                                                                 list[str]]:
    ws = build_root / "workspace" / (case.modules[0].artifact.rsplit("-", 1)[0]
                                     if len(case.modules) > 1 else case.modules[0].artifact)
    if (build_root / "workspace").exists():
        shutil.rmtree(build_root / "workspace")
    write_project(case, ws)
    script = build_root / "job.sh"
    script.write_text(job_script(case))
    started = time.perf_counter()
    try:
        proc = subprocess.run(["bash", str(script)], cwd=ws, env=job_env(case, ws),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout, check=False)
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
        hit = next((x for x in lines if sign in x and not x.startswith("[DEBUG]")), None)
        if hit:
            at = hit.index(sign)
            problems.append(f"unexpected Maven failure: ...{hit[max(0, at - 150):at + 80]}...")
            break
    labels, label_problems = label(lines, case, ws)
    problems += label_problems
    if not labels:
        problems.append("no labelled lines")
    n_lines = log.count(b"\n") + (0 if log.endswith(b"\n") or not log else 1)
    if labels and max(labels) > n_lines:
        problems.append("labelled line beyond the end of the log")
    if problems:
        dump = build_root / f"problem-{case.name}.log"
        dump.write_bytes(log)
        return None, [*problems, f"log kept in {dump}"]
    dest = out_dir / case.name
    dest.mkdir(parents=True)
    (dest / "fail.log").write_bytes(log)
    gt = groundtruth(labels)
    (dest / "groundtruth").write_text("\n".join(gt) + "\n")
    fmod = next(m for m in case.modules if m.artifact == case.fail_module)
    meta = {
        "generator": GENERATOR, "name": case.name, "kind": case.kind, "seed": case.seed,
        "failure": case.sub_kind, "size": case.size, "goal": case.goal, "flags": case.flags,
        "command": case.script["mvn"], "versions": {**case.profile, "junit4": JUNIT4},
        "modules": [{"artifact": m.artifact, "name": m.title, "depends_on": m.depends_on,
                     "tests": sum(1 for _ in all_methods(m)),
                     "test_classes": [c.name for c in m.tests],
                     "style": sorted({c.style for c in m.tests})} for m in case.modules],
        "failing_module": case.fail_module,
        "tests": sum(1 for m in case.modules for _ in all_methods(m)),
        "failing_tests": [{"class": f"{fmod.model.package}.{c.name}", "method": t.name,
                           "result": t.fails, "how": t.how}
                          for c, t in all_methods(fmod) if t.fails],
        "compile_errors": [{"file": e["file"], "form": e["form"]}
                           for e in fmod.main_errors + fmod.test_errors],
        "preamble": case.script["preamble"], "post_failure": case.script["post"],
        "exit_code": proc.returncode, "lines": n_lines, "labelled_lines": len(labels),
        "labelled_ranges": len(gt) - 1, "seconds": round(seconds, 1),
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta, []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="output root; cases go to OUT/maven/<case> (default %(default)s)")
    ap.add_argument("-n", "--cases", type=int, default=40, help="number of cases (default 40)")
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="comma-separated kinds, assigned round-robin (default: all)")
    ap.add_argument("--build-root", type=Path,
                    default=Path(tempfile.gettempdir()) / "ctxgate-maven-dev-build",
                    help="scratch directory reused for every build (default %(default)s)")
    ap.add_argument("--timeout", type=int, default=300, help="per-case job timeout, seconds")
    ap.add_argument("--max-problems", type=int, default=20,
                    help="give up after this many rejected cases")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if bad := [k for k in kinds if k not in KINDS]:
        ap.error(f"unknown kinds {bad}; choose from {', '.join(KINDS)}")
    if not shutil.which("mvn") or not shutil.which("java"):
        sys.exit("mvn and java must be on PATH")
    out_dir = prepare_out(args.out, "maven", GENERATOR)
    args.build_root.mkdir(parents=True, exist_ok=True)
    seed = args.seed
    metas: list[dict] = []
    problems = 0
    started = time.perf_counter()
    for i in range(args.cases):
        kind = kinds[i % len(kinds)]
        while True:
            case = plan_case(kind, seed)
            seed += 1
            meta, errs = run_case(case, args.build_root, out_dir, args.timeout)
            if meta:
                break
            problems += 1
            print(f"PROBLEM {case.name}: " + "; ".join(errs), flush=True)
            if problems >= args.max_problems:
                sys.exit(f"giving up after {problems} rejected cases")
        metas.append(meta)
        print(f"{meta['name']:32} {kind:14} lines {meta['lines']:6} labelled "
              f"{meta['labelled_lines']:4} ({meta['labelled_ranges']} ranges) "
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
