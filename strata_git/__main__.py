from strata_git.cli import main

raise SystemExit(main())
