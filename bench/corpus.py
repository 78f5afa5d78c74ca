"""A labelled corpus of agent memories for bench/retrieval.py, generated from templates.

Memories look like what an agent keeps: session transcripts, decisions with reasons,
meeting notes, people and vendor pages, task lists, lessons learned, personal notes,
and a few in Chinese or Japanese. Filler prose comes from templates filled with
Zipf-weighted words, so a few words are everywhere and most are rare, and verbs and
nouns appear in several inflections (host, hosts, hosted, hosting).

Each memory states 1-4 facts: a rare detail (a port, a city, a version, a pet's name)
about a subject. No two memories state a fact of the same kind about the same subject,
so every question has one right answer. Facts mostly sit deep in the body and appear
once, among many memories that share the project names and the common words.
A question asks about a fact in other words (another inflection, a synonym, question
and stop words), or now and then with the fact's own rare words.
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import NamedTuple

import corpus_data as W

EXACT_SHARE = 0.15  # of the questions, those that use the fact's own rare words
PREFIXES = ["", "", "", "", "remind me, ", "quick question: ", "do you remember ", "hey, ", "I forgot: "]
SUFFIXES = ["", "", "", " again?", " — can you check?", " (need it for the standup)"]


@dataclass(frozen=True)
class Fact:
    kind: str
    topic: str  # what the memory is about, when this fact leads it
    statement: str
    asks: tuple[str, ...]  # questions in other words
    exact: str  # a question with the fact's own rare words


@dataclass(frozen=True)
class Memory:
    name: str  # tier-relative, without .md, as search hits name it
    title: str
    tags: tuple[str, ...]
    type: str
    body: str
    day: int  # its last change, in days before 'now'
    facts: tuple[Fact, ...]
    cjk: bool

    @property
    def text(self) -> str:
        """The Markdown file."""
        head = json.dumps(self.title, ensure_ascii=False)  # a title may hold ': ', which YAML would misread
        front = f"title: {head}\ntags: [{', '.join(self.tags)}]\ntype: {self.type}"
        return f"---\n{front}\n---\n# {self.title}\n\n{self.body}"

    @property
    def searchable(self) -> str:
        """Title, tags and body: what a reference search engine indexes."""
        return f"{self.title}\n{' '.join(self.tags)}\n{self.body}"


@dataclass(frozen=True)
class Question:
    text: str
    answer: str  # the name of the one memory that answers it
    style: str  # paraphrase, exact or cjk


# -- words: Zipf sampling and inflection ------------------------------------------------------

class Zipf:
    """Items drawn with Zipf-Mandelbrot weights 1/(rank + 2.7), as word counts in real text fall
    off: the first few are everywhere (no one word in more than a tenth of the draws), the tail is rare."""

    def __init__(self, items: list[str]) -> None:
        self.items = items
        self.cum = list(accumulate(1 / (r + 2.7) for r in range(len(items))))

    def __call__(self, rng: random.Random) -> str:
        return rng.choices(self.items, cum_weights=self.cum)[0]


DOUBLED = {"ship", "pin", "plan", "tag", "drop", "stop", "map", "scan", "skip", "trim", "debug"}


def verb(lemma: str, form: str) -> str:
    """`form` (s, ed, ing, cap or '') of a regular verb."""
    stem = lemma + lemma[-1] if lemma in DOUBLED and form in ("ed", "ing") else lemma
    if form == "s":
        return plural(lemma)
    if form == "ed":
        return stem[:-1] + "ied" if _consonant_y(stem) else stem + ("d" if stem.endswith("e") else "ed")
    if form == "ing":
        return (stem[:-1] if stem.endswith("e") and not stem.endswith("ee") else stem) + "ing"
    return lemma.capitalize() if form == "cap" else lemma


UNCOUNTABLE = {"data", "feedback", "throughput", "latency"}


def plural(word: str) -> str:
    if word in UNCOUNTABLE:
        return word
    if _consonant_y(word):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _consonant_y(word: str) -> bool:
    return word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou"


def other_number(phrase: str, rng: random.Random) -> str:
    """Half the time, the phrase with its last word's number flipped (service <-> services):
    how a question rarely repeats the exact inflection the memory used."""
    if rng.random() < 0.5:
        return phrase
    head, _, last = phrase.rpartition(" ")
    if not last.isalpha() or last[0].isupper():
        return phrase
    flipped = last[:-1] if last.endswith("s") and not last.endswith("ss") else plural(last)
    return f"{head} {flipped}".strip()


_SLOT = re.compile(r"\{(\w+)(?::(\w+))?\}")


def fill(template: str, pick: Callable[[str, str], str]) -> str:
    return _SLOT.sub(lambda m: pick(m.group(1), m.group(2) or ""), template)


class Filler:
    """Filler prose about one project (or person), its words Zipf-distributed across the corpus."""

    samplers = {"noun": Zipf(W.NOUNS), "verb": Zipf(W.VERBS), "adj": Zipf(W.ADJECTIVES),
                "first": Zipf([p.split()[0] for p in W.PEOPLE]), "component": Zipf(W.COMPONENTS),
                "tool": Zipf(W.TOOLS), "project": Zipf(W.PROJECTS)}

    def __init__(self, rng: random.Random, own: dict[str, str], lang: str = "en") -> None:
        self.rng, self.own, self.lang = rng, own, lang  # own: slot -> the memory's subject, named more often

    def pick(self, slot: str, form: str) -> str:
        rng = self.rng
        if slot in self.own and rng.random() < 0.6:
            return self.own[slot]
        if slot in self.samplers:
            word = self.samplers[slot](rng)
            return verb(word, form) if slot == "verb" else plural(word) if form == "s" else word
        simple = {"num": lambda: str(rng.randint(2, 400)), "host": lambda: hostname(rng),
                  "city": lambda: rng.choice(W.CITIES), "weekday": lambda: rng.choice(W.WEEKDAYS),
                  "period": lambda: rng.choice(W.PERIODS),
                  "ordinal": lambda: rng.choice(W.ORDINALS), "milestone": lambda: rng.choice(W.MILESTONES)}
        return simple[slot]()

    def sentence(self, pool: list[str]) -> str:
        text = re.sub(r"\b([Aa]) (?=[aeiou])", r"\1n ", fill(self.rng.choice(pool), self.pick))
        return text[0].upper() + text[1:]

    def paragraph(self, pool: list[str]) -> str:
        return " ".join(self.sentence(pool) for _ in range(self.rng.randint(2, 6)))


def hostname(rng: random.Random) -> str:
    return f"{rng.choice(W.HOSTS)}-{rng.randint(1, 12):02d}"


# -- facts ------------------------------------------------------------------------------------

def values(rng: random.Random, ctx: dict[str, str], day_stamp: int) -> dict[str, str]:
    """One draw of every slot a fact can use; the memory's own project or person win."""
    person = ctx.get("person") or rng.choice(W.PEOPLE)
    tool, tool2 = rng.sample(W.TOOLS, 2)
    provider, region = rng.choice(W.PROVIDERS)
    before = rng.randint(180, 2400)
    lang, lang2 = rng.sample(W.LANGUAGES, 2)
    team, team2 = rng.sample(W.TEAMS, 2)
    book, author, idea = rng.choice(W.BOOKS)
    lesson, lesson_q, lesson_e = rng.choice(W.LESSONS)
    pref, pref_q = rng.choice(W.PREFERENCES)
    when = time.gmtime(day_stamp + rng.randint(-60, 120) * 86400)
    v = {"project": ctx.get("project") or rng.choice(W.PROJECTS), "person": person, "first": person.split()[0],
         "component": rng.choice(W.COMPONENTS), "port": str(rng.randint(1025, 65000)), "tool": tool, "tool2": tool2,
         "provider": provider, "region": region, "lib": rng.choice(W.LIBS), "reason": rng.choice(W.REASONS),
         "version": f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}", "change": rng.choice(W.CHANGES),
         "before": str(before), "after": str(before * rng.randint(8, 60) // 100),
         "date": f"{when.tm_mday} {W.MONTHS[when.tm_mon - 1]}", "mon": str(when.tm_mon), "day": str(when.tm_mday),
         "cause": rng.choice(W.CAUSES), "milestone": rng.choice(W.MILESTONES),
         "vendor": ctx.get("vendor") or rng.choice(W.VENDORS), "amount": f"{rng.randint(3, 95) * 40:,}",
         "currency": rng.choice(["EUR", "USD"]), "host": hostname(rng), "city": rng.choice(W.CITIES),
         "hour": str(rng.randint(7, 11)), "pref": pref, "animal": rng.choice(W.ANIMALS), "pet": rng.choice(W.PETS),
         "lang": lang, "lang2": lang2, "team": team, "team2": team2, "month": rng.choice(W.MONTHS),
         "bakery": rng.choice(W.BAKERIES), "channel": rng.choice(W.CHANNELS),
         "flight": f"{rng.choice(['TP', 'KL', 'SK', 'LH', 'FR'])}{rng.randint(100, 9999)}",
         "clock": f"{rng.randint(5, 22):02d}:{rng.choice(['05', '20', '35', '50'])}", "airport": rng.choice(W.AIRPORTS),
         "seat": f"{rng.randint(2, 34)}{rng.choice('ACDF')}", "book": book, "author": author,
         "author_last": author.split()[-1], "idea": idea, "appliance": rng.choice(W.APPLIANCES),
         "serial": f"{rng.choice(['SN', 'X', 'BX'])}{rng.randint(10000, 99999)}{rng.choice('KQRZ')}",
         "shop": rng.choice(W.SHOPS), "lesson": lesson, "lesson_q": lesson_q, "lesson_e": lesson_e,
         "zh_name": rng.choice(W.ZH_NAMES), "zh_city": rng.choice(W.ZH_CITIES),
         "ja_name": ctx.get("ja_name") or rng.choice(W.JA_NAMES), "ja_city": rng.choice(W.JA_CITIES),
         "ja_hobby": rng.choice(W.JA_HOBBIES)}
    v["flag"] = f"{v['project']}-{v['component'].split()[0]}-{rng.choice(['v2', 'beta', 'next', 'rollout'])}"
    v["pref_q"] = pref_q.format(first=v["first"])
    return v


