"""Issue 11, item 1: the failed CI step decides which failure blocks the digest shows.

The excerpts are written for these tests in the shape CI runners give them (Travis writes
``travis_time:end:…`` and a colour code before a carriage return, then ``The command "…"
exited with 1.``; a job goes on with later steps and ``after_failure`` dumps). Each test fails
on the digest before this change (main at d6792e3): it read those lines with the runner's
prefix, so it missed the failed step's end, picked the last keyword block after it, and
showed a script's ``exit 1`` as the end of a failed step.
"""

from __future__ import annotations

import re

from ctxgate.archive import Archive
from ctxgate.firewall import FirewallPolicy, firewall
from ctxgate.firewall.blocks import KnownLine, find_blocks, pick_blocks, visible

POLICY = FirewallPolicy(min_tokens=0)
_WORKER = ["travis_fold:start:worker_info\r\x1b[0KWorker information",
           "hostname: 0a1b2c3d@1.worker-org-gce-7", "version: v6.2.1"]


def _setup(n: int) -> list[str]:
    return [f"Setting up libfoo{i % 50}-dev (1.{i % 7}.{i}) ..." for i in range(n)]


def _start(tag: str, cmd: str) -> str:
    return f"travis_time:start:{tag}\r\x1b[0K$ {cmd}"


def _end(tag: str, cmd: str, status: int) -> str:
    colour = "31" if status else "32"
    return (f"travis_time:end:{tag}:start=1564623468605027866,finish=1564623640674783748,"
            f"duration=172069755882\r\x1b[0K\x1b[{colour};1mThe command \"{cmd}\" exited with "
            f"{status}.\x1b[0m")


def _digest(lines: list[str]) -> tuple[str, set[int]]:
    res = firewall("shell", ("\n".join(lines) + "\n").encode(), archive=Archive(),
                   policy=POLICY)
    assert res.digested
    assert res.digest.size_bytes <= POLICY.digest_max_bytes
    return res.text, {int(m) for m in re.findall(r"^\s*(\d+)\| ", res.text, re.M)}


def _number(lines: list[str], needle: str) -> int:
    return next(i for i, x in enumerate(lines, 1) if needle in x)


def test_visible_is_what_a_terminal_shows() -> None:
    assert visible(b"travis_fold:start:git\r\x1b[0Ktravis_time:start:1\r\x1b[0K$ git clone x\r") \
        == b"\x1b[0K$ git clone x"
    assert visible(b"plain line\r") == b"plain line"
    assert visible(b"10%\r50%\r100% done") == b"100% done"


def test_a_failed_step_without_error_words_is_shown_without_the_runner_prefix() -> None:
    # a long command (past what the scanner keeps of a line): its end says it failed
    cmd = "if [ \"$BUILD_TYPE\" = \"latexmk\" ]; then docker exec -it texlive bash -c " + \
        "\"cd /src && latexmk -pdf std\" " * 20 + "; fi"
    lines = [*_WORKER, *_setup(900), _start("0a", cmd),
             "Latexmk: Run number 1 of rule 'pdflatex'", "entering extended mode",
             "Overfull \\hbox (2.26166pt too wide) in paragraph at lines 4826--4842",
             _end("0a", cmd, 1), ""]
    for k in range(6):  # later steps that pass
        lines += [_start(f"1{k}", f"check-{k}.sh"), _end(f"1{k}", f"check-{k}.sh", 0), ""]
    lines += ["", "Done. Your build exited with 1."]
    text, shown = _digest(lines)
    assert _number(lines, "Overfull \\hbox") in shown, text
    assert _number(lines, "exited with 1.") in shown, text
    assert "travis_time:end" not in text  # shown as a terminal shows it
    assert "travis_fold" not in text
    assert "(errors; " in text or "build summary" in text


