"""Credential formats that their issuers mark with a prefix or a shape of their own.

`RULES` is one table of (rule, what it is, literals one of which must appear in the line,
pattern), in the shape of secrets.py's own `_RULES`, which runs it beside them: a rule runs
only on a line holding one of its literals, then `re.search(pattern, line)`; redaction replaces
a whole match, so a match is the credential itself (lookarounds keep the text around it out;
for a webhook URL or an Azure SAS token, the URL's secret part is the credential).

The shapes follow gitleaks' rules (`cmd/generate/config/rules/*.go`, MIT, Copyright (c) 2019
Zachary Rice; github.com/gitleaks/gitleaks at commit b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b)
where gitleaks knows a format by its prefix or shape, and the issuers' own documentation for
the formats gitleaks has no such rule for: AWS session tokens, Google OAuth client secrets,
refresh and access tokens, Stripe webhook secrets, Azure SAS tokens and connection-string keys,
Groq, Replicate, xAI, LangSmith, NuGet, Docker Hub, Buildkite, CircleCI, Netlify, Contentful,
Bitbucket, Trello, Asana, Braintree, Okta's `SSWS` header, Discord webhooks, Laravel and Django
keys. Left to the context rules: gitleaks' rules that know a value only by the key name beside
it (Datadog, Kraken, Drone, Twitch, Heroku's UUID keys and the like), and formats `_RULES`
already has.

Every pattern is case-sensitive (the line is not lower-cased for these rules) and uses bounded
quantifiers only. Most start with their prefix itself (`_tok`), which `re` finds by a fast scan,
then look behind it for the token's start: a prefix preceded by a character its token could hold
is in the middle of something else. So a line of a prefix repeated a million times is searched
in a few milliseconds. After a prefix, `_REAL` turns away documentation placeholders
(`NRAK-XXXX…`, runs of zeros), and the AWS session-token rule AWS's documented examples
(`…EXAMPLE…`).
"""

from __future__ import annotations

import re

# Not a placeholder: no five x's or eight zeros among the first 60 word characters of a token
# (`NRAK-XXXX…`, `T00000000/B00000000/XXXX…`).
_REAL = r"(?![\w-]{0,60}(?:[xX]{5}|0{8}))"


def _real(body: str) -> str:
    """`body`, unless it looks like a placeholder: matched once before `_REAL` looks at it, so that
    only a token of the right shape pays for that look."""
    return f"(?={body}){_REAL}{body}"


def _tok(prefixes: str | tuple[str, ...], body: str, before: str = r"[\w-]") -> str:
    """A token: one of `prefixes` (plain text) not preceded by a character of the class `before`
    (its start, as `\\b` would find it), then `body`, unless that looks like a placeholder. Each
    prefix leads an alternative of its own, so that `re` looks for the prefixes by a fast scan
    instead of trying every position of a line."""
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return "|".join(f"{re.escape(p)}(?<!{before}{re.escape(p)}){_real(body)}" for p in prefixes)


_B64 = r"[\w+/-]"  # what precedes a base64 token's start if it is in the middle of one
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# One parameter of a URL's query, `name=value&` (possessive: a value never gives back characters).
_PARAM = r"[a-z]{2,6}=[^\s&\"'<>#]{1,100}+&"
# A SAS signature: base64 of an HMAC-SHA256 (43 characters and `=`), percent-encoded or not.
_SIG = r"(?:[A-Za-z0-9+/]|%2[BbFf]){43}(?:%3[Dd]|=)"

