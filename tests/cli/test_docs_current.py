#!/usr/bin/env python3
"""docs/inputs.md is exactly what `strata models --markdown` prints.

The input reference is generated from the parameter schema; this test fails
when someone changes the schema without regenerating it, or edits the
generated file by hand.
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402

DOC = os.path.join(sc.SOURCE_DIR, "docs", "inputs.md")
REGENERATE = "build/strata models --markdown > docs/inputs.md"


class DocsCurrent(sc.StrataTestCase):

    def test_inputs_md_is_generated(self):
        res = self.strata("models", "--markdown")
        self.assertExit(res, 0)
        self.assertTrue(res.stdout.strip(), f"empty reference:{res.describe()}")
        if not os.path.isfile(DOC):
            self.fail(f"{DOC} does not exist; generate it from the repository root "
                      f"with:\n  {REGENERATE}")
        with open(DOC, "rb") as f:
            committed = f.read()
        if committed != res.stdout_bytes:  # byte for byte
            diff = sc.unified_diff(committed.decode("utf-8", errors="replace"),
                                   res.stdout, "docs/inputs.md",
                                   "strata models --markdown")
            self.fail(f"docs/inputs.md is out of date with the parameter schema:\n"
                      f"{diff}\nregenerate it from the repository root with:\n"
                      f"  {REGENERATE}")


if __name__ == "__main__":
    sc.main()
