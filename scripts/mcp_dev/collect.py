#!/usr/bin/env python3
"""Collect the MCP dev set: real ``tools/list`` answers of npm-published MCP servers.

    python scripts/mcp_dev/collect.py --install          # once: npm install the pinned servers
    python scripts/mcp_dev/collect.py [NAME ...] [--timeout S] [--manifest-only]

Development data for the gate's MCP rules (``scripts/mcp_dev.py``), from servers that no
held-out set uses (``scripts/build_tool_heldout.py`` keeps six others apart). Everything is
written under ``$CTXGATE_MCP_DEV_DIR`` (default ``../cache/mcp-dev`` beside the checkout);
nothing of it is committed. ``--install`` copies this folder's ``package.json`` (the pinned
servers) and ``package-legacy.json`` (older releases of Stripe's and Railway's servers, whose
newest ones cannot list their tools offline) there and runs ``npm install``.

For every server in :data:`SERVERS`: start its npm bin as a stdio MCP server (the MCP Python
SDK's client), send ``initialize`` and ``tools/list`` (following pagination cursors) and
nothing else, stop the server, and write ``tools/<name>.json``. Each server gets a fake home
and obviously fake credentials; no tool is ever called. When a server has several
configurations (variants) all are tried and the one listing the most tools is kept. Then
``manifest.json`` (package, version, licence, tools, annotated tools) is rebuilt from
``tools/*.json``, and ``runs.json`` records what each variant listed or why it failed.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
import uuid
from pathlib import Path

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("CTXGATE_MCP_DEV_DIR")
            or HERE.parents[2] / "cache" / "mcp-dev").resolve()
NM = ROOT / "node_modules"
TOOLS_DIR = ROOT / "tools"
LOG_DIR = ROOT / "logs"
RUN_DIR = ROOT / "run"      # per-server cwd
HOME = ROOT / "home"        # fake HOME so servers write nothing outside ROOT
KUBECONFIG = HOME / ".kube" / "config"

# Env common to every server (telemetry off, no browser downloads).
COMMON_ENV = {
    "HOME": str(HOME),
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "PUPPETEER_SKIP_DOWNLOAD": "1",
    "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1",
    "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1",
    "DO_NOT_TRACK": "1",
    "AZURE_MCP_COLLECT_TELEMETRY": "false",
    "DOTNET_CLI_TELEMETRY_OPTOUT": "1",
    "MDB_MCP_TELEMETRY": "disabled",
    "NODE_NO_WARNINGS": "1",
    "npm_config_update_notifier": "false",
}

EXA_ALL = ("web_search_exa,web_search_advanced_exa,get_code_context_exa,company_research_exa,"
           "web_fetch_exa,deep_researcher_start,deep_researcher_check,people_search_exa,"
           "linkedin_search_exa,deep_search_exa,crawling_exa,agent_run")
SUPABASE_ALL = "docs,account,database,debugging,development,functions,branching,storage"
# The "docs" feature fetches the docs GraphQL schema from supabase.com during
# initialize ("fetch failed" offline), so offline only the other groups can list.
SUPABASE_NO_DOCS = "account,database,debugging,development,functions,branching,storage"

# short-name -> {package, bin (optional: name in package.json "bin"), variants: [{args, env}]}
SERVERS: dict[str, dict] = {
    "playwright": {
        "package": "@playwright/mcp",
        "variants": [
            {"args": ["--headless", "--isolated", "--caps=vision,pdf,devtools"]},
            {"args": ["--headless", "--isolated"]},
        ],
    },
    "chrome-devtools": {
        "package": "chrome-devtools-mcp",
        "bin": "chrome-devtools-mcp",
        "variants": [
            {"args": ["--headless", "--isolated", "--no-usage-statistics", "--no-performance-crux",
                      "--categoryExtensions", "--categoryPwa", "--categoryExperimentalWebmcp",
                      "--experimentalVision", "--experimentalMemory", "--experimentalDevtools",
                      "--experimentalScreencast"]},
            {"args": ["--headless", "--isolated", "--no-usage-statistics", "--no-performance-crux",
                      "--categoryExtensions", "--categoryPwa",
                      "--experimentalVision", "--experimentalMemory"]},
            {"args": ["--headless", "--isolated", "--no-usage-statistics"]},
        ],
    },
    "supabase": {
        "package": "@supabase/mcp-server-supabase",
        "variants": [
            {"args": ["--access-token=sbp_dummy", f"--features={SUPABASE_ALL}"],
             "env": {"SUPABASE_ACCESS_TOKEN": "sbp_dummy"}},
            {"args": ["--access-token=sbp_dummy", f"--features={SUPABASE_NO_DOCS}"],
             "env": {"SUPABASE_ACCESS_TOKEN": "sbp_dummy"}},
        ],
    },
    "neon": {
        "package": "@neondatabase/mcp-server-neon",
        "variants": [
            {"args": ["start", "dummy"], "env": {"NEON_API_KEY": "dummy"}},
        ],
    },
    "sentry": {
        "package": "@sentry/mcp-server",
        "variants": [
            {"args": ["--access-token=dummy", "--experimental"],
             "env": {"SENTRY_ACCESS_TOKEN": "dummy", "OPENAI_API_KEY": "sk-dummy"}},
            {"args": ["--access-token=dummy"],
             "env": {"SENTRY_ACCESS_TOKEN": "dummy", "OPENAI_API_KEY": "sk-dummy"}},
            {"args": ["--access-token=dummy"], "env": {"SENTRY_ACCESS_TOKEN": "dummy"}},
        ],
    },
    "notion": {
        "package": "@notionhq/notion-mcp-server",
        "variants": [
            {"env": {"NOTION_TOKEN": "ntn_dummy",
                     "OPENAPI_MCP_HEADERS": '{"Authorization":"Bearer x","Notion-Version":"2022-06-28"}'}},
        ],
    },
    "kubernetes": {
        "package": "mcp-server-kubernetes",
        "variants": [
            {"env": {"KUBECONFIG": str(KUBECONFIG)}},
        ],
    },
    "context7": {
        "package": "@upstash/context7-mcp",
        "variants": [{"args": []}],
    },
    "stripe": {
        "package": "@stripe/mcp",
        "bin": "mcp",
        "timeout": 15,  # pure proxy to https://mcp.stripe.com: hangs offline
        "variants": [
            {"args": ["--api-key=sk_test_dummy"], "env": {"STRIPE_SECRET_KEY": "sk_test_dummy"}},
        ],
    },
    "heroku": {
        "package": "@heroku/mcp-server",
        # 1.2.8's dist imports '@modelcontextprotocol/sdk/server/mcp' without '.js';
        # a resolve hook (shims/sdk-ext-hook.mjs) retries with '.js'.
        "node_args": ["--import", str(HERE / "sdk-ext-hook.mjs")],
        # At startup it spawns `npx -y heroku@latest repl`; npm offline mode stops
        # that download (tools are registered statically, no CLI needed to list).
        "variants": [{"env": {"HEROKU_API_KEY": "dummy", "npm_config_offline": "true"}}],
    },
    "firecrawl": {
        "package": "firecrawl-mcp",
        "variants": [{"env": {"FIRECRAWL_API_KEY": "fc-dummy"}}],
    },
    "tavily": {
        "package": "tavily-mcp",
        "variants": [{"env": {"TAVILY_API_KEY": "tvly-dummy"}}],
    },
    "exa": {
        "package": "exa-mcp-server",
        "variants": [
            {"env": {"EXA_API_KEY": "dummy", "ENABLED_TOOLS": EXA_ALL}},
            {"env": {"EXA_API_KEY": "dummy"}},
        ],
    },
    "elasticsearch": {
        "package": "@elastic/mcp-server-elasticsearch",
        "variants": [{"env": {"ES_URL": "http://127.0.0.1:9200", "ES_API_KEY": "dummy"}}],
    },
    "sequential-thinking": {
        "package": "@modelcontextprotocol/server-sequential-thinking",
        "variants": [{"args": []}],
    },
    "browserbase": {
        "package": "@browserbasehq/mcp-server-browserbase",
        "variants": [{"env": {"BROWSERBASE_API_KEY": "dummy", "BROWSERBASE_PROJECT_ID": "dummy",
                              "GEMINI_API_KEY": "dummy"}}],
    },
    "brave-search": {
        "package": "@brave/brave-search-mcp-server",
        "variants": [{"env": {"BRAVE_API_KEY": "dummy"}}],
    },
    "mongodb": {
        "package": "@mongodb-js/mongodb-mcp-server",
        "variants": [{"env": {"MDB_MCP_CONNECTION_STRING": "mongodb://127.0.0.1:27017"}}],
    },
    "azure": {
        "package": "@azure/mcp",
        "variants": [
            {"args": ["server", "start", "--mode", "all"]},
            {"args": ["server", "start"]},
        ],
    },
    "railway": {
        "package": "@railway/mcp-server",
        "variants": [{"env": {"RAILWAY_TOKEN": "dummy"}}],
    },
    # --- Extras (not in the requested list): OLDER releases installed under
    # legacy/ because the npm-resolved latest ones cannot list tools offline
    # (@stripe/mcp 0.3.x proxies to https://mcp.stripe.com; @railway/mcp-server
    # 0.1.12 just execs the Railway CLI, which is not on this machine).
    "stripe-legacy": {
        "package": "@stripe/mcp",
        "root": "legacy",
        "bin": "mcp",
        "variants": [
            {"args": ["--tools=all", "--api-key=sk_test_dummy"],
             "env": {"STRIPE_SECRET_KEY": "sk_test_dummy"}},
        ],
    },
    "railway-legacy": {
        "package": "@railway/mcp-server",
        "root": "legacy",
        "variants": [{"env": {"RAILWAY_TOKEN": "dummy"}}],
    },
    "shopify-dev": {
        "package": "@shopify/dev-mcp",
        "bin": "shopify-dev-mcp",
        "variants": [
            {"env": {"STOREFRONT_WEB_COMPONENTS": "true", "OPT_OUT_INSTRUMENTATION": "true"}},
            {"env": {"OPT_OUT_INSTRUMENTATION": "true"}},
        ],
    },
}

FAKE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: dummy
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: dummy
  user:
    token: dummy
contexts:
- name: dummy
  context:
    cluster: dummy
    user: dummy
    namespace: default
current-context: dummy
"""