def fact(rng: random.Random, kind: str, v: dict[str, str]) -> Fact:
    k = W.KINDS[kind]

    def pick(slot: str, form: str) -> str:
        word = v[slot]
        return verb(word, form) if slot == "change" else other_number(word, rng) if form == "q" else word

    said = fill(rng.choice(k.says), pick)
    asks = tuple(fill(a, pick) for a in k.asks)
    return Fact(kind, v[k.key[-1]], said[0].upper() + said[1:], asks, fill(k.exact, pick))


class Facts:
    """Draws facts no other memory states (same kind, same subject), so each answer is unique."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set()

    def draw(self, scopes: tuple[str, ...], ctx: dict[str, str], day_stamp: int, count: int) -> list[Fact]:
        out: list[Fact] = []
        for _ in range(count * 8):
            if len(out) == count:
                break
            scope = self.rng.choice(scopes)  # a lesson page states lessons as often as anything else
            name = self.rng.choice([name for name, k in W.KINDS.items() if k.scope == scope])
            v = values(self.rng, ctx, day_stamp)
            key = (name, *(v[s] for s in W.KINDS[name].key))
            if key not in self.used:
                self.used.add(key)
                out.append(fact(self.rng, name, v))
        return out


# -- memories ---------------------------------------------------------------------------------

class Shape(NamedTuple):
    """A kind of memory: where it lives, its type, the facts it states and its sections."""

    folder: str
    type: str
    scopes: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]  # (heading, style); see block()
    weight: float


SHAPES: dict[str, Shape] = {
    "session": Shape("projects/{project}/sessions", "note", ("project",),
                     (("", "dialogue"), ("Summary", "prose"), ("Follow-ups", "tasks")), 0.26),
    "decision": Shape("projects/{project}/decisions", "decision", ("project",),
                      (("Context", "prose"), ("Options", "bullets"), ("Decision", "prose"),
                       ("Consequences", "bullets")), 0.14),
    "meeting": Shape("notes/meetings", "note", ("project", "person"),
                     (("Agenda", "bullets"), ("Notes", "bullets"), ("Action items", "tasks")), 0.13),
    "person": Shape("entities/people", "entity", ("person",),
                    (("Role", "prose"), ("Working with {first}", "bullets"), ("Log", "log")), 0.09),
    "vendor": Shape("entities/vendors", "entity", ("vendor", "project"),
                    (("What they do", "prose"), ("Contacts", "bullets"), ("History", "log")), 0.04),
    "task": Shape("gtd", "task", ("project",),
                  (("Next actions", "tasks"), ("Waiting for", "tasks"), ("Notes", "prose")), 0.09),
    "lesson": Shape("notes/lessons", "lesson", ("lesson", "project"),
                    (("What happened", "prose"), ("Why", "prose"), ("Lesson", "bullets")), 0.09),
    "personal": Shape("notes/personal", "note", ("personal",), (("", "personal"),), 0.13),
    "cjk": Shape("notes/cjk", "note", ("zh", "ja"), (("", "cjk"),), 0.03),
}


def block(filler: Filler, style: str, stamp: int) -> str:
    """One paragraph or list item in `style`: prose, personal, bullets, tasks, log, dialogue or cjk."""
    rng = filler.rng
    if style == "prose":
        return filler.paragraph(W.PROSE)
    if style == "personal":
        return filler.paragraph(W.PERSONAL + W.PROSE[:4])
    if style == "bullets":
        return "- " + filler.sentence(W.BULLETS)
    if style == "tasks":
        return f"- [{rng.choice(' x')}] " + filler.sentence(W.TASKS)
    if style == "log":
        return f"- {day(stamp - rng.randint(1, 400) * 86400)}: " + filler.sentence(W.PROSE)
    if style == "dialogue":
        speaker, pool = rng.choice([("User", W.USER), ("Agent", W.AGENT), ("Agent", W.AGENT)])
        return f"**{speaker}:** " + filler.sentence(pool)
    pool = W.ZH_FILLER if filler.lang == "zh" else W.JA_FILLER
    return "".join(fill(rng.choice(pool), filler.pick) for _ in range(rng.randint(3, 6)))


def day(stamp: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(stamp))


def with_fact(text: str, style: str, statement: str) -> str:
    """`text` (one block) with the fact's statement where that style would put it."""
    if style in ("prose", "personal", "cjk"):
        sentences = re.split(r"(?<=[.。])\s*", text.strip())
        sentences = [s for s in sentences if s]
        at = len(sentences) // 2
        glue = "" if style == "cjk" else " "
        return glue.join(sentences[:at] + [statement] + sentences[at:])
    if style == "dialogue":
        return f"{text}\n\n**Agent:** noted: {statement}"
    return f"{text}\n- {statement}"


