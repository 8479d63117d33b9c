"""tools/references: see tools/README.md."""