def nm_dir(root: str | None) -> Path:
    return ROOT / root / "node_modules" if root else NM


def pkg_json(package: str, root: str | None = None) -> dict:
    return json.loads((nm_dir(root) / package / "package.json").read_text())


def find_bin(package: str, bin_name: str | None, root: str | None = None) -> list[str]:
    """Return the command (node + script) for a package's bin."""
    pj = pkg_json(package, root)
    b = pj.get("bin")
    if isinstance(b, str):
        script = b
    elif isinstance(b, dict):
        if bin_name is None:
            bin_name = next(iter(b)) if len(b) == 1 else None
        if bin_name is None or bin_name not in b:
            raise RuntimeError(f"{package}: ambiguous/missing bin {bin_name!r} in {b}")
        script = b[bin_name]
    else:
        raise RuntimeError(f"{package}: no bin in package.json")
    path = (nm_dir(root) / package / script).resolve()
    if not path.exists():
        raise RuntimeError(f"{package}: bin script {path} missing")
    return ["node", str(path)]


def has_hint(tool: dict) -> bool:
    ann = tool.get("annotations") or {}
    return any(k.endswith("Hint") for k in ann)


def describe(e: BaseException) -> str:
    """Innermost messages of (nested) exception groups."""
    if isinstance(e, BaseExceptionGroup):
        return " | ".join(describe(x) for x in e.exceptions)
    return "".join(traceback.format_exception_only(type(e), e)).strip()


