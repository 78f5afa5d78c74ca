"""Ordinary engineering notes with no secret in them: the negatives. Many hold what looks
like one (digests, ids, public keys, placeholders, documented example keys, secrets talked
about but not given). Each kind here is a list of templates (str.format, filled by `fill` with
fresh random ids and digests); quoted.json adds lines used as they are, quoted from gitleaks'
false-positive examples and detect-secrets' negative test cases.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from pathlib import Path
from typing import NamedTuple

from .blocks import B64, HEX, rand, wrap

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"


class Kind(NamedTuple):
    name: str
    placement: str  # prose, command or config: where such a note's text sits
    source: str
    templates: tuple[str, ...]


def fill(rng: random.Random) -> dict[str, str]:
    def b64(n: int) -> str:
        return base64.b64encode(rng.randbytes(n)).decode()
    sentence = rng.choice(("hello from the staging box", "feature flags: dark mode on", "build 4812 ok"))
    return {
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "sha40": rand(rng, HEX, 40),
        "sha7": rand(rng, HEX, 7), "sha7b": rand(rng, HEX, 7), "sha256": rand(rng, HEX, 64), "md5": rand(rng, HEX, 32),
        "hex16": rand(rng, HEX, 16), "hex17": rand(rng, HEX, 17), "hex32": rand(rng, HEX, 32),
        "b64_32": b64(32), "b64_48": b64(48), "b64_64": b64(64), "ssh_pub": rand(rng, B64, 43),
        "n": str(rng.randint(100, 9999)), "port": str(rng.choice((5432, 6379, 8080, 8443, 9200, 27017))),
        "ip": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "ver": f"{rng.randint(1, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}",
        "ver2": f"{rng.randint(1, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}",
        "account": "".join(rng.choice(string.digits) for _ in range(12)),
        "user": rng.choice(("sam", "priya", "jonas", "mei")),
        "branch": rng.choice(("fix/retry", "feat/export", "main")),
        "ulid": "01J" + rand(rng, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 23), "gdoc": rand(rng, URLSAFE, 44),
        "stripe_ch": rand(rng, ALNUM, 24), "stripe_cus": rand(rng, ALNUM, 14), "fp": rand(rng, B64, 43),
        "gpg": " ".join(rand(rng, "0123456789ABCDEF", 4) for _ in range(10)),
        "tls": ":".join(rand(rng, "0123456789ABCDEF", 2) for _ in range(32)),
        "b64_text": base64.b64encode(sentence.encode()).decode(), "png": "iVBORw0KGgoAAAANSUhEUgAA" + b64(90),
        "cert": "\n".join(wrap("MIIDdzCCAl+gAwIBAgIU" + rand(rng, B64, 64 * 14), 64)),
        "pubkey": "\n".join(wrap("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + rand(rng, B64, 64 * 5), 64)),
    }


K = Kind
KINDS: tuple[Kind, ...] = (
    K("request id in a log line", "config", "added", (
        "2026-11-20T10:14:03Z ERROR payment failed request_id={uuid} user_id={n} retry=2",
        "[api] 502 from upstream, x-request-id: {uuid} (took 30012 ms)",
        "worker-3 | job {uuid} finished in {n} ms")),
    K("git commit SHA", "prose", "added", (
        "Reverted {sha40} (the retry change) because it doubled queue latency.",
        "Bisect says {sha40} is the first bad commit.",
        "Deployed {sha40} to {branch} at 14:02; smoke tests green.")),
    K("short SHA and PR number", "prose", "added", (
        "Fixed in #{n} ({sha7}); backported to release-2.3 as {sha7b}.",
        "cherry-pick {sha7} onto the hotfix branch, then tag v{ver}")),
    K("sha256 checksum", "prose", "added", (
        "sha256sum terraform_1.9.8_linux_amd64.zip gives {sha256}, matches SHA256SUMS.",
        "Release asset checksum (sha256): {sha256}",
        "{sha256}  node-v22.11.0-linux-x64.tar.xz")),
    K("md5 checksum", "prose", "added", (
        "md5 of the nightly export is {md5}, same as yesterday's, so nothing changed.",
        "ETag \"{md5}\" on s3://acme-exports/daily.csv")),
    K("docker image digest", "config", "added", (
        "FROM python:3.12-slim@sha256:{sha256}",
        "Pinned the base image to node:22-alpine@sha256:{sha256} after the CVE scan.",
        "image: ghcr.io/acme/api@sha256:{sha256}")),
    K("npm integrity hash", "config", "added", (
        "\"lodash\": {{\n  \"version\": \"4.17.21\",\n  \"integrity\": \"sha512-{b64_64}\"\n}}",
        "integrity sha512-{b64_64}")),
    K("base64 image data URI", "prose", "added", (
        "![status badge](data:image/png;base64,{png})",
        "<img alt=\"logo\" src=\"data:image/png;base64,{png}\">")),
    K("placeholder connection URL", "config", "added", (
        "DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/db",
        "mongodb://<user>:<password>@localhost:27017/app",
        "redis://:${{REDIS_PASSWORD}}@cache:{port}/0",
        "amqp://guest:guest@localhost:5672/ (the default local RabbitMQ)")),
    K("environment variable reference", "config", "added", (
        "DB_PASSWORD=${{DB_PASSWORD}}",
        "password: ${{{{ secrets.DB_PASSWORD }}}}",
        "env:\n  - name: API_KEY\n    value: $(API_KEY)",
        "api_key = \"${{var.api_key}}\"")),
    K("angle-bracket placeholder", "command", "added", (
        "export OPENAI_API_KEY=<your-api-key>",
        "curl -H 'Authorization: Bearer <token>' https://api.acme.io/v1/me",
        "aws configure set aws_secret_access_key <SECRET_ACCESS_KEY>",
        "STRIPE_SECRET_KEY=<paste from the dashboard>")),
    K("AWS documented example keys", "config", "detect-secrets test_data/each_secret.py", (
        "From the AWS docs:\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "The example in the IAM guide uses AKIAIOSFODNN7EXAMPLE; ours start with AKIA too.",
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  # docs example, not ours")),
    K("documentation placeholder keys", "config", "gitleaks github.go, gitlab.go, huggingface.go fps", (
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "STRIPE_SECRET_KEY=sk_test_XXXXXXXXXXXXXXXXXXXXXXXX  # replace with yours",
        "GITLAB_TOKEN=glpat-XXXXXXXXXXX-XXXXXXXX",
        "HUGGINGFACE_API_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "client_secret=bP88Q~xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")),
    K("environment variable names in prose", "prose", "added", (
        "CI needs GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY and DD_API_KEY as masked variables.",
        "Rename STRIPE_WEBHOOK_SECRET to STRIPE_SIGNING_SECRET in the chart.",
        "TWILIO_AUTH_TOKEN and CF_API_TOKEN are read at startup; a restart is needed after rotation.")),
    K("code reading a secret from the environment", "config", "detect-secrets keyword_test.py", (
        "password = os.environ[\"DB_PASSWORD\"]",
        "token := os.Getenv(\"GITHUB_TOKEN\")",
        "const apiKey = process.env.STRIPE_SECRET_KEY;",
        "secret = settings.get(\"jwt_secret\")  # from Vault at boot")),
    K("function call", "config", "added", (
        "client = boto3.client(\"s3\", region_name=\"eu-west-1\")",
        "resp = requests.post(url, json=payload, timeout=10)",
        "hmac.new(key, msg, hashlib.sha256).hexdigest()")),
    K("file paths", "prose", "added", (
        "The deploy key is ~/.ssh/id_ed25519 and the profile is in ~/.aws/credentials; never commit either.",
        "Certs live in /etc/ssl/private/acme.key (0600) and /etc/ssl/certs/acme.crt.",
        "Moved secrets.yaml to .gitignore and into sops: secrets/prod.enc.yaml")),
    K("version bump", "prose", "added", (
        "Bumped pydantic {ver} -> {ver2} and ruff 0.6.9 -> 0.7.3.",
        "postgres {ver} to {ver2} upgrade scheduled for Saturday 06:00 UTC.")),
    K("public SSH key", "config", "added", (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{ssh_pub} {user}@laptop",
        "Added to authorized_keys on the bastion: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{ssh_pub} ci@acme")),
    K("password talked about, not given", "prose", "added", (
        "Rotate the db password every 90 days; it's in 1Password under prod-db.",
        "The admin password was reset on Tuesday, ask {user} for the new one in person.",
        "Never paste tokens into Slack; use the vault link instead.",
        "I rotated the Stripe webhook secret and updated it in the vault; nothing to do on your side.",
        "{user} will send the new DD_API_KEY through 1Password, not email.",
        "The API key expired, so the nightly sync failed with 401.")),
    K("git commands", "command", "added", (
        "git push --force-with-lease origin {branch}",
        "git rebase -i HEAD~3 && git push",
        "git log --oneline {sha7}..HEAD -- src/")),
    K("kubectl secret commands without values", "command", "added", (
        "kubectl get secrets -n prod",
        "kubectl describe secret db-credentials -n staging",
        "kubectl create secret generic db --from-file=password=./db-pass.txt")),
    K("database client prompting for a password", "command", "added", (
        "mysql -u root -p -h db-3.internal",
        "psql -h {ip} -U app -W app",
        "mongosh --username admin --password --authenticationDatabase admin")),
    K("docker login from stdin", "command", "added", (
        "cat ~/ghcr.txt | docker login ghcr.io -u {user} --password-stdin",
        "aws ecr get-login-password | docker login --username AWS --password-stdin {account}.dkr.ecr.eu-west-1"
        ".amazonaws.com")),
    K("public certificate block", "config", "added", (
        "CA cert for the internal registry:\n-----BEGIN CERTIFICATE-----\n{cert}\n-----END CERTIFICATE-----",
        "jwks signing cert (public):\n-----BEGIN PUBLIC KEY-----\n{pubkey}\n-----END PUBLIC KEY-----")),
    K("GPG key fingerprint", "prose", "added", (
        "Release tags are signed with {gpg} (sam's key).",
        "gpg --recv-keys \"{gpg}\"")),
    K("TLS certificate fingerprint", "prose", "added", (
        "SHA256 Fingerprint={tls}",
        "Pinned the upstream cert, fingerprint {tls}; it renews in March.")),
    K("SSH host key fingerprint", "prose", "added", (
        "ED25519 key fingerprint is SHA256:{fp}. Checked it against the console.",
        "bastion host key: SHA256:{fp}")),
    K("addresses and ports", "prose", "added", (
        "The replica is at {ip}:{port}, primary at 10.0.0.5:{port}.",
        "Allowed {ip}/32 on the security group for the VPN.")),
    K("AWS resource ids and ARNs", "config", "added", (
        "role_arn = \"arn:aws:iam::{account}:role/ci-deployer\"",
        "Terminated i-0{hex16} and detached vol-0{hex16} from vpc-0{hex16}.",
        "arn:aws:s3:::acme-exports-{account}/daily/*")),
    K("trace ids", "config", "added", (
        "traceparent: 00-{hex32}-{hex16}-01",
        "Slow span in trace {hex32}: db.query took 4.2 s.")),
    K("error tracker event id", "prose", "added", (
        "Sentry event {hex32} shows the NPE in OrderService.",
        "Rollbar item #{n}, occurrence {uuid}")),
    K("curl with a variable for the token", "command", "gitleaks curl.go fps", (
        "curl -H \"Authorization: Bearer $TOKEN\" https://api.acme.io/v1/me",
        "curl -H \"X-Api-Key: ${{API_KEY}}\" https://api.acme.io/v2/items",
        "http POST https://api.acme.io/v1/jobs Authorization:\"Bearer $ACCESS_TOKEN\"")),
    K("base64 of ordinary text", "command", "added", (
        "echo {b64_text} | base64 -d",
        "The header X-Debug: {b64_text} is just the build label, base64'd.")),
    K("cron expression", "config", "added", (
        "*/15 * * * * /usr/local/bin/backup.sh >> /var/log/backup.log 2>&1",
        "schedule: \"0 3 * * 1\"  # Mondays 03:00 UTC")),
    K("SQL", "config", "added", (
        "SELECT id, email FROM users WHERE created_at > now() - interval '7 days';",
        "ALTER TABLE orders ADD COLUMN refund_reason text;",
        "UPDATE accounts SET password_hash = NULL WHERE disabled;")),
    K("regular expression", "config", "added", (
        "USERNAME_RE = r\"^[a-zA-Z0-9_]{{3,16}}$\"",
        "grep -E '[0-9a-f]{{40}}' build.log")),
    K("python traceback", "config", "added", (
        "Traceback (most recent call last):\n  File \"/app/api/views.py\", line {n}, in create_order\n"
        "    sku = payload[\"sku\"]\nKeyError: 'sku'",)),
    K("Makefile", "config", "added", (
        "test:\n\tpytest -q tests/\n\nlint:\n\truff check .",
        "deploy: build\n\t./scripts/deploy.sh $(ENV)")),
    K("document link", "prose", "added", (
        "Design doc: https://docs.google.com/document/d/{gdoc}/edit",
        "Sheet with the Q3 numbers: https://docs.google.com/spreadsheets/d/{gdoc}/edit#gid=0")),
    K("Gerrit Change-Id", "config", "added", ("Change-Id: I{sha40}",)),
    K("payment object ids", "prose", "added", (
        "Refunded charge ch_{stripe_ch} for customer cus_{stripe_cus}.",
        "Webhook evt_{stripe_ch} arrived twice; idempotency key fixed it.")),
    K("chat ids", "prose", "added", (
        "Posted in C024BE91L by U0G9QF9C6, thread ts 1763641234.001200",
        "Discord channel 1187654321098765432 is the alerts one.")),
    K("CI secret reference", "config", "added", (
        "with:\n  token: ${{{{ secrets.GITHUB_TOKEN }}}}",
        "password: ${{{{ secrets.REGISTRY_PASSWORD }}}}\nusername: ${{{{ github.actor }}}}")),
    K("Vault path", "command", "added", (
        "vault kv get -field=password secret/prod/db",
        "vault read database/creds/readonly")),
    K("pip hash pin", "config", "added", ("requests==2.32.3 --hash=sha256:{sha256}",)),
    K("go.sum line", "config", "added", ("golang.org/x/net v0.25.0 h1:{b64_32}",)),
    K("Git LFS pointer", "config", "added", (
        "version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {n}",)),
    K("subresource integrity hash", "config", "added", (
        "<script src=\"https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js\" "
        "integrity=\"sha384-{b64_48}\" crossorigin=\"anonymous\"></script>",)),
    K("Helm values with an existing secret", "config", "added", (
        "auth:\n  existingSecret: db-credentials\n  secretKeys:\n    adminPasswordKey: postgres-password",
        "redis:\n  auth:\n    enabled: true\n    existingSecret: redis-auth\n    existingSecretPasswordKey: password",
        "externalDatabase:\n  host: pg-main.acme.lan\n  existingSecret: pg-app\n"
        "  existingSecretPasswordKey: app-password")),
    K("Terraform variable reference", "config", "added", (
        "password = var.db_password\nusername = \"app\"",
        "variable \"api_token\" {{\n  type      = string\n  sensitive = true\n}}")),
    K("password policy", "prose", "added", (
        "Passwords must be at least 14 characters; the SSO enforces it, not us.",
        "Service accounts get no password at all: they log in with workload identity.",
        "Token lifetime is 12 h for humans and 1 h for CI; refresh tokens last 30 days.")),
    K("key generation command", "command", "added", (
        "openssl rand -hex 32 > .secrets/session.key",
        "ssh-keygen -t ed25519 -C {user}@acme.io -f ~/.ssh/id_deploy",
        "age-keygen -o ~/.config/sops/age/keys.txt")),
    K("ULID", "prose", "added", ("order {ulid} stuck in PENDING since Friday",)),
    K("colors and CSS", "config", "added", (
        "brand colors: #1F6FEB, #0D1117; font-family: Inter, sans-serif",
        ".btn-primary {{ background: #2EA44F; border-radius: 6px; }}",
        "theme tokens: --accent: #8250DF; --danger: #CF222E;")),
    K("changelog", "prose", "added", (
        "## {ver} (2026-11-18)\n- Added retries to the exporter\n- Fixed the token refresh race",)),
    K("ticket link", "prose", "added", (
        "https://acme.atlassian.net/browse/OPS-{n}?utm_source=slack&utm_medium=share",)),
    K("Kubernetes secretKeyRef", "config", "added", (
        "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password",
        "envFrom:\n- secretRef:\n    name: api-secrets\n- configMapRef:\n    name: api-config",
        "volumes:\n- name: tls\n  secret:\n    secretName: api-tls\n    defaultMode: 0400")),
    K("Windows paths", "prose", "added", (
        "Agent config is at C:\\ProgramData\\Acme\\agent.yaml, service key HKLM\\SOFTWARE\\Acme\\Agent",
        "The installer writes %APPDATA%\\Acme\\credentials.json; delete it when uninstalling.")),
    K("Cargo.lock checksum", "config", "added", (
        "[[package]]\nname = \"serde\"\nversion = \"1.0.215\"\nchecksum = \"{sha256}\"",)),
    K("yarn.lock resolved URL", "config", "added", (
        "lodash@^4.17.21:\n  resolved \"https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{sha40}\"",)),
    K("pre-commit pin", "config", "added", (
        "- repo: https://github.com/astral-sh/ruff-pre-commit\n  rev: {sha40}  # frozen: v0.7.3",)),
    K("password file option", "command", "added", (
        "restic -r s3:s3.amazonaws.com/acme-backup --password-file ~/.restic-pass backup ~/docs",
        "borg create --encryption=repokey ::{{now}} ~/src  # passphrase from BORG_PASSCOMMAND")),
    K("ordinary environment exports", "command", "added", (
        "export NODE_ENV=production PORT=8080 LOG_LEVEL=debug",
        "export AWS_REGION=eu-west-1 AWS_PROFILE=staging")),
    K("Dockerfile build secret", "config", "added", (
        "ARG NPM_TOKEN\nRUN --mount=type=secret,id=npm,target=/root/.npmrc npm ci",
        "docker build --secret id=npm,src=$HOME/.npmrc -t acme/web:{ver} .",
        "RUN --mount=type=ssh git clone git@github.com:acme/private-lib.git")),
    K("base64 JSON setting", "prose", "added", (
        "The prefs cookie is eyJ0aGVtZSI6ImRhcmsiLCJiZXRhIjp0cnVlfQ== (theme + beta flag), not a session.",
        "The build label header is {b64_text}, base64 of the label.")),
    K("analytics and project ids", "prose", "added", (
        "GA4 measurement id G-{n}ABCD is public; Firebase project acme-prod-{n}.",)),
)

PER_KIND = 6  # notes drawn from each kind (a template without fields gives one)
QUOTED = Path(__file__).with_name("quoted.json")


def ordinary(rng: random.Random) -> list[tuple[str, str, str, str]]:
    """(kind, placement, source, text) for every negative note."""
    out = []
    for kind in KINDS:
        drawn = (kind.templates * PER_KIND)[:max(PER_KIND, len(kind.templates))]
        texts = dict.fromkeys(t.format(**fill(rng)) for t in drawn)
        out += [(kind.name, kind.placement, kind.source, text) for text in texts]
    for kind in json.loads(QUOTED.read_text(encoding="utf-8")):
        out += [(kind["kind"], kind["placement"], kind["source"], line) for line in kind["lines"]]
    return out
