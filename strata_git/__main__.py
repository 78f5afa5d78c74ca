from strata_git.app.cli import main

raise SystemExit(main())