def kill_marked(marker: str) -> list[int]:
    """SIGKILL any leftover process (e.g. one that escaped the process group)
    whose environment carries this run's unique marker: only ours."""
    killed = []
    needle = f"MCPDEV_COLLECT_MARKER={marker}".encode()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            env = (p / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            try:
                os.kill(int(p.name), signal.SIGKILL)
                killed.append(int(p.name))
            except OSError:
                pass
    return killed


async def list_tools_once(cmd: list[str], args: list[str], env: dict, cwd: Path,
                          errlog, timeout: float) -> tuple[list[dict], dict]:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:] + args, env=env, cwd=str(cwd))
    info: dict = {}
    with anyio.fail_after(timeout):
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                info["serverInfo"] = init.server_info.model_dump(mode="json", by_alias=True,
                                                                 exclude_none=True)
                info["protocolVersion"] = init.protocol_version
                tools: list[dict] = []
                cursor = None
                pages = 0
                while True:
                    res = await session.list_tools(
                        params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
                    pages += 1
                    tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                              for t in res.tools]
                    cursor = res.next_cursor
                    if not cursor or pages > 100:
                        break
                info["pages"] = pages
    return tools, info


async def collect_one(name: str, spec: dict, timeout: float) -> dict:
    rec: dict = {"server": name, "package": spec["package"], "variants": []}
    try:
        cmd = find_bin(spec["package"], spec.get("bin"), spec.get("root"))
        cmd = cmd[:1] + spec.get("node_args", []) + cmd[1:]
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"bin: {e}"
        return rec
    cwd = RUN_DIR / name
    cwd.mkdir(parents=True, exist_ok=True)
    best: list[dict] | None = None
    for i, var in enumerate(spec["variants"]):
        marker = uuid.uuid4().hex
        env = dict(COMMON_ENV)
        env.update(var.get("env", {}))
        env["MCPDEV_COLLECT_MARKER"] = marker
        args = var.get("args", [])
        vrec = {"args": args, "env": {k: v for k, v in var.get("env", {}).items()}}
        t0 = time.monotonic()
        logf = LOG_DIR / f"{name}.{i}.stderr.log"
        with open(logf, "w") as errlog:
            try:
                tools, info = await list_tools_once(cmd, args, env, cwd, errlog,
                                                    spec.get("timeout", timeout))
                vrec.update(info)
                vrec["tools"] = len(tools)
                vrec["tool_names"] = [t.get("name") for t in tools]
                if best is None or len(tools) > len(best):
                    best = tools
                    rec["chosen_variant"] = i
            except BaseException as e:  # noqa: BLE001  (TimeoutError, ExceptionGroup, ...)
                if isinstance(e, KeyboardInterrupt):
                    raise
                vrec["error"] = describe(e)[:2000]
        vrec["seconds"] = round(time.monotonic() - t0, 1)
        leftovers = kill_marked(marker)
        if leftovers:
            vrec["killed_leftover_pids"] = leftovers
        try:
            vrec["stderr_tail"] = logf.read_text(errors="replace")[-1500:]
        except OSError:
            pass
        rec["variants"].append(vrec)
        print(f"  [{name} v{i}] tools={vrec.get('tools')} err={vrec.get('error', '')[:200]!r} "
              f"({vrec['seconds']}s)", flush=True)
    if best is not None and len(best) > 0:
        (TOOLS_DIR / f"{name}.json").write_text(json.dumps(best, indent=1, ensure_ascii=False) + "\n")
        rec["tools"] = len(best)
    elif best is not None:
        rec["error"] = "server started but listed 0 tools"
    else:
        rec["error"] = "all variants failed"
    return rec


