#!/usr/bin/env python3
"""fake-systemd.py SOCKET -- the little of systemd's private D-Bus socket that Ignition's
disks stage needs, so that the reference can run on loop devices without systemd.

Ignition waits for a device by starting its `.device` unit over /run/systemd/private and
waiting for the JobRemoved signal. Here every StartUnit answers with a job path, and the
signal follows (result "done") once the device node exists (up to 20 s, else "timeout").
Properties.Get answers "252" (the systemd version the files stage asks about).
Speaks just enough of the D-Bus wire format: EXTERNAL auth, little-endian messages.
"""
import os
import re
import socket
import subprocess
import struct
import sys
import threading
import time

SIGNAL_CONNS = []
LOCK = threading.Lock()
JOB = [0]


def align(n, a):
    return (n + a - 1) // a * a


class Reader:
    def __init__(self, buf, off=0):
        self.b, self.o = buf, off

    def pad(self, a):
        self.o = align(self.o, a)

    def u32(self):
        self.pad(4)
        v = struct.unpack_from("<I", self.b, self.o)[0]
        self.o += 4
        return v

    def string(self):
        n = self.u32()
        s = self.b[self.o:self.o + n].decode()
        self.o += n + 1
        return s

    def sig(self):
        n = self.b[self.o]
        s = self.b[self.o + 1:self.o + 1 + n].decode()
        self.o += n + 2
        return s

    def value(self, t):
        if t in "so":
            return self.string()
        if t == "g":
            return self.sig()
        if t == "u":
            return self.u32()
        raise ValueError("type " + t)


class Writer:
    def __init__(self):
        self.b = bytearray()

    def pad(self, a):
        self.b += b"\0" * (align(len(self.b), a) - len(self.b))

    def u32(self, v):
        self.pad(4)
        self.b += struct.pack("<I", v)

    def string(self, s):
        e = s.encode()
        self.u32(len(e))
        self.b += e + b"\0"

    def sig(self, s):
        e = s.encode()
        self.b += bytes([len(e)]) + e + b"\0"

    def value(self, t, v):
        if t in "so":
            self.string(v)
        elif t == "g":
            self.sig(v)
        elif t == "u":
            self.u32(v)
        else:
            raise ValueError(t)


SERIAL = [1000]


def message(kind, fields, sig, body):
    """fields: list of (code, type, value)."""
    bw = Writer()
    for t, v in body:
        if t == "v":
            bw.sig(v[0])
            bw.value(v[0], v[1])
        else:
            bw.value(t, v)
    hw = Writer()
    if sig:
        fields = fields + [(8, "g", sig)]
    for code, t, v in fields:
        hw.pad(8)
        hw.b += bytes([code])
        hw.sig(t)
        hw.value(t, v)
    SERIAL[0] += 1
    head = struct.pack("<cBBBII", b"l", kind, 1, 1, len(bw.b), SERIAL[0])
    out = bytearray(head) + struct.pack("<I", len(hw.b)) + hw.b
    out += b"\0" * (align(len(out), 8) - len(out))
    return bytes(out + bw.b)


def read_exact(conn, n):
    b = b""
    while len(b) < n:
        c = conn.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b


def wait_then_signal(unit, job):
    # unit names escape '/' as '-' and other bytes as \xNN
    raw = unit[:-len(".device")]
    path, i = "", 0
    while i < len(raw):
        if raw.startswith("\\x", i):
            path += chr(int(raw[i + 2:i + 4], 16))
            i += 4
        elif raw[i] == "-":
            path += "/"
            i += 1
        else:
            path += raw[i]
            i += 1
    path = "/" + path
    result = "timeout"
    # A kernel without partition-table parsing (this machine's) drops a loop device's
    # partitions when the disks stage re-reads the table, and never adds them again: what
    # udev and the kernel do on a real machine is done here by telling it the table
    # (BLKPG, as partx does), once, when the node is not there soon.
    part = re.match(r"^(/dev/loop\d+)p\d+$", path)
    for i in range(200):
        if os.path.exists(path):
            result = "done"
            break
        if i == 3 and part:
            subprocess.run(["partx", "-u", part.group(1)], capture_output=True)
            subprocess.run(["partx", "-a", part.group(1)], capture_output=True)
        time.sleep(0.1)
    sigmsg = message(4, [(1, "o", "/org/freedesktop/systemd1"),
                         (2, "s", "org.freedesktop.systemd1.Manager"),
                         (3, "s", "JobRemoved")], "uoss",
                     [("u", job), ("o", "/org/freedesktop/systemd1/job/%d" % job),
                      ("s", unit), ("s", result)])
    with LOCK:
        for c in SIGNAL_CONNS:
            try:
                c.sendall(sigmsg)
            except OSError:
                pass


def serve(conn):
    buf = b""
    while True:
        while b"\r\n" not in buf:
            c = conn.recv(4096)
            if not c:
                return
            buf += c
        line, buf = buf.split(b"\r\n", 1)
        line = line.lstrip(b"\0")
        if line == b"AUTH":
            conn.sendall(b"REJECTED EXTERNAL\r\n")
        elif line.startswith(b"AUTH"):
            conn.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
        elif line.startswith(b"NEGOTIATE_UNIX_FD"):
            conn.sendall(b"AGREE_UNIX_FD\r\n")
        elif line.startswith(b"BEGIN"):
            break
        else:
            conn.sendall(b"ERROR\r\n")
    pending = buf
    while True:
        while len(pending) < 16:
            c = conn.recv(65536)
            if not c:
                return
            pending += c
        _, kind, _, _, blen, serial, flen = struct.unpack_from("<cBBBIII", pending, 0)
        total = align(16 + flen, 8) + blen
        while len(pending) < total:
            c = conn.recv(65536)
            if not c:
                return
            pending += c
        msg, pending = pending[:total], pending[total:]
        r = Reader(msg, 16)
        fields = {}
        while r.o < 16 + flen:
            r.pad(8)
            code = msg[r.o]
            r.o += 1
            t = r.sig()
            fields[code] = r.value(t)
        body = Reader(msg, align(16 + flen, 8))
        body.b = msg
        member, sig = fields.get(3, ""), fields.get(8, "")
        if kind != 1:
            continue
        reply = [(5, "u", serial)]
        if member == "AddMatch":
            with LOCK:
                SIGNAL_CONNS.append(conn)
            conn.sendall(message(2, reply, "", []))
        elif member in ("StartUnit", "StartUnitReplace"):
            base = align(16 + flen, 8)
            br = Reader(msg, base)
            br.b = msg
            unit = br.string()
            JOB[0] += 1
            job = JOB[0]
            conn.sendall(message(2, reply, "o", [("o", "/org/freedesktop/systemd1/job/%d" % job)]))
            threading.Thread(target=wait_then_signal, args=(unit, job), daemon=True).start()
        elif member == "Get":
            conn.sendall(message(2, reply, "v", [("v", ("s", "252"))]))
        else:
            conn.sendall(message(3, reply + [(4, "s", "org.freedesktop.DBus.Error.UnknownMethod")],
                                 "s", [("s", "not in fake-systemd: " + member)]))


def main():
    path = sys.argv[1]
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
