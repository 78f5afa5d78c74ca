"""Questions find their answer by their words: the words that only frame a question to memory
("what did we decide about") are dropped, and a query word is matched as the start of longer ones
too ("cockroach" finds "CockroachDB"): in its place when no memory holds it, else after the memories
holding the word itself; live and archived alike."""

from __future__ import annotations

from strata_git.core import textindex


def test_the_words_that_frame_a_question_are_dropped_unless_nothing_else_is_left():
    assert textindex.query_terms("What did we decide about Koda login?") == ["koda", "login"]
    assert textindex.query_terms("do you remember the cockroach migration") == ["cockroach", "migrat"]
    assert textindex.query_terms("what did we decide") == ["decid"]  # nothing else: kept


def test_only_a_word_long_enough_and_not_cjk_or_a_pictograph_is_a_prefix():
    assert textindex.prefixable("cockroach") and not textindex.prefixable("db")
    assert not textindex.prefixable("记忆") and not textindex.prefixable("u1f389")
    assert textindex.expression([textindex.PREFIX + 'co"ck']) == '"co""ck"*'  # still quoted: never FTS5 syntax
    assert textindex.expression([textindex.LONGER + "cock"]) == '("cock"* NOT "cock")'  # longer words only


def test_a_question_finds_the_decision_and_a_word_start_finds_the_longer_word(vault):
    vault.write("decisions/koda-auth", b"Koda login: passkeys and magic links, no passwords.\n")
    vault.write("projects/koda-db", b"We run CockroachDB for the Koda ledger.\n")
    vault.write("projects/other", b"The cockpit dashboard shows the ledger.\n")
    hits = vault.search("What did we decide about Koda login?")
    assert hits[0].name == "decisions/koda-auth"
    assert [h.name for h in vault.search("cockroach")] == ["projects/koda-db"]
    assert [h.name for h in vault.search("cockpit")] == ["projects/other"]  # held: matched exactly, no prefix
    assert vault.search("cockroachdbx") == []  # a longer word is never made shorter


def test_a_word_some_memory_holds_still_finds_the_longer_words_it_starts_after_them(vault):
    vault.write("projects/koda-db", b"We run CockroachDB for the Koda ledger.\n")
    vault.write("notes/kitchen", b"A cockroach was seen in the kitchen.\n")
    vault.write("notes/other", b"The ledger is reconciled nightly.\n")
    hits = vault.search("cockroach")
    assert [h.name for h in hits] == ["notes/kitchen", "projects/koda-db"]  # the word itself first
    assert hits[0].coverage == 1.0 and hits[1].coverage == 0.0  # a longer word covers none of the question
    assert [h.name for h in vault.search("cockroachdb")] == ["projects/koda-db"]


def test_a_hit_says_how_much_of_the_query_it_holds_rare_words_weighing_more(vault):
    vault.write("projects/koda", b"Koda ships the passkey login on Thursday.\n")
    for i in range(6):
        vault.write(f"notes/n{i}", f"Note {i}: the login page and the team.\n".encode())
    full = vault.search("koda passkey thursday")[0]
    assert full.name == "projects/koda" and full.coverage == 1.0
    part = vault.search("koda passkey thursday zanzibar quokka")[0]  # two words no memory holds
    assert part.name == "projects/koda" and 0.3 < part.coverage < 0.7
    common = [h for h in vault.search("login zanzibar") if h.name.startswith("notes/")][0]
    assert common.coverage < 0.3  # a common word held, a rare one not: little of the question
    assert vault.search("koda")[0].as_dict()["coverage"] == 1.0


def test_a_hint_needs_the_prompts_words_not_one_common_word_of_them(vault):
    """A prompt about something else that shares one common word with a memory scores, but covers
    little of the prompt: no hint. The same memory asked about in its own words is hinted."""
    from strata_git.app import agents

    vault.write("projects/koda", b"Koda ships the passkey login on Thursday.\n")
    for i in range(6):
        vault.write(f"notes/n{i}", f"Note {i}: the login page and the team.\n".encode())
    vault.cfg = vault.cfg._replace(agent_prompt_min_score=0.0)  # the coverage alone decides
    assert "projects/koda" in agents.prompt_hints(vault, "when does koda ship the passkey login?")
    other = "rename the login stage of the docker build for the voice server zanzibar quokka"
    assert vault.search(other)  # its one common word is held...
    assert agents.prompt_hints(vault, other) == ""  # ...but that is too little of the prompt
    vault.cfg = vault.cfg._replace(agent_prompt_min_coverage=0.0)
    assert agents.prompt_hints(vault, other) != ""  # (without the coverage threshold it would be hinted)


