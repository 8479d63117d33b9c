"""tools/bench: see tools/README.md."""
