"""tools/pylib: see tools/README.md."""
