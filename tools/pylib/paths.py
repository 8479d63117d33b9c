"""Where things are: every tools/ script runs from the repository root as a module
(`python3 -m tools.fixtures.make_model_fixtures`), and finds the tree through ROOT."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