def build_manifest() -> list[dict]:
    out = []
    for name, spec in SERVERS.items():
        f = TOOLS_DIR / f"{name}.json"
        if not f.exists():
            continue
        tools = json.loads(f.read_text())
        pj = pkg_json(spec["package"], spec.get("root"))
        out.append({
            "server": name,
            "package": spec["package"],
            "version": pj.get("version"),
            "licence": pj.get("license"),
            "tools": len(tools),
            "annotated": sum(1 for t in tools if has_hint(t)),
        })
    (ROOT / "manifest.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


async def main_async(names: list[str], timeout: float) -> None:
    runs_file = ROOT / "runs.json"
    runs = json.loads(runs_file.read_text()) if runs_file.exists() else {}
    for name in names:
        print(f"== {name}", flush=True)
        runs[name] = await collect_one(name, SERVERS[name], timeout)
        runs_file.write_text(json.dumps(runs, indent=1) + "\n")


def install() -> None:
    """Copy the pinned package lists into the data folder and ``npm install`` them."""
    import shutil
    import subprocess

    for name, where in (("package.json", ROOT), ("package-legacy.json", ROOT / "legacy")):
        where.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / name, where / "package.json")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"],
                       cwd=where, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("servers", nargs="*", help=f"subset of: {' '.join(SERVERS)}")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--manifest-only", action="store_true")
    ap.add_argument("--install", action="store_true",
                    help="npm install the pinned servers into the data folder, then stop")
    a = ap.parse_args()
    if a.install:
        install()
        return
    for d in (TOOLS_DIR, LOG_DIR, RUN_DIR, HOME, KUBECONFIG.parent):
        d.mkdir(parents=True, exist_ok=True)
    if not KUBECONFIG.exists():
        KUBECONFIG.write_text(FAKE_KUBECONFIG)
    if not a.manifest_only:
        unknown = [n for n in a.servers if n not in SERVERS]
        if unknown:
            sys.exit(f"unknown servers: {unknown}")
        anyio.run(main_async, a.servers or list(SERVERS), a.timeout)
    for row in build_manifest():
        print(f"{row['server']:22} {row['package']}@{row['version']:12} {str(row['licence']):22} "
              f"tools={row['tools']:4} annotated={row['annotated']}")


if __name__ == "__main__":
    main()
