"""`git strata sync` between three real clones and one real remote (a bare repository, or
`git daemon` on 127.0.0.1): every conflict case of the issue, janitors on several machines,
indexes after a plain `git pull`, and remotes that are down, refuse pushes or went back.

Machine a made the repository; b joined with `git strata clone` (a partial, sparse clone);
c joined with a plain `git clone` and `git strata init`. After every case, two rounds of
sync (a, b, c, then again) must leave all three at the same tree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from helpers.machines import DAY, KODA, T0, converge, make_machines
from strata_git.errors import StrataError

pytestmark = pytest.mark.slow

@pytest.fixture
def remote(tmp_path: Path) -> Path:
    (tmp_path / "served").mkdir(exist_ok=True)
    return bare_remote(tmp_path / "served" / "mem.git")


@pytest.fixture
def three(tmp_path: Path, remote: Path) -> list:
    return make_machines(tmp_path, str(remote), remote)


def files(v, tier: str = "active") -> dict[str, str]:
    root = Path(v.repo.root) / tier
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.md") if p.is_file()}


def tiers_of(v, name: str) -> list[str]:
    out = git(Path(v.repo.root), "ls-tree", "-r", "--name-only", "HEAD").stdout.decode().split()
    return [p.split("/")[0] for p in out if p.split("/", 1)[-1] == name]


# -- edits on two machines -----------------------------------------------------------

def both_edit(a, b, text_a: str, text_b: str):
    """a and b write different text to projects/koda; a syncs first, then b (which merges)."""
    a.write("projects/koda", text_a.encode())
    b.write("projects/koda", text_b.encode())
    a.sync()
    return b.sync()


def test_edits_to_different_lines_merge_cleanly(three):
    a, b, c = three
    result = both_edit(a, b, KODA.replace("line one", "line ONE from a"), KODA.replace("line five", "line FIVE from b"))
    assert result.integrated == "merge" and result.conflicts == []
    assert result.decisions[0].how == "edited on both sides: merged"
    converge(three)
    text = files(c)["projects/koda.md"]
    assert "line ONE from a" in text and "line FIVE from b" in text
    assert not [n for n in files(c) if ".conflict-" in n]


def test_conflicting_edits_keep_both_versions_and_resolve_finishes(three):
    a, b, c = three
    [conflict] = both_edit(a, b, KODA.replace("line one", "line one, a says"),
                           KODA.replace("line one", "line one, b says")).conflicts
    copy = conflict.beside
    assert copy.startswith("active/projects/koda.conflict-") and copy.endswith(".md")
    converge(three)
    for v in three:  # the remote's version in place, b's beside it, on every machine
        found = files(v)
        assert "a says" in found["projects/koda.md"]
        kept = found[copy[len("active/"):]]
        assert "b says" in kept
        info = json.loads(kept.splitlines()[1].split(": ", 1)[1])
        assert info["of"] == "projects/koda" and info["commit"] and info["from"]
    # status says so, on a machine that did not make the merge too
    [open_] = c.status().conflicts
    assert open_.name == "projects/koda" and open_.copy == copy[len("active/"):-3]
    out = strata(Path(c.repo.root), "status")
    assert b"conflict: projects/koda" in out.stdout and b"git strata resolve" in out.stdout
    # the copy is byte for byte b's version plus the one provenance line
    from strata_git.ops.sync.merge import without_provenance

    assert without_provenance(kept.encode()) == KODA.replace("line one", "line one, b says").encode()
    c.resolve("projects/koda", "copy")
    assert files(c)["projects/koda.md"] == KODA.replace("line one", "line one, b says")
    assert c.status().conflicts == []
    converge(three)
    assert files(a)["projects/koda.md"] == KODA.replace("line one", "line one, b says")


@pytest.mark.parametrize("keep", ["current", "both"])
def test_resolve_keep_current_or_both(three, keep):
    a, b, _ = three
    [conflict] = both_edit(a, b, KODA.replace("line one", "A"), KODA.replace("line one", "B")).conflicts
    copy = conflict.beside[len("active/"):-3]
    b.resolve(copy, keep)
    found = files(b)
    assert found["projects/koda.md"] == KODA.replace("line one", "A")
    if keep == "both":
        assert found[copy + ".md"] == KODA.replace("line one", "B")  # the provenance line is gone
    else:
        assert copy + ".md" not in found
    assert b.status().conflicts == []


def test_resolve_by_hand_deleting_the_copy(three):
    a, b, _ = three
    [conflict] = both_edit(a, b, KODA + "A\n", KODA + "B\n").conflicts
    root = Path(b.repo.root)
    git(root, "rm", "-q", conflict.beside)
    git(root, "commit", "-q", "-m", "merged by hand")
    assert b.status().conflicts == []


def test_resolve_refuses_bad_input(three):
    a = three[0]
    with pytest.raises(StrataError, match="no open conflict"):
        a.resolve("projects/koda", "copy")
    out = strata(Path(a.repo.root), "resolve", "projects/koda", "--keep", "sideways")
    assert out.returncode == 2


# -- the janitor on one machine, an edit on the other -------------------------------

def assert_edit_in_active_everywhere(vaults: list) -> None:
    converge(vaults)
    for v in vaults:
        assert tiers_of(v, "projects/koda.md") == ["active"]
        assert files(v)["projects/koda.md"].endswith("edited on b\n")


def test_edit_wins_over_a_janitor_cooling(three):
    a, b, _ = three
    a.janitor(now=T0 + 40 * DAY)
    assert tiers_of(a, "projects/koda.md") == ["cooled"]
    b.write("projects/koda", (KODA + "edited on b\n").encode())
    a.sync()
    result = b.sync()
    assert result.decisions[0].how == "edited on one side, moved on the other: edit kept in active/"
    assert_edit_in_active_everywhere(three)


def test_edit_wins_over_a_janitor_archiving_in_either_order(three):
    a, b, _ = three
    a.janitor(now=T0 + 40 * DAY)
    a.janitor(now=T0 + 200 * DAY)
    assert tiers_of(a, "projects/koda.md") == ["archive"]
    b.write("projects/koda", (KODA + "edited on b\n").encode())
    b.sync()  # the edit reaches the remote first this time: a merges it in
    result = a.sync()
    assert result.integrated == "merge"
    assert_edit_in_active_everywhere(three)


def test_both_janitors_make_the_same_move_once(three):
    a, b, c = three
    c.write("notes/other", b"# Other\n")  # so that a and b really diverge
    c.sync()
    ra = a.janitor(now=T0 + 40 * DAY)
    rb = b.janitor(now=T0 + 40 * DAY)
    assert ra.plan.as_dict()["moves"] == rb.plan.as_dict()["moves"] and ra.plan.moves
    a.sync()
    result = b.sync()
    assert result.conflicts == []
    converge(three)
    for v in three:
        assert tiers_of(v, "projects/koda.md") == ["cooled"]
        assert tiers_of(v, "notes/other.md") == ["active"]


def test_a_recall_wins_over_the_other_machines_archiving(three):
    a, b, _ = three
    for v in (a, b):
        v.janitor(now=T0 + 40 * DAY)
    converge(three)
    a.janitor(now=T0 + 200 * DAY)  # a archives it
    b.recall("projects/koda")  # while b uses it
    a.sync()
    b.sync()
    converge(three)
    for v in three:
        assert tiers_of(v, "projects/koda.md") == ["active"]


# -- deletes and new names -----------------------------------------------------------

def test_delete_on_one_side_edit_on_the_other_keeps_the_edit(three):
    a, b, _ = three
    a.forget("projects/koda")
    b.write("projects/koda", (KODA + "still needed\n").encode())
    a.sync()
    result = b.sync()
    assert result.decisions[0].how == "deleted on one side, edited on the other: edit kept"
    converge(three)
    for v in three:
        assert files(v)["projects/koda.md"].endswith("still needed\n")


def test_delete_on_one_side_janitor_move_on_the_other_deletes(three):
    a, b, _ = three
    a.forget("projects/koda")
    b.janitor(now=T0 + 40 * DAY)
    b.sync()
    a.sync()
    converge(three)
    for v in three:
        assert tiers_of(v, "projects/koda.md") == []


def test_both_create_the_same_new_name_and_both_survive(three):
    a, b, c = three
    a.write("people/ana", b"# Ana\n\nfrom a\n")
    b.write("people/ana", b"# Ana\n\nfrom b\n")
    c.write("people/ana", b"# Ana\n\nfrom a\n")  # the same bytes as a: one memory, no copy
    a.sync()
    c.sync()
    [conflict] = b.sync().conflicts
    converge(three)
    found = files(a)
    assert found["people/ana.md"] == "# Ana\n\nfrom a\n"
    assert "from b" in found[conflict.beside[len("active/"):]]


# -- uncommitted work ----------------------------------------------------------------

def test_uncommitted_edits_are_committed_first(three):
    a, b, _ = three
    root = Path(a.repo.root)
    (root / "active/projects/koda.md").write_text(KODA + "typed by hand\n")
    (root / "active/notes").mkdir(parents=True, exist_ok=True)
    (root / "active/notes/new.md").write_text("# New\n\nnot yet committed\n")
    result = a.sync()
    assert sorted(result.committed) == ["active/notes/new.md", "active/projects/koda.md"]
    assert git(root, "status", "--porcelain").stdout == b""
    b.sync()
    assert files(b)["notes/new.md"] == "# New\n\nnot yet committed\n"
    assert "`notes/new` · **New**" in (Path(b.repo.root) / "index.md").read_text()  # index.md follows the sync
    assert b.search("committed")[0].name == "notes/new"


def test_a_file_the_checks_refuse_stays_uncommitted_and_untouched(three):
    a, b, _ = three
    root = Path(a.repo.root)
    secret = "# Keys\n\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8rT4nL2vKx\n"
    (root / "active/keys.md").write_text(secret)
    result = a.sync()
    assert [item["path"] for item in result.left] == ["active/keys.md"]
    assert (root / "active/keys.md").read_text() == secret
    b.sync()
    assert "keys.md" not in files(b)


def test_a_refused_uncommitted_edit_is_kept_and_does_not_stop_the_sync(three):
    a, b, _ = three
    b.write("projects/koda", (KODA + "from b\n").encode())
    b.sync()
    root = Path(a.repo.root)
    a.write("notes/other", b"# Other\n\ncommitted work that must still reach the remote\n")
    mine = "# Koda\n\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8rT4nL2vKx\n"
    (root / "active/projects/koda.md").write_text(mine)  # the checks refuse it: it stays uncommitted
    result = a.sync()
    assert result.pushed and result.integrated == "merge"
    [item] = result.left
    assert item["path"] == "active/projects/koda.md" and "secret" in item["reason"]
    assert "the remote changed it too" in item["reason"]
    assert (root / "active/projects/koda.md").read_text() == mine  # untouched
    assert git(root, "show", "HEAD:active/projects/koda.md").stdout.decode().endswith("from b\n")
    b.sync()
    assert "notes/other.md" in files(b)


def test_an_untracked_file_in_the_way_of_a_folder_is_refused_and_kept(three):
    a, b, _ = three
    a.write("ideas/x", b"# X\n")
    a.sync()
    root = Path(b.repo.root)
    (root / "active/ideas").write_bytes(b"precious: not a memory, do not lose\n")  # where a folder must go
    before = b.repo.head()
    with pytest.raises(StrataError, match="active/ideas/x.md is in the way"):
        b.sync()
    assert (root / "active/ideas").read_bytes() == b"precious: not a memory, do not lose\n"
    assert b.repo.head() == before


def test_an_unborn_branch_is_refused(tmp_path: Path, remote: Path):
    root = tmp_path / "empty"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    git(root, "remote", "add", "origin", str(remote))
    (root / ".strata").mkdir()
    (root / ".strata/config.toml").write_text("")
    out = strata(root, "sync")
    assert out.returncode == 1 and b"no commits yet" in out.stderr and b"git strata clone" in out.stderr


# -- the remote misbehaves -----------------------------------------------------------

def test_remote_unreachable_exits_nonzero_and_keeps_local_work(tmp_path: Path, daemon):
    remote = bare_remote(daemon.base / "mem.git")
    a, _, _ = make_machines(tmp_path, daemon.url("mem.git"), remote)
    root = Path(a.repo.root)
    daemon.stop()
    (root / "active/offline.md").write_text("# Offline\n\nwritten on a plane\n")
    out = strata(root, "sync")
    assert out.returncode == 1
    assert b"cannot reach origin" in out.stderr and b"nothing was lost" in out.stderr
    assert len(out.stderr.decode().strip().splitlines()) == 2  # the error and its hint
    assert git(root, "status", "--porcelain").stdout == b""  # committed, not lost
    assert b"written on a plane" in git(root, "show", "HEAD:active/offline.md").stdout
    out = strata(root, "sync", "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["ok"] is False


def test_remote_rejecting_pushes_keeps_local_work(three, remote: Path):
    a = three[0]
    hook = remote / "hooks/pre-receive"
    hook.write_text("#!/bin/sh\necho 'memory is frozen for the audit' >&2\nexit 1\n")
    hook.chmod(0o755)
    a.write("notes/late", b"# Late\n")
    out = strata(Path(a.repo.root), "sync")
    assert out.returncode == 1
    assert b"origin refused the push" in out.stderr and b"memory is frozen for the audit" in out.stderr
    assert b"late" in git(Path(a.repo.root), "ls-tree", "-r", "--name-only", "HEAD").stdout
    hook.unlink()
    assert a.sync().pushed


def test_a_rewound_remote_gets_its_lost_commits_back(three, remote: Path):
    a, b, _ = three
    first = git(remote, "rev-parse", "main").stdout.decode().strip()
    a.write("notes/one", b"# One\n")
    a.write("notes/two", b"# Two\n")
    a.sync()
    b.sync()
    git(remote, "update-ref", "refs/heads/main", first)  # someone force-pushed the branch back
    result = a.sync()
    assert result.rewound == 2 and result.pushed
    assert git(remote, "rev-parse", "main").stdout.decode().strip() == a.repo.head()
    converge(three)
    assert "notes/two.md" in files(b)


def test_another_machine_pushing_in_between_is_retried(three, monkeypatch):
    from strata_git.ops.sync import sync

    a, _, c = three
    a.write("notes/from-a", b"# From a\n")
    c.write("notes/from-c", b"# From c\n")
    real = sync.fetch
    calls = []

    def fetch_then_c_pushes(repo, where, started=None):
        real(repo, where, started)
        calls.append(1)
        if len(calls) == 1 and repo.root == a.repo.root:
            monkeypatch.setattr(sync, "fetch", real)
            c.sync()  # lands between a's fetch and a's push
            monkeypatch.setattr(sync, "fetch", fetch_then_c_pushes)

    monkeypatch.setattr(sync, "fetch", fetch_then_c_pushes)
    result = a.sync()
    assert result.attempts == 2 and result.pushed
    converge(three)
    assert {"notes/from-a.md", "notes/from-c.md"} <= set(files(a))


def test_no_remote_named_and_dry_run(three):
    a = three[0]
    out = strata(Path(a.repo.root), "sync", "--remote", "nowhere")
    assert out.returncode == 1 and b"no remote named 'nowhere'" in out.stderr
    (Path(a.repo.root) / "active/draft.md").write_text("# Draft\n")
    out = strata(Path(a.repo.root), "sync", "--dry-run", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["dry_run"] and data["committed"] == ["active/draft.md"] and not data["pushed"]
    assert git(Path(a.repo.root), "status", "--porcelain").stdout.startswith(b"?? ")  # nothing committed


# -- other machines' work shows up where it belongs -----------------------------------

def test_plain_git_pull_refreshes_index_md_search_and_shadow(three):
    a, _, c = three
    a.write("notes/heron", b"# Heron\n\nThe heron nests by the weir.\n")
    a.janitor(now=T0 + 40 * DAY)
    a.janitor(now=T0 + 200 * DAY)
    a.write("notes/egret", b"# Egret\n\nThe egret fishes at dawn.\n")
    a.sync()
    root = Path(c.repo.root)
    git(root, "pull", "-q", "--no-rebase", "origin", "main")  # plain git: the hooks do the work
    assert "`notes/egret` · **Egret**" in (root / "index.md").read_text()
    assert c.search("egret dawn")[0].tier == "active"
    from strata_git.store import shadow

    assert shadow.reflects(c.repo) == c.repo.head()
    hits = c.search("heron weir")
    assert hits and hits[0].tier == "archive"


def test_a_memory_rehydrated_elsewhere_appears_in_a_pruned_clone(three):
    a, b, _ = three
    a.write("notes/heron", b"# Heron\n\nThe heron nests by the weir.\n")
    a.janitor(now=T0 + 40 * DAY)
    a.janitor(now=T0 + 200 * DAY)
    a.sync()
    b.sync()
    assert not (Path(b.repo.root) / "archive/notes/heron.md").exists()  # sparse: archive/ stays remote
    a.recall("notes/heron")
    a.sync()
    b.sync()
    assert files(b)["notes/heron.md"].startswith("# Heron")
    assert b.search("heron")[0].tier == "active"


def test_serve_sync_runs_a_sync_after_each_cycle(three):
    a, b, _ = three
    a.write("notes/by-serve", b"# By serve\n")
    out = strata(Path(a.repo.root), "serve", "--once", "--live", "--sync", "--json")
    assert out.returncode == 0, out.stderr
    b.sync()
    assert "notes/by-serve.md" in files(b)


def test_a_sync_killed_after_moving_head_is_finished_by_the_next_command(three, monkeypatch):
    from strata_git.ops import txn

    a, b, _ = three
    b.write("notes/from-b", b"# From b\n")
    b.sync()

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt  # stands in for SIGKILL right after the commit point

    monkeypatch.setattr(txn, "_finish", killed)
    with pytest.raises(KeyboardInterrupt):
        a.sync()
    monkeypatch.undo()
    root = Path(a.repo.root)
    assert not (root / "active/notes/from-b.md").exists()  # HEAD moved, the working tree did not
    result = a.sync()  # recovers (rolls forward) first
    assert (root / "active/notes/from-b.md").read_text() == "# From b\n"
    assert git(root, "status", "--porcelain").stdout == b""
    assert result.head == b.repo.head()


def test_a_file_changed_after_the_status_check_is_never_overwritten(three, monkeypatch):
    from strata_git.ops.sync import merge, sync

    a, b, _ = three
    b.write("projects/koda", (KODA + "from b\n").encode())
    b.sync()
    root = Path(a.repo.root)
    mine = "# Koda\n\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8rT4nL2vKx\n"
    (root / "active/projects/koda.md").write_text(mine)  # refused by the checks: stays uncommitted
    # as if the edit landed between sync's status listing and its checkout
    monkeypatch.setattr(sync, "_refuse_dirty", lambda repo, old, new, listed, left: merge.changes(repo, old, new))
    a.sync()
    assert (root / "active/projects/koda.md").read_text() == mine
    assert git(root, "show", "HEAD:active/projects/koda.md").stdout.decode().endswith("from b\n")
    assert git(root, "status", "--porcelain").stdout.decode().strip() == "M active/projects/koda.md"


def test_plain_git_pull_rebase_refreshes_index_md_and_search(three):
    a, _, c = three
    c.write("notes/local", b"# Local\n\nwritten on c before pulling\n")
    a.write("notes/ibis", b"# Ibis\n\nThe ibis wades in the shallows.\n")
    a.sync()
    root = Path(c.repo.root)
    git(root, "pull", "-q", "--rebase", "origin", "main")  # post-rewrite and post-checkout hooks
    text = (root / "index.md").read_text()
    assert "`notes/ibis` · **Ibis**" in text and "`notes/local` · **Local**" in text
    assert c.search("ibis shallows")[0].name == "notes/ibis"
    from strata_git.store import shadow

    assert shadow.reflects(c.repo) == c.repo.head()


def test_a_sync_merge_makes_nothing_young(three, monkeypatch):
    """A memory's age is the time of its last real change, on whichever machine: the merge
    commit (dated later) and the other machine's janitor moves do not count."""
    from strata_git.store import history

    a, b, _ = three
    a.write("notes/from-a", b"# From a\n")  # both dated FIXED_DATE (T0)
    b.janitor(now=T0 + 40 * DAY)  # b cools projects/koda
    b.sync()
    later = f"@{T0 + 50 * DAY} +0000"
    monkeypatch.setenv("GIT_COMMITTER_DATE", later)
    monkeypatch.setenv("GIT_AUTHOR_DATE", later)
    assert a.sync().integrated == "merge"
    times = history.last_changed(a.repo, history.head(a.repo))
    assert times["notes/from-a.md"] == T0 and times["projects/koda.md"] == T0
    b.sync()
    assert history.last_changed(b.repo, history.head(b.repo)) == times  # the same on every machine


