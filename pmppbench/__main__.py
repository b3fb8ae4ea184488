from pmppbench.cli import main

raise SystemExit(main())
