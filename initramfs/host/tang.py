#!/usr/bin/env python3
"""tang.py DB [PORT]: serve a Tang key database on 127.0.0.1 for the VM tests, reached by
the guest through QEMU user networking (10.0.2.2).

Debian's tangd (tang 11) speaks HTTP on stdin/stdout for one connection and is meant to
be started per connection by systemd's socket activation (tangd.socket, Accept=yes). CI
machines need not run systemd, so this does the same: a forking TCP server that runs
`tangd DB` for each connection with the socket as its stdin and stdout. The server is
the real tangd; only the listening part is ours.

PORT 0 (the default) lets the kernel pick a free port. Prints "port N" once listening,
then one line per connection with the request line ("GET /adv/... HTTP/1.1"), so that a
scenario can tell what the guest asked for.
"""
import os
import socket
import socketserver
import subprocess
import sys

TANGD = os.environ.get("TANGD", "/usr/libexec/tangd")
DB = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        # Peek, so that tangd still reads the whole request itself.
        try:
            head = self.request.recv(256, socket.MSG_PEEK)
        except OSError:
            head = b""
        line = head.split(b"\r\n", 1)[0].decode("latin-1", "replace")
        fd = self.request.fileno()
        rc = subprocess.run([TANGD, DB], stdin=fd, stdout=fd, check=False).returncode
        print(f"{line} -> tangd rc={rc}", flush=True)


class Server(socketserver.ForkingTCPServer):
    allow_reuse_address = True  # a restarted server may take its old port again


with Server(("127.0.0.1", PORT), Handler) as srv:
    print(f"port {srv.server_address[1]}", flush=True)
    srv.serve_forever()
