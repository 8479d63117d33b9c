"""tools/convert: see tools/README.md."""
