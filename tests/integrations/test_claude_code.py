"""The hooks from `ctxgate hook install`, run by the real Claude Code CLI (`claude -p`).

Claude Code (npm ``@anthropic-ai/claude-code``, pinned in node/package.json) runs offline
against :mod:`messages_server`, a scripted Messages API endpoint: turn 1 is a ``Bash``
tool call, turn 2 a final text. The server records every request, so each test reads the
``tool_result`` Claude Code sent back after its hooks ran — what the model would see.
The decision backend is the default local model; nothing is faked on ctxgate's side.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .messages_server import MessagesServer, Turn, tool_results

REPO = Path(__file__).resolve().parents[2]
CLAUDE = Path(__file__).resolve().parent / "node" / "node_modules" / ".bin" / "claude"
ARCHIVE_ID = re.compile(r"archive id ([0-9a-f]{12})\b")
ERROR_LINE = "src/parser.c:4242:17: error: 'tokn_kind' undeclared (first use in this function)"
BUILD_SH = f"""#!/bin/sh
i=1
while [ $i -le 5000 ]; do echo "[$i/5000] CC src/module_$i.c -> build/module_$i.o"; i=$((i+1)); done
echo "{ERROR_LINE}"
exit 1
"""


@dataclass
class Session:
    result: dict
    tool_result: dict
    project: Path
    env: dict[str, str]
    debug_log: str


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "CTXGATE_")) or k == "CTXGATE_NO_DAEMON"}
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(HOME=str(tmp / "home"), CLAUDE_CONFIG_DIR=str(tmp / "home" / ".claude"),
               CTXGATE_HOME=str(tmp / "ctxgate-home"), ANTHROPIC_API_KEY="test",
               DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
               DISABLE_AUTOUPDATER="1")
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "project"
    (proj / "victim").mkdir(parents=True)
    (proj / "victim" / "keep.txt").write_text("precious\n", encoding="utf-8")
    (proj / "README.md").write_text("# demo\nA demo project.\n", encoding="utf-8")
    (proj / "build.sh").write_text(BUILD_SH, encoding="utf-8")
    (proj / "build.sh").chmod(0o755)
    (tmp_path / "home").mkdir()
    return proj


def run_claude(project: Path, prompt: str, command: str, *, hooks: bool = True,
               pre_flags: str = "") -> Session:
    """One `claude -p` session whose model asks to run ``command`` with Bash, then stops.

    ``hooks=False`` runs the same session without ctxgate (the control); ``pre_flags`` are
    appended to the installed ``hook pre`` command.
    """
    assert CLAUDE.exists(), (f"{CLAUDE} is missing: run `npm ci --prefix tests/integrations/node` "
                             "(scripts/install-test-deps does)")
    tmp = project.parent
    env = _env(tmp)
    settings: dict = {"permissions": {"allow": ["Bash"]}}
    if hooks:
        installed = json.loads(subprocess.run(
            [sys.executable, "-m", "ctxgate", "hook", "install"], env=env, capture_output=True,
            text=True, check=True, timeout=60).stdout)
        pre = installed["hooks"]["PreToolUse"][0]["hooks"][0]
        pre["command"] += pre_flags
        settings.update(installed)
    settings_path = tmp / "settings.json"
    settings_path.write_text(json.dumps(settings), encoding="utf-8")
    debug_log = tmp / "claude-debug.log"
    script = [Turn(tool="Bash", tool_input={"command": command, "description": "run it"}),
              Turn(text="Done.")]
    with MessagesServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        proc = subprocess.run(
            [str(CLAUDE), "-p", prompt, "--output-format", "json", "--settings",
             str(settings_path), "--allowedTools", "Bash", "--debug-file", str(debug_log)],
            cwd=project, env=env, capture_output=True, text=True, timeout=90)
        main = server.main_requests()
    log = debug_log.read_text(encoding="utf-8", errors="replace") if debug_log.exists() else ""
    assert proc.returncode == 0, f"claude exited {proc.returncode}: {proc.stderr[-2000:]}"
    assert len(main) == 2, f"expected 2 model turns, got {len(main)}; debug log tail: {log[-3000:]}"
    results = tool_results(main[-1])
    assert len(results) == 1, results
    return Session(result=json.loads(proc.stdout), tool_result=results[0], project=project,
                   env=env, debug_log=log)


def content_text(tool_result: dict) -> str:
    content = tool_result.get("content")
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


def test_unrequested_rm_rf_is_blocked(project: Path) -> None:
    s = run_claude(project, "What is in the README?", "rm -rf victim")
    assert (project / "victim" / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    text = content_text(s.tool_result)
    assert s.tool_result.get("is_error") is True
    assert "Tool gate:" in text and "not run" in text, text
    assert [d["tool_input"]["command"] for d in s.result["permission_denials"]] == ["rm -rf victim"]


def test_big_build_log_reaches_the_model_as_a_digest(project: Path) -> None:
    s = run_claude(project, "Run ./build.sh and tell me why the build fails.", "./build.sh")
    text = content_text(s.tool_result)
    assert "[ctxgate digest: bash output" in text, text[:2000]
    assert ERROR_LINE in text
    assert len(text.encode("utf-8")) < 8_000, len(text.encode("utf-8"))  # the log is ~277 kB
    assert "[4000/5000]" not in text  # the middle was left in the archive
    match = ARCHIVE_ID.search(text)
    assert match, text[:2000]
    expand = subprocess.run([sys.executable, "-m", "ctxgate", "expand", match.group(1),
                             "--lines", "4999:5001"], env=s.env, capture_output=True,
                            text=True, timeout=60)
    assert expand.returncode == 0, expand.stderr
    assert ERROR_LINE in expand.stdout
    assert "[4999/5000] CC src/module_4999.c" in expand.stdout


def test_read_only_command_is_allowed_by_the_fast_path(project: Path) -> None:
    s = run_claude(project, "What files are here?", "ls")
    text = content_text(s.tool_result)
    assert s.tool_result.get("is_error") is False, text
    assert text.split() == ["README.md", "build.sh", "victim"], text
    assert s.result["permission_denials"] == []
    # The fast path (no model call) allows it, and the hook runs it in the read-only sandbox.
    assert "--sandbox read-only -c ls" in s.debug_log


def test_without_hooks_the_same_session_runs_rm_rf(project: Path) -> None:
    """The control: the scripted session really runs its command when ctxgate is absent."""
    s = run_claude(project, "What is in the README?", "rm -rf victim", hooks=False)
    assert not (project / "victim").exists()
    assert s.tool_result.get("is_error") is False


def test_post_hook_replacement_is_accepted_in_bash_output_shape(project: Path) -> None:
    """Without the rewrite, `hook post` digests the Bash output after the fact.

    Claude Code passes only the first 30,000 characters of stdout in the payload (the rest is
    in ``persistedOutputPath``) and accepts a replacement only in Bash's own output shape.
    """
    (project / "build.sh").write_text(BUILD_SH.replace("exit 1", "exit 0"), encoding="utf-8")
    s = run_claude(project, "Run ./build.sh and tell me what it printed.", "./build.sh",
                   pre_flags=" --no-rewrite")
    text = content_text(s.tool_result)
    assert "does not match Bash's output shape" not in s.debug_log
    assert "replaced tool output" in s.debug_log
    assert "[ctxgate digest: bash output, 276,760 bytes, 5,001 lines" in text, text[:2000]
    assert ERROR_LINE in text  # past the 30,000 characters in the payload
    assert "persisted-output" not in text
