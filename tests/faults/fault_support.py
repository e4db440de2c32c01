"""Shared set-up of the fault tests (tests/faults/): they use the CLI tests'
helpers (tests/cli/strata_cli.py) with the same environment."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "cli"))

from strata_cli import *  # noqa: E402,F401,F403