def test_the_failed_step_comes_before_an_after_failure_dump() -> None:
    lines = [*_WORKER, *_setup(700), _start("2b", "make test"),
             *[f"Executing test_{i}.vim" for i in range(30)],
             "Failures: ", "\tFrom test_popupwin.vim:", "\tFound errors in Test_popup_beval():",
             "\tRun 1:", "\tCaught exception in Test_popup_beval(): Vim(call):E958: Job done",
             "\tFlaky test failed too often, giving up", "", "TEST FAILURE",
             "make: *** [scripttests] Error 2", _end("2b", "make test", 2), "",
             "travis_fold:start:after_failure\r\x1b[0K$ cat asan.log"]
    lines += ["==20632== ERROR: AddressSanitizer: heap-use-after-free on address 0x6072"]
    lines += [f"    #{i} 0x8a48be in frame_{i} /build/src/popupwin.c:{1460 + i}"
              for i in range(90)]
    lines += ["SUMMARY: AddressSanitizer: heap-use-after-free", "", "",
              "Done. Your build exited with 1."]
    text, shown = _digest(lines)
    for needle in ("From test_popupwin.vim:", "Found errors in Test_popup_beval():",
                   "Flaky test failed too often", "make: *** [scripttests] Error 2"):
        assert _number(lines, needle) in shown, (needle, text)
    # the dump after the failed step is named with the exact expand that shows it
    first_dump = _number(lines, "AddressSanitizer: heap-use-after-free on")
    assert re.search(rf"ctxgate expand \w+ --lines {first_dump - 6}:\d+|"
                     rf"failure block: lines {first_dump - 6:,}", text) or first_dump in shown


def test_the_first_failed_step_is_shown_beside_the_last() -> None:
    lines = [*_WORKER, *_setup(300), _start("3c", "./lint.sh"),
             "Checking whitespace ...", "src/net.cpp:608: trailing whitespace",
             "src/util.h seems to be missing the expected include guard:",
             _end("3c", "./lint.sh", 1), "", _start("4d", "make check")]
    lines += [f"  CXX      libcore_a-unit_{i}.o" for i in range(400)]
    lines += ["unit_tests: test/net_tests.cpp:88: check addr == expected has failed",
              "make: *** [check] Error 1", _end("4d", "make check", 2), "",
              "Done. Your build exited with 1."]
    text, shown = _digest(lines)
    assert _number(lines, "trailing whitespace") in shown, text
    assert _number(lines, "missing the expected include guard") in shown, text
    assert _number(lines, "check addr == expected has failed") in shown, text


def _known(lines: list[str]) -> list[KnownLine]:
    return [KnownLine(number=i, raw=x.encode(), length=len(x.encode()))
            for i, x in enumerate(lines, 1)]


def test_a_scripts_bare_exit_1_does_not_end_a_failed_step() -> None:
    lines = ["function run_smoke_tests {", "    if grep -q failed suite.log; then",
             "        echo \"One or more tests failed.\"", "        exit 1", "    fi", "}",
             *[f"Testing case {i}: ok" for i in range(40)]]
    assert not any(b.ends_step for b in find_blocks(_known(lines)))
    lines += ["Process completed with exit code 1."]
    blocks = find_blocks(_known(lines))
    assert pick_blocks(blocks, len(lines))[0].ends_step
    assert pick_blocks(blocks, len(lines))[0].last == len(lines)


def test_a_run_of_boilerplate_inside_a_block_is_counted_not_shown() -> None:
    body = ["[ERROR] Failed to execute goal compile on project core: Compilation failure",
            "[ERROR] /src/main/java/a/B.java:[3,13] cannot find symbol",
            "[INFO] ------------------------------------------------------------------------",
            "[INFO] core ......................................... SUCCESS [  2.013 s]",
            "[INFO] web .......................................... SKIPPED",
            "[INFO] cli .......................................... SKIPPED",
            "[INFO] ------------------------------------------------------------------------",
            "[ERROR] /src/main/java/a/C.java:[9,2] incompatible types: int cannot be String",
            "Build step 'Execute shell' marked build as failure"]
    lines = ["Started by timer", *_setup(600), "+ mvn -B compile", *body, "Finished: FAILURE"]
    text, shown = _digest(lines)
    first = _number(lines, "[INFO] ------")
    assert re.search(rf"  … lines {first:,}–{first + 4:,}: 5 blank or boilerplate lines: "
                     rf"ctxgate expand \w+ --lines {first}:{first + 4}\n", text), text
    assert _number(lines, "C.java:[9,2] incompatible types") in shown
    assert _number(lines, "B.java:[3,13] cannot find symbol") in shown
    assert first + 1 not in shown