def body(filler: Filler, shape: Shape, facts: list[Fact], size: int, stamp: int, first: str) -> str:
    """Sections filled to about `size` bytes, the facts placed mostly in the second half."""
    rng = filler.rng
    blocks: list[tuple[int, str, str]] = []  # (section, style, text)
    weights = [1 if style in ("bullets", "tasks", "log") else 3 for _, style in shape.sections]
    total = 0
    while total < size:
        i = rng.choices(range(len(shape.sections)), weights)[0]
        style = shape.sections[i][1]
        text = block(filler, style, stamp)
        blocks.append((i, style, text))
        total += len(text.encode()) + 2
    blocks.sort(key=lambda b: b[0])
    for f in facts:
        at = min(len(blocks) - 1, int(len(blocks) * (rng.random() ** 0.5 if rng.random() < 0.8 else rng.random())))
        i, style, text = blocks[at]
        blocks[at] = (i, style, with_fact(text, style, f.statement))
    out, section = [], -1
    for i, _, text in blocks:
        if i != section and shape.sections[i][0]:
            out.append("## " + shape.sections[i][0].format(first=first))
        section = i
        out.append(text)
    return "\n\n".join(out) + "\n"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "note"


PERSONAL_TITLES = {"flight": "Trip to {}", "book": "Reading notes: {}", "warranty": "Home: the {}"}