# -- what a review found ---------------------------------------------------------------

def test_a_copy_never_lands_on_another_decisions_result(three):
    a, b, _ = three
    a.write("projects/koda", b"# Koda\n\nA's version\n")
    b.write("projects/koda", b"# Koda\n\nB's version\n")
    a.sync()
    copy = b.sync().conflicts[0].beside
    a.sync()
    b.resolve(copy[len("active/"):-3], "copy")  # koda is b's bytes again; the copy is deleted on b
    a.write("projects/koda", b"# Koda\n\nA's second version\n")  # meanwhile a edits both
    held = Path(a.repo.root) / copy  # edited by hand: no door writes to a conflict copy's name
    held.write_bytes(held.read_bytes() + b"\nIMPORTANT NOTE FROM A\n")
    a.sync()
    b.sync()
    converge(three)
    texts = "".join(files(b).values())
    assert "IMPORTANT NOTE FROM A" in texts and "A's second version" in texts and "B's version" in texts


def test_a_file_on_one_side_and_a_folder_of_its_name_on_the_other_both_survive(three):
    a, b, _ = three
    a.write("notes", b"# Notes as a file\n")
    b.write("notes.md/inner", b"# Inner memory\n")
    a.sync()
    result = b.sync()
    assert result.conflicts and "folder of the same name" in result.conflicts[0].how
    converge(three)
    found = files(a)
    assert found["notes.md/inner.md"] == "# Inner memory\n"
    assert any("Notes as a file" in text for name, text in found.items() if name.startswith("notes.conflict-"))


