"""The `hil` command: run systems, report on bags, compute workspaces, print benchmarks."""