def title(shape_name: str, ctx: dict[str, str], topic: str, date: str, lead: str) -> str:
    p = ctx.get("project", "").title()
    return {"session": f"{p} session {date}: {topic}", "decision": f"{p}: decision on the {topic}",
            "meeting": f"{p} sync {date}", "person": ctx.get("person", ""), "vendor": ctx.get("vendor", ""),
            "task": f"{p} next actions: {topic}", "lesson": f"Lesson: {topic}",
            "personal": PERSONAL_TITLES.get(lead, "Notes: {}").format(topic),
            "cjk": f"{ctx.get('project', '')} 会议记录 {date}" if ctx.get("lang") == "zh"
            else f"{ctx.get('ja_name', '')}さんとの打ち合わせ {date}"}[shape_name]


def intro(rng: random.Random, shape_name: str, ctx: dict[str, str]) -> str:
    """The line such a memory opens with, if any."""
    if shape_name == "meeting":
        return f"Attendees: {', '.join(rng.sample(W.PEOPLE, rng.randint(2, 5)))}.\n\n"
    if shape_name == "person":
        return f"{ctx['person']}: {rng.choice(W.ROLES)}, {rng.choice(W.TEAMS)} team, mostly on {ctx['project']}.\n\n"
    if shape_name == "vendor":
        return f"{ctx['vendor']}: supplier for {ctx['project']}; contract owner {rng.choice(W.PEOPLE)}.\n\n"
    return ""


