"""Three machines over `git daemon` on 127.0.0.1, 120 random rounds of writes, edits, deletes,
reads, recalls, janitor cycles and syncs, checked against a ledger kept outside the
repositories.

Every edit adds a unique token line to a memory. An edit is lost if, after the final
two sync rounds, its token is in no file of the converged tree, unless the memory was
deliberately deleted by a machine whose version held that token. The test also checks
that every memory is in exactly one tier and that all clones have the same tree.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git
from helpers.machines import DAY, T0, make_machines

pytestmark = pytest.mark.slow

ROUNDS = 120


def _tree_texts(v) -> dict[str, bytes]:
    root = Path(v.repo.root)
    out = git(root, "ls-tree", "-r", "-z", "HEAD").stdout.decode().split("\0")
    entries = [item.split("\t", 1) for item in out if item]
    paths = [path for meta, path in entries if path.endswith(".md") and path.split("/")[0] in
             ("active", "cooled", "archive")]
    blobs = [meta.split()[2] for meta, path in entries if path in set(paths)]
    from strata_git.gitio import partial
    from strata_git.ops import archive

    archive.fetch_blobs_from(v.repo, "origin", partial.absent(v.repo, blobs))  # b is a partial clone
    return dict(zip(paths, v.repo.objects(blobs), strict=True))


def test_random_rounds_lose_no_edit_and_converge(tmp_path: Path, daemon):
    seed = int(os.environ.get("STRATA_SEED", random.randrange(1 << 30)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    remote = bare_remote(daemon.base / "mem.git")
    machines = make_machines(tmp_path, daemon.url("mem.git"), remote)
    written: set[str] = set()
    deleted: set[str] = set()  # tokens held by a version some machine deliberately deleted
    counts = {"write": 0, "edit": 0, "forget": 0, "read": 0, "janitor": 0, "sync": 0, "conflicts": 0}
    day = 0
    for step in range(ROUNDS):
        v = rng.choice(machines)
        action = rng.choices(["write", "edit", "forget", "read", "janitor", "sync"], [3, 6, 1, 2, 2, 5])[0]
        active = sorted(e.name[:-3] for e in v.list(tier="active"))
        token = f"tok{step:04d}x{rng.randrange(10**6):06d}"
        if action == "write" or (action in ("edit", "forget") and not active):
            name = f"notes/n{rng.randrange(12):02d}"  # a small name space: machines collide on purpose
            if name in active or v.locate(name)[0] not in (None, "active"):
                continue
            v.write(name, f"# {name}\n\n{token}\n".encode())
            written.add(token)
            counts["write"] += 1
        elif action == "edit":
            name = rng.choice(active)
            text = (Path(v.repo.root) / "active" / f"{name}.md").read_text()
            lines = text.splitlines(keepends=True)
            heading = next((i for i, line in enumerate(lines) if line.startswith("# ")), 0)
            at = rng.choice([heading + 1, len(lines)])  # under the heading or at the end
            lines.insert(at, f"{token}\n")
            if ".conflict-" in name:  # a copy is no name to write to (every door refuses it): edited by hand
                (Path(v.repo.root) / "active" / f"{name}.md").write_text("".join(lines))
                subprocess.run(["git", "commit", "-q", "-m", "edit a copy by hand", "--", f"active/{name}.md"],
                               cwd=v.repo.root, check=True)
            else:
                v.write(name, "".join(lines).encode())
            written.add(token)
            counts["edit"] += 1
        elif action == "forget":
            name = rng.choice(active)
            text = (Path(v.repo.root) / "active" / f"{name}.md").read_text()
            deleted |= {line.strip() for line in text.splitlines() if line.startswith("tok")}
            v.forget(name)
            counts["forget"] += 1
        elif action == "read":
            known = [e.name[:-3] for e in v.list() if e.tier != "active"] or active
            if known:
                v.read(rng.choice(known))  # an archived one comes back to active/
                counts["read"] += 1
        elif action == "janitor":
            day = max(day, rng.choice([0, 20, 40, 120, 250]))
            v.janitor(now=T0 + day * DAY)
            counts["janitor"] += 1
        else:
            counts["conflicts"] += len(v.sync().conflicts)
            counts["sync"] += 1
    for _ in range(2):
        for v in machines:
            v.sync()
    trees = {git(Path(v.repo.root), "rev-parse", "HEAD^{tree}").stdout for v in machines}
    assert len(trees) == 1, "the clones did not converge in two rounds"
    texts = _tree_texts(machines[0])
    found = {line.strip() for raw in texts.values() for line in raw.decode().splitlines() if line.startswith("tok")}
    lost = written - found - deleted
    names = [path.split("/", 1)[1] for path in texts]
    print(f"rounds {ROUNDS}, {counts}, tokens {len(written)}, lost {len(lost)}, "
          f"memories {len(names)}, clones converged")
    assert not lost, f"lost edits (seed {seed}): {sorted(lost)}"
    assert len(names) == len(set(names)), "a memory is in two tiers at once"
    for v in machines:
        assert git(Path(v.repo.root), "status", "--porcelain").stdout == b""
