"""What arrives from history or another machine is untrusted input: commit dates past 9999,
access records of 1e20 or NaN, hand-written `Strata-Move` trailers, and names `write` would
refuse, brought in by a plain `git commit` on a hostile clone and a sync. Every command on the
receiving clones exits 0/1/2 with a readable message (never 3, never a traceback), nothing is
lost or moved wrongly, nothing bad is copied forward, and `status` lists what was skipped.

The last test is a seeded fuzz of hundreds of such cases (STRATA_SEED reproduces a run)."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import BIN, DEEP, bare_remote, git, strata

FUTURE = 253_402_300_800  # 10000-01-01T00:00:00Z: one second past what a date can show
READ_ONLY = [["status"], ["list"], ["log"], ["stats"], ["index"], ["context"], ["search", "koda"],
             ["janitor", "--dry-run"], ["why", "projects/koda"], ["read", "projects/koda"]]


@pytest.fixture
def machines(tmp_path: Path, mem: Path) -> tuple[Path, Path, Path]:
    """(a, b, hostile): two git-strata clones of one bare remote, and a plain git clone of it
    that writes whatever it likes and pushes it, refs under refs/strata/ included."""
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    from strata_git.app.vault import Vault
    from strata_git.ops import clone

    vault = Vault.open(str(mem))  # the setup through the library: the commands under test run as installed
    vault.write("projects/koda", b"# Koda\n\nThe beta ships on Friday.\n", via="cli")
    vault.sync()
    clone.clone(str(remote), str(tmp_path / "b"))
    git(tmp_path, "clone", "-q", str(remote), "hostile")
    return mem, tmp_path / "b", tmp_path / "hostile"


def commit_raw(repo: Path, message: str, when: str, tree: str | None = None) -> str:
    """A commit object written as bytes (so any date or message gets in), made HEAD of main."""
    tree = tree or git(repo, "write-tree").stdout.decode().strip()
    parent = git(repo, "rev-parse", "HEAD").stdout.decode().strip()
    body = (f"tree {tree}\nparent {parent}\nauthor Mallory <m@example.invalid> {when} +0000\n"
            f"committer Mallory <m@example.invalid> {when} +0000\n\n{message}\n")
    oid = git(repo, "hash-object", "-t", "commit", "-w", "--literally", "--stdin",
              input=body.encode()).stdout.decode().strip()
    git(repo, "update-ref", "refs/heads/main", oid)
    git(repo, "reset", "-q", "--hard", oid)
    return oid


def access_ref(repo: Path, machine: str, lines: list[str]) -> None:
    blob = git(repo, "hash-object", "-w", "--stdin", input="".join(f"{x}\n" for x in lines).encode()).stdout
    tree = git(repo, "mktree", input=b"100644 blob " + blob.strip() + b"\taccess.log\n").stdout.decode().strip()
    commit = git(repo, "commit-tree", tree, "-m", "records").stdout.decode().strip()
    git(repo, "update-ref", f"refs/strata/access/{machine}", commit)


def push(hostile: Path) -> None:
    git(hostile, "push", "-q", "origin", "main", "+refs/strata/access/*:refs/strata/access/*")


def sane(proc: subprocess.CompletedProcess, what: str) -> None:
    """Exit 0, 1 or 2, and no traceback or 'unexpected error' anywhere in what it printed."""
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, 1, 2), f"{what}: exit {proc.returncode}\n{out[-2000:]}"
    assert "Traceback" not in out and "unexpected error" not in out, f"{what}:\n{out[-2000:]}"


def every_command(root: Path, names: list[str] = (), json_too: bool = True) -> None:
    for args in READ_ONLY + [["why", n] for n in names] + [["read", n] for n in names]:
        sane(strata(root, *args), f"{root.name}: git strata {' '.join(args)}")
        if json_too:
            sane(strata(root, *args, "--json"), f"{root.name}: git strata {' '.join(args)} --json")


# -- the findings, one by one --------------------------------------------------------------------------

@pytest.mark.parametrize("when", ["@253402300800", "+99999999999999999999d", "@-1", "99999-01-01"])
def test_a_janitor_time_no_date_can_show_is_refused_and_changes_nothing(mem: Path, when: str):
    before = git(mem, "rev-parse", "HEAD").stdout
    proc = strata(mem, "janitor", "--now", when)
    assert proc.returncode == 1 and b"the time" in proc.stderr and b"hint: " in proc.stderr, proc.stderr
    assert b"Traceback" not in proc.stderr and b"unexpected" not in proc.stderr
    assert git(mem, "rev-parse", "HEAD").stdout == before


@pytest.mark.slow
def test_a_commit_dated_past_9999_from_another_machine_is_skipped_with_a_warning(machines):
    a, b, hostile = machines
    (hostile / "active/projects/koda.md").write_text("# Koda\n\nThe beta ships on Monday.\n")
    git(hostile, "add", "-A")
    bad = commit_raw(hostile, "from the future", str(FUTURE))
    push(hostile)
    for root in (a, b):
        sane(strata(root, "sync"), "sync")
        every_command(root)
        status = json.loads(strata(root, "status", "--json").stdout)
        assert any(bad[:12] in p and "9999" in p for p in status["problems"]), status["problems"]
        assert "Monday" in (root / "active/projects/koda.md").read_text()  # the content is not lost
        # the pre-commit hook reads history too
        (root / "active/projects/koda.md").write_text("# Koda\n\nThe beta ships on Tuesday.\n")
        sane(git(root, "commit", "-qam", "edit after the bad commit", check=False), "git commit")
    warn = strata(a, "why", "projects/koda").stderr.decode()
    assert f"commit {bad[:12]}" in warn and "not counted" in warn


@pytest.mark.slow
@pytest.mark.parametrize("t", ["1e20", "NaN", "Infinity", "-Infinity", "-5", '"yesterday"', '"1790000001"', "null",
                               "true"])
def test_bad_access_records_are_skipped_and_never_copied_forward(machines, t: str):
    a, b, hostile = machines
    good = '{"t": 1790000000, "name": "projects/koda", "m": "evil", "n": 2}'
    access_ref(hostile, "evil", [f'{{"t": {t}, "name": "projects/koda", "tier": "active", "via": "read", '
                                 f'"m": "evil", "n": 1}}', good])
    push(hostile)
    sane(strata(a, "sync"), "sync")
    sane(strata(a, "why", "projects/koda"), "why")
    why = json.loads(strata(a, "why", "projects/koda", "--json").stdout)
    assert why["last_read"] == "2026-09-21"  # the good record counts
    janitor = strata(a, "janitor", "--now", "+400d")
    sane(janitor, "janitor")
    assert janitor.returncode == 0
    message = git(a, "log", "-1", "--format=%B").stdout.decode()
    assert "cool" in message and "1e+20" not in message and "NaN" not in message and "Infinity" not in message
    problems = json.loads(strata(a, "status", "--json").stdout)["problems"]
    assert any("access/evil" in p and "access record" in p for p in problems), problems


def test_a_move_as_the_janitor_writes_it_is_read_as_json_reads_it():
    """A clone reads two million moves: those spelled as the janitor writes them are read by one
    match. Seeded mutations of that spelling (texts with escapes, control, direction-changing or
    wide characters, numbers of every shape, keys moved or missing) give the record JSON gives,
    or none where JSON gives none."""
    from strata_git.core import contract, rules, untrusted

    written = rules.Move("cool", "decisions/2023/m1", "active", "cooled", "cool.after_days.default = 30",
                         30, None, 0).trailer()
    raw = contract.trailer_value(written)
    assert untrusted._as_written(raw) == untrusted._move(raw) == {**written, "window_days": None}
    rng = random.Random(int(os.environ.get("STRATA_SEED", "27")))
    texts = ["", "x", "caf\u00e9", "\u4e2d\u6587", "\u202ename", "a\\b", 'a"b', "tab\there", "\x7f", "\udcff",
             "n" * 4096, "n" * 4097, "archive/x/y", "\u00a0"]
    numbers = ["null", "0", "-0", "7", "-3", "1.5", "-0.25", "1e3", "01", "1.", "253402300799", "253402300800",
               "-253402300800", "9999999999999999", "NaN", "true", '"3"', "1.00000000000000000001"]
    keys = ["action", "name", "from", "to", "rule", "age_days", "last_read", "reads"]
    read_fast = 0
    for _ in range(4000):
        def pick(values: list[str]) -> str:  # (mostly the first four, plain: most moves read are)
            return rng.choice(values[:4] if rng.random() < 0.8 else values)

        fields = {k: (pick(numbers) if k in keys[5:] else json.dumps(pick(texts), ensure_ascii=False)
                      if k != "rule" or rng.random() < 0.8 else "null") for k in keys}
        if rng.random() < 0.1:
            fields.pop(rng.choice(keys))
        order = list(fields)
        if rng.random() < 0.1:
            rng.shuffle(order)
        raw = "{" + ",".join(f'"{k}":{fields[k]}' for k in order) + "}"
        if rng.random() < 0.05:
            raw = raw.replace(",", ", ", 1)
        fast = untrusted._as_written(raw)
        read_fast += fast is not None
        assert untrusted.move(raw) == untrusted._move(raw), raw
        assert fast is None or fast == untrusted._move(raw), raw
    assert read_fast > 100  # (the match did the reading often enough to be checked)


@pytest.mark.slow
@pytest.mark.parametrize("trailer", ["Strata-Move: 1", 'Strata-Move: {"name": "projects/koda"}',
                                     'Strata-Move: {"action": "cool", "name": "projects/koda", "from": 5, "to": []}',
                                     'Strata-Move: {"action": "cool", "name": "projects/koda", "from": "active", '
                                     '"to": "cooled", "age_days": NaN}', "Strata-Move: [",
                                     "Strata-Move: " + "{" * 5000])
def test_hand_written_move_trailers_are_skipped_and_the_edit_counts(machines, trailer: str):
    a, b, hostile = machines
    (hostile / "active/projects/koda.md").write_text("# Koda\n\nHand edit.\n")
    git(hostile, "add", "-A")
    commit_raw(hostile, f"hand edit\n\n{trailer}", "1795000000")
    push(hostile)
    sane(strata(a, "sync"), "sync")
    every_command(a)
    assert json.loads(strata(a, "why", "projects/koda", "--json").stdout)["last_changed"] == "2026-11-18"
    assert json.loads(strata(a, "log", "--json").stdout) == []
    assert "not a move record" in strata(a, "log").stderr.decode()


@pytest.mark.slow
def test_a_name_that_ends_in_md_twice_is_refused(mem: Path):
    proc = strata(mem, "write", "notes/plan.md.md", "-m", "Plan A")
    assert proc.returncode == 2 or proc.returncode == 1
    assert b"ends in .md" in proc.stderr and b"'notes/plan'" in proc.stderr
    assert not (mem / "active/notes").exists()
    assert strata(mem, "write", "notes/plan", "-m", "Plan B").returncode == 0
    assert strata(mem, "read", "notes/plan.md").stdout.decode().strip().endswith("Plan B")


HOSTILE_NAMES = ["evil\nforged line.md", "right\u202eleft.md", "CON.md", "plan.md.md"]


@pytest.mark.slow
def test_names_from_plain_git_are_flagged_never_moved_and_printed_escaped(machines):
    a, b, hostile = machines
    for name in HOSTILE_NAMES:
        path = hostile / "active/projects" / name
        path.write_text("# hostile\n\nbody\n")
    (hostile / "cooled/projects").mkdir(parents=True, exist_ok=True)
    (hostile / "cooled/projects/koda.md").write_text("# Koda, a second copy\n")  # the same name in two tiers
    (hostile / "active/projects/Koda.md").write_text("# Koda by case\n")  # differs only by case
    (hostile / "active/projects/k\u043eda.md").write_text("# Koda, Cyrillic o\n")  # looks like koda
    git(hostile, "add", "-A")
    commit_raw(hostile, "names", "1780000000")
    push(hostile)
    sane(strata(a, "sync"), "sync")
    every_command(a)
    janitor = strata(a, "janitor", "--now", "+400d")
    sane(janitor, "janitor")
    out = janitor.stdout.decode()
    assert not any(line.startswith("forged line") for line in out.splitlines()) and "evil\\u000aforged" in out
    assert "\u202e" not in out and "right\\u202eleft" in out
    for name in HOSTILE_NAMES:
        assert (a / "active/projects" / name).exists(), name  # skipped, not moved
    listing = strata(a, "list").stdout.decode()
    assert "\u202e" not in listing and "\n" + "forged line" not in listing
    problems = json.loads(strata(a, "status", "--json").stdout)["problems"]
    text = "\n".join(problems)
    for expected in ("evil\\nforged line.md: not a memory", "right\\u202eleft.md: not a memory",
                     "reserved device name", "ends in .md", "projects/koda: in more than one tier",
                     "projects/Koda, projects/koda: names that differ only by case", "mixes Cyrillic and Latin"):
        assert expected in text, (expected, problems)
    assert (a / "cooled/projects/koda.md").exists() and (a / "active/projects/Koda.md").exists()  # not moved
    index = (a / "index.md").read_text()
    assert "\u202e" not in index and "\nforged line" not in index


# -- the smaller findings ----------------------------------------------------------------------------

@pytest.mark.parametrize("option", [["--title", "two\nlines"], ["--tags", "a\nb,c"], ["--title", "tab\there"]])
def test_titles_and_tags_are_one_line_of_plain_text(mem: Path, option: list[str]):
    before = git(mem, "rev-parse", "HEAD").stdout
    proc = strata(mem, "write", "projects/x", "-m", "body", *option)
    assert proc.returncode == 1 and b"on one line" in proc.stderr, proc.stderr
    assert git(mem, "rev-parse", "HEAD").stdout == before and not (mem / "active/projects/x.md").exists()


def test_retitling_a_crlf_memory_keeps_its_comments_and_line_endings(mem: Path, tmp_path: Path):
    source = tmp_path / "m.md"
    source.write_bytes(b"---\r\n# why this exists\r\ntitle: Old\r\ntags:\r\n  - a\r\n---\r\nbody\r\n")
    proc = strata(mem, "write", "projects/crlf", "--file", str(source), "--title", "New", "--tags", "x,y")
    assert proc.returncode == 0, proc.stderr
    assert (mem / "active/projects/crlf.md").read_bytes() == (
        b"---\r\n# why this exists\r\ntitle: New\r\ntags:\r\n- x\r\n- y\r\n---\r\nbody\r\n")


def test_setting_a_key_replaces_its_whole_value_and_nothing_else():
    from strata_git.core import memory

    folded = "---\ntitle: |\n  one\n\n  two\ntags:\n- a\n\n- b\nnote: \"\u00e9\u2028x\"\n---\nbody\n"
    assert memory.compose(folded, {"title": "new", "tags": ["z"]}, "w") == (
        "---\ntitle: new\ntags:\n- z\nnote: \"\u00e9\u2028x\"\n---\nbody\n").encode()


@pytest.mark.slow
def test_an_emoji_or_one_cjk_character_is_found(mem: Path):
    assert strata(mem, "write", "notes/party", "-m", "We celebrate the launch with \U0001f389 tonight.").returncode == 0
    cute = "\u9ed1\u732b\u5f88\u53ef\u7231"  # a black cat is cute
    assert strata(mem, "write", "notes/cat", "-m", cute).returncode == 0
    for query, name in (("\U0001f389", "notes/party"), ("\u732b", "notes/cat"), ("\u9ed1\u732b", "notes/cat")):
        hits = json.loads(strata(mem, "search", query, "--json").stdout)
        assert [h["name"] for h in hits] == [name], (query, hits)


@pytest.mark.slow
def test_an_editor_that_leaves_a_folder_gets_a_clear_message_and_loses_nothing(mem: Path, tmp_path: Path):
    assert strata(mem, "write", "projects/x", "-m", "keep me").returncode == 0
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nrm -f "$1"; mkdir "$1"\n')
    editor.chmod(0o755)
    proc = strata(mem, "edit", "projects/x", env={"EDITOR": str(editor)})
    assert proc.returncode == 1 and b"left a folder" in proc.stderr and b"free space" not in proc.stderr
    assert git(mem, "show", "HEAD:active/projects/x.md").stdout.decode().strip().endswith("keep me")


@pytest.mark.slow
def test_clone_of_a_remote_whose_head_names_a_missing_branch_takes_its_main(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "r.git")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/gone")
    git(mem, "push", "-q", str(remote), "HEAD:refs/heads/main")
    proc = strata(tmp_path, "clone", str(remote), str(tmp_path / "c"))
    assert proc.returncode == 0 and b"checked out its 'main'" in proc.stdout + proc.stderr, proc.stderr
    assert git(tmp_path / "c", "rev-parse", "HEAD").stdout == git(mem, "rev-parse", "HEAD").stdout
    assert strata(tmp_path / "c", "status").returncode == 0


@pytest.mark.slow
def test_a_secret_is_never_repeated_in_an_error_in_any_case(mem: Path):
    key = "AKIA" + "Q7RZ2MPLX4NB8KDW"  # assembled at run time: this file holds no key
    before = git(mem, "rev-parse", "HEAD").stdout
    for args in (["reject", f"use key {key} for prod"], ["write", f"notes/{key}", "-m", "x"],
                 ["write", "notes/x", "-m", f"the key is {key}"], ["read", f"notes/{key}"], ["why", key]):
        for extra in ([], ["--json"]):
            proc = strata(mem, *args, *extra)
            out = (proc.stdout + proc.stderr).decode()
            assert proc.returncode in (1, 2) and key.lower() not in out.lower(), (args, out)

    async def main():
        params = StdioServerParameters(command=str(BIN / "git-strata"), args=["mcp"], cwd=str(mem),
                                       env=dict(os.environ))
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for tool, args in (("reject", {"text": f"use key {key} for prod"}),
                               ("write", {"name": "notes/x", "content": f"the key is {key}"})):
                result = await s.call_tool(tool, args)
                text = "".join(c.text for c in result.content if hasattr(c, "text"))
                assert result.is_error and key.lower() not in text.lower(), (tool, text)
    anyio.run(main)
    assert git(mem, "rev-parse", "HEAD").stdout == before


# -- the fuzz ----------------------------------------------------------------------------------------

def _junk_value(rng: random.Random) -> str:
    return rng.choice(["1", "[", "{}", "null", '"x"', "1e20", "NaN", "-Infinity", "[1,2]", '{"a": {"b": {}}}',
                       '{"action": "cool"}', '{"action": 7, "name": "projects/koda", "from": "active", "to": "cooled"}',
                       '{"action": "cool", "name": "projects/koda", "from": "active", "to": "cooled", "reads": 1e300}',
                       '{"action": "cool", "name": "a\\nb", "from": "active", "to": "cooled"}',
                       '{"action": "cool", "name": "projects/koda", "from": "active", "to": "cooled"}',
                       "\u202e" + "x" * rng.randint(0, 3000), '{"lines": [1, 99999999999999999999]}'])


def _record(rng: random.Random) -> str:
    t = rng.choice(["1790000000", "1e20", "NaN", "Infinity", "-1", "0", "253402300800", '"1"', "null", "1.5e9",
                    "true", "[]", "1790000000.123"])
    name = rng.choice(['"projects/koda"', '"projects/nope"', "5", "null", '"a\\nb"', '"' + "x" * 5000 + '"',
                       '"\u202e"', '"projects/koda"'])
    n = rng.choice(["1", "-1", "1e30", '"n"', "18446744073709551616", str(rng.randrange(1 << 40))])
    tail = rng.choice(["", ', "m": 5', ', "m": "x\\u0000y"', ', "tier": []', ', "via": "read"'])
    return rng.choice([f'{{"t": {t}, "name": {name}, "n": {n}{tail}}}', "not json", "{", "[1]", '{"t": 1}', ""])


def _date(rng: random.Random) -> str:
    return rng.choice(["1790000000", "1795000000", str(FUTURE), "99999999999999999999", "0", "1",
                       "18446744073709551615", "-5", "abc"])


CASES = 240


@pytest.mark.slow
def test_hostile_history_fuzz(machines, tmp_path: Path):
    """CASES random hostile changes (dates, trailers, access records, names), in rounds, each round
    pushed by the hostile clone and synced into both git-strata clones; after every round every
    command exits 0/1/2 without a traceback on both, and at the end through MCP too. The memories
    written through git-strata are all still there, in the tier the janitor's rules put them."""
    a, b, hostile = machines
    seed = int(os.environ.get("STRATA_SEED", "15"))  # fixed, so CI runs the same cases; STRATA_SEED tries others
    rng = random.Random(seed)
    kept: dict[str, str] = {"projects/koda": "Friday"}
    case = 0
    rounds = 8 if DEEP else 4  # every case either way; fewer rounds of syncs and commands between them
    for r in range(rounds):
        git(hostile, "fetch", "-q", "origin")  # on top of what the clones pushed: a plain push, no force
        git(hostile, "reset", "-q", "--hard", "origin/main")
        git(hostile, "clean", "-qfdx")
        for _ in range(CASES // rounds):
            case += 1
            kind = rng.choice(["date", "trailer", "access", "name", "capture", "edit"])
            if kind == "access":
                access_ref(hostile, f"m{rng.randrange(5)}", [_record(rng) for _ in range(rng.randint(1, 6))])
                continue
            if kind == "name":
                name = rng.choice(HOSTILE_NAMES + ["k\u043eda.md", "Koda.md", "x/y.md.md", "nul.md", "a\tb.md"])
                path = hostile / rng.choice(["active", "cooled"]) / "projects" / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"# case {case}\n")
            if kind == "edit":
                (hostile / "active/projects/hostile-notes.md").write_text(f"# notes\n\ncase {case}\n")
            git(hostile, "add", "-A")
            key = rng.choice(["Strata-Move", "Strata-Capture", "Strata-Capture-Session", "Strata-Recall",
                              "Strata-Action"])
            trailer = f"\n\n{key}: {_junk_value(rng)}" if kind in ("trailer", "capture") or rng.random() < 0.3 else ""
            commit_raw(hostile, f"case {case}{trailer}", _date(rng) if kind == "date" or rng.random() < 0.2
                       else str(1790000000 + case))
        push(hostile)
        mine = f"notes/round-{r}"
        assert strata(a, "write", mine, "-m", f"# Round {r}\n\nkept {r}\n").returncode == 0, seed
        kept[mine] = f"kept {r}"
        for root in (a, b):
            sane(strata(root, "sync"), f"seed {seed} round {r}: sync")
            every_command(root, [mine], json_too=r == rounds - 1)
            sane(strata(root, "janitor", "--now", f"+{r * 20}d"), f"seed {seed} round {r}: janitor")
            sane(strata(root, "sync"), f"seed {seed} round {r}: sync after the janitor")
    assert case == CASES
    problems = json.loads(strata(a, "status", "--json").stdout)["problems"]
    assert any("commit" in p for p in problems) and any("access/" in p for p in problems), (seed, problems)
    for root in (a, b):
        listing = {e["name"]: e["tier"] for e in json.loads(strata(root, "list", "--json").stdout)}
        for name, text in kept.items():
            assert name in listing, (seed, root.name, name)
            read = strata(root, "read", name, "--json")
            assert read.returncode == 0 and text in read.stdout.decode(), (seed, root.name, name)
    _every_tool(a, seed)


def _every_tool(root: Path, seed: int) -> None:
    async def main():
        params = StdioServerParameters(command=str(BIN / "git-strata"), args=["mcp"], cwd=str(root),
                                       env=dict(os.environ))
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            calls = [("status", {}), ("list", {}), ("index", {}), ("context", {}), ("log", {}), ("stats", {}),
                     ("why", {"name": "projects/koda"}), ("search", {"query": "koda"}),
                     ("read", {"name": "projects/koda"}), ("read", {"name": "projects/plan.md.md"})]
            for tool, args in calls:
                result = await s.call_tool(tool, args)
                text = "".join(c.text for c in result.content if hasattr(c, "text"))
                assert "Traceback" not in text and "unexpected error" not in text, (seed, tool, text[-1000:])
    anyio.run(main)