def context(rng: random.Random, shape_name: str, people: list[str], vendors: list[str]) -> dict[str, str] | None:
    """The memory's subject: a project (Zipf: a few projects hold most memories), a person, a vendor."""
    ctx = {"project": Filler.samplers["project"](rng)}
    if shape_name == "person":
        if not people:
            return None
        ctx["person"] = people.pop()
    elif shape_name == "vendor":
        if not vendors:
            return None
        ctx["vendor"] = vendors.pop()
    elif shape_name == "cjk":
        ctx["lang"] = rng.choice(["zh", "ja"])
        ctx["ja_name"] = rng.choice(W.JA_NAMES)
    return ctx


def memory(rng: random.Random, facts: Facts, ctx: dict[str, str], shape_name: str, age: int, now: int,
           taken: set[str]) -> Memory | None:
    shape = SHAPES[shape_name]
    stamp = now - age * 86400
    scopes = (ctx["lang"],) if shape_name == "cjk" else shape.scopes
    drawn = facts.draw(scopes, ctx, stamp, rng.choice([1, 1, 2, 2, 2, 3, 3, 4]))
    if not drawn:
        return None
    date = day(stamp)
    topic = drawn[0].topic if rng.random() < 0.6 or shape_name in ("lesson", "personal") \
        else rng.choice(W.COMPONENTS)
    head = title(shape_name, ctx, topic, date, drawn[0].kind)
    folder = shape.folder.format(project=ctx["project"])
    stem = f"{date}-{slug(topic)}" if shape_name in ("session", "meeting", "cjk") else slug(head)
    name, n = f"{folder}/{stem}", 1
    while name in taken:
        n += 1
        name = f"{folder}/{stem}-{n}"
    taken.add(name)
    size = int(math.exp(rng.uniform(math.log(700 if shape_name == "cjk" else 1000), math.log(7600))))
    first = ctx["person"].split()[0] if "person" in ctx else ""
    filler = Filler(rng, {"project": ctx["project"], **({"first": first} if first else {})}, ctx.get("lang", "en"))
    text = body(filler, shape, drawn, size, stamp, first)
    text = intro(rng, shape_name, ctx) + text
    tags = (ctx["project"], shape_name if shape_name != "cjk" else ctx["lang"], slug(topic).split("-")[0])
    return Memory(name, head, tags, shape.type, text, age, tuple(drawn), shape_name == "cjk")


def generate(rng: random.Random, ages: list[int], now: int) -> list[Memory]:
    """One memory per age (days before `now` of its last change), in that order."""
    facts, taken = Facts(rng), set()
    people, vendors = rng.sample(W.PEOPLE, len(W.PEOPLE)), rng.sample(W.VENDORS, len(W.VENDORS))
    names, weights = list(SHAPES), [s.weight for s in SHAPES.values()]
    out = []
    for age in ages:
        made = None
        while made is None:
            shape_name = rng.choices(names, weights)[0]
            ctx = context(rng, shape_name, people, vendors)
            made = memory(rng, facts, ctx, shape_name, age, now, taken) if ctx else None
        out.append(made)
    return out


def questions(rng: random.Random, memories: list[Memory], per_memory: int) -> list[Question]:
    """`per_memory` questions about each memory's facts, in turn."""
    out = []
    for m in memories:
        for j in range(per_memory):
            f = m.facts[j % len(m.facts)]
            exact = rng.random() < EXACT_SHARE
            text = f.exact if exact else f.asks[(j // len(m.facts)) % len(f.asks)]
            style = "cjk" if m.cjk else "exact" if exact else "paraphrase"
            if not m.cjk:
                suffix = rng.choice(SUFFIXES)
                text = rng.choice(PREFIXES) + (text.rstrip("?") + suffix if suffix else text)
            out.append(Question(text, m.name, style))
    return out
