from strata_git.app.cli import run

run()
