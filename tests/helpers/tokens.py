"""Secret-shaped values, assembled at run time so that no file holds one."""

# Two lines of a private key's body (base64), as the secret rules' tests use them.
BODY = ["MIIEpAIBAAKCAQEA2620Z" + "+XNanumjkUN01aOniVZo1bAOyt3DM6ofUbm", "E9Ueh0zqWniigKUdZowVk/" + "T80T89aK2TETdHeE"]