RULES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    # --- AWS ---
    ("aws-session-token", "an AWS session token", ("IQoJb3JpZ2lu", "FwoGZXIvYXdz", "FQoGZXIvYXdz", "AQoDYXdz"),
     _tok(("IQoJb3JpZ2lu", "FwoGZXIvYXdz", "FQoGZXIvYXdz", "AQoDYXdz"),
          r"(?![A-Za-z0-9+/]{0,80}EXAMPLE)[A-Za-z0-9+/]{100,4000}={0,2}", _B64)),
    ("aws-access-key-a3t", "an AWS access key id", ("A3T",), _tok("A3T", r"[A-Z0-9][A-Z2-7]{16}\b")),
    ("aws-bedrock-key", "an Amazon Bedrock API key", ("ABSKQmVkcm9ja0FQSUtleS", "bedrock-api-key-"),
     _tok("ABSKQmVkcm9ja0FQSUtleS", r"[A-Za-z0-9+/]{80,270}={0,2}", _B64) + "|"
     + _tok("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", r"[A-Za-z0-9+/]{20,8000}={0,2}")),
    # --- Google ---
    ("google-oauth-client-secret", "a Google OAuth client secret", ("GOCSPX-",),
     _tok("GOCSPX-", r"[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])")),
    ("google-oauth-refresh-token", "a Google OAuth refresh token", ("1//0",),
     _tok("1//0", r"[A-Za-z0-9_-]{60,400}", r"[\w/-]")),
    ("google-oauth-access-token", "a Google OAuth access token", ("ya29.",),
     _tok("ya29.", r"[A-Za-z0-9_-][A-Za-z0-9_.-]{39,2047}", r"[\w.-]")),
    # --- Slack ---
    ("slack-config-token", "a Slack configuration token", ("xoxe",),
     _tok(("xoxe.xoxb-", "xoxe.xoxp-"), r"\d-[A-Za-z0-9]{163,166}(?![A-Za-z0-9])") + "|"
     + _tok("xoxe-", r"(?:\d-[A-Za-z0-9]{146}(?![A-Za-z0-9])"
            r"|\d{10,13}-\d{10,13}-\d{10,13}-[A-Za-z0-9-]{28,34}(?![A-Za-z0-9-]))")),
    ("slack-app-token", "a Slack app-level token", ("xapp-",),
     _tok("xapp-", r"\d-[A-Z0-9]{8,14}-\d{10,14}-[A-Za-z0-9]{40,80}\b")),
    ("slack-workflow-webhook", "a Slack workflow webhook", ("hooks.slack.com/",),
     _tok(("hooks.slack.com/workflows/", "hooks.slack.com/triggers/"), r"[A-Za-z0-9+/]{43,120}(?![A-Za-z0-9+/])",
          r"[\w.-]")),
    # --- Azure and Microsoft ---
    ("azure-ad-client-secret", "an Azure AD client secret", ("Q~",),
     r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~"
     + _real(r"[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~-]|\.[A-Za-z0-9_~.-])")),
    # The token from its version on, `sv=<date>&...&sig=<signature>`: the signature is the secret.
    ("azure-sas-token", "an Azure SAS token", ("sig=",),
     _tok("sv=", r"\d{4}-\d\d-\d\d&(?:" + _PARAM + r"){0,12}sig=" + _real(_SIG + r"(?![A-Za-z0-9%+/=])"))),
    ("azure-connection-key", "an Azure connection-string key", ("AccountKey=", "SharedAccessKey="),
     r"(?<=Key=)(?:(?<=AccountKey=)" + _real(r"[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])")
     + r"|(?<=SharedAccessKey=)" + _real(r"[A-Za-z0-9+/]{43}=(?![A-Za-z0-9+/=])") + ")"),
    ("teams-webhook", "a Microsoft Teams webhook URL", ("webhook.office.com/", "outlook.office"),
     _tok("https://", r"(?:[a-z0-9-]{1,63}\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/"
          + _UUID + "@" + _UUID + r"/IncomingWebhook/" + _REAL + r"[0-9a-f]{32}/" + _UUID
          + r"(?:/[A-Za-z0-9_-]{20,100})?")),
    # --- monitoring ---
    ("newrelic-key", "a New Relic key", ("NRAK-", "NRII-", "NRJS-"),
     _tok("NRAK-", r"[A-Z0-9]{27}(?![A-Za-z0-9])") + "|"
     + _tok("NRII-", r"[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])") + "|" + _tok("NRJS-", r"[a-f0-9]{19}\b")),
    ("newrelic-license-key", "a New Relic license key", ("NRAL",),
     r"\b" + _real(r"(?:eu01xx[a-f0-9]{30}|[a-f0-9]{36})NRAL\b")),
    ("sentry-token", "a Sentry auth token", ("sntryu_", "sntrys_eyJ"),
     _tok("sntryu_", r"[a-f0-9]{64}\b") + "|"
     + _tok("sntrys_eyJ", r"[A-Za-z0-9+/]{20,400}={0,2}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/])")),
    ("grafana-api-key", "a Grafana API key", ("eyJrIjoi",), _tok("eyJrIjoi", r"[A-Za-z0-9+/_-]{40,400}={0,2}", _B64)),
    ("dynatrace-token", "a Dynatrace API token", ("dt0",),
     _tok("dt0", r"[a-z]\d\d\.[A-Za-z0-9]{24}\." + _REAL + r"[A-Za-z0-9]{64}\b")),
    # --- cloud and infrastructure ---
    ("cloudflare-origin-ca-key", "a Cloudflare origin CA key", ("v1.0-",),
     _tok("v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}\b", r"[\w.-]")),
    ("heroku-key", "a Heroku API key", ("HRKU-AA",), _tok("HRKU-AA", r"[A-Za-z0-9_-]{58}(?![A-Za-z0-9_-])")),
    ("alibaba-access-key", "an Alibaba Cloud access key id", ("LTAI",), _tok("LTAI", r"[A-Za-z0-9]{12,20}\b")),
    ("flyio-token", "a Fly.io token", ("fo1_", "fm1a_", "fm1r_", "fm2_"),
     _tok("fo1_", r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])") + "|"
     + _tok(("fm1a_", "fm1r_", "fm2_"), r"[A-Za-z0-9+/]{100,4000}={0,3}", _B64)),
    ("scalingo-token", "a Scalingo API token", ("tk-us-",),
     _tok("tk-us-", r"[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])")),
    ("openshift-token", "an OpenShift user token", ("sha256~",),
     _tok("sha256~", r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", r"[\w~-]")),
    ("vault-legacy-token", "a HashiCorp Vault token", ("s.",),
     _tok("s.", r"(?=[A-Za-z]{0,23}[0-9])(?=[a-z0-9]{0,23}[A-Z])(?=[A-Z0-9]{0,23}[a-z])[A-Za-z0-9]{24}\b",
          r"[\w.-]")),
    ("onepassword-token", "a 1Password service account token", ("ops_eyJ",),
     _tok("ops_eyJ", r"[A-Za-z0-9+/]{250,4000}={0,3}", _B64)),
    ("onepassword-secret-key", "a 1Password secret key", ("A3-",),
     _tok("A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b")),
    ("yandex-key", "a Yandex Cloud key", ("AQVN", "YC", "t1."),
     _tok("AQVN", r"[A-Za-z0-9_-]{35,38}(?![A-Za-z0-9_-])") + "|"
     + _tok("YC", r"(?=[A-Za-z_-]{0,37}[0-9])(?=[A-Z0-9_-]{0,37}[a-z])[A-Za-z0-9_-]{38}(?![\w+/=-])", _B64) + "|"
     + _tok("t1.", r"[A-Za-z0-9_-]{20,300}={0,2}\.[A-Za-z0-9_-]{86}={0,2}(?![A-Za-z0-9_=-])")),
    ("defined-networking-key", "a Defined Networking API key", ("dnkey-",),
     _tok("dnkey-", r"[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}(?![A-Za-z0-9=_-])")),
    # --- AI providers ---
    ("huggingface-org-token", "a Hugging Face organization token", ("api_org_",),
     _tok("api_org_", r"[A-Za-z]{34}\b")),
    ("perplexity-key", "a Perplexity API key", ("pplx-",), _tok("pplx-", r"[A-Za-z0-9]{48}\b")),
    ("groq-key", "a Groq API key", ("gsk_",), _tok("gsk_", r"[A-Za-z0-9]{52}\b")),
    ("replicate-token", "a Replicate API token", ("r8_",), _tok("r8_", r"[A-Za-z0-9]{37}\b")),
    ("xai-key", "an xAI API key", ("xai-",), _tok("xai-", r"[A-Za-z0-9]{80}\b")),
    ("langsmith-key", "a LangSmith API key", ("lsv2_",),
     _tok(("lsv2_pt_", "lsv2_sk_"), r"[a-f0-9]{32}_[a-f0-9]{10}\b")),
    # --- package registries, CI and developer tools ---
    ("pypi-token", "a PyPI upload token", ("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"),
     _tok(("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"), r"[A-Za-z0-9_-]{70,1000}")),
    ("rubygems-key", "a RubyGems API key", ("rubygems_",), _tok("rubygems_", r"[a-f0-9]{48}\b")),
    ("nuget-key", "a NuGet API key", ("oy2",), _tok("oy2", r"[a-z0-9]{43}\b")),
    ("clojars-token", "a Clojars deploy token", ("CLOJARS_",), _tok("CLOJARS_", r"[A-Za-z0-9]{60}\b")),
    ("artifactory-key", "a JFrog Artifactory key or token", ("AKCp", "cmVmd"),
     _tok("AKCp", r"[A-Za-z0-9]{69}\b") + "|" + _tok("cmVmd", r"[A-Za-z0-9]{59}\b", _B64)),
    ("dockerhub-token", "a Docker Hub access token", ("dckr_pat_", "dckr_oat_"),
     _tok(("dckr_pat_", "dckr_oat_"), r"[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])")),
    ("sonarqube-token", "a SonarQube token", ("squ_", "sqp_", "sqa_"),
     _tok(("squ_", "sqp_", "sqa_"), r"[a-f0-9]{40}\b")),
    ("sourcegraph-token", "a Sourcegraph access token", ("sgp_",),
     _tok("sgp_", r"(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}\b")),
    ("octopus-key", "an Octopus Deploy API key", ("API-",), _tok("API-", r"(?=[A-Z]{0,25}[0-9])[A-Z0-9]{26}\b")),
    ("infracost-key", "an Infracost API key", ("ico-",), _tok("ico-", r"[A-Za-z0-9]{32}\b")),
    ("prefect-key", "a Prefect API key", ("pnu_",), _tok("pnu_", r"[A-Za-z0-9]{36}\b")),
    ("readme-key", "a ReadMe API key", ("rdme_",), _tok("rdme_", r"[a-z0-9]{70}\b")),
    ("harness-token", "a Harness access token", ("pat.", "sat."),
     _tok(("pat.", "sat."), r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\b")),
    ("buildkite-token", "a Buildkite API token", ("bkua_",), _tok("bkua_", r"[a-f0-9]{40}\b")),
    ("circleci-token", "a CircleCI API token", ("CCIPAT_", "CCIPRJ_"),
     _tok(("CCIPAT_", "CCIPRJ_"), r"[A-Za-z0-9]{22}_[a-f0-9]{40}\b")),
    ("netlify-token", "a Netlify access token", ("nfp_",), _tok("nfp_", r"[A-Za-z0-9]{36}\b")),
    ("clickhouse-key", "a ClickHouse Cloud secret key", ("4b1d",), _tok("4b1d", r"[A-Za-z0-9]{38}\b")),
    ("settlemint-token", "a SettleMint access token", ("sm_aat_", "sm_pat_", "sm_sat_"),
     _tok(("sm_aat_", "sm_pat_", "sm_sat_"), r"[A-Za-z0-9]{16}\b")),
    ("intra42-secret", "a 42 Intra client secret", ("s-s4t2",), _tok(("s-s4t2ud-", "s-s4t2af-"), r"[a-f0-9]{64}\b")),
    ("adobe-client-secret", "an Adobe client secret", ("p8e-",), _tok("p8e-", r"[A-Za-z0-9]{32}\b")),
    ("authress-key", "an Authress service client key", (".acc_", ".acc-"),
     _tok(("sc_", "ext_", "scauth_", "authress_"),
          r"[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}")),
    ("gitlab-other-token", "a GitLab token",
     ("glcbt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "GR1348941"),
     _tok("glcbt-", r"[0-9a-zA-Z]{1,5}_[0-9a-zA-Z_-]{20}(?![0-9a-zA-Z_-])") + "|"
     + _tok(("glffct-", "glsoat-", "glft-", "GR1348941"), r"[0-9a-zA-Z_-]{20}(?![0-9a-zA-Z_-])") + "|"
     + _tok("glimt-", r"[0-9a-zA-Z_-]{25}(?![0-9a-zA-Z_-])") + "|"
     + _tok("glagent-", r"[0-9a-zA-Z_-]{50}(?![0-9a-zA-Z_-])") + "|"
     + _tok("gloas-", r"[0-9a-zA-Z_-]{64}(?![0-9a-zA-Z_-])")),
    ("gitlab-session-cookie", "a GitLab session cookie", ("_gitlab_session=",),
     r"(?<==)(?<=_gitlab_session=)" + _real(r"[0-9a-z]{32}\b")),
    # --- messaging, email and work tools ---
    ("sendgrid-key", "a SendGrid API key", ("SG.",),
     _tok("SG.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", r"[\w.-]")),
    ("brevo-key", "a Brevo (Sendinblue) API key", ("xkeysib-",),
     _tok("xkeysib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}\b")),
    ("mailgun-signing-key", "a Mailgun key", ("-",), r"\b" + _real(r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}\b")),
    ("mailchimp-key", "a Mailchimp API key", ("-us",), r"\b" + _real(r"[a-f0-9]{32}-us\d{1,2}\b")),
    ("twilio-api-key", "a Twilio API key", ("SK",), _tok("SK", r"[0-9a-f]{32}\b")),
    ("telegram-bot-token", "a Telegram bot token", (":AA",),
     r"(?<![\w:])\d{8,10}:AA" + _real(r"[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")),
    ("discord-webhook", "a Discord webhook URL", ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
     _tok(("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
          r"\d{17,20}/" + _REAL + r"[A-Za-z0-9_-]{60,68}(?![A-Za-z0-9_-])")),
    ("postman-key", "a Postman API key", ("PMAK-",), _tok("PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}\b")),
    ("trello-token", "a Trello token", ("ATTA",), _tok("ATTA", r"[a-fA-F0-9]{72}\b")),
    ("bitbucket-app-password", "a Bitbucket app password", ("ATBB",), _tok("ATBB", r"[A-Za-z0-9]{32}\b")),
    ("asana-token", "an Asana personal access token", ("1/", "2/"),
     r"(?<![\w/-])[12]/\d{10,19}/\d{10,19}:" + _real(r"[a-f0-9]{32}\b")),
    ("airtable-token", "an Airtable personal access token", ("pat",),
     _tok("pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}\b")),
    ("typeform-token", "a Typeform personal token", ("tfp_",),
     _tok("tfp_", r"[A-Za-z0-9_=.-]{59}(?![A-Za-z0-9_=-])")),
    ("hubspot-token", "a HubSpot private app token", ("pat-na", "pat-eu", "pat-ap"),
     _tok("pat-", r"(?:na|eu|ap)\d-" + _UUID + r"\b")),
    ("contentful-token", "a Contentful management token", ("CFPAT-",),
     _tok("CFPAT-", r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")),
    # As an `Authorization: SSWS <token>` header: without it, Okta's `00...` is only a key name's value.
    ("okta-token", "an Okta API token", ("SSWS ",),
     r"00(?<=SSWS 00)" + _real(r"[A-Za-z0-9_=-]{40}(?![A-Za-z0-9_=-])")),
    ("launchdarkly-key", "a LaunchDarkly key", ("sdk-", "api-", "mob-"), _tok(("sdk-", "api-", "mob-"), _UUID + r"\b")),
    ("frameio-token", "a Frame.io token", ("fio-u-",),
     _tok("fio-u-", r"[A-Za-z0-9_=-]{64}(?![A-Za-z0-9_=-])")),
    ("dropbox-token", "a Dropbox access token", ("sl.",),
     _tok("sl.", r"(?:u\.)?[A-Za-z0-9_-]{130,1400}", r"[\w.-]")),
    ("mapbox-secret-token", "a Mapbox secret token", ("sk.eyJ",),
     _tok("sk.eyJ", r"[A-Za-z0-9_-]{10,400}\.[A-Za-z0-9_-]{20,30}(?![A-Za-z0-9_-])", r"[\w.-]")),
    ("twitter-bearer-token", "a Twitter bearer token", ("AAAAAAAAAAAAAAAAAAAAA",),
     r"A(?<![A-Za-z0-9%]A)A{20}(?=A{0,10}[B-Za-z0-9%])" + _real(r"[A-Za-z0-9%]{80,120}(?![A-Za-z0-9%])")),
    ("maxmind-key", "a MaxMind license key", ("_mmk",), r"\b" + _real(r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b")),
    # --- payments and commerce ---
    ("stripe-webhook-secret", "a Stripe webhook signing secret", ("whsec_",),
     _tok("whsec_", r"[A-Za-z0-9]{32,64}\b")),
    ("square-token", "a Square access token or secret", ("EAAA", "sq0atp-", "sq0csp-"),
     _tok(("EAAA", "sq0atp-"), r"[A-Za-z0-9_-]{22,60}(?![A-Za-z0-9_-])") + "|"
     + _tok("sq0csp-", r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")),
    ("braintree-token", "a Braintree access token", ("access_token$",),
     _tok(("access_token$production$", "access_token$sandbox$"), r"[a-z0-9]{16}\$[a-f0-9]{32}\b")),
    ("plaid-token", "a Plaid access token", ("access-sandbox-", "access-development-", "access-production-"),
     _tok(("access-sandbox-", "access-development-", "access-production-"), _UUID + r"\b")),
    ("flutterwave-key", "a Flutterwave key", ("FLWSECK", "FLWPUBK"),
     _tok(("FLWSECK-", "FLWPUBK-", "FLWSECK_TEST-", "FLWPUBK_TEST-"), r"[a-hA-H0-9]{32}-X\b") + "|"
     + _tok("FLWSECK_TEST", r"-?[a-hA-H0-9]{12}\b")),
    ("shippo-token", "a Shippo API token", ("shippo_",),
     _tok(("shippo_live_", "shippo_test_"), r"[a-fA-F0-9]{40}\b")),
    ("easypost-key", "an EasyPost API key", ("EZAK", "EZTK"), _tok(("EZAK", "EZTK"), r"[A-Za-z0-9]{54}\b")),
    ("duffel-token", "a Duffel access token", ("duffel_",),
     _tok(("duffel_live_", "duffel_test_"), r"[A-Za-z0-9_=-]{43}(?![A-Za-z0-9_=-])")),
    ("lob-key", "a Lob API key", ("live_", "test_"), _tok(("live_", "test_"), r"[a-f0-9]{35}\b")),
    # --- frameworks' keys and encoded tokens ---
    ("laravel-app-key", "a Laravel APP_KEY", ("base64:",),
     _tok("base64:", r"[A-Za-z0-9+/]{43}=(?![A-Za-z0-9+/=])")),
    ("django-secret-key", "a Django secret key", ("django-insecure-",),
     _tok("django-insecure-", r"[a-z0-9!@#$%^&*(\-_=+)]{50}(?![a-z0-9!@#$%^&*(\-_=+)])")),
    ("jwt-base64", "a base64-encoded JSON Web Token", ("ZXlK",),
     _tok("ZXlK", r"(?:aGJHY2lPaU|aGNIVWlPaU|aGNIWWlPaU|aGRXUWlPaU|aU5qUWlP|amNtbDBJanBi|amRIa2lPaU|bGNHc2lPbn"
                  r"|bGJtTWlPaU|cWEzVWlPaU|cWQyc2lPb|cGMzTWlPaU|cGRpSTZJ|cmFXUWlP|clpYbGZiM0J6SWpwY|cmRIa2lPaUp"
                  r"|dWIyNWpaU0k2|d01tTWlP|d01uTWlPaU|d2NIUWlPaU|emRXSWlPaU|emRuUWlP|MFlXY2lPaU|MGVYQWlPaUp|MWNtd2l"
                  r"|MWMyVWlPaUp|MlpYSWlPaU|MlpYSnphVzl1SWpv|NElqb2|NE5XTWlP|NE5YUWlPaU|NE5YUWpVekkxTmlJNkl"
                  r"|NE5YVWlPaU|NmFYQWlPaU)[A-Za-z0-9/_+-]{40,4000}={0,2}", _B64)),
)
