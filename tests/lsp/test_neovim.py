"""A real editor end to end: Debian's Neovim, headless, with the configuration the guide shows
(docs/guide/editors.md, the `lua neovim` block), opens a Butane file, and the diagnostics and a
hover it gets from `flint lsp` are read back."""

import json
import os
import pathlib
import re
import shutil
import subprocess

from conftest import FLINT, REPO

# Waits for the diagnostics, asks for a hover on `storage`, writes both out, quits.
PROBE = """
vim.api.nvim_create_autocmd("VimEnter", { callback = function()
  local out = { diagnostics = {} }
  vim.wait(15000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out.diagnostics, { d.lnum, d.col, d.end_col, d.severity, d.message })
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(0) },
                   position = { line = 2, character = 1 } }
  for _, r in pairs(vim.lsp.buf_request_sync(0, "textDocument/hover", params, 5000) or {}) do
    if r.result then out.hover = r.result.contents.value end
  end
  vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.FLINT_NVIM_OUT)
  vim.cmd("qa!")
end })
"""


def guide_config() -> str:
    page = (REPO / "docs" / "guide" / "editors.md").read_text()
    (block,) = re.findall(r"```lua neovim\n(.*?)```", page, re.S)
    return block


def test_neovim_shows_the_diagnostics(tmp_path):
    assert shutil.which("nvim"), "Neovim is missing: scripts/install-deps.sh installs it"
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "motd").write_text("hi\n")
    doc = tmp_path / "web.bu"
    doc.write_text(
        "variant: flatcar\nversion: 1.1.0\nstorage:\n  files:\n    - path: etc/motd\n"
        "      contents:\n        local: motd\n      bogus: 1\n"
    )
    init = tmp_path / "init.lua"
    init.write_text(guide_config() + PROBE)
    out = tmp_path / "out.json"
    env = dict(os.environ, FLINT_NVIM_OUT=str(out), XDG_STATE_HOME=str(tmp_path / "state"))
    # `flint` on PATH, as the guide's configuration names it.
    env["PATH"] = f"{pathlib.Path(FLINT).parent}:{env['PATH']}"
    assert pathlib.Path(FLINT).name == "flint"
    subprocess.run(
        ["nvim", "--headless", "-i", "NONE", "-u", str(init), str(doc)],
        env=env, cwd=tmp_path, timeout=60, check=True, stdin=subprocess.DEVNULL,
    )
    got = json.loads(out.read_text())
    # 0-based lines and columns; severity 1 error, 2 warning. The local file is found in
    # the `files` directory the configuration names.
    assert sorted(got["diagnostics"]) == [
        [4, 12, 20, 1, "path not absolute"],
        [7, 6, 12, 2, "unused key bogus"],
    ]
    assert got["hover"].startswith("**storage**: Storage (object)")
