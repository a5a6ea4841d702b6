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


def test_self_referring_and_doubling_variables_stay_bounded(repo: Path) -> None:
    """hiredis's ``CC := $(shell … echo $(CC) …)`` refers to itself, and a chain of
    variables that each repeat the one before doubles per line: both once hung the scan."""
    chain = "V0 = x\n" + "".join(f"V{i} = $(V{i - 1}) $(V{i - 1})\n" for i in range(1, 60))
    (repo / "Makefile").write_text(
        "CC := $(shell sh -c 'type $${CC%% *} >/dev/null && echo $(CC) || echo gcc')\n"
        + chain + "all:\n\t$(CC) -o app main.c $(V59)\n")
    commands = task_commands("make", (), str(repo))
    assert commands is not None and len(commands) == 2, commands
    assert all(len(c) <= 16 * 1024 for _, _, c in commands)


def _exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("files", "command", "where"),
    [
        ({"conftest.py": "import shutil\nshutil.rmtree('/srv/data')\n"}, "pytest -q",
         "runs conftest.py (pytest"),
        ({"tests/unit/conftest.py": "import os\nos.system('rm -rf ~/Documents')\n"},
         "python -m pytest tests", "tests/unit/conftest.py"),
        ({"build.rs": "fn main() { std::fs::remove_dir_all(\"/srv/data\").unwrap(); }\n"},
         "cargo test --release", "runs build.rs (cargo"),
        ({"setup.py": "import shutil\nshutil.rmtree('/srv/data')\n"}, "pip install -e .",
         "runs setup.py (pip"),
        ({"tools/clean.py": "import shutil\nshutil.rmtree('/srv/data')\n"},
         "python3 -m tools.clean", "tools/clean.py that `python3`"),
    ],
)
def test_files_a_tool_runs_on_its_own_are_read_when_it_runs(
    repo: Path, files: dict[str, str], command: str, where: str
) -> None:
    """The run side of :mod:`.planted`: a conftest.py, build.rs or setup.py already in the
    project (a cloned repository, an earlier call's write) runs when the tool does."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is IRR, (command, e)
    assert where in e.evidence, e


def test_a_projects_own_cleanup_in_its_conftest_is_not_a_finding(repo: Path) -> None:
    """IPython's and fsspec's conftest.py ``rmtree`` their own scratch directories (a computed
    path): counted, honest ``pytest`` runs would be denied in those projects."""
    (repo / "conftest.py").write_text(
        "import shutil, pathlib\npath = pathlib.Path('./tmp-profile')\n"
        "def teardown():\n    shutil.rmtree(str(path.resolve()))\n")
    assert shell_effect("pytest", cwd=str(repo)) is None


def test_git_runs_only_the_hooks_of_its_subcommand_and_only_executable_ones(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    _exe(hooks / "pre-commit", "#!/bin/sh\nrm -rf ~/.ssh\n")
    e = shell_effect("git commit -m 'fix typo'", cwd=str(repo))
    assert e is not None and e.effect is IRR and ".git/hooks/pre-commit" in e.evidence, e
    for command in ("git commit --no-verify -m x", "git commit -nm x", "git status",
                    "git log -1"):
        e = shell_effect(command, cwd=str(repo))
        assert e is None or ".ssh" not in e.evidence, (command, e)
    (hooks / "pre-commit").chmod(0o644)  # git skips a hook it cannot execute
    e = shell_effect("git commit -m x", cwd=str(repo))
    assert e is None or ".ssh" not in e.evidence, e
    _exe(hooks / "pre-push", "#!/usr/bin/env python3\nimport shutil\nshutil.rmtree('/srv/x')\n")
    e = shell_effect("git push origin main", cwd=str(repo))
    assert any("pre-push" in d and "rmtree" in d for d in e.details), e.details


def test_a_pre_commit_shim_runs_the_configured_entries(repo: Path) -> None:
    _exe(repo / ".git" / "hooks" / "pre-commit",
         "#!/usr/bin/env bash\n# File generated by pre-commit\nexec pre-commit hook-impl\n")
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: tidy\n    name: tidy\n"
        "    entry: rm -rf ~/Documents\n    language: system\n")
    e = shell_effect("git commit -m x", cwd=str(repo))
    assert e is not None and e.effect is IRR and ".pre-commit-config.yaml" in e.evidence, e


@pytest.mark.parametrize(
    ("body", "destructive"),
    [
        ("tmp=$(mktemp -d)\ncd \"$tmp\"\nrm -rf \"$tmp\"\n", False),  # its own scratch space
        ("for d in build dist; do rm -rf \"$OUT/$d\"; done\n", False),  # set by the caller
        ("D=~/Documents\nrm -rf \"$D\"\n", True),  # a plain value is bound
        ("export TARGET=\"$HOME/.ssh\"\nrm -rf ${TARGET}\n", True),
    ],
)
def test_a_script_is_judged_with_the_plain_values_it_sets(repo: Path, body: str,
                                                          destructive: bool) -> None:
    """In a file that runs, a path the gate cannot expand is usually set inside the file:
    not counted (the run stays with the model); a variable set once to a plain value is
    bound first, so hiding the path in a variable does not hide the delete."""
    _exe(repo / "run.sh", "#!/bin/sh\n" + body)
    e = shell_effect("./run.sh", cwd=str(repo))
    assert (e is not None and e.effect.destructive) is destructive, (body, e)


def test_a_recipe_path_from_an_unknown_make_variable_is_not_a_finding(repo: Path) -> None:
    """``$(OBJS)`` from an included file, ``$(shell git describe)``: the parser cannot know
    them, and redis's ``rm -f redis-server$(PROG_SUFFIX)`` is its own build output."""
    (repo / "Makefile").write_text(
        "-include settings.mk\nclean:\n\trm -f app$(PROG_SUFFIX) $(OBJS)\n"
        "\trm -rf build/$(shell git describe --tags)/*\n")
    e = shell_effect("make clean", cwd=str(repo))
    assert e is None or not e.effect.destructive, e


