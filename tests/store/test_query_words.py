"""Questions find their answer by their words: the words that only frame a question to memory
("what did we decide about") are dropped, and a query word no memory holds is matched as the
start of a longer one ("cockroach" finds "CockroachDB"), live and archived alike."""

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


def test_a_question_finds_the_decision_and_a_word_start_finds_the_longer_word(vault):
    vault.write("decisions/koda-auth", b"Koda login: passkeys and magic links, no passwords.\n")
    vault.write("projects/koda-db", b"We run CockroachDB for the Koda ledger.\n")
    vault.write("projects/other", b"The cockpit dashboard shows the ledger.\n")
    hits = vault.search("What did we decide about Koda login?")
    assert hits[0].name == "decisions/koda-auth"
    assert [h.name for h in vault.search("cockroach")] == ["projects/koda-db"]
    assert [h.name for h in vault.search("cockpit")] == ["projects/other"]  # held: matched exactly, no prefix
    assert vault.search("cockroachdbx") == []  # a longer word is never made shorter
