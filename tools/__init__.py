"""Scripts beside the program (tools/README.md): run them from the repository root as modules."""
