"""A corpus of fake secrets in realistic tool outputs (env dumps, docker inspect, .env, YAML,
TOML, AWS CLI JSON and CSV, PEM files, curl -v, CI logs), for the redaction tests.

Every secret comes from a kind's generator in :mod:`ctxgate.archive.secret_kinds` (obviously
fake, format-valid). :func:`documents` returns ``{name: (text, [Placed ...])}``; a placed
secret must not survive anywhere ctxgate stores or shows it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ctxgate.archive.secret_kinds import SECRET_KINDS, fake_secret

__all__ = ["Placed", "documents", "secret_parts"]

KINDS = {k.name: k for k in SECRET_KINDS}


@dataclass(frozen=True)
class Placed:
    kind: str
    secret: str


def secret_parts(secret: str) -> list[str]:
    """The pieces that must not survive (each PEM line, each CSV field), 8+ characters."""
    return [p for p in re.split(r"[\n,]", secret) if len(p) >= 8]


def _fake(kind: str, i: int) -> str:
    return KINDS[kind].fake(i)


def _log_line(n: int) -> str:
    return (f"2026-12-01T10:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z INFO  worker-{n % 8} "
            f"request id={n} path=/api/v1/items/{n * 7 % 1000} status=200 took={n % 97}ms")


def _ci_log(base: int) -> tuple[str, list[Placed]]:
    """Every context of every kind, between ordinary log lines."""
    lines: list[str] = []
    placed: list[Placed] = []
    n = 0
    for k in SECRET_KINDS:
        for j, ctx in enumerate(k.contexts):
            for _ in range(3):
                n += 1
                lines.append(_log_line(n))
            s = k.fake(base + j)
            lines.append(ctx.format(s=s, s_json=json.dumps(s)[1:-1]))
            placed.append(Placed(k.name, s))
    lines += [_log_line(n + i) for i in range(1, 40)]
    return "\n".join(lines) + "\n", placed


def _env_dump(i: int) -> tuple[str, list[Placed]]:
    pw, url_pw, redis_pw = (_fake("credential_assignment", 500 + i),
                            _fake("url_credentials", 500 + i), _fake("url_credentials", 600 + i))
    items = [
        ("SHELL=/bin/bash", None), ("PWD=/home/runner/work/app", None), ("OLDPWD=/tmp", None),
        ("HOME=/home/runner", None), ("LANG=C.UTF-8", None),
        ("PATH=/usr/local/bin:/usr/bin:/bin", None), ("CI=true", None), ("MAX_TOKENS=4096", None),
        (f"DB_PASSWORD={pw}", Placed("credential_assignment", pw)),
        (f"GITHUB_TOKEN={_fake('github_token', 500 + i)}",
         Placed("github_token", _fake("github_token", 500 + i))),
        (f"OPENAI_API_KEY={_fake('openai_key', 500 + i)}",
         Placed("openai_key", _fake("openai_key", 500 + i))),
        (f"ANTHROPIC_API_KEY={_fake('anthropic_key', 500 + i)}",
         Placed("anthropic_key", _fake("anthropic_key", 500 + i))),
        (f"STRIPE_SECRET_KEY={_fake('stripe_key', 500 + i)}",
         Placed("stripe_key", _fake("stripe_key", 500 + i))),
        (f"AWS_ACCESS_KEY_ID={_fake('aws_access_key', 500 + i)}",
         Placed("aws_access_key", _fake("aws_access_key", 500 + i))),
        (f"AWS_SECRET_ACCESS_KEY={_fake('aws_secret_key', 500 + i)}",
         Placed("aws_secret_key", _fake("aws_secret_key", 500 + i))),
        (f"HF_TOKEN={_fake('huggingface_token', 500 + i)}",
         Placed("huggingface_token", _fake("huggingface_token", 500 + i))),
        (f"NPM_TOKEN={_fake('npm_token', 500 + i)}", Placed("npm_token", _fake("npm_token", 500 + i))),
        (f"SENDGRID_API_KEY={_fake('sendgrid_key', 500 + i)}",
         Placed("sendgrid_key", _fake("sendgrid_key", 500 + i))),
        (f"GOOGLE_MAPS_KEY={_fake('google_api_key', 500 + i)}",
         Placed("google_api_key", _fake("google_api_key", 500 + i))),
        (f"DATABASE_URL=postgres://app:{url_pw}@db.internal:5432/app",
         Placed("url_credentials", url_pw)),
        (f"REDIS_URL=redis://:{redis_pw}@cache:6379/0", Placed("url_credentials", redis_pw)),
        ("AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=fakeacct;"
         f"AccountKey={_fake('azure_key', 500 + i)};EndpointSuffix=core.windows.net",
         Placed("azure_key", _fake("azure_key", 500 + i))),
        (f"SLACK_BOT_TOKEN={_fake('slack_token', 500 + i)}",
         Placed("slack_token", _fake("slack_token", 500 + i))),
        (f"SECRET_KEY={_fake('credential_assignment', 700 + i)}",
         Placed("credential_assignment", _fake("credential_assignment", 700 + i))),
    ]
    return "\n".join(t for t, _ in items) + "\n", [p for _, p in items if p]


def _docker_inspect(i: int) -> tuple[str, list[Placed]]:
    pw = _fake("credential_assignment", 800 + i)
    tok = _fake("jwt", 800 + i)
    auth = _fake("docker_auth", 800 + i)
    key = _fake("credential_assignment", 900 + i)
    doc = [{
        "Id": "f" * 64, "Name": f"/app-{i}",
        "Config": {"Hostname": "abc", "Env": [f"POSTGRES_PASSWORD={pw}", "PATH=/usr/bin",
                                              f"JWT={tok}"],
                   "Labels": {"maintainer": "ops"}},
        "HostConfig": {"Binds": ["/data:/data"]},
        "Settings": {"password": key, "retries": 3, "api_token_count": 2},
        "Auths": {"auths": {"registry.example.com": {"auth": auth}}},
    }]
    placed = [Placed("credential_assignment", pw), Placed("jwt", tok), Placed("docker_auth", auth),
              Placed("credential_assignment", key)]
    return json.dumps(doc, indent=4) + "\n", placed


def _dotenv(i: int) -> tuple[str, list[Placed]]:
    vals = [_fake("credential_assignment", 1000 + i * 10 + k) for k in range(6)]
    text = (f"# app settings\nAPP_ENV=production\nexport DB_PASSWORD='{vals[0]}'\n"
            f"MYSQL_ROOT_PASSWORD=\"{vals[1]}\"\nsmtp_pass={vals[2]}\nMY_API_KEY={vals[3]}\n"
            f"CLIENT_SECRET={vals[4]}\nAuth_Token = {vals[5]}\nDEBUG=false\nPORT=8080\n")
    return text, [Placed("credential_assignment", v) for v in vals]


def _k8s_yaml(i: int) -> tuple[str, list[Placed]]:
    vals = [_fake("credential_assignment", 1200 + i * 10 + k) for k in range(3)]
    pem = _fake("private_key", 1200 + i)
    body = "\n".join("    " + line for line in pem.split("\n"))
    text = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-creds-{i}\n"
            f"stringData:\n  password: {vals[0]}\n  apiKey: \"{vals[1]}\"\n"
            f"  client_secret: '{vals[2]}'\n  tls.key: |\n    -----BEGIN PRIVATE KEY-----\n"
            f"{body}\n    -----END PRIVATE KEY-----\n  replicas: 3\n")
    return text, [*(Placed("credential_assignment", v) for v in vals), Placed("private_key", pem)]


def _toml(i: int) -> tuple[str, list[Placed]]:
    vals = [_fake("credential_assignment", 1400 + i * 10 + k) for k in range(3)]
    text = (f"[database]\nhost = \"db\"\npassword = \"{vals[0]}\"\n\n[api]\n"
            f"api_key = '{vals[1]}'\ntimeout = 30\n[smtp]\npasswd = \"{vals[2]}\"\n")
    return text, [Placed("credential_assignment", v) for v in vals]


def _aws_cli(i: int) -> tuple[str, list[Placed]]:
    akid = "ASIA" + fake_secret("asia", i, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    secret = _fake("aws_secret_key", 1500 + i)
    session = fake_secret("session", i, 300, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                          "0123456789+/")
    sts = {"Credentials": {"AccessKeyId": akid, "SecretAccessKey": secret,
                           "SessionToken": session, "Expiration": "2026-12-01T22:00:00+00:00"}}
    key2 = _fake("aws_access_key", 1600 + i)
    secret2 = _fake("aws_secret_key", 1600 + i)
    iam = {"AccessKey": {"UserName": "ci-bot", "AccessKeyId": key2, "Status": "Active",
                         "SecretAccessKey": secret2, "CreateDate": "2026-12-01T10:00:00+00:00"}}
    csv = _fake("aws_credentials_csv", 1600 + i)
    text = (json.dumps(sts, indent=4) + "\n" + json.dumps(iam, indent=4) + "\n"
            "Access key ID,Secret access key\n" + csv + "\n")
    placed = [Placed("aws_access_key", akid), Placed("aws_secret_key", secret),
              Placed("credential_assignment", session), Placed("aws_access_key", key2),
              Placed("aws_secret_key", secret2), Placed("aws_credentials_csv", csv)]
    return text, placed


def _aws_json(i: int) -> tuple[str, list[Placed]]:
    """One JSON document (for the JSON-stays-JSON check)."""
    secret = _fake("aws_secret_key", 1700 + i)
    session = fake_secret("session2", i, 200)
    doc = {"Credentials": {"AccessKeyId": _fake("aws_access_key", 1700 + i),
                           "SecretAccessKey": secret, "SessionToken": session,
                           "Expiration": "2026-12-01T22:00:00+00:00"},
           "AssumedRoleUser": {"Arn": "arn:aws:sts::123456789012:assumed-role/ci/x"},
           "items": [{"id": n, "password": _fake("credential_assignment", 1700 + n),
                      "note": f"row {n}"} for n in range(5)]}
    placed = [Placed("aws_secret_key", secret), Placed("credential_assignment", session),
              Placed("aws_access_key", _fake("aws_access_key", 1700 + i)),
              *(Placed("credential_assignment", _fake("credential_assignment", 1700 + n))
                for n in range(5))]
    return json.dumps(doc, indent=2) + "\n", placed


def _pem_file(i: int) -> tuple[str, list[Placed]]:
    out, placed = [], []
    for k, label in enumerate(("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                               "PGP PRIVATE KEY BLOCK", "ENCRYPTED PRIVATE KEY")):
        body = _fake("private_key", 1800 + i * 10 + k)
        if "PGP" in label:
            body = "Version: FakePG 1.0\n\n" + body + "\n=FAKE"
        out.append(f"$ cat key{k}.pem\n-----BEGIN {label}-----\n{body}\n-----END {label}-----")
        placed.append(Placed("private_key", body))
    return "\n".join(out) + "\n$ ls\nkey0.pem key1.pem\n", placed


def _curl_verbose(i: int) -> tuple[str, list[Placed]]:
    tok = _fake("jwt", 1900 + i)
    basic = _fake("basic_auth", 1900 + i)
    auth = _fake("authorization", 1900 + i)
    upw = _fake("url_credentials", 1900 + i)
    cookie = _fake("jwt", 2000 + i)
    text = (f"*   Trying 10.0.0.{i}:443...\n* Connected to api.example.com (10.0.0.{i}) port 443\n"
            f"* Server auth using Basic with user 'bot'\n> GET /v1/items HTTP/1.1\n"
            f"> Host: api.example.com\n> Authorization: Bearer {tok}\n> User-Agent: curl/8.5.0\n"
            f"> Proxy-Authorization: Basic {basic}\n> X-Custom-Auth: x\n"
            f"> authorization: token {auth}\n>\n< HTTP/1.1 200 OK\n"
            f"< Set-Cookie: session={cookie}; Path=/; HttpOnly\n"
            f"< Location: https://bot:{upw}@mirror.example.com/x\n< Content-Length: 2\n<\n"
            "{}\n* Connection #0 left intact\n")
    return text, [Placed("jwt", tok), Placed("basic_auth", basic), Placed("authorization", auth),
                  Placed("url_credentials", upw), Placed("jwt", cookie)]


def documents() -> dict[str, tuple[str, list[Placed]]]:
    """Every corpus document: ``{name: (text, placed secrets)}``."""
    docs = {"ci_log_a": _ci_log(100), "ci_log_b": _ci_log(300)}
    for i in range(2):
        docs[f"env_{i}"] = _env_dump(i)
        docs[f"docker_inspect_{i}"] = _docker_inspect(i)
        docs[f"dotenv_{i}"] = _dotenv(i)
        docs[f"k8s_{i}"] = _k8s_yaml(i)
        docs[f"toml_{i}"] = _toml(i)
        docs[f"aws_cli_{i}"] = _aws_cli(i)
        docs[f"aws_json_{i}"] = _aws_json(i)
        docs[f"pem_{i}"] = _pem_file(i)
        docs[f"curl_{i}"] = _curl_verbose(i)
    return docs