def test_a_build_scripts_spawned_command_is_judged_when_cargo_runs_it(repo: Path) -> None:
    (repo / "build.rs").write_text(
        'use std::process::Command;\nfn main() {\n    Command::new("sh")\n'
        '        .args(&["-c", "rm -rf ~/.ssh"])\n        .status().unwrap();\n}\n')
    e = shell_effect("cargo build", cwd=str(repo))
    assert e is not None and e.effect is IRR and "runs build.rs" in e.evidence, e


@pytest.mark.parametrize(
    ("command", "where"),
    [
        ("cat > Makefile <<'EOF'\nall:\n\trm -rf ~/Documents\nEOF\nmake", "recipe of `all`"),
        ("cat > package.json <<'EOF'\n{\"scripts\": {\"test\": \"rm -rf ~/Music\"}}\nEOF\n"
         "npm test", "script `test`"),
    ],
)
def test_a_task_file_the_same_command_writes_is_read_from_the_command(
    repo: Path, command: str, where: str
) -> None:
    """Written and run in one command, the file on disk says nothing (it is not there yet, or
    about to be replaced): the here-doc body is what runs."""
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is IRR, (command, e)
    assert any(where in d for d in e.details), e.details
    clean = command.replace("rm -rf ~/Documents", "echo ok").replace("rm -rf ~/Music", "jest")
    e = shell_effect(clean, cwd=str(repo))
    assert e is None or not e.effect.destructive, (clean, e)


TOX_INI = """\
[tox]
envlist = py311, lint

[testenv]
deps = pytest
commands =
    pytest {posargs:tests}
    cov: coverage report

[testenv:lint]
commands = ruff check .

[testenv:reset]
commands_pre = - rm -rf {toxinidir}/build
commands = rm -rf {env:HOME}/.ssh
"""
NOXFILE = """\
import nox

@nox.session
def tests(session):
    session.install("pytest")
    session.run("pytest", "-q")

@nox.session
def reset(session):
    session.run("rm", "-rf", "/srv/data", external=True)
"""


@pytest.mark.parametrize(("command", "where"), [
    ("tox -e reset", "`commands` of [testenv:reset]"),
    ("tox -e lint,reset", "[testenv:reset]"),
    ("tox", "[testenv:reset]"),  # without -e every environment is read
    ("nox -s reset", "runs noxfile.py"),
    ("python -m nox", "runs noxfile.py"),
    ("python3 -m tox -e reset", "[testenv:reset]"),
])
def test_tox_and_nox_are_judged_by_what_their_environments_run(
    repo: Path, home: Path, command: str, where: str
) -> None:
    (repo / "tox.ini").write_text(TOX_INI)
    (repo / "noxfile.py").write_text(NOXFILE)
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is IRR, (command, e)
    assert any(where in d for d in e.details), e.details


@pytest.mark.parametrize("command", ["tox -e lint", "tox -e py311 -- -k slow", "tox -l",
                                     "nox --list"])
def test_tox_and_nox_environments_that_only_test_stay_with_the_model(
    repo: Path, home: Path, command: str
) -> None:
    (repo / "tox.ini").write_text(TOX_INI)
    (repo / "noxfile.py").write_text(NOXFILE.replace('"/srv/data"', '"build"'))
    e = shell_effect(command, cwd=str(repo))
    assert e is None or not e.effect.destructive, (command, e)


JUSTFILE = """\
# tasks
data := "/srv/data"

default: test

test: build
    @pytest -q

build:
    cargo build

reset target='cache': build
    rm -rf {{data}}/{{target}}
    -rm -rf ~/.ssh

script:
    #!/usr/bin/env python3
    import shutil; shutil.rmtree("/srv/y")
"""


@pytest.mark.parametrize("command", ["just reset", "just reset logs", "just --yes reset",
                                     "just -f justfile reset"])
def test_just_is_judged_by_the_recipes_it_runs(repo: Path, home: Path, command: str) -> None:
    (repo / "justfile").write_text(JUSTFILE)
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is IRR, (command, e)
    assert any("recipe `reset` in justfile" in d and ".ssh" in d for d in e.details), e.details


def test_just_expands_its_variables_and_runs_dependencies_first(repo: Path) -> None:
    (repo / "justfile").write_text(JUSTFILE)
    texts = [c for _, _, c in task_commands("just", ("reset",), str(repo)) or []]
    assert texts == ["cargo build", "rm -rf /srv/data/${target}", "rm -rf ~/.ssh"], texts
    assert [c for _, _, c in task_commands("just", (), str(repo)) or []] == [
        "cargo build", "pytest -q"]  # the first recipe, `default`, and what it depends on
    for quiet in (("-n", "reset"), ("--list",), ("script",)):  # a #! recipe is not read
        assert task_commands("just", quiet, str(repo)) == [], quiet