def test_a_clean_text_merge_that_breaks_the_config_is_kept_as_a_conflict(three):
    a, b, _ = three
    for v, line, after in ((a, "research = 21\n", "gtd = 7\n"), (b, "research = 45\n", "default = 30\n")):
        path = Path(v.repo.root) / ".strata/config.toml"
        path.write_text(path.read_text().replace(after, after + line))
        git(Path(v.repo.root), "commit", "-q", "-am", "config: research folder")
    a.sync()
    result = b.sync()
    assert [d.beside for d in result.conflicts] and result.conflicts[0].beside.startswith(".strata/config.toml")
    converge(three)
    for v in three:  # every machine still loads its config
        from strata_git.app.vault import Vault

        Vault.open(v.repo.root).status()
    out = strata(Path(b.repo.root), "status")
    assert b"conflict: .strata/config.toml" in out.stdout and b"merge the two by hand" in out.stdout


def test_gitignore_edits_from_both_sides_are_united(three):
    a, b, _ = three
    for v, rule in ((a, "*.tmp\n"), (b, "*.bak\n")):
        path = Path(v.repo.root) / ".gitignore"
        path.write_text(path.read_text() + rule)
        git(Path(v.repo.root), "commit", "-q", "-am", "ignore more")
    a.sync()
    assert b.sync().conflicts == []
    converge(three)
    text = (Path(a.repo.root) / ".gitignore").read_text()
    assert "*.tmp" in text and "*.bak" in text


