"""Bad JSON-RPC input gets an error answer, never a crash: raw bytes written to `flint lsp`."""

import json
import subprocess

from conftest import FLINT


class Raw:
    def __init__(self):
        self.p = subprocess.Popen([FLINT, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send_bytes(self, body: bytes):
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def send(self, msg):
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **msg}).encode())

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            assert line, "the server closed its output"
            if line == b"\r\n":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.p.stdout.read(length))

    def answer(self, id_):
        while True:
            m = self.read()
            if m.get("id") == id_ and "method" not in m:
                return m


def test_bad_input_is_answered_and_the_server_lives_on():
    s = Raw()
    # Before initialize: refused with ServerNotInitialized.
    s.send({"id": 1, "method": "textDocument/hover", "params": {}})
    assert s.answer(1)["error"]["code"] == -32002
    s.send({"id": 2, "method": "initialize", "params": {"capabilities": {}}})
    assert "capabilities" in s.answer(2)["result"]
    s.send({"method": "initialized", "params": {}})
    # Not JSON; JSON that is no message; bad params; an unknown method.
    s.send_bytes(b"{not json")
    err = s.read()
    assert err["id"] is None and err["error"]["code"] == -32700, err
    s.send_bytes(b"[1, 2, 3]")
    assert s.read()["error"]["code"] == -32700
    s.send({"id": 3, "method": "textDocument/hover", "params": {"textDocument": 7}})
    assert s.answer(3)["error"]["code"] == -32602
    s.send({"id": 4, "method": "flint/unknown", "params": {}})
    assert s.answer(4)["error"]["code"] == -32601
    # A malformed notification is ignored; a hover on an unknown document is null.
    s.send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": 5}}})
    hover = {"textDocument": {"uri": "file:///none.bu"}, "position": {"line": 0, "character": 0}}
    s.send({"id": 5, "method": "textDocument/hover", "params": hover})
    assert s.answer(5)["result"] is None
    # Shutdown, then requests are refused and exit ends with 0.
    s.send({"id": 6, "method": "shutdown"})
    assert s.answer(6)["result"] is None
    s.send({"id": 7, "method": "textDocument/hover", "params": hover})
    assert s.answer(7)["error"]["code"] == -32600
    s.send({"method": "exit"})
    assert s.p.wait(timeout=10) == 0


def test_exit_without_shutdown_and_closed_input():
    s = Raw()
    s.send({"method": "exit"})
    assert s.p.wait(timeout=10) == 1
    s = Raw()
    s.p.stdin.close()
    assert s.p.wait(timeout=10) == 1
