"""Secret formats, each a generator `make(rng) -> value` in the issuer's documented shape
(prefix, alphabet, length), the config key people store it under, and where it came from.

Nothing here is a secret: every value is drawn at run time from a seeded `random.Random`; the
file holds only prefixes and alphabets. Shapes follow gitleaks' rules and their true-positive
examples (cmd/generate/config/rules/*.go, "gitleaks FILE"), detect-secrets' plugin tests
("detect-secrets FILE"), or the issuer's documentation ("added": see README.md for why).

A format can bring its own placement templates (bench/leaks/placements.py names the fields);
`secret_of` picks the secret out of a value that holds more (a webhook URL, a JSON key file),
and `pinned` templates are always placed in addition to the one drawn for their placement.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import quote

from . import blocks
from .blocks import B64, HEX, rand

ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits
UPPER = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "-_"
DIGITS = string.digits
B32 = string.ascii_uppercase + "234567"
PUNCT = "!#$%&*?@"
WORDS = ("Falcon", "Harbor", "Copper", "Maple", "Orbit", "Velvet", "Cobalt", "Juniper", "Saffron", "Tundra",
         "Quartz", "Ember", "Walrus", "Pixel", "Lantern", "Marble")


class Format(NamedTuple):
    name: str
    key: str  # the config or environment key people use for it
    make: Callable[[random.Random], str]
    source: str
    prefix: str = ""  # the issuer's fixed prefix (public; the leak check skips it)
    host: str = ""  # the API a command would call with it
    auth: str = ""  # how a command sends it: bearer, token, query ("" = no HTTP command)
    prose: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    secret_of: Callable[[str], str] | None = None
    pinned: tuple[tuple[str, str], ...] = ()
    block: bool = False  # several lines


def tok(prefix: str, alphabet: str, n: int, tail: str = "") -> Callable[[random.Random], str]:
    return lambda rng: prefix + rand(rng, alphabet, n) + tail


def parts(*pieces: str | tuple[str, int]) -> Callable[[random.Random], str]:
    """A value built from literal pieces and (alphabet, length) runs."""
    return lambda rng: "".join(p if isinstance(p, str) else rand(rng, *p) for p in pieces)


def uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def human_password(rng: random.Random) -> str:
    """A password a person picks: a word, maybe with digits for letters, a symbol, digits."""
    word = rng.choice(WORDS)
    if rng.random() < 0.5:
        word = word.translate(str.maketrans("aeio", "4310"))
    return word + rng.choice(PUNCT) + rand(rng, DIGITS, 4) + rand(rng, string.ascii_lowercase, 2)


def strong_password(rng: random.Random) -> str:
    return rand(rng, ALNUM + PUNCT + "-_^", 20)


def jwt(claims: Callable[[random.Random], dict]) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        header = {"alg": "HS256", "typ": "JWT", "kid": rand(rng, LOWER, 8)}
        return ".".join((b64url(json.dumps(header).encode()), b64url(json.dumps(claims(rng)).encode()),
                         rand(rng, URLSAFE, 43)))
    return make


def user_claims(rng: random.Random) -> dict:
    return {"sub": uuid4(rng), "email": f"{rng.choice(('sam', 'priya', 'mei'))}@acme.io", "role": "admin",
            "iat": 1763600000 + rng.randint(0, 10**6), "exp": 1763700000 + rng.randint(0, 10**6)}


def supabase_claims(rng: random.Random) -> dict:
    return {"iss": "supabase", "ref": rand(rng, string.ascii_lowercase, 20), "role": "service_role",
            "iat": 1700000000 + rng.randint(0, 10**7), "exp": 2015000000 + rng.randint(0, 10**7)}


def json_token(prefix: str, claims: Callable[[random.Random], dict], tail: str = "") -> Callable:
    return lambda rng: prefix + b64url(json.dumps(claims(rng), separators=(",", ":")).encode()) + tail


def last_segment(value: str) -> str:
    return value.rstrip("/").rsplit("/", 1)[1]


def after(marker: str, stop: str = ";&\n\"") -> Callable[[str], str]:
    """The secret is what follows `marker` in the value, up to one of `stop`."""
    def pick(value: str) -> str:
        rest = value.split(marker, 1)[1]
        end = min([rest.index(c) for c in stop if c in rest] or [len(rest)])
        return rest[:end]
    return pick


def docker_auth(rng: random.Random) -> str:
    password = rng.choice((human_password(rng), "dckr_pat_" + rand(rng, URLSAFE, 27)))
    return base64.b64encode(f"{rng.choice(('sam', 'acmeci', 'deploy'))}:{password}".encode()).decode()


def basic_auth(rng: random.Random) -> str:
    return base64.b64encode(f"{rng.choice(('admin', 'jenkins', 'svc-api'))}:{strong_password(rng)}".encode()).decode()


def sas_url(rng: random.Random) -> str:
    sig = quote(base64.b64encode(rng.randbytes(32)).decode(), safe="")
    return (f"https://acme{rand(rng, LOWER, 6)}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=co"
            f"&sp=rl&se=2026-12-31T23:59:59Z&st=2026-11-01T00:00:00Z&spr=https&sig={sig}")


def sentry_org(rng: random.Random) -> str:
    claims = {"iat": 1763600000 + rng.randint(0, 10**6), "url": "https://sentry.io",
              "region_url": "https://us.sentry.io", "org": rng.choice(("acme", "acme-labs", "koda"))}
    body = base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode().rstrip("=")
    return "sntrys_" + body + "_" + rand(rng, ALNUM + "+/", 43)


def grafana_cloud(rng: random.Random) -> str:
    claims = {"o": str(rng.randint(10**5, 10**6)), "n": f"stack-{rng.randint(100000, 999999)}-hl-read",
              "k": rand(rng, ALNUM, 24), "m": {"r": "prod-eu-west-0"}}
    return "glc_" + base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode()


def mapbox_secret(rng: random.Random) -> str:
    claims = {"u": rng.choice(("acme", "koda-maps")), "a": rand(rng, LOWER, 25)}
    return "sk." + b64url(json.dumps(claims, separators=(",", ":")).encode()) + "." + rand(rng, URLSAFE, 22)


def discord_bot(rng: random.Random) -> str:
    user = b64url(str(rng.randint(10**17, 10**19 - 1)).encode())
    return f"{user}.{rand(rng, URLSAFE, 6)}.{rand(rng, URLSAFE, 38)}"


def k8s_secret(rng: random.Random) -> str:
    user = base64.b64encode(rng.choice((b"app", b"billing", b"postgres"))).decode()
    password = base64.b64encode(strong_password(rng).encode()).decode()
    return ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\n  namespace: "
            f"{rng.choice(('prod', 'staging'))}\ntype: Opaque\ndata:\n  username: {user}\n  password: {password}")


F = Format

FORMATS: list[Format] = [
    # --- AWS (gitleaks aws.go; detect-secrets aws_key_test.py) ---
    F("AWS access key id", "AWS_ACCESS_KEY_ID", tok("AKIA", B32, 16), "gitleaks aws.go", "AKIA",
      command=("aws configure set aws_access_key_id {v}", "export AWS_ACCESS_KEY_ID={v}")),
    F("AWS secret access key", "AWS_SECRET_ACCESS_KEY", tok("", B64, 40), "detect-secrets aws_key_test.py",
      prose=("AWS secret access key for the billing user: {v}", "{who} rotated the AWS keys, new secret key {v}"),
      command=("aws configure set aws_secret_access_key {v}", "export AWS_SECRET_ACCESS_KEY={v}",
               "AWS_SECRET_ACCESS_KEY={v} terraform apply"),
      config=("[default]\naws_access_key_id = AKIA{fake_id}\naws_secret_access_key = {v}\nregion = eu-west-1",
              "aws:\n  secret_access_key: {v}", "AWS_SECRET_ACCESS_KEY={v}"),
      pinned=(("prose", "the secret is {v}"), ("prose", "got it from {who}, it's {v} — keep it off Slack"))),
    F("AWS temporary access key id", "AWS_ACCESS_KEY_ID", tok("ASIA", B32, 16), "gitleaks aws.go", "ASIA"),
    F("AWS session token", "AWS_SESSION_TOKEN", tok("IQoJb3JpZ2luX2Vj", B64, 360), "added", "IQoJb3JpZ2luX2Vj",
      command=("export AWS_SESSION_TOKEN={v}", "aws configure set aws_session_token {v} --profile {env}")),
    F("Amazon Bedrock API key", "AWS_BEARER_TOKEN_BEDROCK", tok("ABSKQmVkcm9ja0FQSUtleS1", B64, 110),
      "gitleaks aws.go", "ABSKQmVkcm9ja0FQSUtleS1", host="bedrock-runtime.us-east-1.amazonaws.com", auth="bearer"),
    # --- GitHub (gitleaks github.go; detect-secrets github_token_test.py) ---
    F("GitHub personal access token", "GITHUB_TOKEN", tok("gh" + "p_", ALNUM, 36), "gitleaks github.go", "ghp_",
      host="api.github.com", auth="token",
      command=("git clone https://{user}:{v}@github.com/acme/infra.git", "echo {v} | gh auth login --with-token")),
    F("GitHub fine-grained token", "GH_TOKEN", parts("github_pat_", (UPPER, 22), "_", (ALNUM, 59)),
      "gitleaks github.go", "github_pat_", host="api.github.com", auth="bearer"),
    F("GitHub OAuth token", "GITHUB_OAUTH_TOKEN", tok("gh" + "o_", ALNUM, 36), "gitleaks github.go", "gho_",
      host="api.github.com", auth="bearer"),
    F("GitHub app installation token", "GITHUB_APP_TOKEN", tok("gh" + "s_", ALNUM, 36), "gitleaks github.go",
      "ghs_", host="api.github.com", auth="token"),
    F("GitHub user-to-server token", "GITHUB_USER_TOKEN", tok("gh" + "u_", ALNUM, 36), "gitleaks github.go", "ghu_",
      host="api.github.com", auth="bearer"),
    F("GitHub refresh token", "GITHUB_REFRESH_TOKEN", tok("gh" + "r_", ALNUM, 76), "gitleaks github.go", "ghr_"),
    # --- GitLab (gitleaks gitlab.go) ---
    F("GitLab personal access token", "GITLAB_TOKEN", tok("glpat-", URLSAFE, 20), "gitleaks gitlab.go", "glpat-",
      host="gitlab.com", auth="query",
      command=("curl --header \"PRIVATE-TOKEN: {v}\" https://gitlab.com/api/v4/projects",
               "glab auth login --token {v}")),
    F("GitLab routable access token", "GITLAB_PRIVATE_TOKEN",
      parts("glpat-", (URLSAFE, 36), ".01.", (LOWER, 9)), "gitleaks gitlab.go", "glpat-",
      command=("curl -H \"PRIVATE-TOKEN: {v}\" https://gitlab.acme.io/api/v4/user",)),
    F("GitLab runner token", "CI_RUNNER_TOKEN", tok("glrt-", URLSAFE, 20), "gitleaks gitlab.go", "glrt-",
      command=("gitlab-runner register --non-interactive --url https://gitlab.com --token {v}",)),
    F("GitLab pipeline trigger token", "CI_TRIGGER_TOKEN", tok("glptt-", HEX, 40), "gitleaks gitlab.go", "glptt-",
      command=("curl -X POST -F token={v} -F ref=main https://gitlab.com/api/v4/projects/42/trigger/pipeline",)),
    F("GitLab deploy token", "CI_DEPLOY_PASSWORD", tok("gldt-", URLSAFE, 20), "gitleaks gitlab.go", "gldt-",
      command=("docker login registry.gitlab.com -u gitlab+deploy-token-7 -p {v}",)),
    F("GitLab runner registration token", "REGISTRATION_TOKEN", tok("GR1348941", URLSAFE, 20),
      "gitleaks gitlab.go", "GR1348941"),
    F("GitLab agent token", "GITLAB_AGENT_TOKEN", tok("glagent-", URLSAFE, 50), "gitleaks gitlab.go", "glagent-",
      command=("helm upgrade --install acme gitlab/gitlab-agent --set config.token={v}",)),
    F("GitLab OAuth application secret", "GITLAB_OAUTH_SECRET", tok("gloas-", URLSAFE, 64), "gitleaks gitlab.go",
      "gloas-"),
    F("GitLab feed token", "GITLAB_FEED_TOKEN", tok("glft-", URLSAFE, 20), "gitleaks gitlab.go", "glft-",
      command=("curl \"https://gitlab.com/dashboard/projects.atom?feed_token={v}\"",)),
    # --- Slack (gitleaks slack.go; detect-secrets slack_test.py) ---
    F("Slack bot token", "SLACK_BOT_TOKEN", parts("xo" + "xb-", (DIGITS, 11), "-", (DIGITS, 13), "-", (ALNUM, 24)),
      "gitleaks slack.go", "xoxb-", host="slack.com/api/auth.test", auth="bearer"),
    F("Slack user token", "SLACK_USER_TOKEN",
      parts("xo" + "xp-", (DIGITS, 11), "-", (DIGITS, 11), "-", (DIGITS, 13), "-", (HEX, 32)),
      "gitleaks slack.go", "xoxp-", host="slack.com/api/users.list", auth="bearer"),
    F("Slack app-level token", "SLACK_APP_TOKEN", parts("xa" + "pp-1-A", (UPPER, 10), "-", (DIGITS, 13), "-",
                                                          (HEX, 64)), "gitleaks slack.go", "xapp-1-"),
    F("Slack config refresh token", "SLACK_REFRESH_TOKEN", tok("xo" + "xe-1-", UPPER, 146), "gitleaks slack.go",
      "xoxe-1-"),
    F("Slack incoming webhook URL", "SLACK_WEBHOOK_URL",
      parts("https://hooks.slack.com/services/T", (UPPER, 8), "/B", (UPPER, 10), "/", (ALNUM, 24)),
      "gitleaks slack.go", secret_of=last_segment,
      command=("curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deployed\"}}' {v}",)),
    # --- Stripe (gitleaks stripe.go; detect-secrets stripe_key_test.py) ---
    F("Stripe live secret key", "STRIPE_SECRET_KEY", tok("sk_" + "live_", ALNUM, 99), "gitleaks stripe.go",
      "sk_live_", command=("curl https://api.stripe.com/v1/charges -u {v}:", "stripe login --api-key {v}")),
    F("Stripe restricted key", "STRIPE_RESTRICTED_KEY", tok("rk_" + "live_", ALNUM, 99), "gitleaks stripe.go",
      "rk_live_", host="api.stripe.com", auth="bearer"),
    F("Stripe test secret key", "STRIPE_TEST_SECRET_KEY", tok("sk_" + "test_", ALNUM, 99), "gitleaks stripe.go",
      "sk_test_", host="api.stripe.com", auth="bearer"),
    F("Stripe webhook signing secret", "STRIPE_WEBHOOK_SECRET", tok("wh" + "sec_", ALNUM, 32), "added", "whsec_",
      command=("stripe listen --forward-to localhost:4242/webhook  # prints {v}", "export STRIPE_WEBHOOK_SECRET={v}")),
    # --- Google (gitleaks gcp.go) ---
    F("Google API key", "GOOGLE_API_KEY", tok("AI" + "za", URLSAFE, 35), "gitleaks gcp.go", "AIza",
      host="maps.googleapis.com/maps/api/geocode/json", auth="query",
      command=("curl \"https://generativelanguage.googleapis.com/v1beta/models?key={v}\"",)),
    F("Google OAuth client secret", "GOOGLE_CLIENT_SECRET", tok("GOC" + "SPX-", URLSAFE, 28), "added", "GOCSPX-",
      command=("gcloud auth application-default login --client-id-file=client.json  # secret {v}",
               "export GOOGLE_CLIENT_SECRET={v}")),
    F("Google OAuth refresh token", "GOOGLE_REFRESH_TOKEN", tok("1//0", URLSAFE, 99), "added", "1//0",
      command=("curl -d refresh_token={v} -d grant_type=refresh_token https://oauth2.googleapis.com/token",)),
    F("Google OAuth access token", "GOOGLE_ACCESS_TOKEN", tok("ya" + "29.", URLSAFE, 150), "added", "ya29.",
      host="www.googleapis.com/drive/v3/files", auth="bearer"),
    F("GCP service account key file", "GOOGLE_APPLICATION_CREDENTIALS", blocks.gcp_service_account, "gitleaks gcp.go",
      block=True, secret_of=blocks.gcp_secret,
      prose=("here's the service account file for the exporter:\n{v}", "SA key for {env} (delete after import):\n{v}"),
      command=("cat > sa.json <<'EOF'\n{v}\nEOF\ngcloud auth activate-service-account --key-file sa.json",
               "echo '{v}' | base64 -w0 | gh secret set GCP_SA_KEY"),
      config=("gcp:\n  credentials: |\n{indented}", "GOOGLE_CREDENTIALS='{escaped}'")),
    # --- Azure (gitleaks azure.go; detect-secrets azure_storage_key_test.py) ---
    F("Azure AD client secret", "AZURE_CLIENT_SECRET", parts((ALNUM + "_~.", 3), (DIGITS, 1), "Q~",
                                                              (ALNUM + "_~.-", 34)), "gitleaks azure.go",
      command=("az login --service-principal -u {uuid} -p {v} --tenant acme.onmicrosoft.com",
               "export AZURE_CLIENT_SECRET={v}")),
    F("Azure storage connection string", "AZURE_STORAGE_CONNECTION_STRING",
      parts("DefaultEndpointsProtocol=https;AccountName=acmeexports;AccountKey=", (B64, 86),
            "==;EndpointSuffix=core.windows.net"), "detect-secrets azure_storage_key_test.py",
      secret_of=after("AccountKey="),
      command=("az storage blob list -c exports --connection-string \"{v}\"",)),
    F("Azure storage SAS URL", "AZURE_SAS_URL", sas_url, "added", secret_of=after("sig="),
      prose=("download link for the export (valid till December): {v}",),
      command=("azcopy copy \"{v}\" ./report.csv", "curl -o report.csv \"{v}\"")),
    F("Azure DevOps personal access token", "AZURE_DEVOPS_EXT_PAT", tok("", "abcdefghijklmnopqrstuvwxyz234567", 52),
      "added", command=("echo {v} | az devops login --organization https://dev.azure.com/acme",
                        "git clone https://pat:{v}@dev.azure.com/acme/infra/_git/infra")),
    F("Azure Service Bus connection string", "SERVICEBUS_CONNECTION_STRING",
      parts("Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
            "SharedAccessKey=", (B64, 43), "="), "added", secret_of=after("SharedAccessKey=")),
    F("Azure Cosmos DB key", "COSMOS_KEY", tok("", B64, 86, "=="), "added"),
    F("Azure OpenAI API key", "AZURE_OPENAI_API_KEY", tok("", HEX, 32), "added",
      command=("curl https://acme-oai.openai.azure.com/openai/models?api-version=2024-10-21 -H \"api-key: {v}\"",)),
    F("Microsoft Teams webhook URL", "TEAMS_WEBHOOK_URL", blocks.teams_webhook, "gitleaks teams.go",
      secret_of=blocks.teams_secret),
    # --- monitoring ---
    F("Datadog API key", "DD_API_KEY", tok("", HEX, 32), "gitleaks datadog.go",
      command=("DD_API_KEY={v} DD_SITE=datadoghq.eu bash -c \"$(curl -L https://install.datadoghq.com/agent.sh)\"",
               "curl -H \"DD-API-KEY: {v}\" https://api.datadoghq.com/api/v1/validate",
               "helm install datadog datadog/datadog --set datadog.apiKey={v}")),
    F("Datadog application key", "DD_APP_KEY", tok("", HEX, 40), "gitleaks datadog.go",
      command=("curl -H \"DD-APPLICATION-KEY: {v}\" https://api.datadoghq.com/api/v1/dashboard",)),
    F("New Relic user API key", "NEW_RELIC_API_KEY", tok("NR" + "AK-", UPPER, 27), "gitleaks newrelic.go", "NRAK-",
      command=("curl -H \"Api-Key: {v}\" https://api.newrelic.com/graphql", "newrelic profile add --apiKey {v}")),
    F("New Relic license key", "NEW_RELIC_LICENSE_KEY", tok("", HEX, 36, "NRAL"), "added"),
    F("New Relic insert key", "NEW_RELIC_INSERT_KEY", tok("NR" + "II-", URLSAFE, 32), "gitleaks newrelic.go", "NRII-"),
    F("New Relic browser key", "NEW_RELIC_BROWSER_KEY", tok("NR" + "JS-", HEX, 19), "gitleaks newrelic.go", "NRJS-"),
    F("Sentry user auth token", "SENTRY_AUTH_TOKEN", tok("sntr" + "yu_", HEX, 64), "gitleaks sentry.go", "sntryu_",
      host="sentry.io/api/0/projects/", auth="bearer"),
    F("Sentry organization token", "SENTRY_AUTH_TOKEN", sentry_org, "gitleaks sentry.go", "sntrys_eyJpYXQiO",
      command=("sentry-cli --auth-token {v} releases new 2.3.0",)),
    F("Grafana service account token", "GRAFANA_TOKEN", parts("gl" + "sa_", (ALNUM, 32), "_", (HEX, 8)),
      "gitleaks grafana.go", "glsa_", host="grafana.acme.io/api/dashboards/home", auth="bearer"),
    F("Grafana Cloud token", "GRAFANA_CLOUD_API_KEY", grafana_cloud, "gitleaks grafana.go", "glc_eyJ"),
    F("Grafana API key", "GRAFANA_API_KEY",
      json_token("", lambda rng: {"k": rand(rng, ALNUM, 32), "n": "ci", "id": rng.randint(1, 9)}),
      "gitleaks grafana.go", "eyJrIjoi"),
    F("Dynatrace API token", "DT_API_TOKEN", parts("dt0" + "c01.", (UPPER, 24), ".", (UPPER, 64)),
      "gitleaks dynatrace.go", "dt0c01.",
      command=("curl -H \"Authorization: Api-Token {v}\" https://acme.live.dynatrace.com/api/v2/entities",)),
    F("Sumo Logic access key", "SUMO_ACCESS_KEY", tok("", ALNUM, 64), "gitleaks sumologic.go"),
    # --- cloud and infrastructure ---
    F("Cloudflare API token", "CF_API_TOKEN", tok("", URLSAFE, 40), "gitleaks cloudflare.go",
      host="api.cloudflare.com/client/v4/user/tokens/verify", auth="bearer"),
    F("Cloudflare global API key", "CLOUDFLARE_API_KEY", tok("", HEX, 37), "gitleaks cloudflare.go",
      command=("curl -H \"X-Auth-Email: ops@acme.io\" -H \"X-Auth-Key: {v}\" https://api.cloudflare.com/client/v4/zones",)),
    F("Cloudflare origin CA key", "CF_ORIGIN_CA_KEY", parts("v1.0-", (HEX, 24), "-", (HEX, 146)),
      "gitleaks cloudflare.go", "v1.0-"),
    F("DigitalOcean personal access token", "DIGITALOCEAN_TOKEN", tok("do" + "p_v1_", HEX, 64),
      "gitleaks digitalocean.go", "dop_v1_", host="api.digitalocean.com/v2/droplets", auth="bearer",
      command=("doctl auth init --access-token {v}",)),
    F("DigitalOcean OAuth token", "DIGITALOCEAN_ACCESS_TOKEN", tok("do" + "o_v1_", HEX, 64),
      "gitleaks digitalocean.go", "doo_v1_", host="api.digitalocean.com/v2/account", auth="bearer"),
    F("Heroku API key", "HEROKU_API_KEY", uuid4, "gitleaks heroku.go", host="api.heroku.com/apps", auth="bearer",
      config=("machine api.heroku.com\n  login sam@acme.io\n  password {v}", "HEROKU_API_KEY={v}")),
    F("Heroku API key v2", "HEROKU_API_KEY", tok("HRKU-" + "AA", URLSAFE, 58), "gitleaks heroku.go", "HRKU-AA",
      host="api.heroku.com/account", auth="bearer"),
    F("Alibaba Cloud access key id", "ALIBABA_CLOUD_ACCESS_KEY_ID", tok("LT" + "AI", ALNUM, 20), "gitleaks alibaba.go",
      "LTAI", command=("aliyun configure set --access-key-id {v} --region cn-hangzhou",)),
    F("Alibaba Cloud access key secret", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", tok("", ALNUM, 30),
      "gitleaks alibaba.go", command=("aliyun configure set --access-key-secret {v}",)),
    F("Fly.io access token", "FLY_API_TOKEN", tok("fo" + "1_", URLSAFE, 43), "gitleaks flyio.go", "fo1_",
      command=("flyctl deploy --access-token {v}",)),
    F("Fly.io macaroon token", "FLY_ACCESS_TOKEN", tok("fm" + "2_", B64, 180), "gitleaks flyio.go", "fm2_",
      host="api.machines.dev/v1/apps", auth="bearer"),
    F("HashiCorp Vault service token", "VAULT_TOKEN", tok("hv" + "s.", URLSAFE, 91), "gitleaks hashicorp_vault.go",
      "hvs.", command=("vault login {v}", "curl -H \"X-Vault-Token: {v}\" https://vault.acme.io/v1/secret/data/db")),
    F("HashiCorp Vault batch token", "VAULT_TOKEN", tok("hv" + "b.", URLSAFE, 150), "gitleaks hashicorp_vault.go",
      "hvb."),
    F("Terraform Cloud API token", "TF_TOKEN_app_terraform_io", parts((ALNUM, 14), ".atlas" + "v1.", (URLSAFE, 67)),
      "gitleaks hashicorp.go", host="app.terraform.io/api/v2/account/details", auth="bearer",
      config=("credentials \"app.terraform.io\" {{\n  token = \"{v}\"\n}}",)),
    F("Doppler personal token", "DOPPLER_TOKEN", tok("dp" + ".pt.", ALNUM, 43), "gitleaks doppler.go", "dp.pt.",
      command=("doppler configure set token {v}",)),
    F("Doppler service token", "DOPPLER_TOKEN", tok("dp" + ".st.prd.", ALNUM, 40), "added", "dp.st.prd.",
      command=("doppler run --token {v} -- ./server",)),
    F("Pulumi access token", "PULUMI_ACCESS_TOKEN", tok("pu" + "l-", HEX, 40), "gitleaks pulumi.go", "pul-"),
    F("Netlify personal access token", "NETLIFY_AUTH_TOKEN", tok("nf" + "p_", ALNUM, 36), "added", "nfp_",
      host="api.netlify.com/api/v1/sites", auth="bearer"),
    F("Vercel token", "VERCEL_TOKEN", tok("", ALNUM, 24), "added", command=("vercel deploy --prod --token {v}",)),
    F("Scalingo API token", "SCALINGO_API_TOKEN", tok("tk-" + "us-", URLSAFE, 48), "gitleaks scalingo.go", "tk-us-"),
    F("Databricks token", "DATABRICKS_TOKEN", tok("da" + "pi", HEX, 32), "gitleaks databricks.go", "dapi",
      host="acme.cloud.databricks.com/api/2.0/clusters/list", auth="bearer"),
    F("Supabase service role key", "SUPABASE_SERVICE_ROLE_KEY", jwt(supabase_claims), "added", "eyJ",
      command=("curl https://xyzcompany.supabase.co/rest/v1/users -H \"apikey: {v}\"",)),
    F("Supabase access token", "SUPABASE_ACCESS_TOKEN", tok("sb" + "p_", HEX, 40), "added", "sbp_",
      command=("supabase login --token {v}",)),
    F("PlanetScale password", "DATABASE_PASSWORD", tok("pscale" + "_pw_", URLSAFE, 43), "gitleaks planetscale.go",
      "pscale_pw_", command=("mysql -h aws.connect.psdb.cloud -u app -p{v} --ssl-mode=VERIFY_IDENTITY",)),
    F("PlanetScale service token", "PLANETSCALE_SERVICE_TOKEN", tok("pscale" + "_tkn_", URLSAFE, 43),
      "gitleaks planetscale.go", "pscale_tkn_"),
    F("OpenShift user token", "OPENSHIFT_TOKEN", tok("sha256" + "~", URLSAFE, 43), "gitleaks openshift.go",
      "sha256~", command=("oc login --token={v} --server=https://api.ocp.acme.io:6443",)),
    F("age secret key", "SOPS_AGE_KEY", tok("AGE-SECRET-KEY-" + "1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
      "gitleaks age.go", "AGE-SECRET-KEY-1"),
    F("1Password service account token", "OP_SERVICE_ACCOUNT_TOKEN", tok("op" + "s_eyJ", B64, 300),
      "gitleaks 1password.go", "ops_eyJ"),
    F("1Password secret key", "OP_SECRET_KEY", parts("A3-", (UPPER, 6), "-", (UPPER, 11), "-", (UPPER, 5), "-",
                                                      (UPPER, 5), "-", (UPPER, 5)), "gitleaks 1password.go", "A3-"),
    # --- AI providers ---
    F("OpenAI API key (legacy)", "OPENAI_API_KEY", parts("sk-", (ALNUM, 20), "T3Blbk" + "FJ", (ALNUM, 20)),
      "gitleaks openai.go", "sk-", host="api.openai.com/v1/models", auth="bearer"),
    F("OpenAI project key", "OPENAI_API_KEY", parts("sk-" + "proj-", (URLSAFE, 74), "T3Blbk" + "FJ", (URLSAFE, 74)),
      "gitleaks openai.go", "sk-proj-", host="api.openai.com/v1/chat/completions", auth="bearer"),
    F("OpenAI service account key", "OPENAI_API_KEY",
      parts("sk-" + "svcacct-", (URLSAFE, 58), "T3Blbk" + "FJ", (URLSAFE, 58)), "gitleaks openai.go", "sk-svcacct-",
      host="api.openai.com/v1/models", auth="bearer"),
    F("Anthropic API key", "ANTHROPIC_API_KEY", tok("sk-" + "ant-api03-", URLSAFE, 93, "AA"), "gitleaks anthropic.go",
      "sk-ant-api03-", command=("curl https://api.anthropic.com/v1/messages -H \"x-api-key: {v}\"",
                                "export ANTHROPIC_API_KEY={v}", "claude config set apiKey {v}")),
    F("Anthropic admin key", "ANTHROPIC_ADMIN_KEY", tok("sk-" + "ant-admin01-", URLSAFE, 93, "AA"),
      "gitleaks anthropic.go", "sk-ant-admin01-"),
    F("Hugging Face access token", "HF_TOKEN", tok("h" + "f_", string.ascii_letters, 34), "gitleaks huggingface.go",
      "hf_", host="huggingface.co/api/whoami-v2", auth="bearer",
      command=("huggingface-cli login --token {v}",)),
    F("Hugging Face organization token", "HUGGINGFACE_API_TOKEN", tok("api" + "_org_", string.ascii_letters, 34),
      "gitleaks huggingface.go", "api_org_"),
    F("Cohere API key", "CO_API_KEY", tok("", ALNUM, 40), "gitleaks cohere.go", host="api.cohere.com/v2/models",
      auth="bearer"),
    F("Perplexity API key", "PERPLEXITY_API_KEY", tok("pp" + "lx-", ALNUM, 48), "gitleaks perplexity.go", "pplx-",
      host="api.perplexity.ai/chat/completions", auth="bearer"),
    F("Groq API key", "GROQ_API_KEY", tok("gs" + "k_", ALNUM, 52), "added", "gsk_",
      host="api.groq.com/openai/v1/models", auth="bearer"),
    F("Replicate API token", "REPLICATE_API_TOKEN", tok("r8" + "_", ALNUM, 37), "added", "r8_",
      host="api.replicate.com/v1/predictions", auth="bearer"),
    F("xAI API key", "XAI_API_KEY", tok("xa" + "i-", ALNUM, 80), "added", "xai-", host="api.x.ai/v1/models",
      auth="bearer"),
    F("Mistral API key", "MISTRAL_API_KEY", tok("", ALNUM, 32), "added", host="api.mistral.ai/v1/models",
      auth="bearer"),
    F("LangSmith API key", "LANGSMITH_API_KEY", parts("lsv2" + "_pt_", (HEX, 32), "_", (HEX, 10)), "added",
      "lsv2_pt_"),
    # --- package registries and CI ---
    F("npm access token", "NPM_TOKEN", tok("np" + "m_", ALNUM, 36), "gitleaks npm.go", "npm_",
      command=("npm config set //registry.npmjs.org/:_authToken {v}",
               "echo \"//registry.npmjs.org/:_authToken={v}\" > ~/.npmrc"),
      config=("//registry.npmjs.org/:_authToken={v}", "NPM_TOKEN={v}", "npmAuthToken: \"{v}\"  # .yarnrc.yml")),
    F("PyPI upload token", "TWINE_PASSWORD", tok("pypi-" + "AgEIcHlwaS5vcmc", URLSAFE, 160), "gitleaks pypi.go",
      "pypi-AgEIcHlwaS5vcmc", command=("twine upload -u __token__ -p {v} dist/*", "uv publish --token {v}"),
      config=("[pypi]\n  username = __token__\n  password = {v}", "TWINE_PASSWORD={v}")),
    F("RubyGems API key", "GEM_HOST_API_KEY", tok("ruby" + "gems_", HEX, 48), "gitleaks rubygems.go", "rubygems_",
      config=("# ~/.gem/credentials\n---\n:rubygems_api_key: {v}", "GEM_HOST_API_KEY={v}")),
    F("NuGet API key", "NUGET_API_KEY", tok("oy" + "2", LOWER, 43), "added", "oy2",
      command=("dotnet nuget push bin/Release/Acme.1.2.0.nupkg --api-key {v} --source https://api.nuget.org/v3/index.json",)),
    F("Clojars deploy token", "CLOJARS_PASSWORD", tok("CLOJARS" + "_", LOWER, 60), "gitleaks clojars.go", "CLOJARS_"),
    F("Artifactory API key", "ARTIFACTORY_API_KEY", tok("AK" + "Cp", ALNUM, 69), "gitleaks artifactory.go", "AKCp",
      command=("curl -H \"X-JFrog-Art-Api: {v}\" https://acme.jfrog.io/artifactory/api/repositories",)),
    F("JFrog reference token", "JFROG_ACCESS_TOKEN", tok("cmVm" + "d", ALNUM, 59), "gitleaks artifactory.go",
      "cmVmd", host="acme.jfrog.io/artifactory/api/system/ping", auth="bearer"),
    F("Docker Hub access token", "DOCKERHUB_TOKEN", tok("dckr" + "_pat_", URLSAFE, 27), "added", "dckr_pat_",
      command=("echo {v} | docker login -u acmeci --password-stdin", "docker login -u acmeci -p {v}")),
    F("Docker config.json auth", "DOCKER_AUTH_CONFIG", docker_auth, "added",
      prose=("The auth entry for ghcr.io in ~/.docker/config.json is {v} if you need to copy it to the runner.",
             "{who}'s registry login, base64 of user:password: {v}"),
      command=("echo '{{\"auths\":{{\"ghcr.io\":{{\"auth\":\"{v}\"}}}}}}' > ~/.docker/config.json",
               "mkdir -p ~/.docker && printf '{{\"auths\":{{\"registry.acme.io\":{{\"auth\":\"%s\"}}}}}}' {v} "
               "> ~/.docker/config.json"),
      config=("{{\n  \"auths\": {{\n    \"https://index.docker.io/v1/\": {{\n      \"auth\": \"{v}\"\n    }}\n  }}\n}}",
              "{{\"auths\": {{\"registry.gitlab.com\": {{\"auth\": \"{v}\"}}}}}}")),
    F("SonarQube token", "SONAR_TOKEN", tok("sq" + "u_", HEX, 40), "gitleaks sonar.go", "squ_",
      command=("sonar-scanner -Dsonar.login={v} -Dsonar.host.url=https://sonar.acme.io",)),
    F("Snyk API token", "SNYK_TOKEN", uuid4, "gitleaks snyk.go", command=("snyk auth {v}", "export SNYK_TOKEN={v}")),
    F("Sourcegraph access token", "SRC_ACCESS_TOKEN", parts("sg" + "p_", (HEX, 16), "_", (HEX, 40)),
      "gitleaks sourcegraph.go", "sgp_", host="sourcegraph.com/.api/graphql", auth="token"),
    F("Octopus Deploy API key", "OCTOPUS_API_KEY", tok("API" + "-", UPPER, 26), "gitleaks octopusdeploy.go", "API-",
      command=("octo push --package app.1.0.zip --server https://octo.acme.io --apiKey {v}",)),
    F("Infracost API key", "INFRACOST_API_KEY", tok("ic" + "o-", ALNUM, 32), "gitleaks infracost.go", "ico-"),
    F("Prefect API key", "PREFECT_API_KEY", tok("pn" + "u_", ALNUM, 36), "gitleaks prefect.go", "pnu_",
      command=("prefect cloud login -k {v}",)),
    F("ReadMe API key", "README_API_KEY", tok("rd" + "me_", LOWER, 70), "gitleaks readme.go", "rdme_"),
    F("Harness personal access token", "HARNESS_API_KEY",
      parts("pat" + ".", (URLSAFE, 22), ".", (ALNUM, 24), ".", (ALNUM, 20)), "gitleaks harness.go", "pat.",
      command=("curl -H \"x-api-key: {v}\" https://app.harness.io/ng/api/user/currentUser",)),
    F("Buildkite API token", "BUILDKITE_API_TOKEN", tok("bk" + "ua_", HEX, 40), "added", "bkua_",
      host="api.buildkite.com/v2/user", auth="bearer"),
    F("CircleCI personal token", "CIRCLECI_TOKEN", parts("CCI" + "PAT_", (ALNUM, 22), "_", (HEX, 40)), "added",
      "CCIPAT_", command=("curl -H \"Circle-Token: {v}\" https://circleci.com/api/v2/me",)),
    F("Travis CI token", "TRAVIS_API_TOKEN", tok("", ALNUM, 22), "gitleaks travisci.go",
      command=("travis login --pro --github-token {v}", "curl -H \"Authorization: token {v}\" https://api.travis-ci.com/user")),
    F("Drone CI token", "DRONE_TOKEN", tok("", ALNUM, 32), "gitleaks droneci.go"),
    F("Codecov upload token", "CODECOV_TOKEN", uuid4, "gitleaks codecov.go",
      command=("codecov upload-process -t {v}", "bash <(curl -s https://codecov.io/bash) -t {v}")),
    # --- messaging and email ---
    F("SendGrid API key", "SENDGRID_API_KEY", parts("S" + "G.", (URLSAFE, 22), ".", (URLSAFE, 43)),
      "gitleaks sendgrid.go", "SG.", host="api.sendgrid.com/v3/mail/send", auth="bearer"),
    F("Mailgun API key", "MAILGUN_API_KEY", tok("ke" + "y-", HEX, 32), "gitleaks mailgun.go", "key-",
      command=("curl -s --user 'api:{v}' https://api.mailgun.net/v3/mg.acme.io/messages",)),
    F("Mailgun webhook signing key", "MAILGUN_WEBHOOK_SIGNING_KEY", parts((HEX, 32), "-", (HEX, 8), "-", (HEX, 8)),
      "gitleaks mailgun.go"),
    F("Mailchimp API key", "MAILCHIMP_API_KEY", parts((HEX, 32), "-us", (DIGITS, 2)), "gitleaks mailchimp.go",
      command=("curl -u anystring:{v} https://us6.api.mailchimp.com/3.0/lists",)),
    F("Brevo (Sendinblue) API key", "BREVO_API_KEY", parts("xkey" + "sib-", (HEX, 64), "-", (ALNUM, 16)),
      "gitleaks sendinblue.go", "xkeysib-",
      command=("curl -H \"api-key: {v}\" https://api.brevo.com/v3/account",)),
    F("Postmark server token", "POSTMARK_SERVER_TOKEN", uuid4, "added",
      command=("curl -H \"X-Postmark-Server-Token: {v}\" https://api.postmarkapp.com/email",)),
    F("Twilio auth token", "TWILIO_AUTH_TOKEN", tok("", HEX, 32), "detect-secrets twilio_test.py",
      command=("curl -u AC{fake_sid}:{v} https://api.twilio.com/2010-04-01/Accounts.json",
               "twilio login --auth-token {v}", "export TWILIO_AUTH_TOKEN={v}")),
    F("Twilio API key secret", "TWILIO_API_SECRET", tok("", ALNUM, 32), "gitleaks twilio.go"),
    F("Telegram bot token", "TELEGRAM_BOT_TOKEN", parts((DIGITS, 10), ":AA", (URLSAFE, 33)),
      "detect-secrets telegram_token_test.py",
      command=("curl https://api.telegram.org/bot{v}/getMe", "export TELEGRAM_BOT_TOKEN={v}")),
    F("Discord bot token", "DISCORD_TOKEN", discord_bot, "detect-secrets discord_test.py",
      command=("curl -H \"Authorization: Bot {v}\" https://discord.com/api/v10/users/@me",)),
    F("Discord webhook URL", "DISCORD_WEBHOOK_URL",
      parts("https://discord.com/api/webhooks/", (DIGITS, 19), "/", (URLSAFE, 68)), "added", secret_of=last_segment,
      command=("curl -H 'Content-Type: application/json' -d '{{\"content\":\"build ok\"}}' {v}",)),
    F("MessageBird API key", "MESSAGEBIRD_API_KEY", tok("", ALNUM, 25), "gitleaks messagebird.go",
      command=("curl -H \"Authorization: AccessKey {v}\" https://rest.messagebird.com/balance",)),
    F("Vonage API secret", "VONAGE_API_SECRET", tok("", ALNUM, 16), "added"),
    F("Intercom access token", "INTERCOM_ACCESS_TOKEN", tok("dG9y" + "Oj", B64, 54, "="), "gitleaks intercom.go",
      "dG9yOj", host="api.intercom.io/me", auth="bearer"),
    F("Zendesk API token", "ZENDESK_API_TOKEN", tok("", ALNUM, 40), "gitleaks zendesk.go",
      command=("curl https://acme.zendesk.com/api/v2/users.json -u ops@acme.io/token:{v}",)),
    F("Mattermost access token", "MATTERMOST_TOKEN", tok("", LOWER, 26), "gitleaks mattermost.go",
      host="chat.acme.io/api/v4/users/me", auth="bearer"),
    # --- work tools ---
    F("Linear API key", "LINEAR_API_KEY", tok("lin" + "_api_", ALNUM, 40), "gitleaks linear.go", "lin_api_",
      command=("curl -H \"Authorization: {v}\" -d '{{\"query\":\"{{ viewer {{ id }} }}\"}}' https://api.linear.app/graphql",)),
    F("Notion integration token", "NOTION_TOKEN", parts("nt" + "n_", (DIGITS, 11), (ALNUM, 35)),
      "gitleaks notion.go", "ntn_", host="api.notion.com/v1/users", auth="bearer"),
    F("Notion integration secret (old)", "NOTION_API_KEY", tok("sec" + "ret_", ALNUM, 43), "added", "secret_",
      host="api.notion.com/v1/search", auth="bearer"),
    F("Atlassian API token", "JIRA_API_TOKEN", parts("ATATT" + "3xFfGF0", (URLSAFE, 170), "=", (HEX.upper(), 8)),
      "gitleaks atlassian.go", "ATATT3xFfGF0",
      command=("curl -u sam@acme.io:{v} https://acme.atlassian.net/rest/api/3/myself",)),
    F("Asana personal access token", "ASANA_ACCESS_TOKEN", parts("2/", (DIGITS, 16), "/", (DIGITS, 16), ":",
                                                                 (HEX, 32)), "added",
      host="app.asana.com/api/1.0/users/me", auth="bearer"),
    F("Trello token", "TRELLO_TOKEN", parts("AT" + "TA", (HEX, 64), (HEX.upper(), 8)), "gitleaks trello.go", "ATTA",
      command=("curl \"https://api.trello.com/1/members/me/boards?key=9f1c2e&token={v}\"",)),
    F("Airtable personal access token", "AIRTABLE_API_KEY", parts("pat", (ALNUM, 14), ".", (HEX, 64)),
      "gitleaks airtable.go", "pat", host="api.airtable.com/v0/meta/bases", auth="bearer"),
    F("Typeform personal token", "TYPEFORM_TOKEN", parts("tf" + "p_", (URLSAFE, 44), "_", (ALNUM, 14)),
      "gitleaks typeform.go", "tfp_", host="api.typeform.com/forms", auth="bearer"),
    F("HubSpot private app token", "HUBSPOT_ACCESS_TOKEN", lambda rng: "pat-" + "na1-" + uuid4(rng),
      "gitleaks hubspot.go", "pat-na1-", host="api.hubapi.com/crm/v3/objects/contacts", auth="bearer"),
    F("Okta API token", "OKTA_API_TOKEN", tok("00", URLSAFE, 40), "gitleaks okta.go", "00",
      command=("curl -H \"Authorization: SSWS {v}\" https://acme.okta.com/api/v1/users?limit=25",
               "`curl -s -H 'Accept: application/json' -H 'Authorization: SSWS {v}' https://acme.okta.com/api/v1/apps`"),
      config=("okta:\n  client:\n    orgUrl: https://acme.okta.com\n    token: {v}", "OKTA_API_TOKEN={v}")),
    F("Auth0 client secret", "AUTH0_CLIENT_SECRET", tok("", URLSAFE, 64), "added"),
    F("Postman API key", "POSTMAN_API_KEY", parts("PM" + "AK-", (HEX, 24), "-", (HEX, 34)), "gitleaks postman.go",
      "PMAK-", command=("curl -H \"X-Api-Key: {v}\" https://api.getpostman.com/collections",
                        "postman login --with-api-key {v}")),
    F("LaunchDarkly SDK key", "LD_SDK_KEY", lambda rng: "sdk-" + uuid4(rng), "gitleaks launchdarkly.go", "sdk-"),
    F("Segment write key", "SEGMENT_WRITE_KEY", tok("", ALNUM, 32), "added"),
    # --- commerce and payments ---
    F("Shopify access token", "SHOPIFY_ACCESS_TOKEN", tok("sh" + "pat_", HEX, 32), "gitleaks shopify.go", "shpat_",
      command=("curl -H \"X-Shopify-Access-Token: {v}\" https://acme.myshopify.com/admin/api/2024-10/shop.json",)),
    F("Shopify shared secret", "SHOPIFY_API_SECRET", tok("sh" + "pss_", HEX, 32), "gitleaks shopify.go", "shpss_"),
    F("Shopify custom app token", "SHOPIFY_CUSTOM_APP_TOKEN", tok("sh" + "pca_", HEX, 32), "gitleaks shopify.go",
      "shpca_"),
    F("Square access token", "SQUARE_ACCESS_TOKEN", tok("EA" + "AA", URLSAFE, 60), "gitleaks square.go", "EAAA",
      host="connect.squareup.com/v2/locations", auth="bearer"),
    F("Square OAuth secret", "SQUARE_APPLICATION_SECRET", tok("sq0" + "csp-", URLSAFE, 43),
      "detect-secrets square_oauth_test.py", "sq0csp-"),
    F("Braintree access token", "BRAINTREE_ACCESS_TOKEN",
      parts("access_token$" + "production$", (LOWER, 16), "$", (HEX, 32)), "added", "access_token$production$"),
    F("Plaid secret", "PLAID_SECRET", tok("", HEX, 30), "gitleaks plaid.go"),
    F("Flutterwave secret key", "FLW_SECRET_KEY", tok("FLW" + "SECK-", HEX, 32, "-X"), "gitleaks flutterwave.go",
      "FLWSECK-"),
    F("Shippo API token", "SHIPPO_API_TOKEN", tok("shippo" + "_live_", HEX, 40), "gitleaks shippo.go", "shippo_live_",
      command=("curl https://api.goshippo.com/addresses/ -H \"Authorization: ShippoToken {v}\"",)),
    F("EasyPost API key", "EASYPOST_API_KEY", tok("EZ" + "AK", ALNUM, 54), "gitleaks easypost.go", "EZAK"),
    F("Duffel access token", "DUFFEL_ACCESS_TOKEN", tok("duffel" + "_live_", URLSAFE, 43), "gitleaks duffel.go",
      "duffel_live_", host="api.duffel.com/air/airlines", auth="bearer"),
    F("Lob API key", "LOB_API_KEY", tok("live" + "_", HEX, 35), "gitleaks lob.go", "live_",
      command=("curl https://api.lob.com/v1/addresses -u {v}:",)),
    # --- media, maps, social ---
    F("Frame.io token", "FRAMEIO_TOKEN", tok("fio" + "-u-", URLSAFE, 64), "gitleaks frameio.go", "fio-u-",
      host="api.frame.io/v2/me", auth="bearer"),
    F("Dropbox access token", "DROPBOX_ACCESS_TOKEN", tok("s" + "l.", URLSAFE, 135), "gitleaks dropbox.go", "sl.",
      host="api.dropboxapi.com/2/users/get_current_account", auth="bearer"),
    F("Mapbox secret token", "MAPBOX_ACCESS_TOKEN", mapbox_secret, "gitleaks mapbox.go", "sk.eyJ",
      command=("curl \"https://api.mapbox.com/tokens/v2?access_token={v}\"",)),
    F("Algolia admin API key", "ALGOLIA_ADMIN_API_KEY", tok("", HEX, 32), "gitleaks algolia.go",
      command=("curl -H \"X-Algolia-API-Key: {v}\" -H \"X-Algolia-Application-Id: 4KQ7ZP2M1L\" "
               "https://4KQ7ZP2M1L.algolia.net/1/indexes",)),
    F("Contentful management token", "CONTENTFUL_MANAGEMENT_TOKEN", tok("CFP" + "AT-", URLSAFE, 43), "added", "CFPAT-",
      host="api.contentful.com/spaces", auth="bearer"),
    F("Twitter bearer token", "TWITTER_BEARER_TOKEN", tok("A" * 22, ALNUM + "%", 80), "gitleaks twitter.go", "A" * 22,
      host="api.twitter.com/2/tweets/search/recent", auth="bearer"),
    F("Twitter API secret", "TWITTER_API_SECRET", tok("", ALNUM, 50), "gitleaks twitter.go"),
    F("Facebook access token", "FACEBOOK_ACCESS_TOKEN", tok("EA" + "AC", ALNUM, 160), "gitleaks facebook.go", "EAAC",
      command=("curl \"https://graph.facebook.com/v19.0/me?access_token={v}\"",)),
    F("Facebook app secret", "FACEBOOK_APP_SECRET", tok("", HEX, 32), "gitleaks facebook.go"),
    F("LinkedIn client secret", "LINKEDIN_CLIENT_SECRET", tok("", ALNUM, 16), "gitleaks linkedin.go"),
    F("Twitch client secret", "TWITCH_CLIENT_SECRET", tok("", LOWER, 30), "gitleaks twitch.go"),
    F("Spotify client secret", "SPOTIFY_CLIENT_SECRET", tok("", HEX, 32), "added"),
    F("Yandex Cloud API key", "YC_API_KEY", tok("AQ" + "VN", URLSAFE, 36), "gitleaks yandex.go", "AQVN",
      command=("curl -H \"Authorization: Api-Key {v}\" https://llm.api.cloud.yandex.net/foundationModels/v1/completion",)),
    F("Bitbucket app password", "BITBUCKET_APP_PASSWORD", tok("AT" + "BB", ALNUM, 32), "added", "ATBB",
      command=("git clone https://sam:{v}@bitbucket.org/acme/infra.git",)),
    F("MaxMind license key", "MAXMIND_LICENSE_KEY", parts((ALNUM, 6), "_", (ALNUM, 29), "_mmk"), "gitleaks maxmind.go"),
    F("ClickHouse Cloud secret", "CLICKHOUSE_SECRET_KEY", tok("4b" + "1d", ALNUM, 38), "gitleaks clickhouse.go",
      "4b1d"),
    F("Kraken private key", "KRAKEN_PRIVATE_KEY", tok("", B64, 86, "=="), "gitleaks kraken.go"),
    F("Ethereum private key", "ETH_PRIVATE_KEY", tok("0x", HEX, 64), "added", "0x",
      command=("cast send --private-key {v} 0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48 \"approve(address,uint256)\"",
               "forge script Deploy --broadcast --private-key {v}")),
    # --- IBM (detect-secrets plugin tests) ---
    F("IBM Cloud API key", "IBMCLOUD_API_KEY", tok("", URLSAFE, 44), "detect-secrets ibm_cloud_iam_test.py",
      command=("ibmcloud login --apikey {v} -r us-south",)),
    F("IBM COS HMAC secret", "COS_HMAC_SECRET_ACCESS_KEY", tok("", HEX, 48), "detect-secrets ibm_cos_hmac_test.py"),
    F("Cloudant password", "CLOUDANT_URL", parts("https://acme-db:", (HEX, 64), "@acme-db.cloudant.com"),
      "detect-secrets cloudant_test.py", secret_of=after(":", "@")),
    F("SoftLayer API key", "SL_API_KEY", tok("", HEX, 64), "detect-secrets softlayer_test.py",
      command=("slcli --softlayer-api-key {v} vs list",)),
    # --- tokens without a prefix ---
    F("JSON web token", "ACCESS_TOKEN", jwt(user_claims), "detect-secrets jwt_test.py", "eyJ",
      host="api.acme.io/v1/orders", auth="bearer"),
    F("opaque bearer token", "API_TOKEN", tok("", URLSAFE, 40), "added", host="api.acme.io/v2/reports",
      auth="bearer"),
    F("API key in a URL query", "API_KEY", tok("", ALNUM, 32), "added",
      prose=("the export link is https://api.weatherstack.com/current?access_key={v}&query=Berlin",
             "{who}: try https://api.acme.io/v2/search?q=shoes&api_key={v} in the browser"),
      command=("curl \"https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid={v}\"",
               "wget -qO- 'https://api.acme.io/v1/export?format=csv&api_key={v}'"),
      config=("feeds:\n  weather: https://api.acme.io/v1/feed?api_key={v}&units=metric",
              "EXPORT_URL=https://api.acme.io/v1/export?api_key={v}")),
    F("HTTP basic auth header", "BASIC_AUTH", basic_auth, "gitleaks curl.go",
      prose=("the Jenkins API wants the header Authorization: Basic {v}",),
      command=("curl -H \"Authorization: Basic {v}\" https://jenkins.acme.io/api/json",
               "http https://ci.acme.io/api 'Authorization:Basic {v}'"),
      config=("headers:\n  Authorization: Basic {v}", "{{\"headers\": {{\"Authorization\": \"Basic {v}\"}}}}")),
    F("encryption key (hex)", "ENCRYPTION_KEY", tok("", HEX, 64), "added"),
    F("JWT signing secret", "JWT_SECRET", tok("", B64, 64), "added"),
    F("Django secret key", "DJANGO_SECRET_KEY", tok("", string.ascii_lowercase + DIGITS + "!@#$%^&*(-_=+)", 50),
      "added", config=("SECRET_KEY = '{v}'", "DJANGO_SECRET_KEY={v}")),
    F("Rails secret_key_base", "SECRET_KEY_BASE", tok("", HEX, 128), "added"),
    F("Laravel APP_KEY", "APP_KEY", lambda rng: "base64:" + base64.b64encode(rng.randbytes(32)).decode(), "added",
      "base64:"),
    F("WireGuard private key", "WG_PRIVATE_KEY", lambda rng: base64.b64encode(rng.randbytes(32)).decode(), "added",
      config=("[Interface]\nPrivateKey = {v}\nAddress = 10.8.0.2/24\nDNS = 1.1.1.1",),
      command=("wg set wg0 private-key <(echo {v})", "echo {v} > /etc/wireguard/private.key")),
    F("TOTP seed", "TOTP_SECRET", tok("", B32, 32), "added",
      prose=("2FA seed for the shared admin account: {v}",),
      command=("oathtool --totp -b {v}", "qrencode 'otpauth://totp/ACME:ops?secret={v}&issuer=ACME'")),
    # --- passwords ---
    F("password in prose", "DB_PASSWORD", human_password, "added",
      prose=("the db password is {v}", "{who} said the {env} postgres password is {v}",
             "Password for the admin panel: {v} (same as last quarter)", "pw for the NAS is {v}"),
      command=("PGPASSWORD={v} psql -h {db_host} -U app app", "export DB_PASSWORD='{v}'"),
      config=("database:\n  host: {db_host}\n  user: app\n  password: {v}", "DB_PASSWORD={v}",
              "{db_host}:5432:app:app:{v}")),
    F("admin password", "ADMIN_PASSWORD", strong_password, "added",
      prose=("admin login for Grafana: admin / {v}", "the root password on the new box is {v}"),
      command=("htpasswd -b -c .htpasswd admin '{v}'", "echo 'admin:{v}' | chpasswd"),
      config=("admin_password: \"{v}\"", "[security]\nadmin_password = {v}")),
    F("MySQL password on the command line", "MYSQL_ROOT_PASSWORD", human_password, "added",
      prose=("the mysql root password on {db_host} is {v}",),
      command=("mysql -u root -p{v} -h {db_host}", "mysqldump -uroot -p{v} app > app.sql",
               "`mysql -h {db_host} -u root -p{v} -e 'show databases'`"),
      config=("[client]\nuser=root\npassword={v}\nhost={db_host}", "MYSQL_ROOT_PASSWORD={v}")),
    F("PostgreSQL URL password", "DATABASE_URL", strong_password, "added",
      prose=("connect with postgres://app:{v}@{db_host}:5432/app",),
      command=("psql postgresql://app:{v}@{db_host}:5432/app", "export DATABASE_URL=postgres://app:{v}@{db_host}/app"),
      config=("DATABASE_URL=postgres://app:{v}@{db_host}:5432/app",
              "spring:\n  datasource:\n    url: jdbc:postgresql://{db_host}:5432/app\n    password: {v}")),
    F("Redis URL password", "REDIS_URL", tok("", ALNUM, 24), "added",
      prose=("the cache is at redis://:{v}@{db_host}:6379/0",),
      command=("redis-cli -u redis://:{v}@{db_host}:6379", "redis-cli -h {db_host} -a {v} ping"),
      config=("REDIS_URL=redis://:{v}@{db_host}:6379", "cache:\n  url: redis://default:{v}@{db_host}:6379/1")),
    F("MongoDB URI password", "MONGODB_URI", tok("", ALNUM, 24), "added",
      prose=("{who}'s Atlas string: mongodb+srv://app:{v}@cluster0.ab1cd.mongodb.net/prod",),
      command=("mongosh \"mongodb+srv://app:{v}@cluster0.ab1cd.mongodb.net/prod\"",),
      config=("MONGODB_URI=mongodb+srv://app:{v}@cluster0.ab1cd.mongodb.net/prod?retryWrites=true",)),
    F("AMQP URL password", "RABBITMQ_URL", tok("", ALNUM, 20), "added",
      prose=("rabbit creds: amqp://svc:{v}@{db_host}:5672/%2f",),
      command=("celery -A app worker -b amqp://svc:{v}@{db_host}:5672//",),
      config=("broker_url = \"amqp://svc:{v}@{db_host}:5672/%2f\"",)),
    F("sshpass password", "SSH_PASSWORD", human_password, "added",
      prose=("ssh to {db_host} as deploy, the password is {v}",),
      command=("sshpass -p '{v}' ssh deploy@{db_host}", "sshpass -p {v} scp build.tgz deploy@{db_host}:/srv"),
      config=("[servers]\n{db_host} ansible_user=deploy ansible_password={v}",
              "ansible_ssh_pass: {v}")),
    F("curl basic-auth password", "JENKINS_PASSWORD", strong_password, "gitleaks curl.go",
      prose=("Jenkins API: user admin, password {v}",),
      command=("curl -u admin:{v} https://jenkins.acme.io/api/json", "curl --user 'admin:{v}' -X POST https://ci.acme.io/job/deploy/build"),
      config=("jenkins:\n  url: https://jenkins.acme.io\n  user: admin\n  password: \"{v}\"",)),
    F("docker login password", "REGISTRY_PASSWORD", strong_password, "added",
      prose=("the harbor.acme.io robot password is {v}",),
      command=("docker login -u robot$ci -p '{v}' harbor.acme.io", "podman login -u ci -p {v} quay.io"),
      config=("variables:\n  REGISTRY_USER: robot$ci\n  REGISTRY_PASSWORD: \"{v}\"",)),
    F("Gmail app password", "SMTP_PASSWORD", tok("", string.ascii_lowercase, 16), "added",
      prose=("the app password for the alerts mailbox is {v}",),
      command=("swaks --to ops@acme.io --server smtp.gmail.com:587 -tls -au alerts@acme.io -ap {v}",)),
    F("LDAP bind password", "LDAP_BIND_PASSWORD", human_password, "added",
      command=("ldapsearch -x -H ldaps://ldap.acme.io -D cn=svc,dc=acme,dc=io -w '{v}' uid=sam",)),
    F("Wi-Fi passphrase", "WIFI_PSK", human_password, "added",
      prose=("office wifi: ACME-Guest, password {v}",),
      command=("nmcli dev wifi connect ACME-Office password '{v}'",),
      config=("network={{\n  ssid=\"ACME-Office\"\n  psk=\"{v}\"\n}}",)),
    F("NuGet feed password", "NUGET_PASSWORD", strong_password, "gitleaks nuget.go",
      config=("<packageSourceCredentials>\n  <acme>\n    <add key=\"Username\" value=\"ci\" />\n"
              "    <add key=\"ClearTextPassword\" value=\"{v}\" />\n  </acme>\n</packageSourceCredentials>",),
      command=("dotnet nuget add source https://nuget.acme.io/v3/index.json -n acme -u ci -p {v} "
               "--store-password-in-clear-text",)),
    F("Spring datasource password", "SPRING_DATASOURCE_PASSWORD", human_password, "added",
      config=("spring.datasource.url=jdbc:mysql://{db_host}:3306/app\nspring.datasource.password={v}",),
      command=("java -jar app.jar --spring.datasource.password={v}",)),
    # --- multi-line blocks ---
    F("RSA private key", "TLS_KEY", blocks.pem("RSA PRIVATE KEY", blocks.RSA_HEAD, 25), "gitleaks privatekey.go",
      block=True),
    F("EC private key", "EC_PRIVATE_KEY", blocks.pem("EC PRIVATE KEY", blocks.EC_HEAD, 3), "gitleaks privatekey.go",
      block=True),
    F("PKCS#8 private key", "PRIVATE_KEY", blocks.pem("PRIVATE KEY", blocks.PKCS8_HEAD, 26),
      "detect-secrets private_key_test.py", block=True),
    F("encrypted PKCS#8 private key", "SIGNING_KEY", blocks.pem("ENCRYPTED PRIVATE KEY", blocks.ENC_HEAD, 27),
      "gitleaks privatekey.go", block=True),
    F("OpenSSH private key", "SSH_PRIVATE_KEY", blocks.openssh, "gitleaks privatekey.go", block=True),
    F("PGP private key block", "GPG_PRIVATE_KEY", blocks.pgp, "gitleaks privatekey.go", block=True),
    F("PuTTY private key", "PPK", blocks.putty, "added", block=True, secret_of=blocks.putty_secret),
    F("Kubernetes Secret manifest", "DB_CREDENTIALS", k8s_secret, "gitleaks kubernetes.go", block=True,
      secret_of=after("password: "),
      command=("kubectl apply -f - <<'EOF'\n{v}\nEOF",),
      config=("{v}", "# k8s/db-secret.yaml\n{v}")),
]

PREFIXES = sorted({f.prefix for f in FORMATS if f.prefix} | set(blocks.PREFIXES), key=len, reverse=True)
