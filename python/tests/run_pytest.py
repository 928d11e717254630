"""Runs gfi's Python tests for meson test: exit 77 (skip) when numpy or pytest
is missing, else pytest's verdict (no tests collected counts as a failure)."""
import os
import sys

missing = []
for mod in ("numpy", "pytest"):
    try:
        __import__(mod)
    except ImportError:
        missing.append(mod)
if missing:
    print("SKIP: the Python tests need %s (Debian: python3-numpy python3-pytest; tools/setup.sh installs them)"
          % " and ".join(missing))
    sys.exit(77)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
args = [here, "-q", "-rs", "-p", "no:cacheprovider"] + sys.argv[1:]
sys.exit(pytest.main(args))
