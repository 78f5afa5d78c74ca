"""The config template, validation and the folder-threshold rule."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from strata_git.core import config
from strata_git.errors import BadConfig

TEMPLATE = Path(__file__).parents[2] / ".strata" / "config.toml"


def test_template_is_exactly_the_defaults_and_documents_each_key():
    text = TEMPLATE.read_text()
    assert config.parse(tomllib.loads(text), "(defaults)") == config.Config()
    for section, table in config.Config().as_dict().items():
        if section == "source":
            continue
        for key in table:
            assert f"\n{key} =" in text or f"[{section}.{key}]" in text, key
    # Every setting line is preceded (since the previous setting) by a comment giving its default.
    comments: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            comments.append(line)
        elif "=" in line:
            key = line.split("=")[0].strip()
            assert any("Default" in c for c in comments), f"{key} has no comment giving its default"
            if key not in ("default", "projects", "entities"):  # the after_days table shares one comment
                comments = []


@pytest.mark.parametrize("toml,key", [
    ("[cool]\nafterdays = 3\n", "cool.afterdays"),
    ("[nonsense]\n", "nonsense"),
    ("[archive]\nidle_days = -1\n", "archive.idle_days"),
    ("[archive]\nidle_days = \"90\"\n", "archive.idle_days"),
    ("[hooks]\nsecrets = \"yes\"\n", "hooks.secrets"),
    ("[cool.after_days]\nprojects = \"soon\"\n", "cool.after_days.projects"),
    ("[cool.after_days]\n\"../x\" = 3\n", "cool.after_days.../x"),
    ("[cool]\nnever_types = \"rejection\"\n", "cool.never_types"),
    ("[agent]\nprompt_min_coverage = 1.5\n", "agent.prompt_min_coverage"),
    ("[agent]\nprompt_min_coverage = true\n", "agent.prompt_min_coverage"),
])
def test_bad_keys_and_values_name_the_key_and_file(toml: str, key: str):
    with pytest.raises(BadConfig) as e:
        config.parse(tomllib.loads(toml), ".strata/config.toml")
    assert f"'{key}'" in e.value.message and ".strata/config.toml" in e.value.message


def test_bad_toml_syntax_is_one_clear_error(tmp_path: Path):
    (tmp_path / ".strata").mkdir()
    (tmp_path / ".strata/config.toml").write_text("[cool\n")
    with pytest.raises(BadConfig, match="not valid TOML"):
        config.load(str(tmp_path))


def test_longest_folder_prefix_wins_and_never_is_none():
    cfg = config.parse(tomllib.loads('[cool.after_days]\n"projects/clients" = 3\nlogs = "never"\n'))
    assert cfg.cool_days_for("projects/clients/acme.md") == 3
    assert cfg.cool_days_for("projects/koda.md") == 14
    assert cfg.cool_days_for("projects-old/x.md") == 30
    assert cfg.cool_days_for("logs/today.md") is None
    assert cfg.cool_days_for("gtd/inbox.md") == 7


def test_cached_config_follows_edits_and_still_refuses_bad_ones(tmp_path: Path):
    (tmp_path / ".strata").mkdir()
    cache = tmp_path / "state"
    cache.mkdir()
    cfg_file = tmp_path / ".strata/config.toml"
    cfg_file.write_text("[archive]\nidle_days = 10\n")
    assert config.load(str(tmp_path), str(cache)).archive_idle_days == 10
    assert (cache / "config.json").exists()
    assert config.load(str(tmp_path), str(cache)).archive_idle_days == 10  # from the cache
    cfg_file.write_text("[archive]\nidle_days = 120\n")
    assert config.load(str(tmp_path), str(cache)).archive_idle_days == 120
    cfg_file.write_text("[archive]\nidle_dayz = 120\n")
    with pytest.raises(BadConfig, match="idle_dayz"):
        config.load(str(tmp_path), str(cache))


@pytest.mark.parametrize("section,key,value,applied", [
    ("hooks", "secrets", False, False),
    ("hooks", "secrets", True, True),
    ("limits", "max_memory_bytes", 99_999_999, False),
    ("limits", "max_memory_bytes", 1000, True),  # tighter: applied
    ("archive", "prune", True, True),  # content verified on the remote first: not a protection
    ("archive", "idle_days", 1, True),  # not a protection
])
def test_the_shared_file_may_only_tighten_protection(tmp_path: Path, section, key, value, applied):
    from strata_git.core import config

    (tmp_path / ".strata").mkdir()
    (tmp_path / ".strata/config.toml").write_text(f"[{section}]\n{key} = {str(value).lower()}\n")
    state = tmp_path / "state"
    state.mkdir()
    cfg = config.load(str(tmp_path), str(state))
    field = config._SCHEMA[section][key][0]
    assert (getattr(cfg, field) == value) is applied
    assert bool(cfg.ignored) is not applied
    # this clone's own file may set it, and then it holds whatever the shared file says
    (state / "config.toml").write_text(f"[{section}]\n{key} = {str(value).lower()}\n")
    cfg = config.load(str(tmp_path), str(state))
    assert getattr(cfg, field) == value and cfg.ignored == ()


def test_this_clones_own_file_is_checked_and_named_in_errors(tmp_path: Path):
    from strata_git.core import config
    from strata_git.errors import BadConfig

    (tmp_path / ".strata").mkdir()
    (tmp_path / ".strata/config.toml").write_text("[hooks]\nsecrets = true\n")
    (tmp_path / "state").mkdir()
    (tmp_path / "state/config.toml").write_text("[hooks]\nsecrets = 'no'\n")
    with pytest.raises(BadConfig, match=r"\.git/strata/config\.toml: 'hooks\.secrets' must be true or false"):
        config.load(str(tmp_path), str(tmp_path / "state"))