def test_names_differing_only_by_case_are_one_memory_to_the_merge(three):
    a, b, _ = three
    a.write("people/Ana", b"# Ana\n\nfrom a\n")
    b.write("people/ana", b"# ana\n\nfrom b\n")
    a.sync()
    [conflict] = b.sync().conflicts
    converge(three)
    found = files(a)
    assert "people/Ana.md" not in found or "people/ana.md" not in found  # one spelling in place
    assert any("from b" in text for name, text in found.items() if ".conflict-" in name)
    (Path(a.repo.root) / "active/notes").mkdir(parents=True, exist_ok=True)
    (Path(a.repo.root) / "active/notes/brand-new.md").write_text("# Brand new\n")
    assert a.sync().committed == ["active/notes/brand-new.md"]


def test_many_new_files_are_checked_and_committed_in_one_pass(three):
    a = three[0]
    folder = Path(a.repo.root) / "active/bulk"
    folder.mkdir(parents=True)
    for i in range(300):
        (folder / f"m{i:03d}.md").write_text(f"# Memory {i}\n")
    (folder / "secret.md").write_text("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8rT4nL2vKx\n")
    result = a.sync()
    assert len(result.committed) == 300 and [item["path"] for item in result.left] == ["active/bulk/secret.md"]


def test_a_mass_deletion_is_not_committed_by_sync(three):
    a = three[0]
    for i in range(30):
        a.write(f"bulk/m{i:02d}", f"# Memory {i}\n".encode())
    a.sync()
    for path in (Path(a.repo.root) / "active/bulk").iterdir():
        path.unlink()
    result = a.sync()
    assert result.committed == [] and len(result.left) == 30 and "deletions at once" in result.left[0]["reason"]
    assert "bulk/m00.md" in git(Path(a.repo.root), "ls-tree", "-r", "--name-only", "HEAD").stdout.decode()


