#!/usr/bin/env python3
"""Bad input for an OpenVPN server's TCP port, and a check of what the server did with it.
Standard library only.

    tcp_junk.py --host ADDR --port N MODE [--count N] [--expect-close-within S] [--hold S]

MODE is one of
    random   4 KiB of random bytes
    zero     a packet length of 0 (openvpn's 2-byte length framing), then a few bytes
    big      a packet length of 65535, then a few bytes
    half     the length of a 64-byte packet and 10 of its bytes, then silence
    idle     connect and say nothing
Each of --count connections (default 1) gets the same. With --expect-close-within S, every
connection must be closed by the server (end of stream or reset) within S seconds of the last
one being opened: exit status 1 otherwise, with how many stayed open. With --hold S the
connections stay open S seconds first (to check, meanwhile, that the server still serves).
Prints one line: what was sent, how many connections were closed and after how long.
"""
import argparse
import os
import selectors
import socket
import sys
import time


def payload(mode):
    if mode == "random":
        return os.urandom(4096)
    if mode == "zero":
        return b"\x00\x00" + os.urandom(16)
    if mode == "big":
        return b"\xff\xff" + os.urandom(16)
    if mode == "half":
        return b"\x00\x40" + os.urandom(10)
    return b""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("mode", choices=["random", "zero", "big", "half", "idle"])
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--expect-close-within", type=float)
    ap.add_argument("--hold", type=float, default=0)
    a = ap.parse_args()
    if not 0 < a.count <= 5000:
        ap.error("bad --count")

    family = socket.AF_INET6 if ":" in a.host else socket.AF_INET
    conns = []
    for _ in range(a.count):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect((a.host, a.port))
        data = payload(a.mode)
        if data:
            try:
                s.sendall(data)
            except OSError:
                pass  # the server may have closed it already
        s.setblocking(False)
        conns.append(s)
    t0 = time.monotonic()
    if a.hold > 0:
        time.sleep(a.hold)
    sel = selectors.DefaultSelector()
    for s in conns:
        sel.register(s, selectors.EVENT_READ)
    n_open = len(conns)
    last_close = 0.0
    deadline = t0 + (a.expect_close_within if a.expect_close_within is not None else 0)
    while n_open > 0 and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=max(0.0, min(1.0, deadline - time.monotonic()))):
            s = key.fileobj
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:  # closed by the server; whatever it said before is ignored
                sel.unregister(s)
                s.close()
                n_open -= 1
                last_close = time.monotonic() - t0
    print(f"tcp_junk: {a.mode} on {a.count} connection(s): {a.count - n_open} closed by the "
          f"server (the last after {last_close:.1f} s), {n_open} still open")
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    if a.expect_close_within is not None and n_open > 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
