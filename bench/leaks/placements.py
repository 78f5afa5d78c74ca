"""Where a secret sits in a note: the sentences, command lines and config snippets a value is
put into. A template is a str.format string; the fields a template may use are the ones
`fields` returns (`{v}` is the value itself). Templates with literal braces double them.

Three placements, each with its generic templates (used unless a format brings its own):

- `prose`: a sentence a person writes in a note or a chat, the value in the sentence;
- `command`: a shell command line (now and then in backticks, as in Markdown);
- `config`: a config-file snippet: .env, YAML, TOML, JSON, INI, HCL.
"""

from __future__ import annotations

import random
import uuid

PLACEMENTS = ("prose", "command", "config")

USERS = ("sam", "priya", "jonas", "mei", "deploy", "ci-bot", "oleg", "ana")
HOSTS = ("db-3.internal", "10.0.4.17", "pg-main.acme.lan", "staging-db.acme.io", "172.16.8.20", "mysql01.eu.corp")
ENVS = ("staging", "prod", "dev", "qa", "eu-prod")
WHO = ("Sam", "Priya", "Jonas", "Mei", "Oleg", "the on-call", "Ana from billing")

PROSE = (
    "The {what} for the {env} deploy is {v}, rotate it after the demo.",
    "{who} sent me the {what}: {v}",
    "note to self: {what} = {v} (expires in 90 days)",
    "If CI fails again, the {what} I generated this morning is {v}.",
    "Use {v} as the {what} when the setup wizard asks for it.",
    "{who} asked for the {what} in chat, so I pasted it: {v}",
    "Heads up, I created a new {what} for {env}: {v} (the old one is revoked).",
    "For the record, the {what} we use in {env} is {v}",
)
PROSE_BLOCK = (
    "here is the key:\n{v}",
    "{who} asked for the {what}, here it is:\n\n{v}\n",
    "Saving the {what} for {env} so I don't lose it again:\n{v}\nDelete after the migration.",
)
COMMAND = (
    "export {key}={v}",
    "`export {key}=\"{v}\"`",
    "{key}={v} ./scripts/deploy.sh --env {env}",
    "docker run --rm -e {key}={v} ghcr.io/acme/worker:1.4.2",
    "gh secret set {key} --body \"{v}\" --repo acme/api",
    "kubectl create secret generic app-creds --from-literal={key_lower}={v} -n {env}",
    "heroku config:set {key}={v} -a acme-api",
    "fly secrets set {key}={v} --app acme-{env}",
    "echo '{key}={v}' >> .env",
    "`{key}='{v}' npm run release`",
)
COMMAND_HTTP = {
    "bearer": ("curl -sS -H \"Authorization: Bearer {v}\" https://{host}{path}",
               "`curl -H 'Authorization: Bearer {v}' https://{host}{path}`",
               "http GET https://{host}{path} \"Authorization:Bearer {v}\""),
    "token": ("curl -H \"Authorization: token {v}\" https://{host}{path}",),
    "query": ("curl \"https://{host}{path}?{param}={v}\"",),
}
COMMAND_BLOCK = (
    "cat > ~/.ssh/{file} <<'EOF'\n{v}\nEOF\nchmod 600 ~/.ssh/{file}",
    "printf '%s\\n' '{v}' > /tmp/{file} && ssh-add /tmp/{file}",
    "kubectl create secret generic tls-key -n {env} --from-literal=key='{v}'",
)
CONFIG = (
    "# .env\n{key}={v}\nLOG_LEVEL=info",
    "env:\n  {key}: \"{v}\"\n  REGION: eu-west-1",
    "services:\n  api:\n    image: acme/api:2.3\n    environment:\n      - {key}={v}",
    "[{section}]\n{key_lower} = \"{v}\"\ntimeout = 30",
    "{{\n  \"{camel}\": \"{v}\",\n  \"region\": \"us-east-1\"\n}}",
    "[{section}]\n{key_lower} = {v}\nretries = 3",
    "{key_lower} = \"{v}\"  # terraform.tfvars",
    "jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {key}: {v}",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  {key}: \"{v}\"",
)
CONFIG_BLOCK = (
    "tls:\n  key: |\n{indented}",
    "{{\"{camel}\": \"{escaped}\"}}",
    "[{section}]\nprivate_key = \"\"\"\n{v}\n\"\"\"",
)


def fields(rng: random.Random, value: str, key: str, what: str, host: str) -> dict[str, str]:
    """Everything a template may name; unused fields are ignored by str.format."""
    words = key.lower().split("_")
    return {
        "v": value, "key": key, "key_lower": key.lower(), "what": what,
        "camel": words[0] + "".join(w.capitalize() for w in words[1:]),
        "section": words[0], "host": host or "api.example.com", "path": rng.choice(("/v1/me", "/api/v2/items", "/v1")),
        "param": "api_key", "user": rng.choice(USERS), "db_host": rng.choice(HOSTS), "env": rng.choice(ENVS),
        "who": rng.choice(WHO), "file": rng.choice(("id_deploy", "id_ed25519", "server.key", "ci_key")),
        "indented": "\n".join("    " + line for line in value.splitlines()),
        "escaped": value.replace("\n", "\\n"),
        # a second value some lines carry beside the secret (an access key id, an account SID, a client id)
        "fake_id": "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16)),
        "fake_sid": "".join(rng.choice("0123456789abcdef") for _ in range(32)),
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    }


def render(template: str, ctx: dict[str, str], placement: str, rng: random.Random) -> str:
    text = template.format(**ctx)
    if placement == "command" and "\n" not in text and not text.startswith("`") and rng.random() < 0.15:
        text = f"`{text}`"  # a command quoted in Markdown, as notes often hold them
    return text