def test_a_sync_killed_inside_its_commit_does_not_block_the_next(three):
    from strata_git.core import contract

    a = three[0]
    root = Path(a.repo.root)
    (root / ".git/index.lock").write_bytes(b"")  # what a kill inside `git commit` leaves
    past = os.stat(root / ".git/index.lock").st_mtime - 60
    os.utime(root / ".git/index.lock", (past, past))
    marker = root / ".git/strata" / contract.SYNC_COMMITTING
    marker.write_text("999999999\n")  # a pid that does not exist
    os.utime(marker, (past, past))
    (root / "active/after-the-kill.md").write_text("# After\n")
    assert a.sync().committed == ["active/after-the-kill.md"]
    assert not marker.exists() and not (root / ".git/index.lock").exists()


def test_a_command_after_a_killed_sync_finishes_it_first(three, monkeypatch):
    from strata_git.ops import txn

    a, b, _ = three
    b.write("notes/from-b", b"# From b\n")
    b.sync()
    monkeypatch.setattr(txn, "_finish", lambda *args, **kwargs: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        a.sync()
    monkeypatch.undo()
    a.write("notes/next", b"# Next\n")  # any command that takes the lock rolls the sync forward first
    root = Path(a.repo.root)
    assert (root / "active/notes/from-b.md").read_text() == "# From b\n"
    assert git(root, "status", "--porcelain").stdout == b""


def test_sync_refusals_name_sync(three):
    a = three[0]
    git(Path(a.repo.root), "checkout", "-q", "--detach")
    with pytest.raises(StrataError, match="refusing to sync on a detached HEAD"):
        a.sync()


def test_a_new_machine_joins_sees_everything_downloads_no_archive_and_can_rehydrate(tmp_path: Path, daemon):
    from strata_git.app.vault import Vault
    from strata_git.gitio import partial
    from strata_git.ops import clone

    remote = bare_remote(daemon.base / "mem.git")
    a, b, _ = make_machines(tmp_path, daemon.url("mem.git"), remote)
    a.write("notes/heron", b"# Heron\n\nThe heron nests by the weir.\n")
    a.janitor(now=T0 + 40 * DAY)
    a.janitor(now=T0 + 200 * DAY)
    a.sync()
    a.archive()  # pushed, verified and pruned on a
    a.write("notes/fresh", b"# Fresh\n\nwritten after the archive\n")
    a.sync()
    clone.clone(daemon.url("mem.git"), str(tmp_path / "d"))
    d = Vault.open(str(tmp_path / "d"))
    archived = {e.name: e for e in d.list(tier="archive")}
    assert {"notes/heron.md", "projects/koda.md"} <= set(archived)
    listing = git(tmp_path / "d", "ls-tree", "-r", "HEAD", "--", "archive").stdout.decode().splitlines()
    blobs = [line.split()[2] for line in listing if line.endswith(".md")]
    assert blobs and partial.absent(d.repo, blobs) == blobs  # none of the archive's content came down
    assert files(d)["notes/fresh.md"].startswith("# Fresh")
    assert d.search("heron weir")[0].tier == "archive"
    d.recall("notes/heron")
    assert files(d)["notes/heron.md"].startswith("# Heron")
    assert d.sync().pushed
    a.sync()
    assert files(a)["notes/heron.md"].startswith("# Heron")  # a brings it back too


def test_a_kept_edit_fixed_later_is_committed_beside_never_over_the_remote_change(three):
    a, b, _ = three
    root = Path(a.repo.root)
    (root / "active/projects/koda.md").write_text(KODA + "A work\naws_secret_access_key = "
                                                  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8rT4nL2vKx\n")
    b.write("projects/koda", (KODA + "B's important edit\n").encode())
    b.sync()
    a.sync()  # a's edit is refused (the secret) and kept; HEAD moves to b's version
    (root / "active/projects/koda.md").write_text(KODA + "A work\n")  # the agent removes the secret
    result = a.sync()
    [copy] = [p for p in result.committed if ".conflict-" in p]
    converge(three)
    found = files(b)
    assert found["projects/koda.md"].endswith("B's important edit\n")  # the remote's change stands
    assert "A work" in found[copy[len("active/"):]]
    assert b.status().conflicts


def test_a_conflict_whose_path_the_other_side_made_a_folder_keeps_both_versions(three):
    a, b, _ = three
    rb = Path(b.repo.root)
    a.write("projects/koda", (KODA + "A's line\n").encode())
    b.write("projects/koda", (KODA + "B's line\n").encode())
    (rb / "cooled/projects").mkdir(parents=True, exist_ok=True)
    git(rb, "mv", "active/projects/koda.md", "cooled/projects/koda.md")
    (rb / "active/projects/koda.md").mkdir()
    (rb / "active/projects/koda.md/inner.md").write_text("# Inner\n")
    git(rb, "add", "-A")
    git(rb, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a folder where the memory was")
    b.sync()
    a.sync()
    converge(three)
    texts = "".join(files(a).values()) + "".join(files(a, "cooled").values())
    assert "A's line" in texts and "B's line" in texts and "# Inner" in texts


def test_names_and_paths_the_checks_refuse_are_never_committed_by_sync(three):
    a, _, _ = three
    root = Path(a.repo.root)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    cases = {f"active/{token}.md": "# T\n\nfine\n",  # a secret in the path
             "active/x and y.md": "# a\n", "active/X and Y.md": "# b\n",  # one name, two spellings
             "active/Projects/p.md": "# p\n",  # a second spelling of projects/
             "active/fine.md": "# Fine\n"}
    for path, text in cases.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "active/projects/Koda.md").write_text("# another Koda\n")
    git(root, "add", "active/projects/Koda.md")  # staged by hand, next to projects/koda.md
    result = a.sync()
    assert result.committed == ["active/fine.md"]
    pushed = git(Path(a.repo.root), "ls-tree", "-r", "--name-only", "origin/main").stdout.decode()
    assert token not in pushed and "Koda.md" not in pushed and "Projects" not in pushed and "x and y" not in pushed


def test_a_copy_uses_the_folder_spelling_already_in_place(three):
    a, b, _ = three
    (Path(a.repo.root) / "active/Notes").mkdir()
    (Path(a.repo.root) / "active/Notes/x.md").write_text("# x from a\n")
    (Path(b.repo.root) / "active/notes").mkdir()
    (Path(b.repo.root) / "active/notes/x.md").write_text("# x from b\n")
    a.sync()
    [conflict] = b.sync().conflicts
    assert conflict.beside.startswith("active/Notes/x.conflict-")
    converge(three)
    (Path(a.repo.root) / "active/Notes/y.md").write_text("# y\n")
    assert a.sync().committed == ["active/Notes/y.md"]


def test_syncs_that_only_bring_changes_leave_git_s_housekeeping_on(three):
    """Each fetch writes a pack (fetch.unpackLimit=1 here: a real one does for a hundred objects or
    more). git's own `git pull` then runs `git maintenance run --auto`, whose gc folds the packs
    together past gc.autoPackLimit; a sync's fetch does the same, or a clone that only syncs keeps
    every pack it ever fetched, and every git command looks through them all. The partial clone
    (b) keeps its promisor packs' promise: gc downloads nothing and fsck stays clean."""
    a, b, c = three
    for v in (b, c):
        root = Path(v.repo.root)
        for key, value in (("gc.autoPackLimit", "3"), ("gc.autoDetach", "false"), ("fetch.unpackLimit", "1")):
            git(root, "config", key, value)
    missing = git(Path(b.repo.root), "rev-list", "--objects", "--all", "--missing=print").stdout.count(b"\n?")
    for n in range(6):
        a.write(f"notes/n{n}", f"# note {n}\n\nwritten on a, round {n}\n".encode())
        a.sync()
        b.sync()
        c.sync()
    counts = {v.repo.root: len(list((Path(v.repo.git_dir) / "objects" / "pack").glob("*.pack"))) for v in (b, c)}
    assert all(1 <= n <= 3 for n in counts.values()), counts
    for v in (b, c):
        assert git(Path(v.repo.root), "fsck", check=False).returncode == 0
    after = git(Path(b.repo.root), "rev-list", "--objects", "--all", "--missing=print").stdout.count(b"\n?")
    assert after >= missing  # (gc fetched nothing the partial clone had left on the remote)
    converge(three)
