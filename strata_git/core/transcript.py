"""Agent transcripts (Claude Code and Codex JSONL) read into turns, and the stenographer's rules
that turn a stretch of them into memories. Pure: no git, no files.

Formats (docs/harnesses.md):

- Claude Code, one JSON object a line: `type` user / assistant / system / summary, `message`
  with `role` and `content` (a string, or blocks: `text`, `tool_use` with `name` and `input`,
  `tool_result`), `sessionId`, `timestamp`; a compacted session goes on with a summary line.
  A subagent's lines carry `isSidechain: true`: their tool calls and statements count, but the
  prompt the main agent gave the subagent is not what the user asked, and the subagent's last
  words are not the session's outcome.
- Codex rollouts: `type` session_meta / turn_context / response_item / event_msg; a
  response_item's `payload` is a `message` (role, content blocks of input_text / output_text)
  or a `function_call` (`name`, `arguments` as a JSON string). Rollouts older than session_meta
  (Codex CLI of mid-2025) start with a header (`id`, `timestamp`, `instructions`), then hold the
  same items bare, without the envelope, between `{"record_type": "state"}` lines.

A line that is not JSON, not an object, or of a type not listed is skipped and counted.

The rules, deterministic and offline (what the tests pin down, measured against the hand-labelled
corpus of real sessions by bench/capture_quality.py):

- one **session digest**: the first prompts asked (harness text never counts, see HARNESS), the
  files touched (tool inputs `file_path`, `path`, `notebook_path`; Codex `apply_patch` headers), the
  commands run that change something (`Bash`, `shell`, `exec_command`; reads such as `ls` or `sed -n`
  are left out), and the outcome (the assistant's last words, not a reply to a notification);
- a **decision**, **rejection**, **lesson** or **task** for each statement in RULES, by who says it:
  the explicit markers anyone may write (`Decision:`, `TODO:`, "we decided to", "turns out"); how
  users say what to do and not to ("let's use", "go with", "I want to switch", "can you add", "make
  sure", "use X instead of Y", a list under "it should", "don't", "no new", "we don't need");
  how agents say what they chose, found or left ("I'll use X instead of Y", "root cause", "X is not
  available, so I'm switching", a "Next steps" list);
- a **decision** for each answer the user gave to a choice the agent asked for (Claude Code
  AskUserQuestion results, Codex request_user_input answers, whose typed notes are read as the
  user's words), each plan the user approved (ExitPlanMode; a Codex `<proposed_plan>` followed by
  "Implement the plan." or a short yes), and each short yes (or
  option number) to what the agent had just offered ("Want me to add X?" then "yes please": "add X"),
  or, when it asked nothing, to what it last suggested ("I'd suggest X"), and each answer by letter
  to options offered by letter ("B", "[C] Continue", a yes to "Recommended: Option A").

A user turn that a prompt template filled (spec-kit's "## User Input" block) is read as what the
user typed into the template, nothing else.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from strata_git.core.memory import UNSAFE_TO_DISPLAY

FORMATS = ("claude-code", "codex")
MAX_PROMPTS = 3
MAX_ITEMS = 50  # files, commands, statements of each kind kept per capture
MAX_STATEMENT = 200
RAW = 4096  # characters of a prompt, command or statement kept: redaction reads them whole, then they are cut
MAX_STATEMENTS = 2000  # kept from one stretch; a capture ends its stretch well before (capture.PART_STATEMENTS)
SAID_CHARS = 420_000  # what was said, kept for a model note-taker (notetaker.MAX_INPUT is sent)
SAID_TURN = 8000  # characters of one turn kept for it
ANSWER_CHARS = 16_000  # of a tool result read for a user's answers (AskUserQuestion, ExitPlanMode)

# A line's, a sentence's or an item's start. Each sentence break gives one place to start from (the
# character after its first blank): overlapping runs of blanks would make a line of spaces cost
# time cubic in its length.
_OPENS = r"(?:^|(?<=[.!?;][ \t]))[ \t]*(?:[-*][ \t]*|\d+[.)][ \t]+)?"
_UNTIL = r"(?P<s>[^\n]+?)(?=[.!?](?:\s|$)|$)"  # to the end of the sentence (or of the line)
_SAY = (r"(?:go with|use|switch to|stick with|keep|move to|adopt|choose|pick|opt for|make|build|implement|add|"
        r"turn on|turn off|enable|disable|host|deploy|try|call it|name it|rename|replace|remove|delete|drop|"
        r"do(?= )(?! (?:it|that|this|so)\b))")
_BUILD = (r"(?:add|make|create|implement|build|use|switch|turn on|turn off|enable|disable|remove|delete|replace|"
          r"rename|change)")
# (kind, who says it: user, assistant, either ("any") or a user turn short enough to be typed by hand
# ("typed": a template's "make sure to ..." is not the user's wish), pattern); `s` is the statement.
RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple((kind, who, re.compile(p, re.I | re.M))
                                                            for kind, who, p in (
    # markers anyone may write
    ("decision", "any", _OPENS + r"(?:decision|decided)[ \t]*:[ \t]*" + _UNTIL),
    ("decision", "any", r"\b(?:entscheidung|entschieden)[ \t]*:[ \t]*" + _UNTIL),
    ("decision", "any", r"\bwe(?:'ve| have)? decided (?:to |that |on )" + _UNTIL),
    ("rejection", "any", _OPENS + r"(?:rejected|rejection|ruled out)[ \t]*:[ \t]*" + _UNTIL),
    ("rejection", "any", r"\bwe (?:will not|won't|decided not to) " + _UNTIL),
    ("rejection", "any", r"\bruled out (?!:)" + _UNTIL),
    ("lesson", "any", _OPENS + r"(?:lesson|lesson learned|learned|learning(?: \d{1,2})?|til)[ \t]*:[ \t]*" + _UNTIL),
    ("lesson", "any", r"\b(?:lesson learned|it turns out|turns out)[:,]? (?:that )?" + _UNTIL),
    ("task", "any", _OPENS + r"(?:todo|to do|task|next step|next|follow[- ]up)[ \t]*:[ \t]*" + _UNTIL),
    ("task", "any", r"\b(?:left to do|still to do)[:,]? " + _UNTIL),
    # how a user says what to do and what not to
    ("decision", "user", r"\b(?:let'?s|we(?:'ll| will| should)|i(?:'ll| will)|i(?:'d| would)? (?:want|like|prefer) "
                         r"(?:to|you to|we)|"
                         r"please) (?P<s>" + _SAY + r" [^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("decision", "user", r"\b(?:go|going) with " + _UNTIL),
    ("decision", "user", r"\b(?:i|we) want you to " + _UNTIL),
    ("decision", "user", r"\b(?:i|we) want (?P<s>(?:my|the|a|an|this|it|them|all|real|full|only) [^\n]+?)"
                         r"(?=[.!?](?:\s|$)|$)"),
    ("decision", "user", r"\b(?:i|we) want to (?P<s>(?:update|change|remove|switch|use|reuse|move|keep|have|make|"
                         r"drop|replace|add) "
                         r"[^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("decision", "user", r"\b(?:can|could|would) you (?:please )?(?P<s>" + _BUILD + r" [^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("decision", "user", r"\b(?P<s>use [^\n.!?]{2,80}? instead of [^\n]+?)(?=[.!?](?:\s|$)|$)"),
    # "make sure it builds" asks for a check, not a choice
    ("decision", "typed", r"\b(?:make sure|ensure|be sure to)(?: that)? (?![^\n.!?]*\b(?:builds?|build is|passe[sd]|"
                          r"passing|works|working|compiles?|green)\b)" + _UNTIL),
    ("decision", "typed", r"\b(?:it would be|it'?d be) (?:great|nice|good|better|ideal|awesome) if "
                          r"(?:you could |we could )?" + _UNTIL),
    ("decision", "typed", r"\bi(?:'d| would) love (?:it )?(?:if )?(?:you (?:could|to) |to (?:have|see) )" + _UNTIL),
    ("decision", "typed", r"\b(?:sicherstellen|sicher gehen),? dass " + _UNTIL),
    ("decision", "user", r"帮我(?P<s>(?:补充|添加|增加|加上|实现|改成|换成|改为|使用|去掉|删除)[^\n。？！]{2,200})"),
    ("decision", "user", r"\bwir (?:nehmen|verwenden|nutzen|bleiben bei) " + _UNTIL),
    ("decision", "user", r"\b(?:on|tu) (?P<s>(?:garde|supprime|annule|utilise|remplace|rebascule|reste|part|passe|"
                         r"ajoute|enlève|retire|commit)s?\b[^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("decision", "user", r"\bpeux[- ]tu (?:faire en sorte (?:que|qu')|)(?P<s>[^\n?]{8,200})"),
    ("decision", "user", r"\b(?:kannst|könntest) du (?:bitte )?(?P<s>[^\n.!?]{4,200}?\b(?:implementieren|einbauen|"
                         r"hinzufügen|ergänzen|ändern|umbauen|umstellen|bauen|entfernen|löschen|verwenden|nutzen|geben))\b"),
    ("decision", "user", r"\bbitte (?P<s>(?:implementiere|baue|ändere|entferne|lösche|nutze|verwende|nimm|stelle|füge|"
                         r"ergänze)\b[^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("rejection", "user", _OPENS + r"(?:please )?(?:don'?t|do not|never|stop|avoid|no need to) " + _UNTIL),
    ("rejection", "user", _OPENS + r"no (?:new|more|extra|other) " + _UNTIL),
    ("rejection", "user", r"\b(?:i'?d )?rather not " + _UNTIL),
    ("rejection", "user", r"\bi'?d rather (?P<s>(?:it|we|you) (?:did ?n[o']?t|not) [^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("rejection", "user", r"\b(?P<s>(?:we|you) (?:don'?t|do not|won'?t) need [^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("rejection", "user", r"\bi (?:don'?t|do not) think (?P<s>we need [^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("rejection", "user", r"(?P<s>(?:没有必要|不需要)[^\n。？！]{2,200})"),
    ("rejection", "user", r"\bi (?:do ?n[o']?t|dont) (?:want|wanna|need)(?: to)? (?P<s>(?:use|have|keep|see|add) "
                          r"[^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("decision", "user", _OPENS + r"(?:let'?s |please |just |only )?(?P<s>focus (?:only )?on [^\n]+?)"
                         r"(?=[.!?](?:\s|$)|$)"),
    ("rejection", "user", r"\b(?:nicht|keine?n?) (?=[^.!?\n]{0,60}\b(?:verwenden|nutzen|laden|machen|einbauen)\b)"
                          + _UNTIL),
    # how an agent says what it chose, found or left to do
    ("decision", "assistant", r"\bi(?:'ll| will|'m going to) (?:use|go with|switch to|keep) "
                              r"(?P<s>[^\n.!?]+? instead of [^\n]+?)(?=[.!?](?:\s|$)|$)"),
    ("decision", "assistant", r"\b(?:i|we) (?:chose|picked|went with|switched to|opted for) " + _UNTIL),
    ("lesson", "assistant", r"\b(?:the )?root cause(?: was| is|:) " + _UNTIL),
    ("lesson", "assistant", r"\bthe (?:fix|solution) (?:was|is)(?: to)?:? " + _UNTIL),
    ("lesson", "assistant", r"\bi (?:see|found) the (?:issue|problem|cause)[.:!]?[ \t]*\n?[ \t]*(?:[-*][ \t]*)?"
                            + _UNTIL),
    ("lesson", "assistant", r"(?:^|(?<=[.!?][ \t]))[ \t]*(?P<s>[^\n.!?]{12,200}?),? so i(?:'m| am|'ll| will) "
                            r"(?:switching|rerunning|retrying|falling back|using|doing|running) "),
    ("task", "assistant", r"\b(?:still need(?:s)? to|remaining:|will need to be done later:?) " + _UNTIL),
))
# Lessons said as a sentence whose verb comes late ("`rg` is not executable in this environment"):
# each pattern runs only on the sentence around a match of its trigger (a plain search over the
# text), so a long reply costs a pass per trigger, not a backtracking scan from every word.
CLAUSES: tuple[tuple[str, str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (kind, who, re.compile(trigger, re.I), re.compile(p, re.I)) for kind, who, trigger, p in (
        ("lesson", "assistant", r"\b(?:is not|isn'?t|are not|aren'?t) (?:supported|available|installed|executable|"
                                r"allowed)\b",
         r"(?P<s>\b[^\n.!?]{8,120}\b(?:is not|isn'?t|are not|aren'?t) "
         r"(?:supported|available|installed|executable|allowed) [^\n.!?]*)"),
        # a user's "X should be Y": how they want the project to be (not a question)
        ("decision", "user", r"\bshould (?:be|have|look|use|show|stay|support|always|never|only|also|not|work|keep|"
                             r"match)\b|\bsoll(?:te|test|ten|en)?\b|应该|必须",
         r"(?P<s>(?:^|(?<=[.!;:]\s))[^\n.!?;]{3,160}?(?:\bshould (?:be|have|look|use|show|stay|support|always|never|"
         r"only|also|not|work|keep|match)\b|\bsoll(?:te|test|ten|en)?\b|应该|必须)[^\n?？]{3,240}?)(?=[.!。](?:\s|$)|$)"),
        ("lesson", "assistant", r"\b(?:does not|doesn'?t|cannot|can'?t|won'?t) (?:support|accept|take|work with|run|"
                                r"resolve|load)\b",
         r"(?P<s>\b[^\n.!?]{8,120}\b(?:does not|doesn'?t|cannot|can'?t|won'?t) "
         r"(?:support|accept|take|work with|run|resolve|load) [^\n.!?]*)"),
        # an agent saying what it does in place of what: the choice it made ("... instead of Y")
        ("decision", "assistant", r"\b(?:instead of|rather than)\b",
         r"(?P<s>(?:^|(?<=[.!?:;]\s))[^\n.!?]{8,240}?\b(?:instead of|rather than)\b[^\n.!?]{3,200})"),
    ))
SENTENCE = 400  # characters around a trigger a clause pattern looks at
TYPED = 1500  # a user turn longer than this is read by the user clauses no more (pasted or a template)


def _sentences(text: str, trigger: re.Pattern[str]) -> list[str]:
    """The sentence around each match of `trigger` (at most SENTENCE characters of it)."""
    found = []
    for m in trigger.finditer(text):
        start = max(text.rfind(c, 0, m.start()) for c in ".!?\n") + 1
        ends = [i for i in (text.find(c, m.end()) for c in ".!?\n") if i >= 0]
        end = min(ends) if ends else len(text)
        found.append(text[max(start, m.start() - SENTENCE // 2): min(end, m.end() + SENTENCE // 2)])
    return found


# A user's short yes to what the agent offered: the offer becomes a decision.
_YES = re.compile(r"\s*(?:yes|yeah|yep|yup|ja|sure|ok(?:ay)?|please do|go ahead|do it|do that|sounds good|perfect|"
                  r"perfekt|let'?s do (?:it|that|this)|all of (?:the above|them|it)|(?:option )?\d{1,2}|all|both|oui|"
                  r"d'accord|vas-y|ça me (?:va|convient)|c'est (?:ok|bon|top|parfait))\b"
                  r"[^\n]{0,80}$|\s*(?:可以|好的?|行|没问题|同意|开始)[^\n]{0,40}$", re.I)
_OFFER = re.compile(r"(?:want me to|would you like (?:me )?to|should i|shall i|do you want (?:me )?to|"
                    r"i can (?:also )?(?:next )?)(?P<s>[^\n?]{4,300})\?"
                    r"|\bif you(?:'d like| want| like)?,? i (?:can|could) (?:also |next )?(?P<t>[^\n?.]{4,300})", re.I)
# What the agent suggests, when it asked nothing ("I'd suggest X." then "ok"): the last one counts.
_SUGGEST = re.compile(r"\bi(?:'d| would)? (?:suggest|recommend)(?: that)?(?: we)? (?P<s>[^\n?.]{8,300})"
                      r"|建议(?P<c>[^\n。？！（(*]{8,200})", re.I)
_ASKED = re.compile(r"(?:^|(?<=[.!:]\s)|(?<=[。！：]))(?P<s>[^\n?.!？。！]{8,300})[?？]")  # the agent's last question
# The agent asking leave to do something (to run a command, to reach the network): a yes is no decision.
_PERMISSION = re.compile(r"^\W*(?:may|can|could) i (?:run|execute|install|access|use the network)|network access",
                         re.I)
_OPTION = re.compile(r"^[ \t]*(?:[-*][ \t]*)?(?:\*\*)?(\d{1,2})[.)](?:\*\*)?[ \t]+(?P<s>[^\n]{4,300})$", re.M)
# Options offered by letter ("A) ...", "[C] Continue", a table's "| A | ... |") and a user's answer
# of one letter; "**Recommended:** Option B - ..." is what a yes accepts.
_LETTERED = re.compile(r"^[ \t]*(?:[-*][ \t]*)?(?:\*\*)?(?:\[(?P<a>[A-E])\]|(?P<b>[A-E])[).:])(?:\*\*)?[ \t]+"
                       r"(?P<s>[^\n]{2,300})$"
                       r"|^[ \t]*\|[ \t]*(?P<c>[A-E])[ \t]*\|[ \t]*(?P<t>[^|\n]{2,300}?)[ \t]*\|", re.M)
_LETTER = re.compile(r"\s*(?:option\s+)?(?P<o>[A-Ea-e])\s*[.)]?\s*$", re.I)
_RECOMMENDED = re.compile(r"\brecommended:?(?:\*\*)?:?[ \t]*option (?P<o>[A-E])\b[ \t]*[-—–:]?[ \t]*"
                          r"(?P<s>[^\n]{4,300})", re.I)
_GO_ON = re.compile(r"\s*(?:continue|continuer|proceed)\b", re.I)  # a menu's "go on": accepts what it proposed
_HEAD = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+(?P<h>[^\n]{4,200})|\*\*(?P<b>[^*\n]{4,200})\*\*:?)[ \t]*$", re.M)
_NUMBERED_ANSWERS = re.compile(r"\s*1[).][ \t]*\S[^\n]*?\b2[).][ \t]*\S", re.S)  # "1) B 2) enriched cache"
_NUMBERED_ANSWER = re.compile(r"(?:^|\s)(\d{1,2})[).][ \t]*(?P<s>.+?)(?=\s\d{1,2}[).]|$)", re.S)  # each of them
_ANSWER = re.compile(r'"(?P<q>[^"\n]{1,400})"="(?P<a>[^"\n]{1,600})"')
# A question that asks for a choice (not for a fact such as an address): its answer is a decision.
_CHOICE = re.compile(r"\b(?:which|how should|should|shall|prefer|want|approach|option|choose|wie soll|welche[snmr]?|"
                     r"sollen|soll ich)\b", re.I)
# A list of what is left to do: a heading such as "Next steps" and the items under it.
_NEXT = re.compile(r"^[ \t]*(?:#+[ \t]*|\*\*)?(?:next steps?|next|follow[- ]ups?|todo|to do|remaining(?: work)?|"
                   r"open items|nächste schritte)\b[^\n]{0,40}\n"
                   r"(?P<items>(?:[ \t]*(?:[-*]|\d{1,2}[.)])[ \t]+[^\n]+\n?)+)", re.I | re.M)
# What a user asks the project to be, as a list: "it should" / "Requirements:" and the items under it.
_WANTS = re.compile(r"^[^\n]{0,120}\b(?:should|must|needs? to|requirements?|we need|i want|i need|scope|constraints|"
                    r"rules|guidelines|conventions)\b[ \t:]*\n"
                    r"(?P<items>(?:[ \t]*(?:[-*]|\d{1,2}[.)])[ \t]+[^\n]+\n?)+)", re.I | re.M)
_ITEM = re.compile(r"^[ \t]*(?:[-*]|\d{1,2}[.)])[ \t]+(?P<s>[^\n]+)$", re.M)
_PROPOSED = re.compile(r"<proposed_plan>\s*(?P<plan>.{1,20000}?)\s*(?:</proposed_plan>|$)", re.S)  # Codex plan mode
_IMPLEMENT = re.compile(r"\s*(?:implement (?:the|this) plan|(?:yes|ok(?:ay)?|sure|go ahead|looks good|lgtm)\b)"
                        r"[^\n]{0,80}$", re.I)
_TEMPLATE = re.compile(r"\[[a-z][a-z ]{2,40}\]|\{[a-z_][a-z_ ]{1,40}\}|\$ARGUMENTS")  # a prompt template's blanks


class Turn(NamedTuple):
    line: int
    role: str  # user, assistant, tool (a tool's result), summary
    text: str
    tools: tuple[tuple[str, dict], ...] = ()  # (name, input) of each tool the assistant called
    side: bool = False  # a subagent's line (Claude Code `isSidechain`): its prompt is not the user's ask


class Statement(NamedTuple):
    kind: str  # decision, rejection, lesson, task
    text: str
    line: int  # the transcript line it was said on (0: not known, e.g. a note-taker's)


class Digest(NamedTuple):
    asked: list[str]
    files: list[str]
    commands: list[str]
    outcome: str
    statements: list[Statement]


# Text the harness put in a user turn, not what the user typed: slash-command echoes, hook output,
# notifications, skill bodies, compaction summaries, instructions files (Claude Code and Codex).
HARNESS = ("<command-name>", "<command-message>", "<command-args>", "<local-command-", "Caveat:",
           "<system-reminder>", "<task-notification>", "<user-prompt-submit-hook>", "Stop hook feedback",
           "[Request interrupted", "This session is being continued", "Base directory for this skill",
           "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<ide_opened_file>", "<ide_selection>",
           "<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
           "<turn_aborted>", "<user_action>", "<permissions instructions>", "<hook", "Hook ", "<subagent",
           "<post-tool-use-hook>", "<session-start-hook>", "<collaboration_mode>")
_INJECTED = ("system-reminder", "user-prompt-submit-hook")  # blocks the harness puts inside a user turn


def _without_injected(text: str) -> str:
    """`text` without the harness's `<system-reminder>...</system-reminder>` (and hook) blocks, in
    one pass (a regex's lazy scan to a closing tag that never comes would cost a pass per opening)."""
    for tag in _INJECTED:
        opening, closing = f"<{tag}>", f"</{tag}>"
        if opening not in text:
            continue
        parts, at = [], 0
        while (start := text.find(opening, at)) >= 0:
            end = text.find(closing, start + len(opening))
            if end < 0:
                break  # never closed: the rest is kept as it is
            parts.append(text[at:start])
            at = end + len(closing)
            while at < len(text) and text[at].isspace():
                at += 1
        text = "".join(parts) + text[at:]
    return text


def harness_text(text: str) -> bool:
    """Whether a user turn's text is the harness's, not typed by the user (see HARNESS), or an
    agent persona's activation (BMAD's `<agent-activation>`)."""
    return text.lstrip().startswith(HARNESS) or "<agent-activation" in text[:2000]


# A prompt template a slash command expanded into the user's turn (spec-kit, and the Codex custom
# prompts built on it): what the user typed after the command is the fenced "User Input" block.
_TEMPLATE_INPUT = re.compile(r"\s*## User Input\s*\n\s*```[a-z]*\n(?P<typed>.*?)\n?```", re.S)


def own_words(text: str) -> str:
    """A user turn's text as the user typed it: a prompt template's own text left out."""
    m = _TEMPLATE_INPUT.match(text)
    return m["typed"].strip() if m else text


_ITEMS = ("message", "function_call", "custom_tool_call", "function_call_output", "reasoning", "local_shell_call")


def _legacy_header(obj: dict) -> bool:
    """The first line of a Codex rollout older than session_meta: the session's id and time."""
    return "type" not in obj and "instructions" in obj and isinstance(obj.get("id"), str)


def detect(first: dict) -> str:
    codex = first.get("type") in ("session_meta", "turn_context", "response_item", "event_msg")
    return "codex" if codex or _legacy_header(first) or "record_type" in first else "claude-code"


def session_of(obj: dict) -> str | None:
    """The session id a line names, if any (Claude Code `sessionId`, Codex session_meta `id`)."""
    session = obj.get("sessionId")
    if isinstance(session, str):
        return session
    payload = obj.get("payload")
    if obj.get("type") == "session_meta" and isinstance(payload, dict):
        session = payload.get("id")
        if isinstance(session, str):
            return session
    return obj["id"] if _legacy_header(obj) else None


def turns(obj: object, fmt: str, number: int) -> list[Turn] | None:
    """The turns one parsed line holds; None for a line of no known shape (counted as skipped)."""
    if not isinstance(obj, dict):
        return None
    return _claude(obj, number) if fmt == "claude-code" else _codex(obj, number)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _claude(obj: dict, n: int) -> list[Turn] | None:
    kind = obj.get("type")
    if kind == "summary":
        return [Turn(n, "summary", obj["summary"])] if isinstance(obj.get("summary"), str) else []
    if kind in ("system", "file-history-snapshot", "progress", "queue-operation"):
        return []
    message = obj.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    if obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
        return []  # text the harness injected (a skill's body, a compaction summary), not the user's
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    tools = tuple((b["name"], b["input"]) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
                  and isinstance(b.get("name"), str) and isinstance(b.get("input"), dict))
    results = [_text(b.get("content")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    side = obj.get("isSidechain") is True
    out = []
    text = _without_injected(_text(content)) if kind == "user" else _text(content)
    if text or tools:
        out.append(Turn(n, "assistant" if kind == "assistant" else "user", text, tools, side))
    out += [Turn(n, "tool", r, (), side) for r in results if r]
    return out


def _codex(obj: dict, n: int) -> list[Turn] | None:
    kind, payload = obj.get("type"), obj.get("payload")
    if kind in _ITEMS and "payload" not in obj:
        kind, payload = "response_item", obj  # an older rollout's bare item
    elif _legacy_header(obj) or ("record_type" in obj and "type" not in obj):
        return []
    if kind == "event_msg" and isinstance(payload, dict) and payload.get("type") == "user_message":
        said = payload.get("message")  # what the user typed (some rollouts keep the prompt only here)
        return [Turn(n, "user", said)] if isinstance(said, str) else []
    if kind in ("session_meta", "turn_context", "event_msg", "compacted"):
        return []
    if kind != "response_item" or not isinstance(payload, dict):
        return None
    if payload.get("type") == "message" and payload.get("role") in ("user", "assistant"):
        return [Turn(n, payload["role"], _text(payload.get("content")))]
    if payload.get("type") in ("function_call", "custom_tool_call") and isinstance(payload.get("name"), str):
        raw = payload.get("arguments", payload.get("input", ""))
        try:
            args = json.loads(raw) if isinstance(raw, str) and raw.startswith("{") else {"input": raw}
        except (ValueError, RecursionError):
            args = {"input": raw}
        return [Turn(n, "assistant", "", ((payload["name"], args if isinstance(args, dict) else {}),))]
    if payload.get("type") == "function_call_output":
        out = payload.get("output")
        return [Turn(n, "tool", out if isinstance(out, str) else "")]
    return []


class Notes:
    """The stenographer's notes, taken turn by turn, so a transcript of any length is read in
    bounded memory: a few prompts, files and commands, the last outcome, and every statement.

    A user turn that is the harness's text (`harness_text`) is never an ask and holds no
    statement; the assistant's replies to one (a background task's notification, hook feedback)
    until the user's next prompt are not the session's outcome."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.files: dict[str, None] = {}
        self.commands: dict[str, None] = {}
        self.outcome = ""
        self.statements: dict[tuple[str, str], int] = {}  # (kind, text) -> the line first said on
        self.turns = 0
        self._aside = False  # the last user turn was the harness's: replies to it are not the outcome
        self.said: list[tuple[int, str, str]] = []  # (line, who, text) for a model note-taker, SAID_CHARS at most
        self._said_chars = 0
        self._offer = ""  # the agent's last words: what a user's short yes accepts
        self._plan = ""  # the last plan the agent put up for approval
        self._questions: dict[str, tuple[str, bool]] = {}  # Codex request_user_input: id -> (question, has options)

    def add(self, t: Turn) -> None:
        self.turns += 1
        if t.role == "user":
            t = t._replace(text=own_words(t.text))
        harness = t.role == "user" and harness_text(t.text)
        if t.role == "user" and not t.side and t.text.strip():
            self._aside = harness
            ask = collapsed(t.text)
            if not self._aside and len(self.asked) < MAX_PROMPTS and not any(_same(ask, a) for a in self.asked):
                self.asked.append(ask)
        if t.role == "assistant" and not t.side and t.text.strip() and not self._aside:
            self.outcome = collapsed(t.text)
        for name, args in t.tools:
            _tool(name, args, self.files, self.commands)
            if name == "ExitPlanMode" and isinstance(args.get("plan"), str):
                self._plan = args["plan"]
            if name == "request_user_input":
                self._questions = _questions(args)
        if t.role == "tool":
            self._answered(t)
        if (t.role == "assistant" or (t.role == "user" and not harness)) and t.text.strip():
            self._keep(t.line, ("subagent" if t.side else t.role), t.text)
        if t.role == "user" and not harness and not t.side:
            self._accepted(t)
        if t.role == "assistant" or (t.role == "user" and not harness):
            self._rules(t)
        if t.role == "assistant" and t.text.strip():
            for m in _NEXT.finditer(t.text):
                for item in _ITEM.finditer(m["items"]):
                    self._say("task", item["s"], t.line)
            self._offer = t.text
            plan = _PROPOSED.search(t.text)  # Codex plan mode puts its plan up in the reply itself
            self._plan = plan["plan"] if plan else self._plan

    def _rules(self, t: Turn) -> None:
        text = t.text.replace("\u2019", "'")  # a typographic apostrophe, as agents write "isn’t"
        typed = t.role == "user" and len(text) <= TYPED
        for m in _WANTS.finditer(text) if typed else ():
            for item in _ITEM.finditer(m["items"]):
                self._say("decision", item["s"], t.line)
        for kind, who, pattern in RULES:
            if who in ("any", t.role) or (who == "typed" and typed):
                for m in pattern.finditer(text):
                    self._say(kind, m.group("s"), t.line)
        for kind, who, trigger, pattern in CLAUSES:
            if who == "user" and len(text) > TYPED:
                continue  # a prompt template's "each phase should be ..." is not the user's wish
            if who in ("any", t.role):
                for sentence in _sentences(text, trigger):
                    for m in pattern.finditer(sentence):
                        if not m.group("s").endswith(("吗", "呢")):  # a question without its mark
                            self._say(kind, m.group("s"), t.line)

    def _say(self, kind: str, text: str, line: int) -> None:
        said = collapsed(text).strip(" .;:*`")
        if len(said) >= 8 and len(self.statements) < MAX_STATEMENTS and not _TEMPLATE.search(said):
            self.statements.setdefault((kind, said), line)

    def _keep(self, line: int, who: str, text: str) -> None:
        if self._said_chars < SAID_CHARS:
            self.said.append((line, who, text[:SAID_TURN]))
            self._said_chars += min(len(text), SAID_TURN)

    def _answered(self, t: Turn) -> None:
        """A user's answers to the agent's questions (Claude Code AskUserQuestion) and a plan they
        approved (ExitPlanMode) come back as tool results: each is a decision."""
        text = t.text.lstrip()[:ANSWER_CHARS]  # the harness's answer is short; any other text is cut
        if text.startswith(("User has answered your question", "User has approved your plan")):
            self._keep(t.line, "user (answer)", text + (f"\nThe plan: {self._plan}" if "approved" in text[:30] else ""))
        if text.startswith("User has answered your question"):
            for m in _ANSWER.finditer(text):
                if _CHOICE.search(m["q"]):
                    self._say("decision", f"{m['q'].rstrip('?')}: {m['a']}", t.line)
        elif text.startswith("User has approved your plan") and self._plan:
            self._approved(t.line)
        elif text.startswith('{"answers"') and self._questions:
            self._user_answers(t)

    def _approved(self, line: int) -> None:
        head = next((row.strip("# *") for row in self._plan.splitlines() if row.strip("# *")), "")
        self._say("decision", f"approved plan: {head}", line)

    def _user_answers(self, t: Turn) -> None:
        """The answers to Codex's request_user_input: each option picked for a question that offered
        options is a decision ("question: option"); a note the user typed is read as what they said."""
        try:
            data = json.loads(t.text[:ANSWER_CHARS])
        except (ValueError, RecursionError):
            return
        answers = data.get("answers") if isinstance(data, dict) else None
        for key, value in answers.items() if isinstance(answers, dict) else ():
            question, options = self._questions.get(key, (str(key).replace("_", " "), False))
            picked = value.get("answers") if isinstance(value, dict) else None
            for answer in picked if isinstance(picked, list) else []:
                if not isinstance(answer, str):
                    continue
                if answer.startswith("user_note:"):
                    note = answer.removeprefix("user_note:").strip()
                    self._keep(t.line, "user (answer)", f"{question} {note}")
                    self._rules(Turn(t.line, "user", note))
                    self._say("decision", f"{question.rstrip('?')}: {note}", t.line)
                else:
                    self._keep(t.line, "user (answer)", f"{question} {answer}")
                    if options:
                        picked_one = answer.removesuffix(" (Recommended)")
                        self._say("decision", f"{question.rstrip('?')}: {picked_one}", t.line)

    def _accepted(self, t: Turn) -> None:
        """A short yes (or an option's number) to what the agent just offered: what it offered."""
        if self._plan and _PROPOSED.search(self._offer) and _IMPLEMENT.match(t.text):
            self._approved(t.line)
            return
        if self._offer and len(t.text) <= 300 and self._picked(t):
            return
        if not self._offer or len(t.text) > 120 or not _YES.match(t.text):
            return
        picked = re.match(r"\s*(?:option )?(\d{1,2})\b", t.text, re.I)
        options = {m[1]: m["s"] for m in _OPTION.finditer(self._offer[-4000:])}
        if picked and picked[1] in options:
            self._say("decision", options[picked[1]], t.line)
            return
        offers = [o for m in _OFFER.finditer(self._offer[-4000:]) if not _PERMISSION.search(o := m["s"] or m["t"])]
        asked = [m["s"] for m in _ASKED.finditer(self._offer[-600:]) if not _PERMISSION.search(m["s"])]
        if offers:
            self._say("decision", offers[-1], t.line)
        elif asked and not options:  # yes to whatever the agent last asked
            self._say("decision", asked[-1], t.line)
        elif suggested := [m["s"] or m["c"] for m in _SUGGEST.finditer(self._offer[-4000:])]:
            self._say("decision", suggested[-1], t.line)
        elif options and "?" in self._offer[-300:] and re.match(r"\s*(?:yes|ja|all|both|sure|ok)", t.text, re.I):
            self._say("decision", "; ".join(options.values()), t.line)

    def _picked(self, t: Turn) -> bool:
        """An answer by letter to options the agent offered by letter ("A", "[C] Continue", a yes to
        its "Recommended: Option B"), or numbered answers to its numbered questions ("1) B 2) X")."""
        offer = self._offer[-4000:]
        letters = {(m["a"] or m["b"] or m["c"]): (m["s"] or m["t"]).strip() for m in _LETTERED.finditer(offer)}
        letter = _LETTER.match(t.text)
        yes = re.match(r"\s*(?:yes|recommended|ok|oui|ja)\b", t.text, re.I)
        recommended = _RECOMMENDED.search(offer) if yes else None
        if letter and letter["o"].upper() in letters:
            chosen = letters[letter["o"].upper()]
        elif recommended:
            chosen = letters.get(recommended["o"].upper(), recommended["s"])
        elif _NUMBERED_ANSWERS.match(t.text):
            questions = {m[1]: m["s"] for m in _OPTION.finditer(offer)}
            for m in _NUMBERED_ANSWER.finditer(t.text):
                answer = m["s"].strip(" .;")
                question = questions.get(m[1], "").split("?")[0].strip(" *")
                self._say("decision", f"{question}: {answer}" if question and len(answer) < 40 else answer, t.line)
            return True
        else:
            return False
        if _GO_ON.match(chosen):  # "[C] Continue": what the agent proposed is accepted
            heads = [m["h"] or m["b"] for m in _HEAD.finditer(offer)]
            chosen = f"accepted: {heads[0].strip(' *:')}" if heads else f"accepted: {collapsed(offer)[:160]}"
        self._say("decision", chosen, t.line)
        return True

    def digest(self) -> Digest:
        return Digest(self.asked, [safe(f) for f in list(self.files)[:MAX_ITEMS]], list(self.commands)[:MAX_ITEMS],
                      self.outcome, [Statement(k, text, line) for (k, text), line in self.statements.items()])


def _questions(args: dict) -> dict[str, tuple[str, bool]]:
    """Codex request_user_input's questions: id -> (question, whether it offered options)."""
    found = {}
    asked = args.get("questions")
    for q in asked if isinstance(asked, list) else []:
        if isinstance(q, dict) and isinstance(q.get("id"), str) and isinstance(q.get("question"), str):
            found[q["id"]] = (q["question"], bool(q.get("options")))
    return found


def _same(a: str, b: str) -> bool:
    """The same prompt twice (Codex keeps it as a message and as an event, one sometimes longer)."""
    return a[:200].startswith(b[:200]) or b[:200].startswith(a[:200])


def digest(all_turns: list[Turn]) -> Digest:
    """What the stenographer keeps of a stretch of turns (see the module's rules)."""
    notes = Notes()
    for t in all_turns:
        notes.add(t)
    return notes.digest()


def _tool(name: str, args: dict, files: dict, commands: dict) -> None:
    for key in ("file_path", "path", "notebook_path"):
        if isinstance(args.get(key), str) and len(files) < MAX_ITEMS:
            files.setdefault(args[key], None)
    command = args.get("command", args.get("cmd"))  # Codex exec_command: `cmd`
    if isinstance(command, list):  # Codex shell: ["bash", "-lc", "the command"]
        shell = command[:2] in (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"], ["zsh", "-lc"]) and len(command) > 2
        command = " ".join(str(c) for c in (command[2:] if shell else command))
    if name in ("Bash", "shell", "shell_command", "exec_command", "local_shell") and isinstance(command, str) \
            and len(commands) < MAX_ITEMS and not _LOOKS.match(command):
        commands.setdefault(collapsed(command), None)
    patch = args.get("input")
    if name == "apply_patch" and isinstance(patch, str):
        for m in re.finditer(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", patch, re.MULTILINE):
            if len(files) < MAX_ITEMS:
                files.setdefault(m.group(1).strip(), None)


# Commands that only look (read a file, list, search, show state): not worth a line of the digest.
_LOOKS = re.compile(r"\s*(?:cd [^;&|]+(?:&&|;)\s*)?(?:ls|cat|head|tail|sed -n|nl|rg|grep|find|wc|pwd|date|file|which|"
                    r"echo|tree|stat|du|df|env|printenv|git (?:status|diff|log|show|branch|remote -v|rev-parse))"
                    r"(?:\s|$)(?![^|]*\|\s*(?:sh|bash|python3?)\b)(?![^>]*>)")


def collapsed(text: str) -> str:
    """`text` on one line, made safe, its first RAW characters: what the notes keep. It is cut to
    what a memory shows (`cut`) only after redaction, so a secret is never cut short of its rule."""
    return safe(" ".join(text[: RAW * 2].split()))[:RAW]


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_UNSAFE = re.compile(f"[\ud800-\udfff{UNSAFE_TO_DISPLAY.pattern[1:-1]}]")


def safe(text: str) -> str:
    """`text` with what a memory's title or a commit cannot hold replaced by U+FFFD: control and
    direction-changing characters, and halves of a surrogate pair (a JSON `\\ud800` escape)."""
    return _UNSAFE.sub("\ufffd", text)
