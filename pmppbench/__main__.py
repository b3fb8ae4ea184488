from pmppbench.cli.app import main

raise SystemExit(main())
