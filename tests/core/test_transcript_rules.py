"""The stenographer's rules as a pure function: turns in, statements out, no git. Each case is how
people phrase a choice in real sessions (the corpus's tuning part), written here in new words."""

from __future__ import annotations

import pytest

from strata_git.core.transcript import TYPED, Notes, Turn


def said(*turns: tuple[str, str]) -> set[tuple[str, str]]:
    notes = Notes()
    for line, (role, text) in enumerate(turns, 1):
        notes.add(Turn(line, role, text))
    return {(s.kind, s.text) for s in notes.digest().statements}


@pytest.mark.parametrize(("text", "kind", "statement"), [
    ("let's do retries = 5", "decision", "do retries = 5"),
    ("And let's turn on dark mode", "decision", "turn on dark mode"),
    ("i will host it on fly.io tomorrow", "decision", "host it on fly.io tomorrow"),
    ("looks great. can you add keyboard shortcuts?", "decision", "add keyboard shortcuts"),
    ("could you please make a CHANGELOG with the 1.0 entry?", "decision", "make a CHANGELOG with the 1.0 entry"),
    ("use ripgrep instead of grep then", "decision", "use ripgrep instead of grep then"),
    ("please make sure every export is signed", "decision", "every export is signed"),
    ("Kannst du bitte sicherstellen, dass jeder Export signiert ist?", "decision", "jeder Export signiert ist"),
    ("帮我补充 export 的离线模式", "decision", "补充 export 的离线模式"),
    ("Wir hatten die Entscheidung: nur SQLite verwenden. Das lief gut.", "decision", "nur SQLite verwenden"),
    ("Bei Fehlern soll der alte Server antworten.", "decision", "Bei Fehlern soll der alte Server antworten"),
    ("i don't think we need a Dockerfile", "rejection", "we need a Dockerfile"),
    ("we don't need a cache layer here.", "rejection", "we don't need a cache layer here"),
    ("实际上没有必要支持旧格式，可以去除相关逻辑", "rejection", "没有必要支持旧格式，可以去除相关逻辑"),
    ("Learning 2: the queue drops jobs on restart.", "lesson", "the queue drops jobs on restart"),
    ("It would be great if the export kept its old file name.", "decision", "the export kept its old file name"),
    ("i would love if you could show the last 5 exports in the menu", "decision",
     "show the last 5 exports in the menu"),
    ("when I type smileys I'd rather it not turn them into emoji", "rejection", "it not turn them into emoji"),
    ("Kannst du mir beim Start eine kurze Zusammenfassung geben?", "decision",
     "mir beim Start eine kurze Zusammenfassung geben"),
    ("Ja, bitte implementiere den Export als CSV.", "decision", "implementiere den Export als CSV"),
])
def test_how_a_user_says_it(text: str, kind: str, statement: str):
    assert (kind, statement) in said(("user", text))


def test_a_requirements_list_is_a_decision_per_item():
    found = said(("user", "new project: a timer page\nit should\n1. remember the last duration\n"
                          "2. have a START button\nnothing else for now"))
    assert {("decision", "remember the last duration"), ("decision", "have a START button")} <= found


def test_a_scope_list_is_a_decision_per_item():
    found = said(("user", "Build a timer page.\n\nScope & constraints:\n- Only one timer at a time.\n"
                          "- Reuse the existing button styles.\n\nThanks"))
    assert {("decision", "Only one timer at a time"), ("decision", "Reuse the existing button styles")} <= found


def test_a_yes_to_what_the_agent_suggested_without_asking_is_that_suggestion():
    reply = "Both work. I'd suggest keeping the sqlite backend and dropping the json one."
    assert said(("assistant", reply), ("user", "ok")) == {
        ("decision", "keeping the sqlite backend and dropping the json one")}
    chinese = "现在风格不一致。建议统一为英文短句并把示例放到 README。\n请确认。"
    assert ("decision", "统一为英文短句并把示例放到 README") in said(("assistant", chinese), ("user", "可以"))


def test_an_offer_the_agent_asked_about_wins_over_a_suggestion_it_made_before():
    reply = "I recommend pinning the version.\n\nWant me to add a lock file?"
    assert said(("assistant", reply), ("user", "yes")) == {("decision", "add a lock file")}


@pytest.mark.parametrize("text", [
    "can you not read the file without powershell?",  # a question, not a request to build
    "soll ich das so lassen?",  # a question
    "不用了",
    "let's do it",  # a yes with nothing offered: no statement
])
def test_what_is_not_a_choice(text: str):
    assert said(("user", text)) == set()


def test_a_template_pasted_as_a_prompt_is_not_the_users_wish():
    template = "## Outline\n" + "Make sure to mark each task off as [X] in the tasks file.\n" + "x" * TYPED
    assert said(("user", template)) == set()
