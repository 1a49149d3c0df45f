"""`flint lsp` driven over stdio by a real LSP client library (pytest-lsp, on pygls):
initialize, open, change, hover, completion, code actions, shutdown."""

import json
import pathlib
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import FLINT

BUTANE = """variant: flatcar
version: 1.0.0
storage:
  files:
    - path: etc/motd
      bogus: 1
      contents:
        inline: hello
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[FLINT, "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        t.InitializeParams(
            capabilities=t.ClientCapabilities(),
            initialization_options={"filesDir": "files"},
        )
    )
    yield
    await lsp_client.shutdown_session()


def open_doc(client: LanguageClient, path: pathlib.Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )
    return uri


async def diagnostics_of(client: LanguageClient, uri: str):
    """The next diagnostics published for `uri`."""
    while True:
        await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if uri in client.diagnostics:
            return client.diagnostics.pop(uri)


def validate_json(path: pathlib.Path, files_dir: pathlib.Path):
    """What `flint validate` reports for the same file: (severity, line, column, message)."""
    out = subprocess.run(
        [FLINT, "validate", "--format", "json", "-d", str(files_dir), str(path)],
        capture_output=True,
        text=True,
    ).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    return [(r["severity"], r["line"], r["column"], r["message"]) for r in rows]


def as_rows(diags):
    sev = {t.DiagnosticSeverity.Error: "error", t.DiagnosticSeverity.Warning: "warning"}
    return [
        (sev[d.severity], d.range.start.line + 1, d.range.start.character + 1, d.message)
        for d in diags
    ]


async def test_diagnostics_match_the_validator_on_open_and_change(client, tmp_path):
    (tmp_path / "files").mkdir()
    path = tmp_path / "web.bu"
    path.write_text(BUTANE)
    uri = open_doc(client, path, BUTANE)
    diags = await diagnostics_of(client, uri)
    assert as_rows(diags) == validate_json(path, tmp_path / "files")
    assert as_rows(diags) == [
        ("warning", 6, 7, "unused key bogus"),
        ("error", 5, 13, "path not absolute"),
    ]
    bad = diags[1]
    assert bad.range.end == t.Position(line=4, character=20)  # to the end of the token
    assert bad.code == "$.storage.files.0.path"
    # Two changes in one burst: fix the path, drop the unknown key.
    for rng, new in (
        (t.Range(start=t.Position(line=4, character=12), end=t.Position(line=4, character=12)), "/"),
        (t.Range(start=t.Position(line=5, character=0), end=t.Position(line=6, character=0)), ""),
    ):
        client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[t.TextDocumentContentChangePartial(range=rng, text=new)],
            )
        )
    assert list(await diagnostics_of(client, uri)) == []


async def test_local_files_resolve_against_the_configured_directory(client, tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "motd").write_text("hi\n")
    text = BUTANE.replace("etc/motd", "/etc/motd").replace("      bogus: 1\n", "")
    ok = open_doc(client, tmp_path / "a.bu", text.replace("inline: hello", "local: motd"))
    assert list(await diagnostics_of(client, ok)) == []
    missing = open_doc(client, tmp_path / "b.bu", text.replace("inline: hello", "local: nope"))
    (d,) = await diagnostics_of(client, missing)
    assert d.message == f"open {tmp_path}/files/nope: no such file or directory"
    assert (d.range.start.line, d.range.start.character) == (6, 15)


async def test_ignition_json_and_documents_that_are_not_configs(client, tmp_path):
    ign = '{"ignition": {"version": "3.4.0"}, "storage": {"files": [{"path": "x"}]}, "y": 1}'
    path = tmp_path / "c.ign"
    path.write_text(ign)
    uri = open_doc(client, path, ign)
    diags = await diagnostics_of(client, uri)
    assert as_rows(diags) == validate_json(path, tmp_path)
    assert [d.message for d in diags] == ["path not absolute", "unused key y"]
    # Not YAML at all: a diagnostic, and the server goes on answering.
    broken = open_doc(client, tmp_path / "x.bu", "variant: fcos\nversion: 1.5.0\n: : [\n")
    (d,) = await diagnostics_of(client, broken)
    assert (d.severity, d.message) == (t.DiagnosticSeverity.Error, "did not find expected key")
    assert (d.range.start.line, d.range.start.character) == (2, 0)
    h = await client.text_document_hover_async(
        t.HoverParams(text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=0, character=3))
    )
    assert h is not None and h.contents.value.startswith("**ignition**: Ignition (object)")


async def test_hover_on_keys_and_data_urls(client, tmp_path):
    text = "variant: fcos\nversion: 1.6.0\nstorage:\n  luks:\n    - name: data\n  files:\n    - path: /a\n      contents:\n        source: data:,one%0Atwo\n"
    uri = open_doc(client, tmp_path / "h.bu", text)
    await diagnostics_of(client, uri)

    async def hover(line, ch):
        h = await client.text_document_hover_async(
            t.HoverParams(text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=line, character=ch))
        )
        return h.contents.value if h else None

    luks = await hover(3, 4)
    assert luks.startswith("**luks**: list of Luks") and luks.endswith("In fcos 1.2.0 and later.")
    assert await hover(8, 20) == "**data URL**: 7 bytes, 2 lines\n\nFirst line: `one`"
    assert await hover(1, 0) is not None  # the `version` key


async def test_completion_of_keys_and_values(client, tmp_path):
    async def labels(text, line, ch, name="c.bu"):
        uri = open_doc(client, tmp_path / name, text)
        r = await client.text_document_completion_async(
            t.CompletionParams(text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=line, character=ch))
        )
        items = r.items if hasattr(r, "items") else r
        return [i.label for i in items]

    head = "variant: flatcar\nversion: 1.0.0\n"
    keys = await labels(head + "storage:\n  files:\n    - path: /a\n      \n", 5, 6)
    assert "contents" in keys and "overwrite" in keys and "path" not in keys
    # Flatcar 1.0.0 has no storage.luks.*.clevis; 1.1.0 neither; the keys follow the spec.
    luks = await labels(head + "storage:\n  luks:\n    - \n", 4, 6, "l.bu")
    assert "clevis" not in luks and "device" in luks
    assert await labels("variant: flatcar\nversion: \n", 1, 9, "v.bu") == ["1.0.0", "1.1.0", "1.2.0-experimental"]
    fmts = await labels(head + "storage:\n  filesystems:\n    - format: \n", 4, 14, "f.bu")
    assert fmts == ["ext4", "btrfs", "xfs", "swap", "vfat", "none"]
    units = await labels(head + "systemd:\n  units:\n    - name: web\n", 4, 15, "u.bu")
    assert "web.service" in units and "web.timer" in units


def apply(text, edit):
    lines = text.split("\n")
    offset = lambda p: sum(len(x) + 1 for x in lines[: p.line]) + p.character
    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


async def actions_at(client, uri, line, ch):
    pos = t.Position(line=line, character=ch)
    return await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            range=t.Range(start=pos, end=pos),
            context=t.CodeActionContext(diagnostics=[]),
        )
    )


async def test_code_actions_that_are_certain(client, tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    (files / "motd").write_text("line one\nline two\n")
    text = "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n        local: motd\n    - path: /etc/issue\n      contents:\n        inline: welcome\n"
    uri = open_doc(client, tmp_path / "a.bu", text)
    await diagnostics_of(client, uri)
    titles = [a.title for a in await actions_at(client, uri, 6, 10)]
    assert titles == [
        "Upgrade to flatcar 1.1.0 (the same config)",
        "Add overwrite: true (replace the file if it exists)",
        "Put the contents of motd inline",
    ]
    acts = await actions_at(client, uri, 6, 10)
    (edit,) = acts[2].edit.changes[uri]
    assert edit.new_text == "inline: |\n          line one\n          line two"
    (ow,) = acts[1].edit.changes[uri]
    assert ow.new_text == "\n      overwrite: true" and ow.range.start.line == 4
    # inline -> local: a new file in the files directory with the text, and the edit.
    acts = await actions_at(client, uri, 9, 12)
    move = [a for a in acts if a.title.startswith("Move")][0]
    assert move.title == "Move the inline contents to the file issue (local)"
    create, content, doc_edit = move.edit.document_changes
    assert create.kind == "create" and create.uri == (files / "issue").as_uri()
    assert content.edits[0].new_text == "welcome"
    assert doc_edit.edits[0].new_text == "local: issue"
    # A block scalar: the edit keeps the lines after it.
    block = text + "    - path: /etc/b\n      contents:\n        inline: |\n          x\n          y\n      mode: 0644\n"
    buri = open_doc(client, tmp_path / "b.bu", block)
    await diagnostics_of(client, buri)
    move = [a for a in await actions_at(client, buri, 12, 9) if a.title.startswith("Move")][0]
    _, content, doc_edit = move.edit.document_changes
    assert content.edits[0].new_text == "x\ny\n"
    assert apply(block, doc_edit.edits[0]).endswith("        local: b\n      mode: 0644\n")
    # No upgrade where the newer version would change the output or is the newest already.
    newest = open_doc(client, tmp_path / "n.bu", text.replace("1.0.0", "1.1.0"))
    await diagnostics_of(client, newest)
    assert not [a for a in await actions_at(client, newest, 0, 0) if a.title.startswith("Upgrade")]
