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


# What the five later Codex sessions of the corpus showed (spec-kit and BMAD prompts, answers by
# letter, French), written here in new words.

SPEC_KIT = ("\n## User Input\n\n```text\n{typed}\n```\n\nYou **MUST** consider the user input before proceeding "
            "(if not empty).\n\n## Outline\n\n1. Do not ask more than 5 questions.\n2. Never invent a tech stack.\n"
            "Make sure the spec has no [NEEDS CLARIFICATION] markers left.\n")


def test_a_prompt_template_is_read_as_what_the_user_typed_into_it():
    notes = Notes()
    notes.add(Turn(1, "user", SPEC_KIT.format(typed="We want a REAL sqlite queue, not a stub.")))
    notes.add(Turn(2, "user", SPEC_KIT.format(typed="")))  # the command alone: nothing typed
    d = notes.digest()
    assert d.asked == ["We want a REAL sqlite queue, not a stub."]
    assert {(s.kind, s.text) for s in d.statements} == {("decision", "a REAL sqlite queue, not a stub")}


def test_an_agent_persona_activation_is_harness_text():
    activation = ("\nYou must fully embody this agent's persona.\n\n<agent-activation CRITICAL=\"TRUE\">\n"
                  "1. LOAD the agent file\n2. NEVER break character\n</agent-activation>\n")
    notes = Notes()
    notes.add(Turn(1, "user", activation))
    assert notes.digest().asked == [] and notes.digest().statements == []


@pytest.mark.parametrize(("offer", "answer", "statement"), [
    ("Who may see it?\n\nA) Only the team\nB) Everyone\n\nReply A/B.", "B", "Everyone"),
    ("**Recommended:** Option A - one queue per tenant.\n\n| Option | Description |\n|---|---|\n"
     "| A | One queue per tenant |\n| B | One shared queue |\n", "b", "One shared queue"),
    ("**Recommended:** Option A - one queue per tenant.\n\n| Option | Description |\n|---|---|\n"
     "| A | One queue per tenant |\n| B | One shared queue |\n", "yes", "One queue per tenant"),
    ("### Storage decisions (proposal)\n\n1) SQLite, one file per project\n2) WAL on\n\nConfirm?\n\n"
     "[A] Advanced Elicitation\n[C] Continue - save and go on", "C", "accepted: Storage decisions (proposal)"),
])
def test_an_answer_by_letter_is_the_option_it_names(offer: str, answer: str, statement: str):
    assert said(("assistant", offer), ("user", answer)) == {("decision", statement)}


def test_numbered_answers_to_numbered_questions_are_a_decision_each():
    offer = "Three questions:\n1) Which store? A) files B) SQLite\n2) Which cache? plain or enriched\n3) Validation?"
    found = said(("assistant", offer), ("user", "1) B 2) enriched cache 3) strict"))
    assert found == {("decision", "Which store: B"), ("decision", "Which cache: enriched cache"),
                     ("decision", "Validation: strict")}


@pytest.mark.parametrize(("turns", "statement"), [
    ((("assistant", "Want me to add a CSV export?"), ("user", "oui ça me convient")), "add a CSV export"),
    ((("user", "ok on annule la spec 002, on rebascule sur main"),), "annule la spec 002, on rebascule sur main"),
    ((("user", "peux tu faire en sorte que le cache soit chiffré ?"),), "le cache soit chiffré"),
    ((("user", "We want REAL mailboxes with a trait per backend."),), "REAL mailboxes with a trait per backend"),
    ((("user", "Be sure to keep a migration per table."),), "keep a migration per table"),
    ((("assistant", "I'm going to make the API return a clear error instead of a failed transaction."),),
     "I'm going to make the API return a clear error instead of a failed transaction"),
])
def test_how_the_later_sessions_said_it(turns: tuple, statement: str):
    assert ("decision", statement) in said(*turns)


@pytest.mark.parametrize("text", ["next steps and make sure it all builds", "make sure the tests are passing",
                                  "Did you make sure they're working?"])
def test_asking_for_a_check_is_not_a_choice(text: str):
    assert said(("user", text)) == set()
