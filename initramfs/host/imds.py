#!/usr/bin/env python3
"""imds.py USER_DATA_FILE: an AWS instance metadata service (IMDSv2) on 127.0.0.1 for the
VM tests, reached by the guest through QEMU user networking (10.0.2.2).

PUT /latest/api/token needs X-aws-ec2-metadata-token-ttl-seconds and answers a session
token; GET /2019-10-01/user-data needs that token (401 without it, as IMDSv2 in "required"
mode). Prints "port N" once listening; logs one line per request on stdout.
"""
import http.server
import sys

TOKEN = "flint-vm-imds-token"
USER_DATA = open(sys.argv[1], "rb").read()


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        print(f"PUT {self.path} ttl={ttl}", flush=True)
        if self.path == "/latest/api/token" and ttl:
            self.answer(200, TOKEN.encode())
        else:
            self.answer(400)

    def do_GET(self):
        ok = self.headers.get("X-aws-ec2-metadata-token") == TOKEN
        print(f"GET {self.path} token={'ok' if ok else 'missing'}", flush=True)
        if not ok:
            self.answer(401)
        elif self.path == "/2019-10-01/user-data":
            self.answer(200, USER_DATA)
        else:
            self.answer(404)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(f"port {server.server_address[1]}", flush=True)
server.serve_forever()
