"""Secrets of several lines (key blocks, key files) and a few composite values, drawn at run
time. A block's first body line starts the way the real encoding does (the DER or OpenSSH
header, public and the same in every key); those starts are in PREFIXES, so the leak check
skips them and looks only at the random rest."""

from __future__ import annotations

import json
import random
import string
import uuid
from collections.abc import Callable

B64 = string.ascii_letters + string.digits + "+/"
HEX = string.digits + "abcdef"

RSA_HEAD = "MIIEpAIBAAKCAQEA"  # SEQUENCE, version 0, a 2048-bit modulus
EC_HEAD = "MHcCAQEEI"  # SEQUENCE, version 1, a 32-byte P-256 key
PKCS8_HEAD = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"  # PrivateKeyInfo, rsaEncryption
ENC_HEAD = "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI"  # EncryptedPrivateKeyInfo, PBES2
# "openssh-key-v1", cipher none, kdf none, one ssh-ed25519 key
OPENSSH_HEAD = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB"
PGP_HEAD = "lQOYBG"  # secret-key packet, version 4
PUTTY_PRIVATE_HEAD = "AAAAI"
PREFIXES = (RSA_HEAD, EC_HEAD, PKCS8_HEAD, ENC_HEAD, OPENSSH_HEAD[:70], OPENSSH_HEAD[70:], PGP_HEAD,
            PUTTY_PRIVATE_HEAD)


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def wrap(stream: str, width: int) -> list[str]:
    return [stream[i:i + width] for i in range(0, len(stream), width)]


def pem(label: str, head: str, lines: int) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        body = wrap(head + rand(rng, B64, 64 * lines - len(head) + rng.randint(8, 40)), 64)
        return f"-----BEGIN {label}-----\n" + "\n".join(body) + "=\n" + f"-----END {label}-----"
    return make


def openssh(rng: random.Random) -> str:
    body = wrap(OPENSSH_HEAD + rand(rng, B64, 330), 70)
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----"


def pgp(rng: random.Random) -> str:
    body = wrap(PGP_HEAD + rand(rng, B64, 64 * 14), 64)
    return ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(body) + "\n=" + rand(rng, B64, 4)
            + "\n-----END PGP PRIVATE KEY BLOCK-----")


def putty(rng: random.Random) -> str:
    public = "AAAAC3NzaC1lZDI1NTE5AAAAI" + rand(rng, B64, 43)
    return ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@acme\nPublic-Lines: 1\n"
            f"{public}\nPrivate-Lines: 1\n{PUTTY_PRIVATE_HEAD}{rand(rng, B64, 43)}\n"
            f"Private-MAC: {rand(rng, HEX, 64)}")


def putty_secret(value: str) -> str:
    lines = value.splitlines()
    private = lines[lines.index("Private-Lines: 1") + 1]
    return private + "\n" + lines[-1].removeprefix("Private-MAC: ")


def gcp_service_account(rng: random.Random) -> str:
    project = f"acme-{rng.choice(('analytics', 'exports', 'ml'))}-{rng.randint(100000, 999999)}"
    key = pem("PRIVATE KEY", PKCS8_HEAD, 26)(rng) + "\n"
    account = rng.choice(("exporter", "ci-deployer", "bq-reader"))
    doc = {
        "type": "service_account", "project_id": project, "private_key_id": rand(rng, HEX, 40),
        "private_key": key, "client_email": f"{account}@{project}.iam.gserviceaccount.com",
        "client_id": str(rng.randint(10**20, 10**21 - 1)), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "universe_domain": "googleapis.com",
    }
    return json.dumps(doc, indent=2)


def gcp_secret(value: str) -> str:
    doc = json.loads(value)
    return doc["private_key_id"] + "\n" + doc["private_key"].strip()


def teams_webhook(rng: random.Random) -> str:
    def ident() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return (f"https://acme.webhook.office.com/webhookb2/{ident()}@{ident()}/IncomingWebhook/"
            f"{rand(rng, HEX, 32)}/{ident()}")


def teams_secret(value: str) -> str:
    return value.split("/IncomingWebhook/", 1)[1]
