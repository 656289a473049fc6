"""``python -m piquet_agents.baseline POLICY --command CMD``: write the shipped baseline."""

from piquet_agents.baseline import main

raise SystemExit(main())
