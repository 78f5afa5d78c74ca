"""Hostile input battery: names, links and frontmatter an agent (or an attacker
speaking through one) may hand to git-strata.

Every refusal must be clean: the right exception (or exit 1 with one
`git-strata: error:` line from the CLI) and a repository exactly as it was: same
HEAD, a clean `git status`, and not one file added, changed or removed anywhere
under the test's tmp_path. Every acceptance must be faithful: the bytes given are
the bytes on disk, in the commit and in `read()`.

The corpora: names that escape the repository or that git, a shell, Windows or Unicode read
differently; links and special files (never followed, not even a committed link); and
frontmatter that bombs, executes, overflows or fails to decode.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, git, head, strata
from strata_git.errors import BadMemory, BadName, NotFound, Refused

# --------------------------------------------------------------------------------------
# helpers


def snapshot(tmp_path: Path, mem: Path) -> dict[str, str]:
    """Everything under tmp_path outside .git folders (path -> kind and digest), plus the
    parts of .git a hostile name could aim at (config, hooks, refs)."""
    seen: dict[str, str] = {}

    def record(path: Path) -> None:
        rel = str(path.relative_to(tmp_path))
        if path.is_symlink():
            seen[rel] = "link -> " + os.readlink(path)
        elif path.is_file():
            seen[rel] = "file " + hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            seen[rel] = "dir"
        else:
            seen[rel] = "special"

    for folder, dirs, files in os.walk(tmp_path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for item in dirs + files:
            record(Path(folder, item))
    gitdir = mem / ".git"
    for path in [gitdir / "config", *sorted((gitdir / "hooks").iterdir()), *sorted((gitdir / "refs").rglob("*"))]:
        record(path)
    return seen


def porcelain(mem: Path) -> bytes:
    return git(mem, "status", "--porcelain", "--untracked-files=all").stdout


def state(mem: Path, tmp_path: Path) -> tuple:
    return head(mem), porcelain(mem), snapshot(tmp_path, mem)


def assert_untouched(mem: Path, tmp_path: Path, before: tuple) -> None:
    after = state(mem, tmp_path)
    assert after[0] == before[0], "HEAD moved"
    assert after[1] == before[1], f"git status changed: {after[1]!r}"
    added = sorted(set(after[2]) - set(before[2]))
    removed = sorted(set(before[2]) - set(after[2]))
    changed = sorted(k for k in set(after[2]) & set(before[2]) if after[2][k] != before[2][k])
    assert (added, removed, changed) == ([], [], []), "files changed on disk"


def assert_clean_cli_error(proc: subprocess.CompletedProcess, expect: str = "") -> None:
    """Exit 1, one `git-strata: error:` line (maybe a hint line), no traceback, nothing on stdout."""
    err = proc.stderr.decode("utf-8", "replace")
    lines = err.splitlines()
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "unexpected error" not in err, err
    assert lines and lines[0].startswith("git-strata: error: "), err
    assert sum(line.startswith("git-strata: error:") for line in lines) == 1, err
    assert all(line.startswith(("git-strata: error: ", "hint: ")) for line in lines), err
    assert expect in lines[0], err
    assert proc.stdout == b""


def strata_timed(cwd: Path, *args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    """Like conftest.strata, with a short timeout: a FIFO must not be able to hang us."""
    return subprocess.run([str(BIN / "git-strata"), *args], cwd=cwd, capture_output=True, input=b"",
                          env=dict(os.environ), timeout=timeout)


# --------------------------------------------------------------------------------------
# hostile names: escapes, git's own folder, options, globs, device names, lengths, invisible characters

# A path of 32 components of 127 bytes plus 'x': 4,097 bytes, no component too long on its
# own, so only the total-length rule can refuse it.
PATH_4097 = ("d" * 127 + "/") * 32 + "x"
assert len(PATH_4097.encode()) == 4097

HOSTILE_NAMES = [
    # absolute paths
    pytest.param("/etc/passwd", id="abs-etc-passwd"),
    pytest.param("C:\\x", id="abs-drive-letter"),
    pytest.param("c:x", id="abs-drive-relative"),
    pytest.param("\\\\server\\share", id="abs-unc"),
    pytest.param("..\\..\\windows\\win.ini", id="dotdot-backslash"),
    # '..' and '.' anywhere
    pytest.param("../../etc/passwd", id="dotdot-etc-passwd"),
    pytest.param("a/b/../../../x", id="dotdot-climbs-out"),
    pytest.param("active/../../outside", id="dotdot-via-tier"),
    pytest.param("projects/..", id="dotdot-last"),
    pytest.param("..", id="dotdot-alone"),
    pytest.param("a/./b", id="dot-component"),
    # git's own folder and its aliases (NTFS trailing dot, 8.3 short name, case)
    pytest.param(".git/config", id="git-config"),
    pytest.param(".git/hooks/pre-commit", id="git-hook"),
    pytest.param(".GIT/config", id="git-upper"),
    pytest.param(".git./config", id="git-trailing-dot"),
    pytest.param(".git /config", id="git-trailing-space"),
    pytest.param("git~1/config", id="git-8dot3"),
    pytest.param("projects/.git/x", id="git-nested"),
    # other dot components
    pytest.param(".gitattributes", id="dot-gitattributes"),
    pytest.param(".gitmodules", id="dot-gitmodules"),
    pytest.param(".strata/config", id="dot-strata"),
    pytest.param(".md", id="dot-only-suffix"),
    # control characters
    pytest.param("a\0b", id="nul-byte"),
    pytest.param("a\nb", id="newline"),
    pytest.param("a\rb", id="carriage-return"),
    pytest.param("a\tb", id="tab"),
    pytest.param("a\x1b[31mb", id="ansi-escape"),
    pytest.param("a\x7fb", id="del"),
    pytest.param("a\x85b", id="c1-next-line"),
    pytest.param("a\u2028b", id="line-separator"),
    # options git or a shell would parse
    pytest.param("-rf", id="dash-rf"),
    pytest.param("--upload-pack=touch x", id="dash-upload-pack"),
    pytest.param("projects/--output=../x", id="dash-nested"),
    # pathspec magic and globs
    pytest.param(":(exclude)*", id="pathspec-exclude"),
    pytest.param(":/", id="pathspec-top"),
    pytest.param("*", id="glob-star"),
    pytest.param("?", id="glob-question"),
    pytest.param("[a]", id="glob-class"),
    pytest.param("file.md:stream", id="ntfs-ads"),
    # Windows device names and names Windows silently trims
    pytest.param("CON", id="win-con"),
    pytest.param("nul.md", id="win-nul-md"),
    pytest.param("aux", id="win-aux"),
    pytest.param("COM1", id="win-com1"),
    pytest.param("projects/lpt9.txt", id="win-lpt9-ext"),
    pytest.param("name.", id="win-trailing-dot"),
    pytest.param("name ", id="win-trailing-space"),
    pytest.param(" name", id="leading-space"),
    # lengths: bytes count, not characters
    pytest.param("projects/" + "c" * 256, id="component-256-bytes"),
    pytest.param("projects/" + "\u00e9" * 128, id="component-256-bytes-in-128-chars"),
    pytest.param(PATH_4097, id="path-4097-bytes"),
    # invisible and direction-changing characters, non-NFC, undecodable bytes
    pytest.param("evil\u202egnp.md", id="rtl-override"),
    pytest.param("a\u200db", id="zero-width-joiner"),
    pytest.param("\ufeffname", id="bom"),
    pytest.param("e\u0301", id="nfd"),
    pytest.param("projects/\udcff", id="lone-surrogate"),
    # tier folders and empty parts
    pytest.param("active/x", id="tier-prefix-active"),
    pytest.param("archive/x", id="tier-prefix-archive"),
    pytest.param("", id="empty"),
    pytest.param("/", id="slash"),
    pytest.param("//", id="double-slash"),
    pytest.param("a//b", id="empty-component"),
    pytest.param("projects/", id="trailing-slash"),
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_name_is_refused_by_the_api(vault, mem: Path, tmp_path: Path, name: str) -> None:
    before = state(mem, tmp_path)
    with pytest.raises(BadName) as info:
        vault.write(name, b"# hi\n")
    # The message is echoed to terminals and agents: it must stay on one line.
    assert info.value.message.startswith("bad memory name ")
    assert "\n" not in info.value.message and "\r" not in info.value.message
    # Every entry point validates before touching anything, not only write.
    for operation in (vault.read, vault.forget, vault.recall):
        with pytest.raises(BadName):
            operation(name)
    assert_untouched(mem, tmp_path, before)


CLI_NAMES = [
    pytest.param("../../etc/passwd", id="dotdot"),
    pytest.param(".git/config", id="git-config"),
    pytest.param(".git./config", id="git-trailing-dot"),
    pytest.param("a\nb", id="newline"),
    pytest.param("a\x1b[2Jb", id="ansi-clear-screen"),
    pytest.param("-rf", id="dash-rf"),
    pytest.param("--upload-pack=touch x", id="dash-upload-pack"),
    pytest.param(":(exclude)*", id="pathspec-exclude"),
    pytest.param("*", id="glob-star"),
    pytest.param("CON", id="win-con"),
    pytest.param("evil\u202egnp", id="rtl-override"),
    pytest.param("e\u0301", id="nfd"),
    pytest.param("active/x", id="tier-prefix"),
    pytest.param("", id="empty"),
    pytest.param("a//b", id="empty-component"),
    # argv is bytes: an undecodable name arrives as a lone surrogate and must still be refused
    pytest.param(b"projects/\xff", id="invalid-utf8-argv"),
]


@pytest.mark.parametrize("name", CLI_NAMES)
def test_hostile_name_is_refused_by_the_cli(mem: Path, tmp_path: Path, name: str | bytes) -> None:
    before = state(mem, tmp_path)
    # '--' so that names starting with '-' reach git-strata's check instead of argparse's
    # option parser (which would exit 2 as a usage error, a different contract).
    proc = strata(mem, "write", "-m", "hi", "--", name)  # type: ignore[arg-type]
    assert_clean_cli_error(proc, "bad memory name")
    assert_untouched(mem, tmp_path, before)


def test_hostile_name_from_the_cli_never_runs_a_command(mem: Path, tmp_path: Path) -> None:
    # If the name ever reached git as an option, `touch x` would run in the repository.
    proc = strata(mem, "read", "--", "--upload-pack=touch x")
    assert_clean_cli_error(proc, "bad memory name")
    assert not list(tmp_path.rglob("x"))


# Windows reserves more device names than names.py knows. Git for Windows refuses to check
# these out (compat/mingw.c is_valid_win32_path: "trailing spaces, a file extension, or an
# NTFS Alternate Data Stream do not matter", and CONIN$/CONOUT$ are reserved), so a memory
# written under such a name on Linux makes the repository un-clonable on Windows.
WINDOWS_RESERVED_VARIANTS = [
    pytest.param("CON .md", id="con-space-extension"),
    pytest.param("projects/nul .txt", id="nul-space-extension"),
    pytest.param("CONIN$", id="conin"),
    pytest.param("conout$.md", id="conout"),
    # Microsoft's naming rules: superscript digits count as digits in COM#/LPT#.
    pytest.param("COM\u00b9", id="com-superscript-1"),
    pytest.param("lpt\u00b2.md", id="lpt-superscript-2"),
]


@pytest.mark.parametrize("name", WINDOWS_RESERVED_VARIANTS)
def test_windows_reserved_names_git_for_windows_refuses(vault, mem: Path, tmp_path: Path, name: str) -> None:
    before = state(mem, tmp_path)
    with pytest.raises(BadName):
        vault.write(name, b"# hi\n")
    assert_untouched(mem, tmp_path, before)


# --------------------------------------------------------------------------------------
# collisions: names that differ only by case, normalization or compatibility form


@pytest.mark.parametrize(("existing", "colliding"), [
    pytest.param("projects/Note", "projects/note", id="case"),
    pytest.param("projects/Note", "projects/NOTE.md", id="case-with-suffix"),
    pytest.param("projects/caf\u00e9", "projects/CAF\u00c9", id="accented-case"),
    # collision_key casefolds fully: 'ß' folds to 'ss'
    pytest.param("projects/stra\u00dfe", "projects/STRASSE", id="casefold-sharp-s"),
    # collision_key applies NFKD: fullwidth and ligature forms fold to ASCII
    pytest.param("projects/a", "projects/\uff21", id="fullwidth"),
    pytest.param("projects/file", "projects/\ufb01le", id="fi-ligature"),
    pytest.param("Projects/x", "projects/X", id="case-in-folder"),
])
def test_near_collision_is_refused_naming_the_existing_memory(vault, mem: Path, tmp_path: Path,
                                                              existing: str, colliding: str) -> None:
    vault.write(existing, b"# first\n")
    before = state(mem, tmp_path)
    with pytest.raises(BadName) as info:
        vault.write(colliding, b"# second\n")
    assert f"active/{existing}.md" in info.value.message
    # read must not silently hand back the other memory either
    with pytest.raises(BadName):
        vault.read(colliding)
    assert_untouched(mem, tmp_path, before)


def test_same_name_in_another_normalization_is_refused(vault, mem: Path, tmp_path: Path) -> None:
    vault.write("projects/caf\u00e9", b"# NFC\n")
    before = state(mem, tmp_path)
    with pytest.raises(BadName) as info:
        vault.write("projects/cafe\u0301", b"# NFD\n")
    assert "NFC" in info.value.message
    assert_untouched(mem, tmp_path, before)
    assert vault.read("projects/caf\u00e9").memory.raw == b"# NFC\n"


def test_near_collision_is_refused_by_the_cli(vault, mem: Path, tmp_path: Path) -> None:
    vault.write("projects/Note", b"# first\n")
    before = state(mem, tmp_path)
    assert_clean_cli_error(strata(mem, "write", "projects/note", "-m", "second"), "active/projects/Note.md")
    assert_untouched(mem, tmp_path, before)


# --------------------------------------------------------------------------------------
# links and special files: never followed, not even a link that was committed


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_bytes(b"outside the repository\n")
    return secret


def _commit_behind_strata(mem: Path, path: str) -> None:
    """Commit what is on disk as a sync from elsewhere would bring it: hooks bypassed."""
    git(mem, "add", "--", path)
    git(mem, "commit", "-q", "--no-verify", "-m", f"sync {path}")


@pytest.mark.parametrize("committed", [False, True], ids=["untracked-link", "committed-link"])
def test_symlinked_memory_is_neither_read_nor_written_through(vault, mem: Path, tmp_path: Path,
                                                              outside: Path, committed: bool) -> None:
    link = mem / "active/projects/evil.md"
    link.symlink_to(outside)
    if committed:
        _commit_behind_strata(mem, "active/projects/evil.md")
    before = state(mem, tmp_path)
    with pytest.raises((Refused, NotFound)):
        vault.read("projects/evil")
    with pytest.raises((Refused, NotFound)):
        vault.write("projects/evil", b"# overwritten\n")
    assert outside.read_bytes() == b"outside the repository\n"
    assert link.is_symlink()
    assert_untouched(mem, tmp_path, before)


@pytest.mark.skipif(not os.path.isfile("/etc/passwd"), reason="needs /etc/passwd")
def test_symlink_to_etc_passwd_is_not_read(vault, mem: Path) -> None:
    (mem / "active/projects/evil.md").symlink_to("/etc/passwd")
    with pytest.raises((Refused, NotFound)):
        vault.read("projects/evil")
    proc = strata_timed(mem, "read", "projects/evil")
    assert_clean_cli_error(proc)
    assert b"root:" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("linkdir, name", [
    pytest.param("active/linkdir", "linkdir/x", id="top-folder"),
    pytest.param("active/projects/deep", "projects/deep/x", id="nested-folder"),
    # the missing folder 'new' would be created inside the link target if the walk followed it
    pytest.param("active/projects/deep", "projects/deep/new/x", id="folder-to-create-below-link"),
])
def test_symlinked_folder_is_not_written_through(vault, mem: Path, tmp_path: Path, outside: Path,
                                                 linkdir: str, name: str) -> None:
    (mem / linkdir).symlink_to(outside.parent, target_is_directory=True)
    before = state(mem, tmp_path)
    with pytest.raises((Refused, NotFound)):
        vault.write(name, b"# escaped\n")
    with pytest.raises((Refused, NotFound)):
        vault.read(name)
    assert sorted(p.name for p in outside.parent.iterdir()) == ["secret.txt"]
    assert_untouched(mem, tmp_path, before)


def test_committed_hardlink_is_replaced_not_written_through(vault, mem: Path, outside: Path) -> None:
    # git never checks out hardlinks, but one can be made by hand; writing must replace the
    # directory entry (temp file + rename), never write into the shared inode.
    outside.write_bytes(b"# outside\n")
    os.link(outside, mem / "active/projects/hard.md")
    _commit_behind_strata(mem, "active/projects/hard.md")
    vault.write("projects/hard", b"# replaced\n")
    assert outside.read_bytes() == b"# outside\n"
    assert (mem / "active/projects/hard.md").read_bytes() == b"# replaced\n"


def test_fifo_is_refused_without_hanging(mem: Path, tmp_path: Path) -> None:
    fifo = mem / "active/projects/fifo.md"
    os.mkfifo(fifo)
    before = state(mem, tmp_path)
    for args in (("read", "projects/fifo"), ("write", "projects/fifo", "-m", "hi")):
        assert_clean_cli_error(strata_timed(mem, *args, timeout=20))
    assert fifo.exists() and not fifo.is_file()
    assert_untouched(mem, tmp_path, before)


# --------------------------------------------------------------------------------------
# hostile frontmatter: aliases that explode, tags that run code, sizes, encodings, wrong types

TEN_MB = 10 * 1024 * 1024
LOL_BOMB = b"---\n" + b"a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + b"".join(
    b"%c: &%c [%s]\n" % (c, c, b", ".join([b"*%c" % (c - 1)] * 9)) for c in range(ord("b"), ord("j"))
) + b"---\n# bomb\n"
PYTHON_APPLY = b'---\nx: !!python/object/apply:os.system ["touch PWNED"]\n---\nbody\n'

# (content, line): `line` is the line the message must point at ("active/x.md:<line>:"),
# or None where the problem is not on one line (size, encoding, a key's type).
REFUSED_FRONTMATTER = [
    pytest.param(b"---\ntitle: x\nbody\n", 1, id="unclosed-block"),
    pytest.param(b"---\n- a\n- b\n---\nbody\n", 2, id="list-not-mapping"),
    pytest.param(b"---\nhello\n---\nbody\n", 2, id="scalar-not-mapping"),
    pytest.param(PYTHON_APPLY, 2, id="python-object-apply"),
    pytest.param(b'---\nx: [1, !!python/object/apply:os.system ["touch PWNED"]]\n---\n', 2, id="python-apply-nested"),
    pytest.param(b"---\nx: !!binary aGk=\n---\n", 2, id="binary-tag"),
    pytest.param(b"---\nx: !!set {a, b}\n---\n", 2, id="set-tag"),
    pytest.param(b"---\nx: !foo bar\n---\n", 2, id="custom-tag"),
    pytest.param(LOL_BOMB, 2, id="billion-laughs"),
    pytest.param(b"---\nbase: &b {type: x}\nother: *b\n---\n", 2, id="anchor-alias"),
    pytest.param(b"---\n<<: {title: forged}\n---\n", 2, id="merge-key"),
    pytest.param(b"---\nx: " + b"[" * 5000 + b"\n---\n", 2, id="nesting-5000-unclosed"),
    pytest.param(b"---\nx: " + b"[" * 5000 + b"]" * 5000 + b"\n---\n", 2, id="nesting-5000"),
    pytest.param(b"---\ntitle: a\ntype: note\ntitle: b\n---\n", 4, id="duplicate-keys"),
    pytest.param(b"---\ntitle: ok\ntags: [\xff]\n---\n", 3, id="invalid-utf8"),
    pytest.param("---\ntitle: x\n---\nbody\n".encode("utf-16"), None, id="utf16-bom"),
    pytest.param(b"\xef\xbb\xbf---\ntitle: x\n---\n", None, id="utf8-bom"),
    pytest.param(b"---\ntitle: x\n---\n\0\n", None, id="nul-in-body"),
    pytest.param(b"---\ntitle: " + b"a" * TEN_MB + b"\n---\n", None, id="value-10MB"),
    pytest.param(b"---\nx: " + b"a" * 20_000 + b"\n---\n", None, id="frontmatter-over-16KiB"),
    pytest.param(b"---\nn: " + b"9" * 5000 + b"\n---\n", None, id="int-5000-digits"),
    pytest.param(b"---\n%YAML 1.1\n--- {x: 1}\n---\n", 2, id="yaml-directive"),
    pytest.param(b"---\n%TAG ! tag:evil.example,2000:\n--- {x: 1}\n---\n", 2, id="tag-directive"),
    pytest.param(b"---\na: 1\n--- \nb: 2\n---\n", 3, id="second-document"),
    pytest.param(b"---\n1: x\n---\n", 2, id="int-key"),
    pytest.param(b"---\nnull: x\n---\n", 2, id="null-key"),
    pytest.param(b"---\ntrue: x\n---\n", 2, id="bool-key"),
    pytest.param(b"---\n? [a, b]\n: x\n---\n", 2, id="sequence-key"),
    pytest.param(b"---\nx: {a: 1\n---\n", 3, id="unclosed-flow-mapping"),
    pytest.param(b"---\nx: [1, 2\n---\n", 3, id="unclosed-flow-sequence"),
    pytest.param(b"---\nx:\n\ty: 1\n---\n", 3, id="tab-indentation"),
    pytest.param(b'---\ntitle: "\\ud800"\n---\n', 2, id="lone-surrogate-escape"),
    pytest.param(b"---\ncreated: 2024-13-45\n---\n", None, id="bad-date"),
    pytest.param(b'---\ntags: "a,b"\n---\n', None, id="tags-string"),
    pytest.param(b"---\ntitle: [x]\n---\n", None, id="title-list"),
    pytest.param(b"---\ntitle: ''\n---\n", None, id="title-empty"),
    pytest.param(b"---\ntype: Decision; rm -rf /\n---\n", None, id="type-not-a-word"),
    pytest.param(b'---\ntitle: "\\e[31mred\\e[0m"\n---\n', None, id="title-ansi-escape"),
    pytest.param(b"---\ntitle: \x1b[2Jcleared\n---\n", None, id="title-raw-ansi"),
    pytest.param("---\ntitle: txt\u202egnp.exe\n---\n".encode(), None, id="title-rtl-override"),
    pytest.param(b'---\ntags: ["ok", "a\\u2066b"]\n---\n', None, id="tags-bidi-isolate"),
    pytest.param(b'---\ntitle: "a\\0b"\n---\n', None, id="title-nul-escape"),
]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from tmp_path, so a `touch PWNED` that ever ran would land where we look."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("content", "line"), REFUSED_FRONTMATTER)
def test_hostile_frontmatter_is_refused_and_nothing_written(vault, mem: Path, in_tmp: Path,
                                                            content: bytes, line: int | None) -> None:
    before = state(mem, in_tmp)
    with pytest.raises(BadMemory) as info:
        vault.write("x", content)
    message = info.value.message
    assert message.startswith("active/x.md")
    if line is not None:
        assert message.startswith(f"active/x.md:{line}: "), message
    # a message is one line however hostile the content, and never echoes megabytes back
    assert "\n" not in message and len(message) < 300
    assert not (mem / "active/x.md").exists()
    assert not list(in_tmp.rglob("PWNED"))
    assert_untouched(mem, in_tmp, before)


# YAML problems name their line, including the two found outside the parser proper
# (a non-printable character seen by the reader, an over-long integer).
@pytest.mark.parametrize(("content", "line"), [
    pytest.param(b"---\ntitle: ok\nx: \x1b[2Jcleared\n---\n", 3, id="raw-escape-char"),
    pytest.param(b"---\ntitle: ok\nn: " + b"9" * 5000 + b"\n---\n", 3, id="int-5000-digits"),
])
def test_yaml_problem_message_names_its_line(vault, content: bytes, line: int) -> None:
    with pytest.raises(BadMemory) as info:
        vault.write("x", content)
    assert info.value.message.startswith(f"active/x.md:{line}: "), info.value.message


# (content, expected meta): accepted, and kept byte for byte.
ROUND_TRIP_FRONTMATTER = [
    pytest.param(b"---\r\ntitle: Windows\r\ntags: [a, b]\r\n---\r\nbody\r\nmore\r\n",
                 {"title": "Windows", "tags": ["a", "b"]}, id="crlf"),
    pytest.param(b"---\ntitle: mixed\r\n---\nline one\r\nline two\nlast without newline",
                 {"title": "mixed"}, id="mixed-line-endings"),
    pytest.param(b"---\ntitle: rules\n---\nabove\n---\nbetween\n---\nbelow\n",
                 {"title": "rules"}, id="dashes-in-body"),
    pytest.param(b"# no frontmatter\n\n---\n\ntitle: not meta\n---\n", {}, id="dashes-without-frontmatter"),
    pytest.param(b"---\n---\nempty frontmatter\n", {}, id="empty-frontmatter"),
    # the Norway problem: YAML 1.1 would read these as booleans
    pytest.param(b"---\ntier: no\npinned: yes\nflag: off\ncountry: NO\n---\nbody\n",
                 {"tier": "no", "pinned": "yes", "flag": "off", "country": "NO"}, id="norway"),
    # dates stay strings, so the metadata stays JSON-serializable
    pytest.param(b"---\ncreated: 2024-01-01\n---\nbody\n", {"created": "2024-01-01"}, id="date-stays-string"),
    pytest.param(b"---\ncreated: 2024-01-01T10:00:00+02:00\n---\nbody\n",
                 {"created": "2024-01-01T10:00:00+02:00"}, id="timestamp-stays-string"),
    # tags in the body are only text
    pytest.param(b"# notes on YAML\n\n    x: !!python/object/apply:os.system [\"touch PWNED\"]\n",
                 {}, id="python-tag-in-body"),
    pytest.param("---\ntitle: caf\u00e9 \u2615\n---\n\u05e9\u05dc\u05d5\u05dd\n".encode(),
                 {"title": "caf\u00e9 \u2615"}, id="unicode-title"),
    pytest.param(b"---\ntitle: quoted\nnote: '---'\n---\nbody\n", {"title": "quoted", "note": "---"},
                 id="quoted-dashes-value"),
]


@pytest.mark.parametrize(("content", "meta"), ROUND_TRIP_FRONTMATTER)
def test_frontmatter_round_trips_byte_for_byte(vault, mem: Path, in_tmp: Path, content: bytes, meta: dict) -> None:
    before = head(mem)
    change = vault.write("x", content)
    assert change.commit is not None and change.commit != before
    assert head(mem) == change.commit
    assert git(mem, "rev-parse", "HEAD~1").stdout.decode().strip() == before  # exactly one commit
    assert (mem / "active/x.md").read_bytes() == content
    assert git(mem, "cat-file", "blob", "HEAD:active/x.md").stdout == content
    read = vault.read("x")
    assert read.memory.raw == content
    assert read.memory.meta == meta
    assert porcelain(mem) == b""
    assert not list(in_tmp.rglob("PWNED"))


# --------------------------------------------------------------------------------------
# the pre-commit hook: the same content committed with plain git, behind git-strata's back

HOOK_CASES = [
    pytest.param(b"---\ntitle: x\nbody\n", id="unclosed-block"),
    pytest.param(PYTHON_APPLY, id="python-object-apply"),
    pytest.param(LOL_BOMB, id="billion-laughs"),
    pytest.param(b"---\ntitle: a\ntitle: b\n---\n", id="duplicate-keys"),
    pytest.param(b"---\ntitle: \xff\n---\n", id="invalid-utf8"),
    pytest.param(b'---\ntags: "a,b"\n---\n', id="tags-string"),
    pytest.param(b"---\n1: x\n---\n", id="int-key"),
]


@pytest.mark.parametrize("content", HOOK_CASES)
def test_pre_commit_hook_refuses_hostile_frontmatter(mem: Path, in_tmp: Path, content: bytes) -> None:
    before = head(mem)
    (mem / "active/x.md").write_bytes(content)
    git(mem, "add", "--", "active/x.md")
    proc = git(mem, "commit", "-m", "x", check=False)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode != 0, err
    assert "git-strata: refused: active/x.md" in err
    assert "Traceback" not in err
    assert head(mem) == before
    assert not list(in_tmp.rglob("PWNED"))


@pytest.mark.parametrize("path", [
    pytest.param("active/CON.md", id="win-con"),
    pytest.param("active/projects/-rf.md", id="dash"),
    pytest.param("active/evil\u202egnp.md", id="rtl-override"),
    pytest.param("active/e\u0301.md", id="nfd"),
    pytest.param("active/a\tb.md", id="tab"),
])
def test_pre_commit_hook_refuses_hostile_names(mem: Path, path: str) -> None:
    before = head(mem)
    (mem / path).write_bytes(b"# hi\n")
    git(mem, "add", "--", path)
    proc = git(mem, "commit", "-m", "x", check=False)
    assert proc.returncode != 0
    assert "git-strata: refused: active/" in proc.stderr.decode("utf-8", "replace")
    assert head(mem) == before


def test_pre_commit_hook_refuses_a_symlink(mem: Path, outside: Path) -> None:
    before = head(mem)
    (mem / "active/projects/evil.md").symlink_to(outside)
    git(mem, "add", "--", "active/projects/evil.md")
    proc = git(mem, "commit", "-m", "x", check=False)
    assert proc.returncode != 0
    assert "git-strata: refused: active/projects/evil.md: symlinks" in proc.stderr.decode()
    assert head(mem) == before


def test_pre_commit_hook_refuses_case_duplicates(mem: Path) -> None:
    before = head(mem)
    for path in ("active/projects/Note.md", "active/projects/note.md"):
        (mem / path).write_bytes(b"# hi\n")
        git(mem, "add", "--", path)
    proc = git(mem, "commit", "-m", "x", check=False)
    assert proc.returncode != 0
    assert "more than one place" in proc.stderr.decode()
    assert head(mem) == before


def test_a_pruned_archive_s_names_are_checked_as_if_each_were_listed():
    """status checks a pruned archive's names without an Entry for each: the same problems, in the
    same order, as the listing that made one for every archived memory."""
    import random

    from strata_git.app.reports import name_problems
    from strata_git.core.entries import Entry

    rng = random.Random(7)
    spellings = ["notes/Koda.md", "notes/koda.md", "notes/k\u043eda.md", "caf\u00e9.md", "cafe\u0301.md",
                 "CAF\u00c9.md", "plain.md", "x/\u0391lpha-a.md", "deep/a/b.md", "Deep/A/b.md"]
    names_ = spellings + [f"bulk/m{i:04d}.md" for i in range(300)]
    for i in range(40):
        live = [Entry(rng.choice(["active", "cooled"]), n, 1) for n in rng.sample(names_, 12)]
        live = sorted({e.path: e for e in live}.values(), key=lambda e: (e.tier != "active", e.name))
        pruned = rng.sample(names_ if i % 2 else [n for n in names_ if n.isascii()], 60)  # (ASCII alone: a fast path)
        listed = live + sorted((Entry("archive", n, 1) for n in pruned), key=lambda e: e.name)
        assert name_problems(live, pruned) == name_problems(listed)
    assert any(name_problems([], spellings))  # (the spellings do make problems)


def test_a_pruned_archive_s_names_are_checked_alike_through_the_catalog(mem: Path):
    """status reads a pruned archive's names from its tally and the catalog's index of lower(path),
    not a list of them: the same problems, in the same order, as the listing, with some archived
    memories checked out (listed as files, so not counted twice)."""
    import random

    from strata_git.app.reports import _checked_names, name_problems
    from strata_git.core import names
    from strata_git.core.entries import Entry
    from strata_git.gitio.git import discover
    from strata_git.store import catalog

    rng = random.Random(11)
    spellings = ["notes/Koda.md", "notes/koda.md", "notes/k\u043eda.md", "caf\u00e9.md", "cafe\u0301.md",
                 "CAF\u00c9.md", "plain.md", "x/\u0391lpha-a.md", "deep/a/b.md", "Deep/A/b.md", "\uff2boda.md",
                 "koda.md", "notes/KODA.md"]
    names_ = spellings + [f"bulk/m{i:04d}.md" for i in range(300)]
    checked = 0
    for i in range(30):
        archived = sorted(rng.sample(names_ if i % 2 else [n for n in names_ if n.isascii()], 80))
        present = set(rng.sample(archived, 3))
        live = [Entry(rng.choice(["active", "cooled"]), n, 1) for n in rng.sample(names_, 12)]
        live = sorted({e.path: e for e in live}.values(), key=lambda e: (e.tier != "active", e.name))
        entries = live + [Entry("archive", n, 1) for n in sorted(present)]
        with catalog.connect(discover(str(mem))) as db:
            db.execute("DELETE FROM archived")
            db.executemany("INSERT INTO archived VALUES (?, ?, '', '', '', '', '', 1, '', 'name', '', '')",
                           [(j, f"archive/{n}") for j, n in enumerate(archived)])
            found = _checked_names(db, entries, names.spellings(archived), present)
        assert found == name_problems(entries, [n for n in archived if n not in present])
        checked += bool(found)
    assert checked > 10  # (the spellings do make problems)
