"""The language server under test: `flint lsp` from this checkout (or $FLINT_BIN)."""

import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
FLINT = os.environ.get("FLINT_BIN") or str(REPO / "target" / "release" / "flint")
