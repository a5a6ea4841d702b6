"""The secret kinds the archive redacts: one entry per kind, with its fake test vectors.

Each :class:`SecretKind` names the kind (the ``[REDACTED:kind]`` label), its regular
expression (bytes, matched against the output), which part of the match is the secret (the
groups named ``secret``, ``secret2`` ...; the rest of the match is kept so the output still
reads: ``DB_PASSWORD=[REDACTED:password]``, ``"password": "[REDACTED:password]"``), how it is
found cheaply (``literals``: the expression only runs on text containing one of them;
``anchors``: the expression is only tried where one of them occurs), and a generator of
obviously fake, format-valid secrets with the contexts they appear in, which the tests use as
the kind's test vectors and to build a secret corpus.

Adding a kind: append an entry here (and nothing else); ``tests/archive/test_redact_kinds.py``
checks every entry's vectors.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from ctxgate.archive.secret_checks import (
    basic_auth_ok,
    resolve_assignment,
    resolve_flag,
    token_shape,
)

__all__ = ["SECRET_KINDS", "SecretKind", "fake_secret"]

_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"
_ALNUM = _UPPER + _LOWER + _DIGITS
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def fake_secret(tag: str, i: int, n: int, alphabet: str = _ALNUM, mark: str = "FAKE") -> str:
    """The ``i``-th fake secret for ``tag``: ``mark`` then ``n - len(mark)`` characters of
    ``alphabet``, deterministic (sha256 of tag and index)."""
    out: list[str] = list(mark)
    counter = 0
    while len(out) < n:
        for b in hashlib.sha256(f"{tag}:{i}:{counter}".encode()).digest():
            out.append(alphabet[b % len(alphabet)])
        counter += 1
    return "".join(out[:n])


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _pem_body(i: int) -> str:
    body = fake_secret("pem", i, 64 * 24 + 20, _B64, mark="MIIEFAKEKEY")
    return "\n".join(body[k:k + 64] for k in range(0, len(body), 64))


def _jwt(i: int) -> str:
    head = _b64url(b'{"alg":"HS256","typ":"JWT"}')
    payload = _b64url(json.dumps({"sub": f"fake-user-{i}", "iat": 1700000000 + i}).encode())
    return f"{head}.{payload}.{fake_secret('jwt', i, 43, _URLSAFE)}"


@dataclass(frozen=True, kw_only=True)
class SecretKind:
    """One kind of secret: how to find it, what of it is secret, and fake examples."""

    name: str
    """Label in ``[REDACTED:name]`` (a resolver may name a finer kind)."""
    regex: str
    """The expression (compiled as bytes)."""
    secret: str
    """Which part of a match is the secret, in words."""
    fake: Callable[[int], str]
    """The ``i``-th fake secret (what must not survive redaction)."""
    contexts: tuple[str, ...]
    """Realistic lines around a secret: ``{s}`` is the secret, ``{s_json}`` the secret as the
    inside of a JSON string (newlines as ``\\n``)."""
    literals: tuple[str, ...] = ()
    """Prefilter: lower-case texts; the expression runs only where one occurs in the buffer."""
    anchors: tuple[str, ...] = ()
    """Lower-case texts; the expression is tried only at their start positions."""

    fold_case: bool = False
    check: Callable[[bytes], bool] | None = None
    """Validates the secret group (rejects look-alikes)."""
    resolve: Callable | None = None
    """``(match, buffer) -> Found | None`` for kinds a regular expression cannot finish."""

    def vectors(self) -> list[tuple[str, str]]:
        """``(text, secret)`` test vectors: each context filled with the first fake secrets."""
        out = []
        for k, ctx in enumerate(self.contexts):
            s = self.fake(k)
            out.append((ctx.format(s=s, s_json=json.dumps(s)[1:-1]), s))
        return out


_NOT_WORD = r"(?<![A-Za-z0-9_\-])"
_END = r"(?![A-Za-z0-9_\-])"
_KW = r"(?P<kw>pass(?:word|wd|phrase)?|pwd|secret|token|key)"
_WORDS = ("password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "key")
"""How a credential name ends; the anchors are these words followed by a separator."""

SECRET_KINDS: tuple[SecretKind, ...] = (
    SecretKind(
        name="private_key",
        regex=(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----(?P<secret>(?:"
               r"(?:\r?\n|\\(?:r\\)?n)[ \t]*(?:[A-Za-z][A-Za-z0-9\-]{0,40}: ?[^\r\n\\]{0,120}|"
               r"[A-Za-z0-9+/=]{1,100})?){1,220})"),
        secret="every body line (headers and base64) up to the END line; BEGIN/END kept, "
               "each line replaced in place so the line count stays",
        literals=("private key",),
        fake=_pem_body,
        contexts=("-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",
                  "$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n"
                  "-----END OPENSSH PRIVATE KEY-----\n$ echo done",
                  '{{"type": "service_account", "project_id": "fake-proj", "key": '
                  '"-----BEGIN PRIVATE KEY-----\\n{s_json}\\n-----END PRIVATE KEY-----\\n"}}',
                  "tls:\n  key: |\n    -----BEGIN EC PRIVATE KEY-----\n    {s}\n"
                  "    -----END EC PRIVATE KEY-----"),
    ),
    SecretKind(
        name="aws_credentials_csv",
        regex=(r"(?<![A-Za-z0-9])(?P<secret>(?:AKIA|ASIA)[A-Z0-9]{16})\"?[,;\t|] ?\"?"
               r"(?P<secret2>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        secret="the access key id and the secret access key of a CSV row (separators kept)",
        literals=("akia", "asia"),
        fake=lambda i: (f"AKIA{fake_secret('akid-csv', i, 16, _UPPER + _DIGITS)},"
                        f"{fake_secret('aws-csv', i, 40, _B64)}"),
        contexts=("User name,Password,Access key ID,Secret access key,Console login link\n"
                  "ci-bot,,{s},https://123456789012.signin.aws.amazon.com/console",
                  "Access key ID,Secret access key\n{s}"),
    ),
    SecretKind(
        name="aws_access_key",
        regex=r"(?<![A-Za-z0-9])(?P<secret>(?:AKIA|ASIA)[A-Z0-9]{16})(?![A-Za-z0-9])",
        secret="the whole key id",
        literals=("akia", "asia"),
        fake=lambda i: "AKIA" + fake_secret("akid", i, 16, _UPPER + _DIGITS),
        contexts=("aws_access_key_id = {s}", '    "AccessKeyId": "{s}",',
                  "AWS_ACCESS_KEY_ID={s}"),
    ),
    SecretKind(
        name="aws_secret_key",
        regex=(r"secret_?(?:access_?)?key[\"']?(?:[ \t]{0,3}[=:][ \t]{0,3}|[ \t]{1,3})"
               r"[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        secret="the 40-character value after the key name (aws_secret_access_key, "
               "SecretAccessKey, secret_key)",
        anchors=("secret",),
        fold_case=True,
        fake=lambda i: fake_secret("aws-secret", i, 40, _B64),
        contexts=("aws_secret_access_key = {s}", '        "SecretAccessKey": "{s}",',
                  "export AWS_SECRET_ACCESS_KEY={s}",
                  "$ aws configure set aws_secret_access_key {s}"),
    ),
    SecretKind(
        name="github_token",
        regex=(_NOT_WORD + r"(?P<secret>gh[pousr]_[A-Za-z0-9]{36,251}|"
               r"github_pat_[A-Za-z0-9_]{22,251})" + _END),
        secret="the whole token",
        literals=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        fake=lambda i: ("ghp_", "gho_", "ghs_", "github_pat_")[i % 4] + fake_secret(
            "gh", i, 36 if i % 4 < 3 else 82, _ALNUM),
        contexts=("remote: https://x-access-token:{s}@github.com/org/repo.git",
                  "GH_TOKEN used: {s}", "git config http.extraheader 'X-Token {s}'",
                  "[credential] helper = store # {s}"),
    ),
    SecretKind(
        name="gitlab_token",
        regex=_NOT_WORD + r"(?P<secret>gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_\-]{20,250})",
        secret="the whole token",
        literals=("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"),
        fake=lambda i: "glpat-" + fake_secret("glpat", i, 20, _ALNUM),
        contexts=("CI_JOB_TOKEN override {s}", "git clone https://oauth2:{s}@gitlab.com/g/p"),
    ),
    SecretKind(
        name="slack_token",
        regex=r"(?P<secret>xox[abposre]-[A-Za-z0-9\-]{10,250})",
        secret="the whole token",
        literals=("xox",),
        fake=lambda i: f"xoxb-{1000000000 + i}-{2000000000 + i}-" + fake_secret("xox", i, 24),
        contexts=("slack: posting with {s}", "SLACK_BOT={s}"),
    ),
    SecretKind(
        name="slack_webhook",
        regex=r"(?P<secret>https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{10,250})",
        secret="the whole webhook URL",
        literals=("hooks.slack.com",),
        fake=lambda i: ("https://hooks.slack.com/services/T0FAKE" + str(i) + "/B0FAKE/"
                        + fake_secret("hook", i, 24)),
        contexts=("notify: {s}",),
    ),
    SecretKind(
        name="anthropic_key",
        regex=_NOT_WORD + r"(?P<secret>sk-ant-[a-z]{2,8}[0-9]{0,3}-[A-Za-z0-9_\-]{20,400})" + _END,
        secret="the whole key",
        literals=("sk-",),
        fake=lambda i: "sk-ant-api03-" + fake_secret("ant", i, 93, _URLSAFE) + "AA",
        contexts=("ANTHROPIC_API_KEY={s}", "x-api-key: {s}", "client = Anthropic(api_key='{s}')"),
    ),
    SecretKind(
        name="openai_key",
        regex=(_NOT_WORD + r"(?P<secret>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,400}|"
               r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{40,64})" + _END),
        secret="the whole key",
        literals=("sk-",),
        fake=lambda i: ("sk-proj-" + fake_secret("oai", i, 40, _URLSAFE) + "T3BlbkFJ"
                        + fake_secret("oai2", i, 40, _URLSAFE, mark="")),
        contexts=("OPENAI_API_KEY={s}", "openai.api_key = \"{s}\"", "using key {s} for org"),
    ),
    SecretKind(
        name="stripe_key",
        regex=_NOT_WORD + r"(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,247})" + _END,
        secret="the whole key",
        literals=("sk_live_", "rk_live_", "sk_test_", "rk_test_"),
        fake=lambda i: ("sk_live_", "rk_live_")[i % 2] + fake_secret("stripe", i, 24),
        contexts=("STRIPE_SECRET_KEY={s}", "stripe.api_key = '{s}'", "charging with {s}"),
    ),
    SecretKind(
        name="stripe_webhook_secret",
        regex=_NOT_WORD + r"(?P<secret>whsec_[A-Za-z0-9+/=]{24,100})",
        secret="the whole signing secret",
        literals=("whsec_",),
        fake=lambda i: "whsec_" + fake_secret("whsec", i, 32),
        contexts=("Ready! Your webhook signing secret is {s} (^C to quit)",),
    ),
    SecretKind(
        name="google_api_key",
        regex=r"(?<![A-Za-z0-9_\-])(?P<secret>AIza[0-9A-Za-z_\-]{35})" + _END,
        secret="the whole key",
        literals=("aiza",),
        fake=lambda i: "AIza" + fake_secret("gapi", i, 35, _URLSAFE),
        contexts=("https://maps.googleapis.com/maps/api/geocode/json?address=x&key={s}",
                  '  "current_key": "{s}"'),
    ),
    SecretKind(
        name="google_oauth_token",
        regex=_NOT_WORD + r"(?P<secret>ya29\.[0-9A-Za-z_\-]{20,2000})",
        secret="the whole access token",
        literals=("ya29.",),
        fake=lambda i: "ya29." + fake_secret("ya29", i, 120, _URLSAFE),
        contexts=("gcloud auth print-access-token\n{s}",),
    ),
    SecretKind(
        name="google_client_secret",
        regex=_NOT_WORD + r"(?P<secret>GOCSPX-[A-Za-z0-9_\-]{28})" + _END,
        secret="the whole client secret",
        literals=("gocspx-",),
        fake=lambda i: "GOCSPX-" + fake_secret("gocspx", i, 28, _URLSAFE),
        contexts=('{{"installed": {{"client_id": "123-fake.apps.googleusercontent.com", '
                  '"secret_ref": "{s}"}}}}',),
    ),
    SecretKind(
        name="npm_token",
        regex=_NOT_WORD + r"(?P<secret>npm_[A-Za-z0-9]{36})" + _END,
        secret="the whole token",
        literals=("npm_",),
        fake=lambda i: "npm_" + fake_secret("npm", i, 36),
        contexts=("//registry.npmjs.org/:_authToken={s}", "npm token created: {s}"),
    ),
    SecretKind(
        name="huggingface_token",
        regex=_NOT_WORD + r"(?P<secret>hf_[A-Za-z0-9]{34,40})" + _END,
        secret="the whole token",
        literals=("hf_",),
        fake=lambda i: "hf_" + fake_secret("hf", i, 34),
        contexts=("huggingface-cli login --token {s}", "HF_HUB_TOKEN_VALUE {s}"),
    ),
    SecretKind(
        name="sendgrid_key",
        regex=r"(?<![A-Za-z0-9])(?P<secret>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})" + _END,
        secret="the whole key",
        literals=("sg.",),
        fake=lambda i: ("SG." + fake_secret("sg1", i, 22, _URLSAFE) + "."
                        + fake_secret("sg2", i, 43, _URLSAFE)),
        contexts=("SENDGRID_API_KEY={s}", "mailer: using {s}"),
    ),
    SecretKind(
        name="azure_key",
        regex=(r"(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey|SharedKey)="
               r"(?P<secret>[A-Za-z0-9+/]{20,200}={0,2})"),
        secret="the key value of a connection string field (up to ';')",
        literals=("accountkey=", "sharedaccesskey=", "primarykey=", "secondarykey=",
                  "sharedkey="),
        fold_case=True,
        fake=lambda i: fake_secret("azure", i, 86, _B64) + "==",
        contexts=("DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey={s};"
                  "EndpointSuffix=core.windows.net",
                  "Endpoint=sb://fake-ns.servicebus.windows.net/;SharedAccessKeyName="
                  "RootManageSharedAccessKey;SharedAccessKey={s}"),
    ),
    SecretKind(
        name="azure_sas_signature",
        regex=r"[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{20,300})",
        secret="the sig= value of a shared access signature URL",
        literals=("sig=",),
        fake=lambda i: fake_secret("sas", i, 43, _B64) + "%3D",
        contexts=("https://fakeacct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o"
                  "&sp=r&se=2026-12-31T00:00:00Z&spr=https&sig={s}",),
    ),
    SecretKind(
        name="jwt",
        regex=(_NOT_WORD + r"(?P<secret>eyJ[A-Za-z0-9_\-]{10,4000}\.eyJ[A-Za-z0-9_\-]{2,8000}"
               r"\.[A-Za-z0-9_\-]{10,2000})" + _END),
        secret="the whole token (header.payload.signature)",
        literals=("eyj",),
        fake=_jwt,
        contexts=("Set-Cookie: session={s}; Path=/; HttpOnly", "id_token {s}",
                  '{{"jwt": "{s}", "expires_in": 3600}}'),
    ),
    SecretKind(
        name="authorization",
        regex=(r"authorization[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?(?:(?:bearer|"
               r"basic|token|digest|negotiate|apikey|api-key|sso-key|aws4-hmac-sha256|"
               r"key)[ \t]+)?(?P<secret>[^\s\"',;]{6,4096})"),
        secret="the credentials of an Authorization header (the scheme is kept)",
        anchors=("authorization",),
        fold_case=True,
        check=token_shape,
        fake=lambda i: fake_secret("authz", i, 40),
        contexts=("> Authorization: token {s}", "curl -H 'Authorization: {s}' https://api.x",
                  '"headers": {{"Authorization": "Token {s}"}}'),
    ),
    SecretKind(
        name="bearer",
        regex=r"(?<![A-Za-z0-9_\-])bearer\s{1,3}(?P<secret>[A-Za-z0-9\-._~+/]{8,4096}={0,4})",
        secret="the token after Bearer",
        anchors=("bearer",),
        fold_case=True,
        fake=lambda i: fake_secret("bearer", i, 40, _URLSAFE),
        contexts=("token_type=Bearer {s}", "sending Bearer {s} to upstream"),
    ),
    SecretKind(
        name="basic_auth",
        regex=(r"(?<![A-Za-z0-9_\-])basic[ \t]{1,3}(?P<secret>[A-Za-z0-9+/]{6,1000}={0,2})"
               r"(?![A-Za-z0-9+/=])"),
        secret="the base64 user:password after Basic (only if it decodes to one)",
        anchors=("basic",),
        fold_case=True,
        check=basic_auth_ok,
        fake=lambda i: _b64(f"fakeuser{i}:{fake_secret('basic', i, 16)}"),
        contexts=("git -c http.extraHeader='AUTHORIZATION: basic {s}' fetch",
                  "> Proxy-Authorization: Basic {s}", "auth header was Basic {s}"),
    ),
    SecretKind(
        name="docker_auth",
        regex=r"\"auth\"\s{0,3}:\s{0,3}\"(?P<secret>[A-Za-z0-9+/=_\-.]{8,4096})\"",
        secret="the base64 user:password of a docker config auths entry (quotes kept)",
        literals=('"auth"',),
        fake=lambda i: _b64(f"fakeuser{i}:{fake_secret('docker', i, 20)}"),
        contexts=('{{\n  "auths": {{\n    "registry.example.com": {{\n      "auth": "{s}"\n'
                  '    }}\n  }}\n}}',),
    ),
    SecretKind(
        name="url_credentials",
        regex=r"://[^/\s:@\"'<>]{0,256}:(?P<secret>[^/\s@\"'<>]{1,256})(?=@)",
        secret="the password of user:password@ in a URL (user kept)",
        literals=("://",),
        fake=lambda i: fake_secret("urlpw", i, 18),
        contexts=("REDIS_URL=redis://:{s}@cache.internal:6379/0",
                  "DATABASE_URL=postgres://app:{s}@db.internal:5432/app",
                  "Cloning into 'repo'... https://ci-bot:{s}@git.example.com/org/repo.git",
                  'dsn: "mysql://root:{s}@127.0.0.1:3306/shop"',
                  "amqp://guest:{s}@rabbit:5672/"),
    ),
    SecretKind(
        name="mysql_password_option",
        regex=(r"(?:mysql|mysqldump|mysqladmin|mariadb)[^\n|;&]{0,200}?[ \t]-p"
               r"(?P<secret>[^\s'\"]{1,256})"),
        secret="the password glued to -p in a mysql/mariadb command line",
        literals=("mysql", "mariadb"),
        fake=lambda i: fake_secret("mysqlp", i, 16),
        contexts=("$ mysql -u root -p{s} shop -e 'select 1'",
                  "mysqldump -h db -uapp -p{s} shop > dump.sql"),
    ),
    SecretKind(
        name="credential_assignment",
        regex=_KW + r"(?P<nq>\\?[\"']?)(?P<sep>[ \t]{0,3}(?::=|=>|[:=]))[ \t]{0,8}",
        secret="the value assigned to a credential name (password, *_PASSWORD, SECRET_KEY, "
               "API_KEY, client_secret, *_TOKEN, ...) in shell, .env, YAML, TOML, JSON (quotes "
               "kept); labelled password or secret",
        anchors=tuple(w + t for w in _WORDS for t in ("=", ":", '":', "':", " =", "\\")),
        fold_case=True,
        resolve=resolve_assignment,
        fake=lambda i: fake_secret("assign", i, 20, _ALNUM + "!#%^"),
        contexts=("DB_PASSWORD={s}", "export PGPASSWORD='{s}'", "password: {s}",
                  '{{"password": "{s}", "user": "app"}}', "spring.datasource.password={s}",
                  'MYSQL_ROOT_PASSWORD="{s}"', 'db_pass = "{s}"',
                  "Server=db;Database=shop;Uid=sa;Pwd={s};", "  smtpPassword: \"{s}\"",
                  "SECRET_KEY={s}", "API_KEY={s}", "client_secret: {s}",
                  '"api_key": "{s}",', 'MY_API_KEY="{s}"', "x-api-key: {s}",
                  "aws_session_token = {s}", '"SessionToken": "{s}",',
                  "declare -x GITHUB_TOKEN=\"{s}\"", "token = '{s}'",
                  "{{'password': '{s}'}}", 'password => "{s}"', "apiKey = \"{s}\"",
                  "PassWord: {s}"),
    ),
    SecretKind(
        name="credential_flag",
        regex=r"-" + _KW + r"[ \t]{1,3}",
        secret="the value after a credential option (--password, --api-key, --token ...); "
               "labelled password or secret",
        anchors=tuple(f"-{w} " for w in _WORDS),
        fold_case=True,
        resolve=resolve_flag,
        fake=lambda i: fake_secret("flag", i, 20),
        contexts=("docker login -u bot --password {s} registry.example.com",
                  "mysql --user=root --password {s} shop", "tool deploy --api-key {s} --yes",
                  "vault login -token {s}"),
    ),
)
"""Every kind, most specific first (on a tie the earlier match start wins, then the longer)."""