def test_counting_the_longer_words_stops_once_past_what_they_are_used_for_and_weighs_the_same(vault, monkeypatch):
    """A held word's longer words are looked for only while few memories hold them: the count stops
    there (at a million memories a short word starts words held by hundreds of thousands), and the
    query is weighed exactly as by the whole count."""
    from strata_git.store import catalog, search

    def whole(db, term: str, held: bool) -> tuple[int, int]:
        row = db.execute("SELECT sum(doc), count(*) FROM docs_vocab WHERE term > ? AND term < ?",
                         (term, term + "\uffff")).fetchone()
        return row[0] or 0, row[1]

    vault.write("notes/held", b"The zeta plan.\n")
    for i in range(5):
        vault.write(f"notes/n{i}", f"zetaword{i} and zetax{i}.\n".encode())
    vault.search("zeta")  # the catalog brought up to date
    monkeypatch.setattr(search, "MAX_LONGER_MEMORIES", 3)
    with catalog.connect(vault.repo) as db:
        assert search._longer(db, "zeta", held=True) == (4, 4)  # stopped once past 3 memories
        assert search._longer(db, "zeta", held=False) == (10, 10)  # an unheld word needs them all
        stopped = search.idf_weights(db, ["zeta", "plan"])
        monkeypatch.setattr(search, "_longer", whole)
        assert search.idf_weights(db, ["zeta", "plan"]) == stopped
        monkeypatch.setattr(search, "MAX_LONGER_MEMORIES", 1000)
        assert any(t.startswith(textindex.LONGER) for t, _, _ in search.idf_weights(db, ["zeta"]).terms)


def test_a_word_in_every_memory_is_not_scored_beside_a_word_that_counts(vault, monkeypatch):
    """A word every memory holds can add almost nothing to a score (its idf is about 0.5 / N: under
    NO_PART past about 2,000 memories), and scoring it walks every memory: beside a word that
    counts it is left out (taken as held by all); alone it is scored as before. Here with nine
    memories, so NO_PART is raised above what the common word can add (about 1.0)."""
    from strata_git.store import search

    for i in range(8):
        vault.write(f"notes/n{i}", f"Koda note {i} about the ledger.\n".encode())
    vault.write("notes/rare", b"Koda uses quokka tokens.\n")
    both = [(h.name, h.score) for h in vault.search("koda quokka")]
    assert both[0][0] == "notes/rare" and len(both) == 9  # as every word is scored by default
    monkeypatch.setattr(search, "NO_PART", 1.5)
    hits = vault.search("koda quokka")
    assert [h.name for h in hits] == ["notes/rare"] and hits[0].coverage == 1.0
    assert hits[0].score == vault.search("quokka")[0].score < both[0][1]  # the rare word's part alone
    assert len(vault.search("koda")) == 9  # alone, the word is still searched


def test_ascii_text_is_split_as_the_full_unicode_pattern_splits_it():
    """Folded text that is ASCII skips the pattern with the CJK and pictograph classes: every ASCII
    character, and strings of them mixed with letters that fold to ASCII, split the same both ways."""
    import random
    import unicodedata

    full = textindex._unicode()[0]
    rng = random.Random(7)
    alphabet = [chr(i) for i in range(128)] + list("ＫKﬁ")  # fullwidth K, Kelvin sign, ligature: ASCII once folded
    samples = ["".join(chr(i) for i in range(128)), "x" * 65 + " y" * 3, *(
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000))]
    for text in samples:
        folded = unicodedata.normalize("NFKC", text).lower()
        assert folded.isascii()
        assert textindex.tokens(text) == [w for w in full.findall(folded) if len(w) <= textindex.MAX_TOKEN_CHARS]
    assert textindex.tokens("Heron项目 🎉 Café") == ["heron", "项目", "u1f389", "café"]  # the other way still
