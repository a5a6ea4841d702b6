"""Task runners run commands from the project's own files (``npm test`` its package.json
scripts, ``make clean`` its makefile's recipes): what the shell rules find destructive there
is the call's effect, against a real git repository and files on disk. A clean scan proves
nothing: the run stays with the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.runners import task_commands
from ctxgate.gate.effects.shell import shell_effect

IRR = EffectClass.LOCAL_IRREVERSIBLE

SCRIPTS = {
    "pretest": "rm -rf ~/Documents",
    "test": "jest",
    "build": "tsc -p .",
    "prebuild": "echo building",
    "lint": "eslint .",
    "wipe": "node tools/wipe.js",
    "postinstall": "sh tools/setup.sh",
    "ci": "npm run lint && npm run wipe",
}
MAKEFILE = """\
RM = rm -rf
OUT := build
TARGET_HOME = $(HOME)
STAMP != date

.PHONY: all clean test reset
all: $(OUT)/app

$(OUT)/app: main.c
\t@mkdir -p $(OUT)
\t$(CC) -o $@ $<

clean:
\t-$(RM) $(OUT)

test: all
\t./run_tests.sh

reset: prepare
\techo resetting

prepare:
\t@$(RM) $(TARGET_HOME)/.ssh   # the dependency does the damage
"""


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "package.json").write_text(json.dumps({"name": "x", "scripts": SCRIPTS}))
    (repo / "tools").mkdir()
    (repo / "tools" / "wipe.js").write_text(
        "require('fs').rmSync('/srv/data', {recursive: true})\n")
    (repo / "tools" / "setup.sh").write_text("rm -rf ~/.ssh\n")
    (repo / "Makefile").write_text(MAKEFILE)
    return repo


@pytest.mark.parametrize(
    ("command", "where"),
    [
        ("npm test", "script `pretest` that `npm`"),
        ("npm t -- --watch", "script `pretest`"),
        ("yarn test", "script `pretest` that `yarn`"),
        ("pnpm run wipe", "script `wipe` that `pnpm`"),
        ("npm run ci", "script `wipe`"),  # a script that runs another script
        ("npm install", "script `postinstall`"),  # the root package's install scripts
        ("npm ci", "script `postinstall`"),
        ("yarn", "script `postinstall`"),
        ("make reset", "recipe of `prepare` in Makefile"),  # through a prerequisite
        ("make -C . reset", "recipe of `prepare`"),
        ("make -f Makefile -j4 reset", "recipe of `prepare`"),
    ],
)
def test_a_task_runner_is_judged_by_the_commands_it_runs(
    project: Path, command: str, where: str
) -> None:
    e = shell_effect(command, cwd=str(project))
    assert e is not None and e.effect is IRR, (command, e)
    assert any(where in d for d in e.details), (command, e.details)


@pytest.mark.parametrize(
    "command",
    [
        "npm run build",  # prebuild + tsc: nothing destructive found
        "npm run lint",
        "npm i lodash",  # a package's own scripts are not read here
        "npm view react",  # names no task
        "make",  # mkdir and cc into the working tree
        "make clean",  # build/ is ignored build output: recoverable (repo fixture)
        "make -n reset",  # a dry run runs no recipe
        "make --dry-run reset",
        "cd /elsewhere && npm test",  # another directory's package.json
        "make no-such-target",
    ],
)
def test_what_the_runner_runs_cleanly_stays_with_the_model(project: Path, command: str) -> None:
    e = shell_effect(command, cwd=str(project))
    assert e is None or not e.effect.destructive, (command, e)


def test_make_variables_are_expanded_as_make_expands_them(project: Path) -> None:
    commands = task_commands("make", ("TARGET_HOME=/srv/home", "reset"), str(project))
    assert commands is not None
    texts = [c for _, _, c in commands]
    assert "rm -rf /srv/home/.ssh   # the dependency does the damage" in texts, texts
    assert texts[-1] == "echo resetting"  # prerequisites' recipes first
    assert [c for _, _, c in task_commands("make", (), str(project)) or []] == [
        "mkdir -p build", "cc -o build/app main.c"]


def test_a_shell_call_runs_when_make_reads_the_makefile(repo: Path) -> None:
    (repo / "Makefile").write_text("V := $(shell rm -rf ~/Documents)\nall:\n\techo ok\n")
    e = shell_effect("make", cwd=str(repo))
    assert e is not None and e.effect is IRR and "$(shell" in e.evidence, e


@pytest.mark.parametrize("text", ["{not json", "[]", '{"scripts": "x"}', "\xff\xfe"])
def test_an_unreadable_package_json_is_no_finding(repo: Path, text: str) -> None:
    (repo / "package.json").write_text(text, errors="surrogateescape")
    assert task_commands("npm", ("test",), str(repo)) is None
    assert shell_effect("npm test", cwd=str(repo)) is None


def test_a_script_cycle_ends(repo: Path) -> None:
    (repo / "package.json").write_text(json.dumps({"scripts": {"a": "npm run b",
                                                               "b": "npm run a"}}))
    assert shell_effect("npm run a", cwd=str(repo)) is None
